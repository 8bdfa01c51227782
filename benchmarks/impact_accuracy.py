"""Impact accuracy: the tests `symdiff.api.impact` selects for a changed function, against the
tests coverage.py says execute it (issue 26).

The truth, the sample and the venv are benchmarks/_impact_oracle.py's (it says how). For each
sampled function, `--mode edit` inserts `pass` as the first statement of its body in the
scratch clone, asks `impact(settings, against="HEAD")` and restores the file; `--mode names`
asks `impact(settings, symbols=["path:Name"])`. Scored beside peers computed in the same
run: the tests of every test file that imports the changed module (the rule is `importers`
below; strictly, and with a package import counting for its modules), of every test file that
names the function, and running everything. The callers at depth 1 are compared with jedi's
`Script.get_references` (each reference's enclosing function is a caller). Each missed test is
tagged with why (_impact_misses.py); `--policy` changes a knob of the walk in this process
(_impact_experiments.py). Figures and their reading: docs/impact.md, "Accuracy".

Run: .venv/bin/python benchmarks/impact_accuracy.py PROJECT_DIR [--sample N] [--seed S]
     [--mode edit|names] [--venv DIR] [--json OUT] [--policy NAME=VALUE]
PROJECT_DIR is a git clone; its HEAD is what is measured (cloned again under
benchmarks/.cache/impact, where the venv and the coverage data are cached too).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _impact_experiments as experiments
import _impact_misses as misses
import _impact_oracle as oracle
from _impact_oracle import Function, Project, Truth

from symdiff.errors import SymdiffError
from symdiff.model import Scope
from symdiff.parse.testpaths import classify

JEDI = Path(__file__).resolve().parent / "_impact_jedi.py"
MARK = "pass  # impact-accuracy"
FUNCTION_KINDS = frozenset({"function", "method", "async_function", "async_method"})

Key = tuple[str, str]  # (path, qualified name)


# --- the peer: every test in a test file that imports the changed module ---------------------


def module_of(path: str) -> str:
    """The dotted module of a file: `src/` dropped, `__init__` naming its package."""
    parts = path.removesuffix(".py").split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported(path: str, source: str) -> set[str]:
    """The modules a file imports, anywhere in it: `import a.b` gives a.b; `from a.b import c`
    gives a.b and a.b.c (c may be a module); relative forms are resolved from the file's
    folder (`src/` dropped)."""
    folder = path.split("/")[:-1]
    if folder[:1] == ["src"]:
        folder = folder[1:]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = folder[: len(folder) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def importers(module: str, imports: dict[str, set[str]], by_file: dict[str, list[str]],
              *, parents: bool) -> set[str]:  # fmt: skip
    """The tests of every test file that imports `module` (strict: by that exact name; with
    `parents`, importing a package it is in counts too: `import click` for click.core)."""
    out: set[str] = set()
    for path, mods in imports.items():
        hit = module in mods or (parents and any(module.startswith(m + ".") for m in mods))
        if hit:
            out.update(by_file.get(path, ()))
    return out


# --- the independent caller finder: jedi -----------------------------------------------------


def jedi_callers(project: Project, python: Path, sample: list[Function],
                 funcs_of: Callable[[str], list[Function]]) -> list[set[Key]]:  # fmt: skip
    """Per sampled function, the functions enclosing jedi's references to it."""
    job = {"root": str(project.root),
           "sites": [[f.path, f.def_line, f.name_col] for f in sample]}  # fmt: skip
    res = subprocess.run([str(python), str(JEDI)], input=json.dumps(job), text=True,
                         capture_output=True, check=True)  # fmt: skip
    out: list[set[Key]] = []
    for f, refs in zip(sample, json.loads(res.stdout), strict=True):
        callers: set[Key] = set()
        for path, line, _col in refs:
            if not path.endswith(".py"):
                continue
            caller = oracle.enclosing(funcs_of(path), line)
            if caller is not None and (path, caller.name) != (f.path, f.name):
                callers.add((path, caller.name))
        out.append(callers)
    return out


# --- asking symdiff --------------------------------------------------------------------------


def ask(api: Any, settings: Any, project: Project, f: Function, *, mode: str, depth: int
        ) -> tuple[dict[str, Any], float]:  # fmt: skip
    """impact's answer for one function, and how long it took (seconds)."""
    if mode == "names":
        t = time.perf_counter()
        answer = api.impact(settings, symbols=[f"{f.path}:{f.name}"], depth=depth)
        return answer, time.perf_counter() - t
    file = project.root / f.path
    original = file.read_bytes()
    lines = original.decode("utf-8").split("\n")
    line, _col = f.edit_at
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    lines.insert(line - 1, indent + MARK)
    try:
        file.write_bytes("\n".join(lines).encode("utf-8"))
        t = time.perf_counter()
        answer = api.impact(settings, against="HEAD", depth=depth)
        return answer, time.perf_counter() - t
    finally:
        file.write_bytes(original)


# --- scoring ---------------------------------------------------------------------------------


@dataclass
class Score:
    """Recall, precision and share of the suite for one way of selecting tests."""

    recalls: list[float] = field(default_factory=list)
    precisions: list[float] = field(default_factory=list)  # only for non-empty selections
    shares: list[float] = field(default_factory=list)
    hit: int = 0
    picked: int = 0
    empty: int = 0

    def add(self, predicted: set[str], truth: set[str], suite: int) -> float:
        both = len(predicted & truth)
        recall = both / len(truth)
        self.recalls.append(recall)
        self.shares.append(len(predicted) / suite)
        self.hit += both
        self.picked += len(predicted)
        if predicted:
            self.precisions.append(both / len(predicted))
        else:
            self.empty += 1
        return recall

    def row(self, label: str) -> str:
        mean = statistics.fmean
        prec = f"{mean(self.precisions):.3f}" if self.precisions else "  -  "
        micro = f"{self.hit / self.picked:.3f}" if self.picked else "  -  "
        full = sum(r == 1.0 for r in self.recalls)
        return (f"  {label:<34} {mean(self.recalls):6.3f} {prec:>9} {micro:>9} "
                f"{mean(self.shares):7.3f} {full:>5}/{len(self.recalls):<3} {self.empty:>5}")


HEADER = (f"  {'selection':<34} {'recall':>6} {'precision':>9} {'micro-p':>9} {'share':>7} "
          f"{'full':>9} {'empty':>5}")  # fmt: skip


def score_callers(impact_callers: set[Key], jedi: set[Key]) -> tuple[int, int, int]:
    """(both, only impact, only jedi) over implementation callers."""
    impl = {k for k in impact_callers | jedi if classify(k[0]) is Scope.IMPL}
    a, b = impact_callers & impl, jedi & impl
    return len(a & b), len(a - b), len(b - a)


# --- the run ---------------------------------------------------------------------------------


def choose(truth: Truth, n: int, seed: int) -> list[Function]:
    """N implementation functions that some test executes and an edit can reach."""
    keys = sorted(k for k in truth.tests if classify(k[0]) is Scope.IMPL
                  and truth.funcs[k].edit_at[0] > 0)  # fmt: skip
    picked = random.Random(seed).sample(keys, min(n, len(keys)))
    return [truth.funcs[k] for k in sorted(picked)]


def load_impact(project: Project) -> tuple[Any, Any] | None:
    """symdiff's API and the clone's settings, the clone indexed; None without `impact`."""
    from symdiff import api
    from symdiff.config import Settings

    if not hasattr(api, "impact"):
        return None
    settings = Settings.resolve(project.root)
    t = time.perf_counter()
    api.index(settings)
    print(f"  symdiff index (baseline): {time.perf_counter() - t:.2f} s", file=sys.stderr)
    return api, settings


def main() -> None:  # noqa: C901 - one report, read top to bottom
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("project_dir", type=Path)
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("edit", "names"), default="edit")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--venv", type=Path, help="the project's venv (default: made in the cache)")
    ap.add_argument("--package", action="append", default=[], help="implementation package dir")
    ap.add_argument("--pytest-arg", action="append", default=[], help="passed to pytest")
    ap.add_argument("--show", type=int, default=40, help="misses printed")
    ap.add_argument("--json", type=Path, help="write the per-function results here")
    ap.add_argument("--policy", action="append", default=[], metavar="NAME=VALUE",
                    help="a field of the walk's Policy, changed in this process only")
    ap.add_argument("--aliases", action="store_true",
                    help="try module-level `x = y` as a re-export (_impact_experiments.py)")
    args = ap.parse_args()
    changed_policy = experiments.install(args.policy)

    project = oracle.checkout(args.project_dir, tuple(args.package))
    if args.aliases:
        experiments.module_aliases(str(project.root))
        changed_policy = ", ".join(filter(None, [changed_policy, "module-level aliases"]))
    python = args.venv / "bin" / "python" if args.venv else oracle.make_venv(project)
    pytest_args = tuple(args.pytest_arg)
    truth = oracle.truth(project, oracle.coverage_run(project, python, pytest_args))
    suite = oracle.collected_tests(project, python, pytest_args)
    by_file: dict[str, list[str]] = {}
    for t in suite:
        by_file.setdefault(t.split("::", 1)[0], []).append(t)
    paths = oracle.git(project.root, "ls-files", "*.py").splitlines()
    texts = misses.read({p: (project.root / p).read_text(encoding="utf-8", errors="replace")
                         for p in paths})  # fmt: skip
    imports = {p: imported(p, texts.texts[p]) for p in by_file if p in texts.texts}
    sample = choose(truth, args.sample, args.seed)

    funcs: dict[str, list[Function]] = {}

    def funcs_of(path: str) -> list[Function]:
        if path not in funcs:
            text = texts.texts.get(path)
            funcs[path] = oracle.functions(path, text) if text is not None else []
        return funcs[path]

    jedi = jedi_callers(project, python, sample, funcs_of)
    symdiff = load_impact(project)

    print(f"impact accuracy: {project.name} @ {project.commit[:12]} ({project.origin})")
    if changed_policy:
        print(f"  EXPERIMENT: the walk's policy changed: {changed_policy}")
    print(f"  mode {args.mode}, depth {args.depth}, sample {len(sample)} of "
          f"{sum(classify(k[0]) is Scope.IMPL for k in truth.tests)} executed functions "
          f"(seed {args.seed}); suite {len(suite)} tests (parametrised cases collapsed)")
    print(f"  tools in the project's venv: {oracle.tool_versions(python)}")
    scores = {k: Score() for k in ("all", "resolved+name", "strict", "parents", "naming",
                                   "everything")}
    callers_total = Counter[str]()
    missed: list[str] = []
    tagged: list[tuple[str, list[str]]] = []
    results: list[dict[str, Any]] = []
    seconds: list[float] = []
    not_changed: list[str] = []
    errors: list[str] = []
    for f, jedi_set in zip(sample, jedi, strict=True):
        key = (f.path, f.name)
        phases = truth.tests[key]
        true = set(phases)
        module = module_of(f.path)
        scores["strict"].add(importers(module, imports, by_file, parents=False), true, len(suite))
        scores["parents"].add(importers(module, imports, by_file, parents=True), true, len(suite))
        short = f.name.rsplit(".", 1)[-1]
        naming = {t for p, ts in by_file.items() if short in texts.named.get(p, ()) for t in ts}
        scores["naming"].add(naming, true, len(suite))
        scores["everything"].add(set(suite), true, len(suite))
        row: dict[str, Any] = {"path": f.path, "name": f.name, "truth": sorted(true),
                               "jedi_callers": sorted(map(list, jedi_set))}  # fmt: skip
        if symdiff is not None:
            try:
                answer, took = ask(*symdiff, project, f, mode=args.mode, depth=args.depth)
            except SymdiffError as exc:  # e.g. a name the index does not know: nothing found
                errors.append(f"{f.path}:{f.name}: {exc}")
                answer, took = {"changed": [], "callers": [], "tests": []}, 0.0
            seconds.append(took)
            conf = {oracle.collapse(t["node_id"]): t["confidence"] for t in answer["tests"]}
            strong = {t for t, c in conf.items() if c in ("resolved", "name")}
            recall = scores["all"].add(set(conf), true, len(suite))
            scores["resolved+name"].add(strong, true, len(suite))
            changed = {(c["path"], c["name"]) for c in answer["changed"]}
            if key not in changed:
                not_changed.append(f"{f.path}:{f.name} (changed: {sorted(changed)[:3]})")
            depth1 = {(c["path"], c["name"]) for c in answer["callers"]
                      if c["depth"] == 1 and c["kind"] in FUNCTION_KINDS}  # as jedi's are
            both, only_impact, only_jedi = score_callers(depth1, jedi_set)
            callers_total.update(both=both, impact=only_impact, jedi=only_jedi)
            if not misses.is_dunder(f.name):  # jedi finds no operator, `with` or construction
                callers_total.update(both_nd=both, impact_nd=only_impact, jedi_nd=only_jedi)
            row |= {"predicted": conf, "callers": sorted(map(list, depth1)), "recall": recall}
            if recall < 1:
                every = frozenset((c["path"], c["name"]) for c in answer["callers"])
                m = misses.Miss(f, phases, conf, every, frozenset(jedi_set), truth.tests)
                lines = [f"  {f.path}:{f.name}  recall {recall:.2f} "
                         f"({len(true & set(conf))}/{len(true)}; predicted {len(conf)})"]
                groups: dict[tuple[str, ...], list[str]] = {}
                for t in sorted(true - set(conf)):
                    tags = misses.why(texts, m, t)
                    tagged.append((t, tags))
                    groups.setdefault(tuple(tags), []).append(t)
                for tags_, tests in groups.items():
                    more = f" and {len(tests) - 2} more" if len(tests) > 2 else ""
                    lines.append(f"      {len(tests)} tests ({', '.join(tests[:2])}{more}): "
                                 f"{'; '.join(tags_)}")  # fmt: skip
                missed.append("\n".join(lines))
            if only_impact or only_jedi:
                impl = lambda s: sorted(f"{p}:{n}" for p, n in s if classify(p) is Scope.IMPL)  # noqa: E731
                row["callers_only_impact"] = impl(depth1 - jedi_set)
                row["callers_only_jedi"] = impl(jedi_set - depth1)
        results.append(row)

    print(HEADER)
    if symdiff is None:
        print("  impact (all)                        symdiff.api.impact is not on this branch yet")
    else:
        print(scores["all"].row("impact (all confidences)"))
        print(scores["resolved+name"].row("impact (resolved+name, no mention)"))
    print(scores["strict"].row("files importing the module"))
    print(scores["parents"].row("files importing it or its package"))
    print(scores["naming"].row("files naming the function"))
    print(scores["everything"].row("everything"))
    print("  (recall and share: means over the sample; precision: mean over non-empty "
          "selections; micro-p: all hits / all picks; full: functions with recall 1)")
    if symdiff is not None:
        for suffix, label in (("", ""), ("_nd", ", dunder methods left out")):
            both, oi, oj = (callers_total[k + suffix] for k in ("both", "impact", "jedi"))
            rec = both / (both + oj) if both + oj else 1.0
            prec = both / (both + oi) if both + oi else 1.0
            print(f"  callers at depth 1 vs jedi (implementation callers{label}): recall "
                  f"{rec:.3f}, precision {prec:.3f} (both {both}, only impact {oi}, "
                  f"only jedi {oj})")  # fmt: skip
        print(f"  impact answer: p50 {statistics.median(seconds) * 1000:.1f} ms, "
              f"max {max(seconds) * 1000:.1f} ms")
        for e in errors:
            print(f"  impact failed: {e}")
        if not_changed:
            print(f"  the edited function not among `changed`: {len(not_changed)}")
            for s in not_changed[: args.show]:
                print(f"    {s}")
        print(f"  missed tests by first reason: {misses.tally(tagged)}")
        for text in missed[: args.show]:
            print(text)
        for row in results:
            if row.get("callers_only_impact") or row.get("callers_only_jedi"):
                print(f"  callers {row['path']}:{row['name']}: only impact "
                      f"{row.get('callers_only_impact', [])}, only jedi "
                      f"{row.get('callers_only_jedi', [])}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"project": project.name, "commit": project.commit,
                                         "origin": project.origin, "results": results},
                                        indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
