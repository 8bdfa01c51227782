"""Recall of symdiff's extraction against universal-ctags on real code this machine has.

For each language: the share of ctags' function/method/class definitions that symdiff also
finds on the same line (between a symbol's start line and the end of its header).
Run: .venv/bin/python benchmarks/symbol_recall.py [--files N] [--misses K]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

from symdiff.extract import extract

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
FIXTURES = HERE.parent / "tests" / "fixtures" / "languages"
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"

# ctags language name per symdiff language.
CTAGS_LANG = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TypeScript",
    "go": "Go", "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++", "csharp": "C#",
    "ruby": "Ruby", "php": "PHP", "kotlin": "Kotlin", "swift": "Swift", "scala": "Scala",
    "bash": "Sh",
}  # fmt: skip
# ctags kinds that are definitions of functions, methods or classes.
KINDS = {"function", "method", "class", "func", "singletonMethod", "constructor", "prototype"}


def wanted(language: str, tag: dict[str, object]) -> bool:
    """Whether a ctags tag is a definition we score (ctags' own heuristics filtered out)."""
    kind, name = tag.get("kind"), str(tag.get("name", ""))
    if language == "python" and kind == "member":
        return True  # ctags' Python methods
    if name.startswith("AnonymousFunction"):
        return False
    if language == "javascript" and kind == "class":
        return "class " in str(tag.get("pattern", ""))  # ctags calls object literals classes
    return kind in KINDS


def _jdk_sources(limit: int) -> list[Path]:
    zips = sorted(Path("/usr/lib/jvm").glob("*/lib/src.zip"))
    if not zips:
        return []
    out = CACHE / "jdk"
    if not out.exists():
        with zipfile.ZipFile(zips[0]) as z:
            names = [n for n in z.namelist() if n.startswith("java.base/java/util/")]
            z.extractall(out, [n for n in names if n.endswith(".java")])
    return sorted(out.rglob("*.java"))[:limit]


def _c_headers(limit: int) -> list[Path]:
    """Top-level /usr/include headers, minus the C++ ones (ncurses++ etc.) that .h also names."""
    cxx = (b"class ", b"template<", b"template <", b"namespace ")
    headers = sorted(Path("/usr/include").glob("*.h"))
    return [h for h in headers if not any(m in h.read_bytes() for m in cxx)][:limit]


def corpora(limit: int) -> dict[str, tuple[str, list[Path]]]:
    """Language -> (where the files come from, files)."""
    real: dict[str, tuple[str, list[Path]]] = {
        "python": ("site-packages", sorted((SITE / "site-packages").rglob("*.py"))[:limit]),
        "c": ("/usr/include (C only)", _c_headers(limit)),
        "cpp": ("libstdc++ bits", sorted(Path("/usr/include/c++").glob("*/bits/*.h"))[:limit]),
        "javascript": ("npm", sorted(Path("/usr/lib/node_modules/npm").rglob("*.js"))[:limit]),
        "java": ("JDK src.zip java.util", _jdk_sources(limit)),
    }  # fmt: skip
    out: dict[str, tuple[str, list[Path]]] = {}
    for language in CTAGS_LANG:
        source, files = real.get(language, ("", []))
        if not files:
            source, files = "golden sample", sorted((FIXTURES / language).glob("sample*"))
        out[language] = (source, files)
    return out


def ctags_tags(language: str, files: list[Path]) -> dict[str, list[dict[str, object]]]:
    """Path -> ctags' definition tags of the wanted kinds."""
    cmd = ["ctags", "--output-format=json", "--fields=+neKZ", "-f", "-", "-L", "-"]
    cmd.insert(1, f"--language-force={CTAGS_LANG[language]}")
    if language in ("c", "cpp"):
        cmd.insert(1, f"--kinds-{CTAGS_LANG[language]}=+p")  # symdiff keeps prototypes too
    done = subprocess.run(
        cmd, input="\n".join(map(str, files)), capture_output=True, text=True, check=False
    )
    tags: dict[str, list[dict[str, object]]] = defaultdict(list)
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and wanted(language, tag):
            tags[str(tag["path"])].append(tag)
    return tags


def recall(language: str, files: list[Path], show: int) -> tuple[int, int]:
    tags = ctags_tags(language, files)
    found = total = 0
    misses: list[str] = []
    for path in files:
        symbols = extract(language, path.read_bytes())
        spans = [(s.start_line, s.header_end_line) for s in symbols]
        for tag in tags.get(str(path), []):
            line = int(str(tag["line"]))
            total += 1
            if any(lo <= line <= hi for lo, hi in spans):
                found += 1
            elif len(misses) < show:
                misses.append(f"    miss {path}:{line} {tag['kind']} {tag['name']}")
    for miss in misses:
        print(miss)
    return found, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=400, help="files per language")
    parser.add_argument("--misses", type=int, default=0, help="misses to print per language")
    args = parser.parse_args()
    print(f"{'language':<11} {'corpus':<22} {'files':>5} {'ctags defs':>10} {'found':>6} recall")
    for language, (source, files) in corpora(args.files).items():
        found, total = recall(language, files, args.misses)
        share = found / total if total else float("nan")
        print(f"{language:<11} {source:<22} {len(files):>5} {total:>10} {found:>6} {share:>6.3f}")


if __name__ == "__main__":
    main()
