"""Symbol history of a real repository's imported commits against `git log -L :NAME:FILE`.

    .venv/bin/python benchmarks/symbol_history_gitlog.py REPO [--max-commits 200] [--files 12]
        [--names 6] [--seed 0]

REPO is a git repository (a work tree or a bare git directory). Its history is cloned with
`git clone --no-local` into a temporary directory (no network), the newest `--max-commits`
first-parent commits are imported into a fresh SQLite database (`import_history`), and a sample
of functions and methods (at most `--names` per file, from at most `--files` files of each
language that changed in those commits and still exist at HEAD) is checked: the commit shas of
the versions `symbol_history` lists, newest first, against
`git log -L :NAME:FILE --first-parent --format=%H BASE..HEAD` (BASE: the first commit beyond
the window). Git's own funcname rules are switched on through .git/info/attributes (golang,
rust, java; TypeScript has no built-in driver, a JavaScript-like one is configured, see
TS_FUNCNAME). Each disagreement is printed with a reason found by looking at the commits where
the two lists differ: git's range (its hunk header) against the definition's extent there.
Results: docs/symbol_history.md, "Against git log -L on real histories".
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from symdiff.api import import_history
from symdiff.config import Settings
from symdiff.model import Symbol
from symdiff.parse.extract import extract
from symdiff.parse.languages import language_for
from symdiff.symbols.history import symbol_history

DRIVERS = {"go": "golang", "rust": "rust", "java": "java", "typescript": "ts"}
LANGUAGES = ("go", "typescript", "rust", "java")
KINDS = ("function", "method")
# Negative patterns first (control statements and calls are not funcname lines), then
# functions, methods (indented, with modifiers) and `const f = (...) =>` / `function` values.
TS_FUNCNAME = "\n".join([
    r"!^[ \t]*(if|else|for|while|do|switch|case|catch|return|throw|new|await|try)"
    r"([^A-Za-z0-9_$]|$)",
    r"!^[^(]*;[ \t]*$",
    r"^[ \t]*((export|default|declare|async|public|private|protected|static|readonly|abstract|"
    r"override|get|set)[ \t]+)*(function[ \t*]*)?[*]?[A-Za-z_$#][A-Za-z0-9_$]*[ \t]*(<.*>)?"
    r"[ \t]*\(.*$",
    r"^[ \t]*(export[ \t]+)?(const|let|var)[ \t]+[A-Za-z_$][A-Za-z0-9_$]*[ \t]*(:.*)?=.*$",
])  # fmt: skip


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          errors="replace", check=False)  # fmt: skip
    if check and done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def blob(repo: Path, sha: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "cat-file", "blob", f"{sha}:{path}"], cwd=repo,
                          capture_output=True, check=False)  # fmt: skip
    return done.stdout if done.returncode == 0 else None


def short(name: str) -> str:
    return re.split(r"\.|::", name)[-1]


def definitions(repo: Path, sha: str, path: str, language: str, name: str) -> list[Symbol]:
    source = blob(repo, sha, path)
    if source is None:
        return []
    return [s for s in extract(language, source) if s.name == name]


def text_of(repo: Path, sha: str, path: str, language: str, name: str) -> str | None:
    source = blob(repo, sha, path)
    if source is None:
        return None
    lines = source.decode("utf-8", "replace").splitlines()
    found = [s for s in extract(language, source) if s.name == name]
    if len(found) != 1:
        return None
    return "\n".join(lines[found[0].start_line - 1 : found[0].end_line])


def own_text(repo: Path, sha: str, path: str, language: str, name: str) -> str | None:
    """The definition's lines without those of the definitions nested in it."""
    source = blob(repo, sha, path)
    if source is None:
        return None
    lines = source.decode("utf-8", "replace").splitlines()
    symbols = extract(language, source)
    found = [s for s in symbols if s.name == name]
    if len(found) != 1:
        return None
    me = found[0]
    inner = [s for s in symbols if s is not me and me.start_line <= s.start_line
             and s.end_line <= me.end_line]  # fmt: skip
    keep = [line for n, line in enumerate(lines[me.start_line - 1 : me.end_line], me.start_line)
            if not any(s.start_line <= n <= s.end_line for s in inner)]  # fmt: skip
    return "\n".join(keep)


def git_log_l(
    repo: Path, name: str, path: str, window: str, *more: str
) -> tuple[list[str], dict[str, str]]:
    """git's shas (newest first) and, per sha, its hunk header's new range."""
    command = ["git", "log", "-L", f":{short(name)}:{path}", "--first-parent", "--format=%x00%H"]
    done = subprocess.run([*command, *more, window], cwd=repo, capture_output=True, text=True,
                          errors="replace", check=False)  # fmt: skip
    if done.returncode:
        return [], {"error": done.stderr.strip().splitlines()[-1][:80]}
    out = done.stdout
    shas: list[str] = []
    ranges: dict[str, str] = {}
    for line in out.splitlines():
        if line.startswith("\0"):
            shas.append(line[1:])
        elif line.startswith("@@") and shas and shas[-1] not in ranges:
            ranges[shas[-1]] = line.split("+", 1)[1].split(" ", 1)[0]
    return shas, ranges


def reason(  # noqa: C901
    repo: Path, language: str, name: str, path: str, got: list[str], expected: list[str],
    ranges: dict[str, str], head: str,
) -> str:  # fmt: skip
    word = short(name)
    if "error" in ranges:
        mine = definitions(repo, head, path, language, name)
        lines = (blob(repo, head, path) or b"").decode("utf-8", "replace").splitlines()
        header = lines[mine[0].start_line - 1].strip()[:60] if mine else "?"
        return (f"git finds no funcname line matching `{word}`; the definition's line "
                f"`{header}` is not one to its regex: {ranges['error']}")  # fmt: skip
    containers = ("class", "struct", "interface")
    same_word = [s for s in extract(language, blob(repo, head, path) or b"")
                 if short(s.name) == word and s.kind not in containers]  # fmt: skip
    if len(same_word) > 1:
        return (f"{len(same_word)} definitions named {word} in the file (overloads / methods "
                f"of several types): git's regex takes the first funcname line")  # fmt: skip
    newest, newest_range = (expected[0], ranges.get(expected[0])) if expected else (head, None)
    if newest_range is None:  # git's newest range, older than the window: is it this definition?
        older, older_ranges = git_log_l(repo, name, path, "HEAD", "-n1")
        if older and older[0] in older_ranges:
            newest, newest_range = older[0], older_ranges[older[0]]
    if newest_range is not None:  # the newest range git found: is it this definition?
        start = newest_range.partition(",")[0]
        mine = definitions(repo, newest, path, language, name)
        if mine and start.isdigit() and abs(int(start) - mine[0].start_line) > 3:
            lines = (blob(repo, newest, path) or b"").decode("utf-8", "replace").splitlines()
            text = lines[int(start) - 1].strip() if int(start) <= len(lines) else "?"
            return (f"git's regex `{word}` matched another funcname line first (line {start} "
                    f"`{text[:50]}`; the definition is at {mine[0].start_line})")  # fmt: skip
    extra = [s for s in expected if s not in got]
    missing = [s for s in got if s not in expected]
    notes = []
    for sha in extra:  # git lists it, symdiff not
        now, before = (text_of(repo, s, path, language, name) for s in (sha, f"{sha}^"))
        start, _, count = ranges.get(sha, "?,?").partition(",")
        mine = definitions(repo, sha, path, language, name)
        extent = f"{mine[0].start_line}-{mine[0].end_line}" if mine else "?"
        if not mine:
            notes.append(f"{sha[:8]}: the definition does not exist yet; git tracks the range's "
                         f"lines back into the code they were moved from")  # fmt: skip
        elif start.isdigit() and abs(int(start) - mine[0].start_line) > 3:
            line = (blob(repo, sha, path) or b"").decode("utf-8", "replace").splitlines()
            text = line[int(start) - 1].strip() if int(start) <= len(line) else "?"
            notes.append(f"{sha[:8]}: git's regex matched another funcname line first "
                         f"(line {start} `{text[:50]}`, the definition: {extent})")  # fmt: skip
        elif now != before and own_text(repo, sha, path, language, name) == own_text(
            repo, f"{sha}^", path, language, name
        ):
            notes.append(f"{sha[:8]}: the change is inside a nested definition, whose own lines "
                         f"symdiff attributes to it alone (docs/attribution.md)")  # fmt: skip
        elif now is not None and now == before:
            notes.append(f"{sha[:8]}: the change lies outside the definition ({extent}); git's "
                         f"range {start},{count} runs on to the next funcname line")  # fmt: skip
        else:
            notes.append(f"{sha[:8]}: definition changed, symdiff misses it (BUG?)")
    for sha in missing:  # symdiff lists it, git not
        now, before = (text_of(repo, s, path, language, name) for s in (sha, f"{sha}^"))
        parents = git(repo, "rev-list", "--parents", "-n1", sha).split()[1:]
        if len(parents) > 1 and now != before:
            notes.append(f"{sha[:8]}: a merge whose range equals the merged branch's; git log -L "
                         f"skips it (TREESAME to a parent), symdiff imports the first-parent "
                         f"diff")  # fmt: skip
        elif before is None and now is not None:
            moved = blob(repo, f"{sha}^", path) is None
            what = "finds no file" if moved else "stops earlier"
            notes.append(f"{sha[:8]}: definition {'(and file) ' if moved else ''}appears here; "
                         f"git's range search {what}")  # fmt: skip
        elif now is not None and now != before:
            notes.append(f"{sha[:8]}: definition changed where git's range does not reach "
                         f"(doc comment/attributes above the funcname line, or a funcname-like "
                         f"line inside the body ends git's range)")  # fmt: skip
        else:
            notes.append(f"{sha[:8]}: symdiff lists a version where the text is unchanged (BUG?)")
    return "; ".join(notes[:3]) + (f" (+{len(notes) - 3} more)" if len(notes) > 3 else "")


# Reason -> a phrase of its text, for the summary line (the first phrase a reason holds counts).
KINDS_OF_REASON = {
    "git: no funcname line": "finds no funcname line",
    "git: same name defined twice": "definitions named",
    "git: another funcname line": "matched another funcname",
    "git: range past the end": "the change lies outside",
    "git: lines before the definition": "does not exist yet",
    "git: merge skipped": "a merge whose",
    "git: range short of the definition": "where git's range does not reach",
    "nested definition": "nested definition",
    "added/renamed here": "appears here",
    "symdiff?": "BUG",
}


def kind_of(why: str) -> str:
    found = [(why.find(t), k) for k, t in KINDS_OF_REASON.items() if t in why]
    return min(found)[1] if found else "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--max-commits", type=int, default=200)
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--names", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--depth", type=int, default=0,
                        help="shallow clone (file://) of DEPTH commits, for a mirror whose old "
                             "objects are missing")  # fmt: skip
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp, "repo").resolve()
        started = time.perf_counter()
        origin = str(args.repo.resolve())
        shallow = ["--depth", str(args.depth), f"file://{origin}"] if args.depth else [origin]
        subprocess.run(["git", "clone", "-q", "--no-local", *shallow, str(repo)], check=True)
        head = git(repo, "rev-parse", "HEAD").strip()
        window_shas = git(repo, "rev-list", "--first-parent", f"--max-count={args.max_commits}",
                          "HEAD").split()  # fmt: skip
        base = git(repo, "rev-parse", "--verify", "-q", f"{window_shas[-1]}^", check=False).strip()
        window = f"{base}..HEAD" if base else "HEAD"
        attributes = "".join(f"*.{ext} diff={DRIVERS[lang]}\n" for ext, lang in
                             (("go", "go"), ("rs", "rust"), ("java", "java"), ("ts", "typescript"),
                              ("tsx", "typescript"), ("mts", "typescript")))  # fmt: skip
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text(attributes)
        git(repo, "config", "diff.ts.xfuncname", TS_FUNCNAME)
        cloned = time.perf_counter()
        settings = Settings(root=repo, db_url=f"sqlite:///{tmp}/index.db", host="bench")
        report = import_history(settings, max_commits=args.max_commits)
        imported = time.perf_counter()
        print(f"{args.repo} @ {head[:12]}: {len(window_shas)} first-parent commits, clone "
              f"{cloned - started:.1f}s, import {imported - cloned:.1f}s ({report})")  # fmt: skip

        changed = git(repo, "log", "--first-parent", f"--max-count={args.max_commits}",
                      "--name-only", "--format=", "HEAD").split()  # fmt: skip
        at_head = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD").split())
        by_language: dict[str, list[str]] = defaultdict(list)
        for path in sorted(set(changed) & at_head):
            language = language_for(path)
            if language == "tsx":
                language = "typescript"
            if language in LANGUAGES:
                by_language[language].append(path)
        inside = set(window_shas)
        for language in LANGUAGES:
            paths = by_language.get(language, [])
            if not paths:
                continue
            checked = agreed = 0
            problems: list[str] = []
            kinds: Counter[str] = Counter()
            for path in sorted(rng.sample(paths, min(args.files, len(paths)))):
                source = blob(repo, head, path) or b""
                symbols = [s for s in extract(language_for(path) or language, source)
                           if s.kind in KINDS]  # fmt: skip
                counts: dict[str, int] = defaultdict(int)
                for s in symbols:
                    counts[s.name] += 1
                names = sorted({s.name for s in symbols if counts[s.name] == 1})
                for name in sorted(rng.sample(names, min(args.names, len(names)))):
                    lang = language_for(path) or language
                    answer = symbol_history(settings, name, path=path, limit=500,
                                            diffs=False)  # fmt: skip
                    versions = answer.versions if answer.status == "found" else []
                    got = [str((v["origin_info"] or {}).get("sha"))  # type: ignore[attr-defined]
                           for v in versions]  # fmt: skip
                    got = [s for s in got if s in inside]
                    expected, ranges = git_log_l(repo, name, path, window)
                    checked += 1
                    if got == expected:
                        agreed += 1
                        continue
                    why = reason(repo, lang, name, path, got, expected, ranges, head)
                    kinds[kind_of(why)] += 1
                    problems.append(f"  {path} {name}: symdiff {len(got)} / git {len(expected)}"
                                    f" versions; {why}")  # fmt: skip
            print(f"{language}: {checked} names checked, {agreed} agree, "
                  f"{checked - agreed} disagree ({dict(kinds.most_common())})")  # fmt: skip
            for line in problems:
                print(line)
        print(f"total {time.perf_counter() - started:.1f}s")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
