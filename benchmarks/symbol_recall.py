"""Recall of symdiff's extraction against universal-ctags on real code this machine has.

For each language: the share of ctags' function/method/class definitions that symdiff also
finds on the same line (between a symbol's start line and the end of its header).
Run: .venv/bin/python benchmarks/symbol_recall.py [--files N] [--misses K] [LANGUAGE ...]
Corpora that this machine must download (Debian packages, npm tarballs, a PyPI sdist) are
fetched once into benchmarks/.cache/recall; an unreachable one falls back to the golden sample.
Languages no registry here ships as source (Elixir, Haskell, R, Julia, Objective-C) are measured
on a checkout: `--tree elixir=DIR` takes every .ex/.exs file under DIR (tests left out).
`--by-name` (C, C++, Objective-C) also asks for ctags' qualified name: a method counts only when
the symbol on its line is named `Class.selector` (`ns::Class::method`), as ctags' scope says; a
class lost to a syntax error leaves its methods found on their lines but unqualified.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tree_sitter_language_pack import get_parser

from symdiff.parse.extract import extract
from symdiff.parse.languages import language_for

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
FIXTURES = HERE.parent / "tests" / "fixtures" / "languages"
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"

# ctags language name per symdiff language.
CTAGS_LANG = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TypeScript",
    "go": "Go", "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++", "csharp": "C#",
    "ruby": "Ruby", "php": "PHP", "kotlin": "Kotlin", "swift": "Swift", "scala": "Scala",
    "bash": "Sh", "lua": "Lua", "perl": "Perl", "ocaml": "OCaml", "elixir": "Elixir",
    "haskell": "Haskell", "r": "R", "julia": "Julia",
    "objc": "ObjectiveC",
}  # fmt: skip
# ctags kinds that are definitions of functions, methods or classes.
HASKELL_KEYWORDS = {"deriving", "default", "pattern", "infix", "infixl", "infixr", "type", "data"}
KINDS = {"function", "method", "class", "func", "singletonMethod", "constructor", "prototype"}


def wanted(language: str, tag: dict[str, object]) -> bool:
    """Whether a ctags tag is a definition we score (ctags' own heuristics filtered out)."""
    kind, name = tag.get("kind"), str(tag.get("name", ""))
    if language == "python" and kind == "member":
        return True  # ctags' Python methods
    if name.startswith("AnonymousFunction"):
        return False
    if language == "kotlin" and (name == "<lambda>" or _lambda_parameter(tag)):
        return False  # ctags 5.9 tags Kotlin lambdas, and their parameters, as methods
    if language == "bash" and name.endswith("="):
        return False  # ctags 5.9 reads an array assignment `COMPREPLY=()` as a function
    if language in _FILTERS:
        return _FILTERS[language](tag)
    if language == "ocaml" and name in ("()", "_"):
        return False  # `let () = …` runs code; it defines nothing
    if language == "elixir":
        return kind in ("function", "macro", "module", "protocol", "implementation")
    if language == "haskell":  # ctags 5.9 also reads some keywords as function names
        return kind in ("function", "type") and name not in HASKELL_KEYWORDS
    if language == "r":  # ctags names an unnamed function it cannot place `anonFunc…`
        return kind in ("function", "method") and not name.startswith("anonFunc")
    if language == "objc":
        return kind in ("method", "class", "function", "interface", "implementation", "protocol")
    if language == "julia":
        return kind in ("function", "macro", "module", "struct")
    if language == "perl":
        return kind in ("subroutine", "package")
    if language == "javascript" and kind == "class":
        return "class " in str(tag.get("pattern", ""))  # ctags calls object literals classes
    return kind in KINDS


def _macro_statement(tag: dict[str, object]) -> bool:
    """A C/C++ tag ctags 5.9 makes of what is no definition: a lambda (`__anon…`), or a macro
    call read as a prototype — `BIT(flag);` in a struct (no return type, not a constructor) or
    `STATIC_ASSERT(offsetof(…) == …);` (its "return type" an expression)."""
    name, typeref = str(tag.get("name", "")), str(tag.get("typeref", ""))
    if name.startswith("__anon"):
        return True
    if tag.get("kind") != "prototype":
        return False
    if "(" in typeref:
        return True
    scope = str(tag.get("scope", "")).rsplit("::", 1)[-1]
    return not typeref and name not in (scope, f"~{scope}") and not name.startswith("operator")


def _lua_defines(tag: dict[str, object]) -> bool:
    """Whether ctags' line defines the function it names: ctags 5.9 matches `name = function`
    anywhere on a line, so `cmp = function_arg(…)` and `x = f(function (…) … end)` are tagged."""
    name = re.escape(str(tag.get("name", "")))
    pattern = str(tag.get("pattern", ""))
    return re.search(rf"function\s+{name}\s*\(|{name}\s*=\s*function\s*\(", pattern) is not None


def _c_defines(tag: dict[str, object]) -> bool:
    return tag.get("kind") in KINDS and not _macro_statement(tag)


_FILTERS: dict[str, Callable[[dict[str, object]], bool]] = {
    "lua": _lua_defines, "c": _c_defines, "cpp": _c_defines}


def _lambda_parameter(tag: dict[str, object]) -> bool:
    """A ctags Kotlin "method" that is a parameter of the lambda it is scoped in (no `fun`)."""
    in_lambda = str(tag.get("scope", "")).endswith("<lambda>")
    return in_lambda and "fun " not in str(tag.get("pattern", ""))


def _spread(files: list[Path], limit: int) -> list[Path]:
    """Up to `limit` files taken evenly across a sorted list, so one package does not fill it."""
    files = sorted(files)
    return files[:: max(1, len(files) // limit)][:limit]


def _fetch(name: str, fetch: Callable[[Path], None]) -> Path | None:
    """benchmarks/.cache/recall/<name>, filled by `fetch` on first use; None when unreachable."""
    target = CACHE / "recall" / name
    if target.is_dir():
        return target
    scratch = target.with_suffix(".part")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        fetch(scratch)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        print(f"  corpus {name} unreachable, skipped: {error}", file=sys.stderr)
        shutil.rmtree(scratch, ignore_errors=True)
        return None
    scratch.rename(target)
    return target


def _run(cmd: list[str], cwd: Path) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, timeout=300)


def _debian(*packages: str) -> Callable[[Path], None]:
    """Download Debian binary packages with `apt-get download` and unpack them."""

    def fetch(into: Path) -> None:
        _run(["apt-get", "download", *packages], into)
        for deb in into.glob("*.deb"):
            _run(["dpkg-deb", "-x", str(deb), "."], into)
            deb.unlink()

    return fetch


def _npm(*specs: str) -> Callable[[Path], None]:
    """Download npm tarballs with `npm pack` and unpack each into its own folder."""

    def fetch(into: Path) -> None:
        _run(["npm", "pack", "--silent", *specs], into)
        for tgz in into.glob("*.tgz"):
            with tarfile.open(tgz) as tar:
                tar.extractall(into / tgz.stem, filter="data")
            tgz.unlink()

    return fetch


def _sdist(spec: str) -> Callable[[Path], None]:
    """Download a PyPI source distribution and unpack it."""

    def fetch(into: Path) -> None:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        _run([*pip, "--no-binary", ":all:", spec, "-d", "."], into)
        for sdist in into.glob("*.tar.gz"):
            with tarfile.open(sdist) as tar:
                tar.extractall(into, filter="data")
            sdist.unlink()

    return fetch


def _files(name: str, fetch: Callable[[Path], None], pattern: str, limit: int) -> list[Path]:
    """Up to `limit` files matching `pattern` in a fetched corpus, minus tests and declarations."""
    root = _fetch(name, fetch)
    if root is None:
        return []
    skip = ("/testdata/", "/test/", "/tests/", "/__tests__/")
    found = [
        p
        for p in root.rglob(pattern)
        if p.is_file()
        and not any(s in str(p) for s in skip)
        and not p.name.endswith((".d.ts", "_test.go", ".test.ts", ".test.tsx"))
    ]
    return _spread(found, limit)


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


def _bash_completion(limit: int) -> list[Path]:
    """Every shell script of Debian's bash-completion package: the `bash_completion` library
    itself, the completions (no extension) and the /etc hooks; not its Perl and Python helpers."""
    root = _fetch("bash-completion", _debian("bash-completion"))
    if root is None:
        return []
    share = root / "usr/share/bash-completion"
    scripts = [share / "bash_completion", *(share / "completions").iterdir()]
    scripts += [root / "etc/bash_completion", root / "etc/profile.d/bash_completion.sh"]
    return _spread([p for p in scripts if p.is_file() and not p.is_symlink()], limit)


# Language -> (where the files come from, how to get up to N of them).
REAL: dict[str, tuple[str, Callable[[int], list[Path]]]] = {
    "python": ("site-packages", lambda n: sorted((SITE / "site-packages").rglob("*.py"))[:n]),
    "c": ("/usr/include (C only)", _c_headers),
    "cpp": ("libstdc++ bits", lambda n: sorted(Path("/usr/include/c++").glob("*/bits/*.h"))[:n]),
    "javascript": ("npm", lambda n: sorted(Path("/usr/lib/node_modules/npm").rglob("*.js"))[:n]),
    "java": ("JDK src.zip java.util", _jdk_sources),
    "go": ("Debian golang-1.19-src", lambda n: _files("go", _debian("golang-1.19-src"), "*.go", n)),
    "rust": (
        "Debian serde/regex/syn",
        lambda n: _files(
            "rust", _debian("librust-serde-dev", "librust-regex-dev", "librust-syn-dev"), "*.rs", n
        ),
    ),
    "ruby": ("Debian libruby3.1", lambda n: _files("ruby", _debian("libruby3.1"), "*.rb", n)),
    "php": (
        "Debian symfony/commonmark",
        lambda n: _files(
            "php", _debian("php-symfony-console", "php-league-commonmark"), "*.php", n
        ),
    ),
    "csharp": (
        "PyPI pythonnet sdist",
        lambda n: _files("csharp", _sdist("pythonnet==3.0.5"), "*.cs", n),
    ),
    "typescript": (
        "npm rxjs, query-core",
        lambda n: _files("ts", _npm("rxjs@7.8.1", "@tanstack/query-core@5.59.0"), "*.ts", n),
    ),
    "tsx": (
        "npm react-query, router",
        lambda n: _files(
            "tsx", _npm("@tanstack/react-query@5.59.0", "@tanstack/react-router@1.58.3"), "*.tsx", n
        ),
    ),
    "kotlin": (
        "npm RN Android sources",
        lambda n: _files(
            "kotlin", _npm("react-native-screens@3.34.0", "expo-modules-core@1.12.26"), "*.kt", n
        ),
    ),
    "bash": ("Debian bash-completion", _bash_completion),
    "perl": ("Perl 5 core library", lambda n: _spread([*Path("/usr/share/perl").rglob("*.pm")], n)),
    "ocaml": ("Debian ocaml (stdlib)", lambda n: _files("ocaml", _debian("ocaml"), "*.ml", n)),
    "lua": ("Debian lua-penlight", lambda n: _files("lua", _debian("lua-penlight"), "*.lua", n)),
}  # fmt: skip


def _tree(root: Path, language: str, limit: int) -> list[Path]:
    """The files of `language` under a checkout given with --tree, minus tests."""
    skip = ("/test/", "/tests/", "/testdata/")
    found = [
        p
        for p in root.rglob("*")
        if p.is_file() and language_for(p.name) == language and not any(s in str(p) for s in skip)
    ]
    return _spread(found, limit)


def corpora(
    limit: int, only: list[str], trees: dict[str, Path] | None = None
) -> dict[str, tuple[str, list[Path]]]:
    """Language -> (where the files come from, files)."""
    out: dict[str, tuple[str, list[Path]]] = {}
    for language in only or CTAGS_LANG:
        source, get = REAL.get(language, ("", lambda _n: []))
        if trees and language in trees:
            source, get = trees[language].name, functools.partial(_tree, trees[language], language)
        files = get(limit)
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
    if language == "haskell":  # ctags tags every equation; one function is one definition
        for path, found in tags.items():
            first: dict[tuple[str, str], dict[str, object]] = {}
            for tag in sorted(found, key=lambda t: int(str(t["line"]))):
                first.setdefault((str(tag["name"]), str(tag.get("scope", ""))), tag)
            tags[path] = list(first.values())
    return tags


def _string_lines(language: str, source: bytes) -> set[int]:
    """Lines inside a multi-line string literal (Elixir's `@doc \"\"\"` heredocs), which ctags
    5.9 reads as code: their examples' `defmodule`/`def` are not definitions of the file."""
    if language != "elixir":
        return set()
    inside: set[int] = set()
    stack = [get_parser("elixir").parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type in ("string", "sigil") and node.end_point.row > node.start_point.row:
            inside.update(range(node.start_point.row + 2, node.end_point.row + 1))
        else:
            stack.extend(node.children)
    return inside


_SEPARATORS = {"objc": ".", "cpp": "::", "c": "::"}


def _untemplated(name: str) -> str:
    """A C++ qualified name without its template argument lists (`a<b<c>>::f` -> `a::f`); an
    operator's own `<`, `<=`, `<<`, `->` are kept."""
    found = re.search(r"\boperator\b", name)
    head, op = (name, "") if found is None else (name[: found.start()], name[found.start() :])
    while True:
        shorter = re.sub(r"<[^<>]*>", "", head)
        if shorter == head:
            return head + op
        head = shorter


def _qualified(language: str, tag: dict[str, object], names: list[str]) -> bool:
    """Whether one of `names` is ctags' qualified name of the tag: its scope (a class, an
    Objective-C category's class, a C++ namespace) joined to its name."""
    # ctags writes `operator !=` and `std::vector<_Tp, _Alloc>`; symdiff `operator!=`. A C++
    # specialization's members are scoped `std::allocator_traits` by ctags and
    # `std::allocator_traits<allocator<_Tp>>` by symdiff: template arguments are notation.
    name, scope = (str(tag.get(k) or "").replace(" ", "") for k in ("name", "scope"))
    if language == "cpp":
        scope = _untemplated(scope)
        names = [_untemplated(n).replace(" ", "") for n in names]
    if not scope or tag.get("scopeKind") == "file":
        return name in names or any(n.endswith(_SEPARATORS[language] + name) for n in names)
    sep = _SEPARATORS[language]
    for n in names:
        head, _, tail = n.rpartition(sep)
        at = n.find(sep + "operator")  # `A::operator const fs::path&`: the type holds a `::`
        if language == "cpp" and at >= 0:
            head, tail = n[:at], n[at + len(sep) :]
        head = re.sub(r"\(.*\)$", "", head)  # an Objective-C category: `Class(Category)`
        if tail == name and (head == scope or head.endswith(sep + scope)):
            return True
    return False


def recall(language: str, files: list[Path], show: int, *,
           by_name: bool = False) -> tuple[int, int]:  # fmt: skip
    tags = ctags_tags(language, files)
    found = total = 0
    misses: list[str] = []
    for path in files:
        source = path.read_bytes()
        symbols = extract(language, source)
        in_strings = _string_lines(language, source)
        for tag in tags.get(str(path), []):
            line = int(str(tag["line"]))
            if line in in_strings:
                continue
            total += 1
            here = [s.name for s in symbols if s.start_line <= line <= s.header_end_line]
            if here and (not by_name or _qualified(language, tag, here)):
                found += 1
            elif len(misses) < show:
                scope = f"{tag['scope']}::" if by_name and tag.get("scope") else ""
                misses.append(f"    miss {path}:{line} {tag['kind']} {scope}{tag['name']}")
    for miss in misses:
        print(miss)
    return found, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=400, help="files per language")
    parser.add_argument("--misses", type=int, default=0, help="misses to print per language")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="LANG=DIR",
        help="take LANG's files from a local checkout (for languages no registry ships as source)",
    )
    parser.add_argument("--by-name", action="store_true",
                        help="C, C++, Objective-C: count a tag only under its qualified name")
    parser.add_argument("languages", nargs="*", help="only these languages (default: all)")
    args = parser.parse_args()
    trees = {k: Path(v) for k, _, v in (t.partition("=") for t in args.tree)}
    print(f"{'language':<11} {'corpus':<22} {'files':>5} {'ctags defs':>10} {'found':>6} recall")
    for language, (source, files) in corpora(args.files, args.languages, trees).items():
        found, total = recall(language, files, args.misses,
                              by_name=args.by_name and language in _SEPARATORS)
        share = found / total if total else float("nan")
        print(f"{language:<11} {source:<22} {len(files):>5} {total:>10} {found:>6} {share:>6.3f}")


if __name__ == "__main__":
    main()
