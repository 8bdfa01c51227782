"""jedi's references to some definitions, run by the project's own venv (jedi is installed there,
never in symdiff's): reads {"root": ROOT, "sites": [[path, line, column], ...]} on stdin and
writes, per site, the [path, line, column] of each reference (definitions and imports left out).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jedi


def main() -> None:
    job = json.load(sys.stdin)
    root = Path(job["root"]).resolve()
    project = jedi.Project(root)
    out: list[list[list[object]]] = []
    for path, line, column in job["sites"]:
        script = jedi.Script(path=root / path, project=project)
        found: list[list[object]] = []
        for ref in script.get_references(line, column, scope="project"):
            where = ref.module_path
            if where is None or ref.is_definition() or ref.type == "module":
                continue
            where = Path(where).resolve()
            if where.is_relative_to(root):
                found.append([where.relative_to(root).as_posix(), ref.line, ref.column])
        out.append(found)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
