"""The parts of Python's references read from one statement or one signature: an import
statement's names, a def's parameters, and pytest's fixtures (`python.py` reads the rest)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from symdiff.model import Symbol
from symdiff.parse.refs import Import

_PARAM = re.compile(r"[(,]\**(\w+)")


@functools.lru_cache(maxsize=1 << 14)
def params(signature: str) -> tuple[bytes, ...]:
    """A def's parameter names, from its signature (`def(self,a:Foo=1,*args)->B:`)."""
    at = signature.rfind("def(")
    if at < 0:
        return ()
    depth, cut = 0, []
    for ch in signature[at + 3 :]:  # the parameters at depth 1 only (not a default's insides)
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1:
            cut.append(ch)
    return tuple(p.encode() for p in _PARAM.findall("".join(cut)) if p != "_")


_NOT_FIXTURES = frozenset({b"self", b"cls", b"request"})
_USEFIXTURES = re.compile(r"usefixtures\(([^)]*)\)")
_QUOTED = re.compile(r"""['"](\w+)['"]""")
_GIVEN_NAME = re.compile(r"""fixture\([^)]*\bname=['"](\w+)['"]""")
_PARAMETRIZED = re.compile(r"""parametrize\(\s*(?:argnames=)?['"]([\w\s,]+)['"]""")


def fixtures(name: str, owner: Symbol, names: tuple[bytes, ...],
             decorators: Iterable[bytes]) -> tuple[list[str], str | None]:  # fmt: skip
    """pytest's view of a definition: the fixtures it uses (a test's or a fixture's parameters
    but self, cls, request and those `parametrize` gives, and `usefixtures("a", ...)`), and the
    name a fixture is given
    by `@pytest.fixture(name="x")` (None when it is not such a fixture)."""
    signature = owner.signature
    is_fixture = any(d.rsplit(b".", 1)[-1] == b"fixture" for d in decorators)
    used: list[str] = []
    if owner.kind in ("function", "method") and (
        is_fixture or name.rpartition(".")[2].startswith("test")
    ):
        cases = {n.strip() for a in _PARAMETRIZED.findall(signature) for n in a.split(",")}
        used.extend(p.decode() for p in names if p not in _NOT_FIXTURES and p.decode() not in cases)
    if "usefixtures" in signature:
        used.extend(f for args in _USEFIXTURES.findall(signature) for f in _QUOTED.findall(args))
    given = _GIVEN_NAME.search(signature) if is_fixture else None
    return used, given.group(1) if given else None


def may_use_fixtures(name: str, owner: Symbol, names: tuple[bytes, ...], decorated: bool) -> bool:
    """Whether `fixtures` can find any (most definitions: no, read cheaply)."""
    if decorated or "usefixtures" in owner.signature:
        return True
    plain = names[:1] in ((), (b"self",), (b"cls",)) and len(names) <= 1
    return not plain and name.rpartition(".")[2].startswith("test")


_IMPORT_COMMENT = re.compile(rb"#[^\n]*")


def imports(statement: bytes, line: int) -> list[Import]:
    """The names an import statement binds (`import a.b as c, d`, `from ..m import (x as y)`)."""
    text = _IMPORT_COMMENT.sub(b"", statement).decode("utf-8", "replace")
    text = text.replace("\\\n", " ").replace("(", " ").replace(")", " ")
    out = []
    if text.startswith("import"):
        for part in text[6:].split(","):
            words = part.split()
            if not words:
                continue
            module = words[0]
            if len(words) >= 3 and words[1] == "as":
                out.append(Import(words[2], module, "", line))
            else:
                out.append(Import(module.split(".", 1)[0], module, "", line))
        return out
    module, sep, names = text[4:].partition(" import ")
    if not sep:
        return []
    module = "".join(module.split())
    for part in names.split(","):
        words = part.split()
        if not words:
            continue
        if words[0] == "*":
            out.append(Import("", module, "*", line))
        elif len(words) >= 3 and words[1] == "as":
            out.append(Import(words[2], module, words[0], line))
        else:
            out.append(Import(words[0], module, words[0], line))
    return out
