"""Every language in the extension table has a sample that extracts symbols."""

from __future__ import annotations

from pathlib import Path

import pytest

from symdiff.parse.extract import extract
from symdiff.parse.languages import EXTENSIONS, FAMILIES, FILENAMES, language_for

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
ALL_LANGUAGES = sorted(set(EXTENSIONS.values()) | set(FILENAMES.values()))


def test_every_listed_language_has_a_family() -> None:
    assert sorted(FAMILIES) == ALL_LANGUAGES
    assert len(ALL_LANGUAGES) == 27


@pytest.mark.parametrize("language", ALL_LANGUAGES)
def test_every_language_has_a_sample_that_extracts(language: str) -> None:
    directory = FIXTURES / language
    samples = [p for p in directory.iterdir() if p.name.startswith("sample")]
    assert len(samples) == 1, f"{language} needs exactly one sample file"
    assert (directory / "expected.json").is_file()
    assert language_for(f"src/{samples[0].name}") == language
    symbols = extract(language, samples[0].read_bytes())
    assert symbols, f"no symbols extracted from the {language} sample"
    assert {s.kind for s in symbols} & {"function", "method"}
