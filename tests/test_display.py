"""What the command line shows a person, as text: symbols with renames, who, when, how big."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from symdiff.cli.display import origin_label, short_when, size, symbol_lines, when
from symdiff.records import symbol_record


def sym(name: str, change: str, **rename: str) -> Any:
    return symbol_record(name=name, kind="method", change_type=change, start_line=1, end_line=2,
                         renamed_from=rename.get("renamed_from"),
                         renamed_to=rename.get("renamed_to"))


def test_a_rename_pair_is_one_line_old_to_new_in_line_order() -> None:
    symbols = [sym("f", "modified"),
               sym("A.render", "removed", renamed_to="A.show"),
               sym("g", "added"),
               sym("A.show", "added", renamed_from="A.render")]
    assert symbol_lines(symbols) == [("f", "modified"), ("A.render → A.show", "renamed"),
                                     ("g", "added")]


def test_half_a_pair_is_shown_as_it_is() -> None:
    assert symbol_lines([sym("A.render", "removed", renamed_to="A.show")]) == [
        ("A.render", "removed")]
    assert symbol_lines([sym("A.show", "added", renamed_from="A.render")]) == [
        ("A.show", "added")]


def test_who_made_a_change() -> None:
    base: dict[str, Any] = {"origin": "watch", "origin_info": None}
    assert origin_label(base) == "watch"  # type: ignore[arg-type]
    git = {"origin": "git", "origin_info": {"operation": "checkout", "head_before": "a"}}
    assert origin_label(git) == "git checkout"  # type: ignore[arg-type]
    edit = {"origin": "edit", "origin_info": {"client": {"name": "claude-code", "version": "2"}}}
    assert origin_label(edit) == "edit by claude-code"  # type: ignore[arg-type]
    cli = {"origin": "edit", "origin_info": {"client": "cli"}}
    assert origin_label(cli) == "edit by cli"  # type: ignore[arg-type]


def test_times_in_the_local_zone_short_when_recent() -> None:
    ts = "2026-11-22T12:00:01.5Z"
    local = datetime(2026, 11, 22, 12, 0, 1, tzinfo=UTC).astimezone()
    assert short_when(ts, today=local) == f"{local:%H:%M:%S}"
    later = local.replace(month=12, day=25)
    assert short_when(ts, today=later) == f"{local:%m-%d %H:%M:%S}"
    assert short_when(ts, today=later.replace(year=2027)) == f"{local:%Y-%m-%d %H:%M:%S}"
    assert when(ts) == f"{local:%Y-%m-%d %H:%M:%S} {local.tzname()}"


def test_sizes() -> None:
    assert [size(n) for n in (0, 999, 1000, 90112, 6_200_000, 3 * 10**12)] == [
        "0 B", "999 B", "1.0 kB", "90.1 kB", "6.2 MB", "3000.0 GB"]


def _record(path: str, names: list[str]) -> Any:
    return {"timestamp": "2026-11-22T12:00:01Z", "change_type": "modify", "path": path,
            "old_path": None, "lines_added": 3, "lines_removed": 1, "origin": "watch",
            "origin_info": None, "symbols": [sym(n, "modified") for n in names]}


def _drawn(renderable: Any, width: int) -> list[str]:
    from io import StringIO

    from rich.console import Console

    out = Console(file=StringIO(), width=width, color_system=None, highlight=False)
    out.print(renderable, soft_wrap=True)
    return out.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_a_name_breaks_only_between_its_parts_or_goes_to_a_line_of_its_own() -> None:
    from rich.text import Text

    from symdiff.cli.display import Wrapped

    def lines(text: str, width: int, indent: int = 0) -> list[str]:
        return Wrapped(Text(text), indent=indent).lines(width).plain.split("\n")

    assert lines("src/porting_helpers.py f modified", 20) == [
        "src/porting_helpers.", "py f modified"]
    assert lines("see progress_reporting_helpers.py now", 20) == [
        "see", "progress_reporting_", "helpers.py now"]
    assert lines("a.py  +3 -1  progress_report modified", 24, indent=4) == [
        "a.py  +3 -1", "    progress_report", "    modified"]
    assert lines("x " + "y" * 12, 5) == ["x", "yyyyy", "yyyyy", "yy"]  # no break point: folded
    assert lines("two\nlines", 80) == ["two", "lines"]


def test_the_changes_table_at_80_columns_cuts_no_name_inside_a_word() -> None:
    from symdiff.cli.display import changes_table

    path = "symdiff/tools/legacy/progress_reporting_helpers.py"
    names = ["ProgressReporter.render_progress_report_for_terminal", "porting_helpers"]
    drawn = _drawn(changes_table([_record(path, names)]), 80)
    header = drawn[0]
    left, right = header.index("path"), header.index("symbols")
    cells = [(line[left:right].rstrip(), line[right:].rstrip()) for line in drawn[2:]]
    path_lines = [p for p, _ in cells if p][:-1]  # the last is `+3 -1  watch`
    symbol_lines = [s for _, s in cells if s]
    assert "".join(path_lines) == path and all(p[-1] in "/._" for p in path_lines[:-1])
    assert " ".join(symbol_lines).replace("_ ", "_").replace(". ", ".") == (
        f"{names[0]} modified {names[1]} modified")
    assert "porting_helpers modified" in symbol_lines  # fits its line: never cut
    assert all(line.endswith(("_", ".", "modified")) for line in symbol_lines)
    assert all(len(line) <= 80 for line in drawn)


def test_a_watch_line_at_80_columns_continues_indented_with_names_whole() -> None:
    from symdiff.cli.display import watch_line

    record = _record("symdiff/tools/legacy/progress_reporting_helpers.py",
                     ["ProgressReporter.render_progress_report_for_terminal",
                      "porting_helpers"])
    first, second, third = _drawn(watch_line(record), 80)
    assert first.endswith(" modify symdiff/tools/legacy/progress_reporting_helpers.py  +3 -1")
    assert second == "         ProgressReporter.render_progress_report_for_terminal modified,"
    assert third == "         porting_helpers modified  (watch)"
    [piped] = _drawn(watch_line(record), 10_000)  # off a terminal: one line
    assert piped.endswith("porting_helpers modified  (watch)")
