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
