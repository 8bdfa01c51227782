"""Which index serves which statement: every SQLite statement some tests issue, planned on a
real database.

    python benchmarks/index_audit.py DB [TEST ...]

Runs the tests (default: those of the query layer, the recorder, retention, symbol history,
impact and the agents' views) with every SQLite statement SQLAlchemy executes logged, one of
each shape; then runs `EXPLAIN QUERY PLAN` of each on DB (a database `storage_size.py --keep`
left, say) and prints, per index of DB, how many shapes use it and the first of them, then the
indexes nothing uses. An index no statement needs is the cheapest room to win back
(docs/performance.md, "The database with the cache in it").
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = ["tests/test_query.py", "tests/test_cli_changes.py", "tests/test_cursors.py",
         "tests/test_symbols_history.py", "tests/test_symbols_select.py", "tests/test_impact.py",
         "tests/test_gc.py", "tests/test_blob_facts.py", "tests/test_mcp.py",
         "tests/test_mcp_symbols.py", "tests/test_mcp_cursors.py", "tests/test_against.py",
         "tests/test_status.py", "tests/test_provenance.py", "tests/test_agents_store.py",
         "tests/test_history.py", "tests/test_blame.py"]  # fmt: skip

PLUGIN = '''
import json, os
from sqlalchemy import event
from sqlalchemy.engine import Engine

_out = open(os.path.join(os.environ["SQL_AUDIT_DIR"], f"{os.getpid()}.jsonl"), "a")

@event.listens_for(Engine, "before_cursor_execute")
def _log(conn, cursor, statement, parameters, context, executemany):
    if conn.dialect.name != "sqlite" or not statement.lstrip().upper().startswith(
            ("SELECT", "DELETE", "UPDATE", "WITH", "INSERT")):
        return
    def plain(v):
        return {"b": bytes(v).hex()} if isinstance(v, (bytes, memoryview)) else v
    try:  # a statement this cannot log is left out, never failed
        p = parameters[0] if executemany and parameters else parameters
        p = {k: plain(v) for k, v in p.items()} if isinstance(p, dict) else [plain(v) for v in p]
        _out.write(json.dumps({"sql": statement, "params": p}, default=str) + "\\n")
        _out.flush()
    except Exception:
        pass
'''


def _params(logged: list[object] | dict[str, object]) -> list[object] | dict[str, object]:
    def value(v: object) -> object:
        return bytes.fromhex(str(v["b"])) if isinstance(v, dict) else v

    if isinstance(logged, dict):
        return {k: value(v) for k, v in logged.items()}
    return [value(v) for v in logged]


def _shape(sql: str) -> str:
    return re.sub(r"\(\?(, \?)*\)", "(?...)", re.sub(r"\s+", " ", sql).strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("tests", nargs="*", default=TESTS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sql_audit_plugin.py").write_text(PLUGIN)
        env = {"PYTHONPATH": tmp, "SQL_AUDIT_DIR": tmp}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "sql_audit_plugin",
                        "-n", "2", *args.tests], check=False,
                       env={**os.environ, **env})  # fmt: skip
        shapes: dict[str, tuple[str, list[object] | dict[str, object]]] = {}
        for log in Path(tmp).glob("*.jsonl"):
            for line in log.read_text().splitlines():
                row = json.loads(line)
                shapes.setdefault(_shape(row["sql"]), (row["sql"], _params(row["params"])))
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    indexes = [name for name, in con.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY tbl_name, name")]
    users: dict[str, list[str]] = collections.defaultdict(list)
    for shape, (sql, params) in sorted(shapes.items()):
        try:
            plan = [r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql, params)]
        except sqlite3.Error:
            continue  # a statement of a table this database does not have
        for step in plan:
            for name in indexes:
                if re.search(rf"\bINDEX {re.escape(name)}\b", step):
                    users[name].append(shape)
    print(f"{len(shapes)} statement shapes planned on {args.db}")
    for name in indexes:
        used = users.get(name, [])
        print(f"{len(used):4d}  {name}" + (f"   e.g. {used[0][:150]}" if used else ""))
    print("used by no statement: " + (", ".join(n for n in indexes if n not in users) or "none"))


if __name__ == "__main__":
    main()
