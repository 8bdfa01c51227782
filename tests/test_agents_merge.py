"""The three-way merge behind undo: changes beside each other are both kept, the same lines
conflict."""

from __future__ import annotations

from symdiff.agents.merge import merge3

BASE = b"".join(b"line %d\n" % i for i in range(1, 11))


def _with(base: bytes, **repl: str) -> bytes:
    lines = base.splitlines(keepends=True)
    for key, text in repl.items():
        lines[int(key[1:]) - 1] = text.encode()
    return b"".join(lines)


def test_changes_on_different_and_adjacent_lines_are_both_kept() -> None:
    ours = _with(BASE, l2="two\n", l5="five\n")
    theirs = _with(BASE, l6="six\n", l9="")
    merged, conflicts = merge3(BASE, ours, theirs)
    assert conflicts == []
    assert merged == _with(BASE, l2="two\n", l5="five\n", l6="six\n", l9="")


def test_the_same_lines_conflict_and_identical_changes_do_not() -> None:
    merged, conflicts = merge3(BASE, _with(BASE, l3="A\n"), _with(BASE, l3="B\n"))
    assert merged is None and [(c.start, c.ours, c.theirs) for c in conflicts] == [(3, "A\n",
                                                                                     "B\n")]
    same = _with(BASE, l3="A\n")
    assert merge3(BASE, same, same) == (same, [])


def test_insertions_at_the_ends_and_in_the_middle() -> None:
    ours = b"top\n" + BASE
    theirs = BASE + b"bottom\n"
    merged, conflicts = merge3(BASE, ours, theirs)
    assert conflicts == [] and merged == b"top\n" + BASE + b"bottom\n"
    inserted = BASE.replace(b"line 5\n", b"line 5\nnew a\n")
    other = BASE.replace(b"line 5\n", b"line 5\nnew b\n")
    assert merge3(BASE, inserted, other)[0] is None
    no_eol = merge3(b"a\nb", b"a\nb", b"a\nc")
    assert no_eol == (b"a\nc", [])
