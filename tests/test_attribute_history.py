"""Attribution's shortcuts against its definitions, on a small real history of edits.

attribute() takes shortcuts that must never change an answer: it works out a symbol's own lines
from the spans painted over its own instead of painting every line (`_Side.own_runs` against
`_owners`), maps them through the diff by spans of kept lines instead of line by line
(`_KeptSpans.carry` against `_kept_lines`), leaves alone the pairs inside a span of kept lines
that look alike on both sides (`_untouched`), and builds a symbol's text only when a pair is
not plainly unchanged. Each is checked here on every changed file of a git history built with
real git commands: the language samples committed, then commits of seeded random edits (lines
changed, removed, duplicated, re-indented, definitions renamed). benchmarks/attribution_oracle.py
compares the whole function with main's on real histories.
"""

from __future__ import annotations

import itertools
import random
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import git

from symdiff.attribute import spans
from symdiff.diffs.linediff import diff_lines
from symdiff.model import Symbol
from symdiff.parse.extract import extract
from symdiff.parse.languages import language_for

SAMPLES = Path(__file__).parent / "fixtures" / "languages"
LANGUAGES = ("python", "javascript", "typescript", "c", "go", "rust", "java", "ruby", "elixir")
COMMITS = 6


def _edit(text: bytes, names: Sequence[str], rng: random.Random) -> bytes:
    """One random edit of the kinds people make."""
    lines = text.split(b"\n")
    a = rng.randrange(len(lines))
    b = min(len(lines), a + rng.randrange(1, 8))
    what = rng.randrange(6)
    if what == 0:
        lines[a] += b" // x" if rng.random() < 0.5 else b"  "
    elif what == 1:
        del lines[a:b]
    elif what == 2:
        lines[rng.randrange(len(lines)) : 0] = lines[a:b]  # duplicated elsewhere
    elif what == 3:
        lines[a:b] = [b"    " + ln for ln in lines[a:b]]
    elif what == 4:
        lines[a:a] = [b"", b""]
    elif names:
        name = rng.choice(names).rsplit(".", 1)[-1].encode()
        return text.replace(name, name + b"_r", 1)
    return b"\n".join(lines)


def _history(root: Path) -> list[tuple[str, str]]:
    """A repository of the samples and COMMITS commits of edits: (commit, parent) pairs."""
    rng = random.Random(25)
    files: list[Path] = []
    for language in LANGUAGES:
        sample = next((SAMPLES / language).glob("sample.*"))
        files.append(root / f"{language}{sample.suffix}")
        shutil.copyfile(sample, files[-1])
    git(root, "add", "-A")
    git(root, "commit", "-qm", "samples")
    for n in range(COMMITS):
        for path in rng.sample(files, len(files) // 2):
            text = path.read_bytes()
            language = language_for(path.name)
            assert language is not None
            names = [s.name for s in extract(language, text)]
            for _ in range(rng.randrange(1, 4)):
                text = _edit(text, names, rng)
            path.write_bytes(text)
        git(root, "commit", "-qam", f"edit {n}")
    return list(itertools.pairwise(git(root, "rev-list", "HEAD").split()))


def _changed(root: Path, commit: str, parent: str) -> list[tuple[str, bytes, bytes]]:
    out = []
    for path in git(root, "diff", "--name-only", parent, commit).split():
        language = language_for(path)
        assert language is not None
        old = git(root, "show", f"{parent}:{path}").encode()
        new = git(root, "show", f"{commit}:{path}").encode()
        out.append((language, old, new))
    return out


def _painted(symbols: Sequence[Symbol], line_count: int) -> list[list[int]]:
    """Own lines by the definition: every line painted with its innermost symbol."""
    own: list[list[int]] = [[] for _ in symbols]
    for n, k in enumerate(spans._owners(symbols, line_count), start=1):
        if k >= 0:
            own[k].append(n)
    return own


def _lines_of(runs: Sequence[tuple[int, int]]) -> list[int]:
    return [n for first, last in runs for n in range(first, last + 1)]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes, bytes]]:
    root = tmp_path_factory.mktemp("history")
    git(root, "init", "-q")
    return [c for commit, parent in _history(root) for c in _changed(root, commit, parent)]


def test_the_history_has_changes_of_every_kind(history: list[tuple[str, bytes, bytes]]) -> None:
    kinds = {c.change_type for lang, old, new in history
             for c in spans.attribute(extract(lang, old), extract(lang, new), old, new,
                                      diff_lines(old, new))}  # fmt: skip
    assert len(history) >= 20
    assert {k.value for k in kinds} == {"added", "removed", "modified", "signature_changed"}


def test_own_runs_are_the_painted_lines(history: list[tuple[str, bytes, bytes]]) -> None:
    for language, old, new in history:
        for source in (old, new):
            symbols = extract(language, source)
            side = spans._Side(symbols, source)
            runs = [side.own_runs(k) for k in range(len(symbols))]
            assert [_lines_of(r) for r in runs] == _painted(symbols, len(source.split(b"\n")))


def test_own_runs_of_spans_that_overlap_without_nesting() -> None:
    def sym(name: str, start: int, end: int) -> Symbol:
        return Symbol(name, "function", start, end, start, "()")

    # Lines are 1-based (model.Symbol), but spans may be reversed, cross or pass the end.
    rng = random.Random(3)
    for _ in range(500):
        count = rng.randrange(1, 30)
        symbols = []
        for k in range(rng.randrange(1, 9)):
            start = rng.randrange(1, count + 3)
            end = start + rng.randrange(-1, 12)
            symbols.append(sym(rng.choice(["a", "a.b", f"s{k}"]), start, end))
        side = spans._Side(symbols, b"\n" * (count - 1))
        runs = [side.own_runs(k) for k in range(len(symbols))]
        painted = _painted(symbols, count)
        assert [_lines_of(r) for r in runs] == painted
        cuts = sorted(rng.sample(range(1, count + 1), min(count, 3)))
        cut = [spans._cut(r, cuts) for r in runs]
        assert [_lines_of(r) for r in cut] == [[n for n in own if n not in cuts] for own in painted]


def test_kept_spans_carry_lines_as_the_kept_array_does(
    history: list[tuple[str, bytes, bytes]],
) -> None:
    rng = random.Random(5)
    for _, old, new in history:
        diff = diff_lines(old, new)
        count = len(old.split(b"\n"))
        kept = spans._kept_lines(diff, count)
        carried = spans._kept_spans(diff)
        for _ in range(40):
            a = rng.randrange(1, count + 1)
            mine = list(range(a, min(count, a + rng.randrange(0, 30)) + 1))
            runs = [(n, n) for n in mine]
            mapped = carried.carry(runs)
            if 0 in [kept[n] for n in mine]:
                assert mapped is None
            else:
                assert mapped is not None and _lines_of(mapped) == [kept[n] for n in mine]


def test_shortcuts_give_the_answers_of_the_full_comparison(
    history: list[tuple[str, bytes, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for language, old, new in history:
        args = (extract(language, old), extract(language, new), old, new, diff_lines(old, new))
        fast = spans.attribute(*args)
        with monkeypatch.context() as m:
            m.setattr(spans, "_same_own_lines", lambda *_: False)
            m.setattr(spans, "_untouched", lambda *_: set())
            assert spans.attribute(*args) == fast


def test_pairs_left_alone_are_unchanged_by_the_full_comparison(
    history: list[tuple[str, bytes, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spans, "_same_own_lines", lambda *_: False)
    left_alone = 0
    for language, old, new in history:
        diff = diff_lines(old, new)
        old_side = spans._Side(extract(language, old), old)
        new_side = spans._Side(extract(language, new), new)
        pairs = spans._match(old_side, new_side, spans._line_mapper(diff), None)
        kept = spans._kept_spans(diff)
        untouched = spans._untouched(old_side, new_side, kept, pairs)
        assert untouched <= pairs.keys()
        for i in untouched:
            assert spans._pair_change(old_side, new_side, i, pairs[i], kept) is None
        left_alone += len(untouched)
    assert left_alone > 100  # the shortcut is taken, not only allowed
