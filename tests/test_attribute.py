"""Attribution: one test per rule on hand-built symbols, then golden pairs via extraction."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from symdiff.attribute.spans import attribute, symbol_changes
from symdiff.diffs.linediff import diff_lines
from symdiff.model import Symbol, SymbolChange, SymbolChangeType
from symdiff.records import of_symbol

ADDED = SymbolChangeType.ADDED
REMOVED = SymbolChangeType.REMOVED
MODIFIED = SymbolChangeType.MODIFIED
SIG = SymbolChangeType.SIGNATURE_CHANGED

FIXTURES = Path(__file__).parent / "fixtures" / "attribution"


def sym(
    name: str,
    start: int,
    end: int,
    *,
    kind: str = "function",
    header_end: int | None = None,
    sig: str = "def():",
) -> Symbol:
    parent = name.rpartition(".")[0] or None
    return Symbol(name, kind, start, end, header_end or start, sig, parent)


def run(
    old_symbols: list[Symbol], new_symbols: list[Symbol], old: str, new: str
) -> list[tuple[str, str, int, int]]:
    o, n = old.encode(), new.encode()
    changes = attribute(old_symbols, new_symbols, o, n, diff_lines(o, n))
    return [(c.name, c.change_type.value, c.start_line, c.end_line) for c in changes]


F_OLD = "def f():\n    a = 1\n    return a\n"


def test_unchanged_source_changes_nothing() -> None:
    assert run([sym("f", 1, 3)], [sym("f", 1, 3)], F_OLD, F_OLD) == []


def test_body_line_changed_in_place_is_modified() -> None:
    new = "def f():\n    a = 2\n    return a\n"
    assert run([sym("f", 1, 3)], [sym("f", 1, 3)], F_OLD, new) == [("f", "modified", 1, 3)]


def test_line_removed_on_old_side_modifies_the_new_counterpart() -> None:
    new = "def f():\n    return a\n"
    assert run([sym("f", 1, 3)], [sym("f", 1, 2)], F_OLD, new) == [("f", "modified", 1, 2)]


def test_start_line_moved_is_not_modified() -> None:
    old = "x = 1\n\n" + F_OLD
    new = "import os\nimport sys\nx = 1\n\n" + F_OLD
    assert run([sym("f", 3, 5)], [sym("f", 5, 7)], old, new) == []


def test_blank_lines_added_or_removed_modify_nothing() -> None:
    new = "def f():\n\n    a = 1\n\n\n    return a\n"
    assert run([sym("f", 1, 3)], [sym("f", 1, 6)], F_OLD, new) == []
    assert run([sym("f", 1, 6)], [sym("f", 1, 3)], new, F_OLD) == []


def test_whitespace_only_line_counts_as_blank() -> None:
    new = "def f():\n    a = 1\n    \t \n    return a\n"
    assert run([sym("f", 1, 3)], [sym("f", 1, 4)], F_OLD, new) == []


def test_comment_line_counts() -> None:
    new = "def f():\n    a = 1\n    # why: a is one\n    return a\n"
    assert run([sym("f", 1, 3)], [sym("f", 1, 4)], F_OLD, new) == [("f", "modified", 1, 4)]


def test_docstring_change_is_modified() -> None:
    old = 'def f():\n    """Old."""\n    return 1\n'
    new = 'def f():\n    """New."""\n    return 1\n'
    assert run([sym("f", 1, 3)], [sym("f", 1, 3)], old, new) == [("f", "modified", 1, 3)]


NESTED = "def outer():\n    x = 1\n    def inner():\n        return 2\n    return inner\n"


def nested_syms() -> list[Symbol]:
    return [sym("outer", 1, 5), sym("outer.inner", 3, 4)]


def test_nested_change_belongs_to_the_innermost_symbol_only() -> None:
    new = NESTED.replace("return 2", "return 3")
    assert run(nested_syms(), nested_syms(), NESTED, new) == [("outer.inner", "modified", 3, 4)]


def test_container_reported_for_its_own_lines_only() -> None:
    new = NESTED.replace("x = 1", "x = 5")
    assert run(nested_syms(), nested_syms(), NESTED, new) == [("outer", "modified", 1, 5)]


def test_adding_a_method_does_not_modify_its_class() -> None:
    old = "class A:\n    def m(self):\n        pass\n"
    new = old + "    def n(self):\n        return 1\n"
    olds = [sym("A", 1, 3, kind="class"), sym("A.m", 2, 3, kind="method")]
    news = [*olds[:1], sym("A.m", 2, 3, kind="method"), sym("A.n", 4, 5, kind="method")]
    news[0] = sym("A", 1, 5, kind="class")
    assert run(olds, news, old, new) == [("A.n", "added", 4, 5)]


def test_removed_symbol_reports_old_side_lines() -> None:
    old = "def f():\n    return 1\n\ndef g():\n    return 2\n"
    new = "def g():\n    return 2\n"
    got = run([sym("f", 1, 2), sym("g", 4, 5)], [sym("g", 1, 2)], old, new)
    assert got == [("f", "removed", 1, 2)]


def test_signature_change_wins_over_body_change() -> None:
    old = "def f(a):\n    return a\n"
    new = "def f(a, b):\n    return a + b\n"
    got = run([sym("f", 1, 2, sig="def(a):")], [sym("f", 1, 2, sig="def(a,b):")], old, new)
    assert got == [("f", "signature_changed", 1, 2)]


def test_decorator_only_edit_is_signature_changed() -> None:
    old = "@cache\ndef f():\n    return 1\n"
    new = "@cache(maxsize=2)\ndef f():\n    return 1\n"
    olds = [sym("f", 1, 3, header_end=2, sig="@cache def():")]
    news = [sym("f", 1, 3, header_end=2, sig="@cache(maxsize=2) def():")]
    assert run(olds, news, old, new) == [("f", "signature_changed", 1, 3)]


def test_header_reformatted_with_equal_signature_is_modified_not_signature_changed() -> None:
    old = "def f(a,b):\n    return a\n"
    new = "def f(a, b):\n    return a\n"
    got = run([sym("f", 1, 2, sig="def(a,b):")], [sym("f", 1, 2, sig="def(a,b):")], old, new)
    assert got == [("f", "modified", 1, 2)]


def test_one_liner_body_change_is_modified() -> None:
    old, new = "def f(): return 1\n", "def f(): return 2\n"
    assert run([sym("f", 1, 1)], [sym("f", 1, 1)], old, new) == [("f", "modified", 1, 1)]


OVERLOADS = "int f(int a) {\n  return a;\n}\nint f(char *s) {\n  return 0;\n}\n"


def overloads(second_sig: str = "(char*s)") -> list[Symbol]:
    return [sym("f", 1, 3, sig="int(int a)"), sym("f", 4, 6, sig="int" + second_sig)]


def test_overloads_never_collapse() -> None:
    new = OVERLOADS.replace("return 0;", "return 1;")
    assert run(overloads(), overloads(), OVERLOADS, new) == [("f", "modified", 4, 6)]


def test_overload_removed_is_the_one_whose_signature_disappeared() -> None:
    # The first overload goes; a positional pairing would call the second one removed.
    new = "int f(char *s) {\n  return 0;\n}\n"
    got = run(overloads(), [sym("f", 1, 3, sig="int(char*s)")], OVERLOADS, new)
    assert got == [("f", "removed", 1, 3)]


def test_overload_signature_change_pairs_with_the_leftover() -> None:
    new = OVERLOADS.replace("char *s", "long s")
    got = run(overloads(), overloads("(long s)"), OVERLOADS, new)
    assert got == [("f", "signature_changed", 4, 6)]


def test_same_named_definitions_pair_by_position() -> None:
    old = "if X:\n    def f():\n        return 1\nelse:\n    def f():\n        return 2\n"
    new = old.replace("return 2", "return 3")
    olds = [sym("f", 2, 3), sym("f", 5, 6)]
    assert run(olds, list(olds), old, new) == [("f", "modified", 5, 6)]


def test_duplicate_inserted_between_identical_definitions_is_the_one_added() -> None:
    block = "def f():\n    return 1\n"
    old = block + "x = 1\n" + block
    new = block + "x = 1\n" + block + "y = 2\n" + "def f():\n    return 9\n"
    olds = [sym("f", 1, 2), sym("f", 4, 5)]
    news = [sym("f", 1, 2), sym("f", 4, 5), sym("f", 7, 8)]
    assert run(olds, news, old, new) == [("f", "added", 7, 8)]


def test_without_identical_bodies_the_nearest_duplicate_is_paired() -> None:
    # The first f goes and the second is edited: its old start, carried through the diff,
    # lands on the new f's start line, so the first is the one removed.
    old = "def f():\n    return 1\ndef f():\n    x = 2\n    return x\n"
    new = "def f():\n    x = 2\n    return x + 1\n"
    got = run([sym("f", 1, 2), sym("f", 3, 5)], [sym("f", 1, 3)], old, new)
    assert got == [("f", "modified", 1, 3), ("f", "removed", 1, 2)]


def test_huge_duplicate_groups_still_pair_every_symbol() -> None:
    n = 600
    old = "".join(f"def f():\n    return {i}\n" for i in range(n))
    new = old + "def f():\n    return -1\n"
    olds = [sym("f", 2 * i + 1, 2 * i + 2) for i in range(n)]
    news = [*olds, sym("f", 2 * n + 1, 2 * n + 2)]
    assert run(olds, news, old, new) == [("f", "added", 2 * n + 1, 2 * n + 2)]


def test_same_name_in_different_classes_is_distinct() -> None:
    init = "    def __init__(self):\n        pass\n"
    old = "class A:\n" + init + "class B:\n" + init
    new = old[: old.rindex("pass")] + "self.x = 1\n"
    olds = [
        sym("A", 1, 3, kind="class"),
        sym("A.__init__", 2, 3, kind="method"),
        sym("B", 4, 6, kind="class"),
        sym("B.__init__", 5, 6, kind="method"),
    ]
    assert run(olds, list(olds), old, new) == [("B.__init__", "modified", 5, 6)]


def test_moved_definition_is_not_modified() -> None:
    f = "def f():\n    return 1\n"
    g = "def g():\n    return 2\n"
    got = run([sym("f", 1, 2), sym("g", 3, 4)], [sym("g", 1, 2), sym("f", 3, 4)], f + g, g + f)
    assert got == []


def test_reindented_definition_is_not_modified() -> None:
    old = "def f():\n    return 1\n"
    new = "if X:\n    def f():\n        return 1\n"
    assert run([sym("f", 1, 2)], [sym("f", 2, 3)], old, new) == []


def test_content_decides_even_where_the_diff_aligns_lines_across_symbols() -> None:
    # The diff keeps `x = 1` of g as f's new second line: only g's header line "changed".
    old = "def f():\n    x = 1\ndef g():\n    x = 1\n"
    new = "def f():\n    x = 1\n    x = 1\n"
    got = run([sym("f", 1, 2), sym("g", 3, 4)], [sym("f", 1, 3)], old, new)
    assert got == [("f", "modified", 1, 3), ("g", "removed", 3, 4)]


def test_rename_with_same_body_links_both_records() -> None:
    old = "def f(a):\n    b = a * 2\n    return b\n"
    new = "def g(a):\n    b = a * 2\n    return b\n"
    o, n = old.encode(), new.encode()
    got = attribute([sym("f", 1, 3)], [sym("g", 1, 3)], o, n, diff_lines(o, n))
    assert got == [
        SymbolChange("f", "function", REMOVED, 1, 3, renamed_to="g"),
        SymbolChange("g", "function", ADDED, 1, 3, renamed_from="f"),
    ]


def test_rename_needs_the_same_body() -> None:
    old = "def f(a):\n    return a\n"
    new = "def g(a):\n    return a + 1\n"
    o, n = old.encode(), new.encode()
    got = attribute([sym("f", 1, 2)], [sym("g", 1, 2)], o, n, diff_lines(o, n))
    assert all(c.renamed_from is None and c.renamed_to is None for c in got)
    assert [c.change_type for c in got] == [REMOVED, ADDED]


def test_ambiguous_trivial_bodies_are_not_called_renames() -> None:
    old = "def a():\n    pass\ndef b():\n    pass\n"
    new = "def c():\n    pass\ndef d():\n    pass\n"
    o, n = old.encode(), new.encode()
    olds, news = [sym("a", 1, 2), sym("b", 3, 4)], [sym("c", 1, 2), sym("d", 3, 4)]
    got = attribute(olds, news, o, n, diff_lines(o, n))
    assert len(got) == 4
    assert all(c.renamed_from is None and c.renamed_to is None for c in got)


def test_output_is_ordered_by_reported_start_line() -> None:
    old = "def a():\n    return 1\n" * 1 + "def b():\n    return 2\n"
    new = "def z():\n    return 0\ndef b():\n    return 3\n"
    got = run([sym("a", 1, 2), sym("b", 3, 4)], [sym("z", 1, 2), sym("b", 3, 4)], old, new)
    assert got == [("a", "removed", 1, 2), ("z", "added", 1, 2), ("b", "modified", 3, 4)]


def test_outer_before_inner_at_the_same_start_line() -> None:
    new = "class A:\n    def m(self): pass\n"
    news = [sym("A", 1, 2, kind="class"), sym("A.m", 2, 2, kind="method")]
    got = run([], news, "", new)
    assert got == [("A", "added", 1, 2), ("A.m", "added", 2, 2)]


def test_byte_spans_split_a_shared_line_between_its_definitions() -> None:
    old, new = "f(){1} g(){2}\n", "f(){7} g(){2}\n"
    spans = [sym("f", 1, 1), sym("g", 1, 1)]
    with_bytes = [
        replace(spans[0], start_byte=0, end_byte=6),
        replace(spans[1], start_byte=7, end_byte=13),
    ]
    assert run(with_bytes, with_bytes, old, new) == [("f", "modified", 1, 1)]


# --- the convenience entry point, through real extraction --------------------------------------


def test_file_added_makes_every_symbol_added() -> None:
    src = b"class A:\n    def m(self):\n        pass\n\ndef f():\n    return 1\n"
    got = [(c.name, c.change_type) for c in symbol_changes("python", None, src)]
    assert got == [("A", ADDED), ("A.m", ADDED), ("f", ADDED)]


def test_file_deleted_makes_every_symbol_removed() -> None:
    src = b"def f():\n    return 1\n"
    got = symbol_changes("python", src, None)
    assert [(c.name, c.change_type, c.start_line) for c in got] == [("f", REMOVED, 1)]


def test_unparsed_language_yields_nothing() -> None:
    assert symbol_changes(None, b"a\n", b"b\n") == []
    assert symbol_changes("no-such-language", b"a\n", b"b\n") == []


def test_real_python_decorator_and_nested_edits() -> None:
    old = b"@dec\ndef f(a):\n    def g():\n        return 1\n    return g\n"
    new = b"@dec(1)\ndef f(a):\n    def g():\n        return 2\n    return g\n"
    got = [(c.name, c.change_type) for c in symbol_changes("python", old, new)]
    assert got == [("f", SIG), ("f.g", MODIFIED)]


# --- definitions sharing a line (minified code), through real extraction ------------------------


def changed(language: str, old: bytes, new: bytes) -> list[tuple[str, SymbolChangeType]]:
    return [(c.name, c.change_type) for c in symbol_changes(language, old, new)]


MINIFIED = b"function a(){return 1};function b(){return 2};function c(){return 3}\n"


def test_minified_js_edit_modifies_the_function_edited_not_the_last_on_the_line() -> None:
    assert changed("javascript", MINIFIED, MINIFIED.replace(b"return 2", b"return 5")) == [
        ("b", MODIFIED)
    ]
    # b grows, so c's bytes shift: a position shift alone modifies nothing.
    assert changed("javascript", MINIFIED, MINIFIED.replace(b"return 2", b"return 2222")) == [
        ("b", MODIFIED)
    ]


def test_minified_js_removal_and_addition_touch_nothing_else_on_the_line() -> None:
    without_b = MINIFIED.replace(b"function b(){return 2};", b"")
    assert changed("javascript", MINIFIED, without_b) == [("b", REMOVED)]
    with_d = MINIFIED.replace(b"c(){return 3}", b"c(){return 3};function d(){return 4}")
    assert changed("javascript", MINIFIED, with_d) == [("d", ADDED)]


def test_minified_js_split_onto_lines_modifies_nothing() -> None:
    spread = MINIFIED.replace(b"};", b"}\n")
    assert changed("javascript", MINIFIED, spread) == []


def test_fifty_thousand_functions_on_one_line_attribute_to_the_one_edited() -> None:
    n = 50_000
    old = b";".join(b"function f%d(){return %d}" % (i, i) for i in range(n)) + b"\n"
    new = old.replace(b"function f25000(){return 25000}", b"function f25000(){return -1}")
    got = symbol_changes("javascript", old, new)
    assert [(c.name, c.change_type, c.start_line, c.end_line) for c in got] == [
        ("f25000", MODIFIED, 1, 1)
    ]


def test_one_line_class_keeps_its_own_bytes_apart_from_its_methods() -> None:
    old = b"class A{m(){return 1}n(){return 2}x=1}\n"
    assert changed("javascript", old, old.replace(b"return 2", b"return 3")) == [("A.n", MODIFIED)]
    assert changed("javascript", old, old.replace(b"x=1", b"x=2")) == [("A", MODIFIED)]


def test_sibling_ending_on_the_line_where_the_next_starts() -> None:
    # Line 3 holds a's end and b's header: an edit before the `}` belongs to a, not to b.
    old = b"class K {\n  a() {\n    return 1 } b() {\n    return 2 }\n}\n"
    assert changed("javascript", old, old.replace(b"return 1 }", b"return 7 }")) == [
        ("K.a", MODIFIED)
    ]
    assert changed("javascript", old, old.replace(b"b() {", b"b() { x();")) == [("K.b", MODIFIED)]
    renamed = symbol_changes("javascript", old, old.replace(b"a() {", b"z() {"))
    assert [(c.name, c.renamed_from, c.renamed_to) for c in renamed] == [
        ("K.a", None, "K.z"),
        ("K.z", "K.a", None),
    ]


def test_c_functions_on_one_line() -> None:
    old = b"int a(void){return 1;} int b(void){return 2;} int c(void){return 3;}\n"
    assert changed("c", old, old.replace(b"return 2", b"return 9")) == [("b", MODIFIED)]


def test_nested_definitions_on_one_line_keep_line_ownership() -> None:
    # A method on its class's last line nests in it: the line is not split, so a trailing
    # comment stays the method's, as the whole-line rule says.
    old = b"class A:\n    def m(self): return 1  # c\n"
    assert changed("python", old, old.replace(b"# c", b"# d")) == [("A.m", MODIFIED)]


# --- golden before/after pairs ------------------------------------------------------------------


def _golden_cases() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*") if p.is_dir()) if FIXTURES.exists() else []


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_pair(case: Path) -> None:
    language = case.parent.name
    before = next(case.glob("before.*"))
    after = next(case.glob("after.*"))
    expected = json.loads((case / "expected.json").read_text())
    got = symbol_changes(language, before.read_bytes(), after.read_bytes())
    assert [of_symbol(c) for c in got] == expected


# --- the shortcut for pairs whose own lines the diff left alone --------------------------------


def test_kept_lines_maps_untouched_old_lines_to_new_ones() -> None:
    from symdiff.attribute import spans as module
    old = b"a\nb\nc\nd\ne\n"
    new = b"a\nX\nc\nY\nZ\nd\ne\n"  # b replaced, two lines inserted after c
    kept = module._kept_lines(diff_lines(old, new), len(old.split(b"\n")))
    assert kept[1:6] == [1, 0, 3, 6, 7]
    assert module._kept_lines(diff_lines(b"", b"x\n"), 1)[1:] == [2]  # a file written whole


def test_the_shortcut_gives_the_answers_of_the_full_comparison(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Edits of a real file: every pair the shortcut calls unchanged, the texts agree on."""
    import random

    from symdiff.attribute import spans as module
    from symdiff.parse.extract import extract

    source = (Path(__file__).parent / "fixtures" / "languages" / "python").glob("sample*")
    text = next(iter(source)).read_bytes()
    lines = text.split(b"\n")
    rng = random.Random(7)
    for _ in range(25):
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randrange(1, 6))
        edited = [*lines[:a], *(b"    " + ln for ln in lines[a:b]), *lines[b:]]
        if rng.random() < 0.5:
            edited.insert(rng.randrange(len(edited)), b"x = 1")
        new = b"\n".join(edited)
        args = (extract("python", text), extract("python", new), text, new, diff_lines(text, new))
        fast = attribute(*args)
        with monkeypatch.context() as m:
            m.setattr(module, "_same_own_lines", lambda *_: False)
            assert attribute(*args) == fast


def test_the_normalised_text_is_the_normalised_lines_joined() -> None:
    """`_normalised` (regex passes over the joined lines) against `_normalise` (a step per
    line), over lines made of the characters that decide it: blanks as `bytes.strip` sees
    them, carriage returns, mixed tabs and spaces. Equal texts must stay equal and different
    ones different, so the answers must match exactly."""
    import random

    from symdiff.attribute.spans import _normalise, _normalised

    pick = random.Random(25)
    alphabet = [b" ", b"  ", b"\t", b"\r", b"\x0b", b"\x0c", b"x", b"y ", b"\r\r"]
    checked = 0
    for _ in range(4000):
        lines = [b"".join(pick.choices(alphabet, k=pick.randint(0, 5)))
                 for _ in range(pick.randint(0, 6))]  # fmt: skip
        if pick.random() < 0.5:  # a common indentation, now and then of mixed tabs and spaces
            lead = pick.choice([b"    ", b"\t", b" \t", b"\t "])
            lines = [lead + ln if pick.random() < 0.9 else ln for ln in lines]
        expected = b"".join(ln + b"\n" for ln in _normalise(enumerate(lines)))
        assert _normalised(lines) == expected, lines
        checked += bool(expected)
    assert checked > 2000  # most cases keep some text
