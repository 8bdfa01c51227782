"""reparse: a text parsed incrementally from a held tree gives what a fresh parse gives."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from conftest import LANGUAGES, sample_of
from tree_sitter import Parser
from tree_sitter_language_pack import get_parser

from symdiff.parse import reparse
from symdiff.parse.extract import extract, extract_uncached


@pytest.fixture(autouse=True)
def _no_held_trees() -> None:
    reparse.forget()


@pytest.mark.parametrize(
    ("old", "new", "span"),
    [
        (b"abc", b"abc", (3, 3, 3)),
        (b"abc", b"abXc", (2, 2, 3)),
        (b"aaa", b"aaaa", (3, 3, 4)),  # prefix first: the suffix never overlaps it
        (b"abcdef", b"af", (1, 5, 1)),
        (b"", b"xyz", (0, 0, 3)),
        (
            b"x" * 10_000 + b"1" + b"y" * 9_000,
            b"x" * 10_000 + b"22" + b"y" * 9_000,
            (10_000, 10_001, 10_002),
        ),
        (b"q" * 9_999, b"q" * 5_000, (5_000, 9_999, 5_000)),
    ],
)
def test_edit_span(old: bytes, new: bytes, span: tuple[int, int, int]) -> None:
    assert reparse.edit_span(old, new) == span
    start, old_end, new_end = span
    assert old[:start] == new[:start] and old[old_end:] == new[new_end:]


def test_point_counts_rows_and_byte_columns() -> None:
    text = "ab\nçd\nef".encode()
    assert reparse.point(text, 0) == (0, 0)
    assert reparse.point(text, 3) == (1, 0)
    assert reparse.point(text, 6) == (1, 3)  # ç is two bytes
    assert reparse.point(text, len(text)) == (2, 2)


def _edits(source: bytes, seed: int) -> list[bytes]:
    """Edited versions of a text: lines deleted, duplicated, moved, a line typed in."""
    rng = random.Random(seed)
    lines = source.split(b"\n")
    out = []
    for _ in range(12):
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randrange(1, 8))
        kind = rng.randrange(4)
        if kind == 0:
            edited = lines[:a] + lines[b:]
        elif kind == 1:
            edited = lines[:b] + lines[a:b] + lines[b:]
        elif kind == 2:
            c = rng.randrange(len(lines))
            rest = lines[:a] + lines[b:]
            edited = rest[:c] + lines[a:b] + rest[c:]
        else:
            edited = [*lines[:a], lines[a] + b" x = 1 (", *lines[a + 1 :]]  # often a syntax error
        out.append(b"\n".join(edited))
    return out


@pytest.mark.parametrize("language", LANGUAGES)
def test_incremental_extraction_equals_a_fresh_one(language: str) -> None:
    source = sample_of(language)
    for new in _edits(source, seed=len(source)):
        reparse.forget()
        assert extract(language, source) == extract_uncached(language, source)
        assert extract(language, new, base=source) == extract_uncached(language, new)
        # and backwards, as the history import goes: the older text from the newer one's tree
        assert extract(language, source + b"\n", base=new) == extract_uncached(
            language, source + b"\n"
        )


def test_the_held_tree_is_reused_and_left_as_it_was() -> None:
    parser = get_parser("python")
    old = b"def f(a):\n    return a\n\n\ndef g(b):\n    return b\n"
    new = old.replace(b"return a", b"return a + 1")
    held = reparse.parse(parser, "python", old, b"old", None)
    before = str(held.root_node)
    assert ("python", b"old") in reparse._held
    for _ in range(2):  # twice: the first re-parse must not have edited the held tree
        tree = reparse.parse(parser, "python", new, b"new", b"old")
        assert str(tree.root_node) == str(parser.parse(new).root_node)
        assert tree.root_node.text == new
    assert str(held.root_node) == before and held.root_node.end_byte == len(old)


def test_a_tree_with_errors_is_neither_held_nor_kept_from_a_reparse() -> None:
    parser = get_parser("python")
    broken = b"def f(a:\n    return a\n"
    reparse.parse(parser, "python", broken, b"broken", None)
    assert ("python", b"broken") not in reparse._held
    good = b"def f(a):\n    return a\n"
    reparse.parse(parser, "python", good, b"good", None)
    tree = reparse.parse(parser, "python", broken, b"broken", b"good")
    assert str(tree.root_node) == str(parser.parse(broken).root_node)
    assert ("python", b"broken") not in reparse._held


def test_held_trees_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reparse, "HELD_TREES", 3)
    parser = get_parser("python")
    for k in range(5):
        reparse.parse(parser, "python", f"x = {k}\n".encode(), bytes([k]), None)
    assert [key for _, key in reparse._held] == [bytes([2]), bytes([3]), bytes([4])]
    assert reparse._held_bytes == sum(len(text) for _, text in reparse._held.values())


def _scattered(source: bytes, seed: int) -> bytes:
    """`source` with lines changed near its start, middle and end (one span would be most of it)."""
    rng = random.Random(seed)
    lines = source.split(b"\n")
    for where in (len(lines) // 20, len(lines) // 2, len(lines) - len(lines) // 20 - 1):
        at = min(len(lines) - 1, max(0, where + rng.randrange(-3, 4)))
        kind = rng.randrange(3)
        if kind == 0:
            del lines[at : at + rng.randrange(1, 4)]
        elif kind == 1:
            lines[at:at] = lines[at : at + rng.randrange(1, 4)]
        else:
            lines[at] = lines[at] + b"  "
    return b"\n".join(lines)


@pytest.mark.parametrize("language", LANGUAGES)
def test_edits_far_apart_are_re_parsed_apart_and_equal_a_fresh_parse(language: str) -> None:
    big = sample_of(language)
    while len(big) < 16 << 10:
        big += b"\n" + sample_of(language)
    parser = get_parser(language)
    for seed in range(3):
        new = _scattered(big, seed)
        spans = reparse.edit_spans(big, new)
        assert len(spans) > 1  # apart, not one span over most of the file
        rebuilt = b""  # the spans' new bytes in place of their old ones make the new text
        at = 0
        for start, old_end, new_start, new_end in spans:
            rebuilt += big[at:start] + new[new_start:new_end]
            at = old_end
        assert rebuilt + big[at:] == new
        reparse.forget()
        reparse.parse(parser, language, big, b"big", None)
        tree = reparse.parse(parser, language, new, b"new", b"big")
        assert str(tree.root_node) == str(parser.parse(new).root_node)
        assert extract(language, new, base=big) == extract_uncached(language, new)


def test_edits_on_several_lines_are_re_parsed_apart() -> None:
    big = b"".join(f"def f{i}(a):\n    return a + {i}\n\n\n".encode() for i in range(2000))
    new = big.replace(b"return a + 3\n", b"return a - 3\n").replace(b"a + 1998", b"a + 9")
    spans = reparse.edit_spans(big, new)
    assert len(spans) == 2 and all(old_end - start < 100 for start, old_end, _, _ in spans)
    one = reparse.edit_span(big[:1000], new[:1000])  # one edit: one span, no line diff
    assert reparse.edit_spans(big[:1000], new[:1000]) == [(one[0], one[1], one[0], one[2])]
    near = big.replace(b"return a + 3\n", b"return a - 3\n").replace(b"a + 12\n", b"a + 13\n")
    assert len(reparse.edit_spans(big, near)) == 2  # two lines apart: apart all the same


def _lexed(language: str, parse: Callable[[], object]) -> int:
    """Tokens tree-sitter lexes while `parse()` runs (its logger's count: the work the re-parse
    could not re-use, the same on every machine)."""
    parser, count = reparse_parser(language), 0

    def log(_kind: object, message: str) -> None:
        nonlocal count
        count += message.startswith("lexed_lookahead")

    parser.logger = log
    try:
        parse()
    finally:
        parser.logger = None
    return count


def reparse_parser(language: str) -> Parser:
    return _parsers.setdefault(language, get_parser(language))  # type: ignore[arg-type]


_parsers: dict[str, Parser] = {}


def test_a_function_inserted_before_the_next_re_parses_only_around_the_edits() -> None:
    """A function inserted before another and a `return` edited above it (what
    benchmarks/against_speed.py does to each file). Described as one span, or as the line
    diff's hunks placed on lines' starts, the edits made tree-sitter re-lex most of the file:
    the edit touched the zero-width dedent before the next statement, whose scanner state then
    differed, and tree-sitter skipped everything after it for a fresh parse."""
    head = "".join(f"class C{i}:\n    def m(self):\n        return {i}\n\n\n" for i in range(200))
    tail = "".join(f"def f{i}(a, b):\n    x = a * {i}\n    return x + b\n\n\n" for i in range(400))
    old = (head + tail).encode()
    new = (head.replace("        return 7", "        return  7") + "def touched(a, b):\n"
           "    return a + b\n\n\n" + tail).encode()  # fmt: skip
    parser = reparse_parser("python")
    fresh = _lexed("python", lambda: parser.parse(new))
    reparse.parse(parser, "python", old, b"old", None)
    again = _lexed("python", lambda: reparse.parse(parser, "python", new, b"new", b"old"))
    assert again < fresh / 10, (again, fresh)
    reparse.forget()
    reparse.parse(parser, "python", old, b"old", None)
    tree = reparse.parse(parser, "python", new, b"new", b"old")
    assert str(tree.root_node) == str(parser.parse(new).root_node)
