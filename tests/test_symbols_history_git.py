"""Symbol history of imported commits against `git log -L :NAME:FILE`, for Go, TypeScript,
Rust and Java: the same history, the same versions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import git as run_git

from symdiff.api import import_history
from symdiff.config import Settings
from symdiff.parse.extract import extract
from symdiff.symbols.history import symbol_history, symbol_source

FUNCTIONS = 6

# language -> (file, git diff driver or None, file template, function template)
LANGUAGES = {
    "go": ("shop/cart.go", "golang", "package shop\n\n{}",
           "func Name{i}(x int) int {{\n\ty := x + {v}\n\treturn y\n}}\n\n"),
    "typescript": ("src/cart.ts", None, "import {{ a }} from './a';\n\n{}",
                   "export function name{i}(x: number): number {{\n  const y = x + {v};\n"
                   "  return y;\n}}\n\n"),
    "rust": ("src/cart.rs", "rust", "use std::fmt;\n\n{}",
             "pub fn name{i}(x: i32) -> i32 {{\n    let y = x + {v};\n    y\n}}\n\n"),
    "java": ("src/Cart.java", "java", "package shop;\n\npublic class Cart {{\n{}}}\n",
             "    public int name{i}(int x) {{\n        int y = x + {v};\n        return y;\n"
             "    }}\n\n"),
}  # fmt: skip

WHO = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x", "GIT_COMMITTER_NAME": "Bob",
       "GIT_COMMITTER_EMAIL": "bob@x"}


def git(repo: Path, *args: str) -> str:
    return run_git(repo, *args, env=WHO)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_versions_agree_with_git_log_L(tmp_path: Path, language: str) -> None:
    path, driver, whole, function = LANGUAGES[language]
    repo = (tmp_path / "repo").resolve()
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    if driver is not None:  # git's own funcname rules for the language (methods are indented)
        (repo / ".git" / "info" / "attributes").write_text(f"*{Path(path).suffix} diff={driver}\n")
    rng = random.Random(language)
    values = [0] * FUNCTIONS
    for n in range(10):
        if n:
            for i in rng.sample(range(FUNCTIONS), rng.randint(1, 2)):
                values[i] += 1
        text = whole.format("".join(function.format(i=i, v=values[i])
                                    for i in range(FUNCTIONS)))  # fmt: skip
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"release {n}")
    settings = Settings(root=repo, db_url=f"sqlite:///{tmp_path / 'index.db'}", host="test")
    import_history(settings)

    names = [s.name for s in extract(language, (repo / path).read_bytes())
             if s.kind in ("function", "method")]
    assert len(names) == FUNCTIONS
    for name in names:
        short = name.rsplit(".", 1)[-1]
        log = git(repo, "log", "-L", f":{short}:{path}", "--format=%x00%H")
        expected = [line[1:] for line in log.splitlines() if line.startswith("\0")]
        answer = symbol_history(settings, name, limit=500)
        assert answer.status == "found", (name, answer.suggestions)
        got = [v["origin_info"]["sha"] for v in answer.versions]  # type: ignore[index]
        assert got == expected, name
        for v in answer.versions:
            sha = v["origin_info"]["sha"]  # type: ignore[index]
            then = git(repo, "show", f"{sha}:{path}")
            source = symbol_source(settings, name, version=int(str(v["version"])))["source"]
            assert isinstance(source, str) and source in then
            assert source.lstrip().split("(")[0].endswith(short)
