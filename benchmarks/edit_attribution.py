"""Attribution of synthetic body edits on real files, per language.

For up to N files of each language's recall corpus (benchmarks/symbol_recall.py, including its
`--tree LANG=DIR` checkouts), picks body lines at random (seeded) and renames one identifier on
the line (`name` -> `nameQ`): a change that keeps the file's syntax. The edit must be reported
as exactly one `modified` change of the innermost definition holding the line, and nothing else.
Lines that are a definition's first or last line or in its header, or hold a comment mark or a
quote, are skipped (a rename there is a signature change or may break the syntax), as are
keywords and words at the start of a line (a Haskell equation's name).
Run: .venv/bin/python benchmarks/edit_attribution.py [--files N] [--show K] [--tree LANG=DIR]
     [LANGUAGE ...]
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Iterator
from pathlib import Path

from symbol_recall import corpora

from symdiff.attribute.spans import symbol_changes
from symdiff.model import Symbol
from symdiff.parse.extract import extract

WORD = re.compile(rb"\b[a-z_][A-Za-z0-9_]{2,}\b")
KEYWORDS = frozenset(
    b"end then else elseif elsif begin let where return local function unless fn do case of in if "
    b"for while try with match when and not or sub my our def defp self this const var final new "
    b"nil true false null module struct import use export catch rescue after elif break continue "
    b"await async pub orelse unreachable undefined comptime inline switch defer errdefer type data "
    b"instance class val fun method object include open rec mutable last next package done esac fi "
    b"until select".split()
)  # fmt: skip
SKIP_MARKS = (b"#", b"//", b"--", b'"', b"'", b"%", b"/*", b"(*", b"@")


def _innermost(symbols: list[Symbol], line: int) -> Symbol | None:
    holding = [s for s in symbols if s.start_line <= line <= s.end_line]
    return max(holding, key=lambda s: (s.start_line, -s.end_line), default=None)


def _edits(
    source: bytes, symbols: list[Symbol], rng: random.Random, per_file: int
) -> Iterator[tuple[int, str, bytes]]:
    """(line, the definition that must be reported, the edited source) for random body lines."""
    lines = source.split(b"\n")
    edges = {s.start_line for s in symbols} | {s.end_line for s in symbols}
    body = [
        n
        for s in symbols
        for n in range(s.header_end_line + 1, s.end_line)
        if n not in edges and not any(m in lines[n - 1] for m in SKIP_MARKS)
    ]
    for n in rng.sample(sorted(set(body)), min(per_file, len(set(body)))):
        inner = _innermost(symbols, n)
        # A word at the start of a line may head a definition (a Haskell equation), and a line
        # opening with `=` is Perl POD: renaming either is not a body edit.
        words = [w for w in WORD.finditer(lines[n - 1]) if w.group() not in KEYWORDS and w.start()]
        if inner is None or inner.header_end_line >= n or not words or lines[n - 1][:1] == b"=":
            continue
        word = words[-1]
        edited = lines[n - 1][: word.end()] + b"Q" + lines[n - 1][word.end() :]
        yield n, inner.name, b"\n".join([*lines[: n - 1], edited, *lines[n:]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100, help="files per language")
    parser.add_argument("--per-file", type=int, default=3, help="edits per file")
    parser.add_argument("--show", type=int, default=0, help="disagreements to print")
    parser.add_argument("--tree", action="append", default=[], metavar="LANG=DIR")
    parser.add_argument("languages", nargs="*")
    args = parser.parse_args()
    trees = {k: Path(v) for k, _, v in (t.partition("=") for t in args.tree)}
    print(f"{'language':<11} {'files':>5} {'edits':>6} {'exact':>6} share")
    for language, (_source, files) in corpora(args.files, args.languages, trees).items():
        rng = random.Random(17)
        total = exact = 0
        shown: list[str] = []
        for path in files:
            old = path.read_bytes()
            symbols = extract(language, old)
            for line, name, new in _edits(old, symbols, rng, args.per_file):
                got = [(c.name, c.change_type.value) for c in symbol_changes(language, old, new)]
                total += 1
                if got == [(name, "modified")]:
                    exact += 1
                elif len(shown) < args.show:
                    shown.append(f"    {path}:{line} {name}: {got[:4]}")
        for disagreement in shown:
            print(disagreement)
        share = exact / total if total else float("nan")
        print(f"{language:<11} {len(files):>5} {total:>6} {exact:>6} {share:.3f}")


if __name__ == "__main__":
    main()
