"""Python's references, read from the text with one scan per definition (no tree walk).

A tree walk or a query over every node costs about as much as the parse itself; the scan below
runs in the regular expression engine and hands Python one tuple per name, which a set collapses
to the names each definition uses. The definitions (and so which bytes each one holds) come from
the symbols, which the tree gave. The scan skips strings and comments (an f-string's fields are
scanned again on their own), reads import statements, decorators and base classes, and tells a
call (`a.b(`) from a read (`a.b`) from a binding (`x =`, `x: T =`, `f(key=`).

What is kept (docs/impact.md, "References per language"): a call of a name or a dotted chain
(CALL); a dotted chain read or written (ATTR); a decorator (DECORATOR, with `pytest.fixture`'s
`name=` as `pytest.fixture:name=x`); an annotation, a return annotation and a base class (TYPE);
a bare name read when the file binds it at module level (an import, a top-level function or
class) and it is not a parameter of the enclosing function (NAME); a pytest test's or fixture's
parameters, `usefixtures("a")` and `request.getfixturevalue("a")` (FIXTURE). One Ref per
(definition, target, kind), at the first line that writes the name in that definition.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterable, Sequence

from symdiff.model import Symbol
from symdiff.parse.reflangs.common import Unfrozen as _Unfrozen
from symdiff.parse.reflangs.common import ref, segments
from symdiff.parse.refs import FileRefs, Import, Ref, RefKind

_STRING = (
    rb'"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    rb'|"(?:[^"\\\n]++|\\.)*+"'
    rb"|'(?:[^'\\\n]++|\\.)*+'"
)
_DOTTED = rb"[A-Za-z_]\w*+(?:\s*+\.\s*+[A-Za-z_]\w*+)*+"
_TIGHT = rb"[A-Za-z_][\w.]*+"  # a dotted name written without spaces
# What no reference is made of, consumed inside the engine without a match (a match costs a
# tuple): blanks and punctuation, a lower-case name that is neither called, dotted, bound to a
# call, annotated nor passed on (`f(x, ...`), a comment, a string, a number, `.attr` after a
# call or a subscript, a newline that opens no import.
_BORING = (
    rb"[^A-Za-z_#\"'@\n\-.0-9]++"
    rb"|def[ \t]++\w++|class[ \t]++\w++(?![ \t]*+\()"
    rb"|(?!(?:def|class|from|import)[ \t]|[fF][rR]?[\"']|[rR][fF][\"'])[a-z_]\w*+"
    rb"(?![ \t]*+[(.:,)\]}]|\s*+\.|[ \t]*+=(?!=)[ \t]*+" + _TIGHT + rb"[ \t]*+\()"
    rb"|#[^\n]*+|" + _STRING +
    rb"|\n"
    rb"|[0-9]\w*+"
    rb"|\.\s*+\w*+"
    rb"|-(?!>)"
    rb"|@(?![ \t]*+[A-Za-z_])"
    rb"|[\"']"
)
# Then one thing the references are made of, or (at the end, or past a stray byte) nothing:
# findall gives one tuple per match, (other, chain, trailer). `other` is a decorator (`@a.b`),
# a return annotation (`->T`), an import statement, an f-string, or a class's bases (`(A, B)`);
# `chain` a name or a dotted chain, and `trailer` what follows it: a call (`(`), an annotation
# (`: T =`, `: T,`), a binding (`=`, `= Ctor(`).
_SCAN = re.compile(
    rb"(?:" + _BORING + rb")*+(?:("
    rb"@[ \t]*+" + _DOTTED +
    rb"|->[ \t]*+" + _TIGHT +
    rb"|(?:from[ \t]++[\w.]++[ \t]++)?+import[ \t](?:[^\n(\\#]++|\\\n|\([^)]*+\))*+"
    rb"|(?:[fF][rR]?|[rR][fF])(?:" + _STRING + rb")"
    rb"|class[ \t]++\w++[ \t]*+\([^)]*+\)"
    rb")|(?:from|import)(?=[ \t])"
    rb"|(" + _DOTTED + rb")"
    rb"([ \t]*+(?:\("
    rb"|:[ \t]*+" + _TIGHT + rb"[ \t]*+(?:=(?!=)|(?=[,)]))"
    rb"|=(?!=)[ \t]*+(?:" + _TIGHT + rb"[ \t]*+\()?"
    rb")|)"
    rb"|[\s\S]|\Z)",
)
_Hit = tuple[bytes, bytes, bytes]
_NOTHING: _Hit = (b"", b"", b"")
_FIELD = re.compile(rb"(?<!\{)\{(?!\{)([^{}]*+)\}")  # an f-string's replacement field
_NAMES = re.compile(rb"[A-Za-z_][\w.]*")
_KEYWORDS = frozenset(w.encode() for w in keyword.kwlist)
_NOT_FIXTURES = frozenset({b"self", b"cls", b"request"})
_FIXTURE_VALUE = re.compile(rb"getfixturevalue\(\s*['\"](\w+)['\"]")


def python_refs(source: bytes, symbols: Sequence[Symbol], *, local_types: bool = True
                ) -> FileRefs:  # fmt: skip
    """The imports and references of a Python file whose definitions are `symbols`.

    `local_types`: rewrite `x.m` as `Foo.m` where the definition binds `x = Foo(...)`,
    `x: Foo = ...` or has a parameter `x: Foo` (Foo's last part capitalised, as classes are).
    """
    runs = []
    imports: list[Import] = []
    line, at = 1, 0
    for lo, hi, name, owner in segments(symbols, len(source)):
        line += source.count(b"\n", at, lo)
        at = lo
        hits = set(_SCAN.findall(source, lo, hi))
        hits.discard(_NOTHING)
        if not hits:
            continue
        others = [other for other, _, _ in hits if other]
        for other in others:
            if other[:4] == b"from" or other[:6] == b"import":
                where = source.find(other, lo, hi)
                imports.extend(_imports(other, line + source.count(b"\n", lo, where)))
        runs.append((lo, hi, name, owner, line, hits, others))
    imports.sort(key=_IMPORT_ORDER)
    bound = {i.local.encode() for i in imports if i.local}
    bound.update(s.name.encode() for s in symbols if s.parent is None)
    refs: dict[tuple[str, str, int], Ref] = {}
    for lo, hi, name, owner, first, hits, others in runs:
        _segment(source, lo, hi, name, owner, first, hits, others, bound, local_types, refs)
    return FileRefs("", tuple(imports), tuple([refs[key] for key in sorted(refs)]))


def _import_order(i: Import) -> tuple[int, str, str, str]:
    return i.line, i.module, i.name, i.local


_IMPORT_ORDER = _import_order


def _segment(source: bytes, lo: int, hi: int, name: str, owner: Symbol | None, first: int,
             hits: set[_Hit], others: list[bytes], bound: set[bytes], local_types: bool,
             refs: dict[tuple[str, str, int], Ref]) -> None:  # fmt: skip
    """The references of one run of a definition's bytes, added to `refs`."""
    uses, names, local = _classify(hits, others)
    params = _params(owner.signature) if owner is not None else ()
    names &= bound
    if names:
        names.difference_update(params, [t for t, _ in uses])
        for target in names:
            uses[target, _NAME] = target
    if local and local_types:
        for (target, kind), written in list(uses.items()):
            head, dot, rest = target.partition(b".")
            if dot and head in local and kind is not _TYPE:
                del uses[target, kind]
                uses[local[head] + b"." + rest, kind] = written
    for (target, kind), written in uses.items():
        if (kind is _CALL and target in _KEYWORDS) or (kind is _ATTR and (target, _CALL) in uses):
            continue
        text = target.decode("utf-8", "replace")
        key = (name, text, kind)
        if key not in refs:
            at = source.find(written, lo, hi)
            if kind is _NAME:
                at = _find(source, written, at, hi)
            made = _Unfrozen()
            made.source, made.target, made.kind = name, text, _KINDS[kind]
            made.line = first if at < 0 else first + source.count(b"\n", lo, at)
            made.__class__ = Ref  # type: ignore[assignment]
            refs[key] = made  # type: ignore[assignment]
    if owner is not None and lo == owner.start_byte:
        _pytest(name, owner, first, params, uses, refs)
    if (b"request.getfixturevalue", _CALL) in uses:
        for fixture in _FIXTURE_VALUE.findall(source, lo, hi):
            text = fixture.decode()
            refs.setdefault((name, text, _FIXTURE), ref(name, text, RefKind.FIXTURE, first))


_Uses = dict[tuple[bytes, int], bytes]  # (target, kind) -> the target as written (its line)


def _classify(hits: set[_Hit], others: list[bytes]) -> tuple[_Uses, set[bytes], dict[bytes, bytes]]:
    """A run's uses by (target, kind) with the text as written, its bare names read, and its
    local variables' classes."""
    uses: _Uses = {}
    names: set[bytes] = set()
    local: dict[bytes, bytes] = {}  # a local variable -> the class it holds
    for other in others:
        _other(other, hits, uses)
    for _, chain, trailer in hits:
        if not chain:
            continue
        flat = chain.translate(None, _BLANKS) if _WRAPPED.search(chain) else chain
        if not trailer:
            if b"." in flat:
                uses[flat, _ATTR] = chain
            else:
                names.add(flat)
        elif trailer[-1] == _PAREN and b"=" not in trailer:
            uses[flat, _CALL] = chain
        elif b":" in trailer:  # an annotation: `x: T =`, or a parameter's `x: T,`
            ann = trailer.partition(b":")[2].strip(b" \t=,)")
            uses[ann, _TYPE] = ann
            if b"." not in flat and ann.rpartition(b".")[2][:1].isupper():
                local[flat] = ann
        else:  # a binding: `x =`, `x = Ctor(`
            if b"." in flat:
                uses[flat, _ATTR] = chain
            if trailer[-1] == _PAREN:
                ctor = trailer.partition(b"=")[2].strip(b" \t(")
                uses[ctor, _CALL] = ctor
                if b"." not in flat and ctor.rpartition(b".")[2][:1].isupper():
                    local[flat] = ctor
    return uses, names, local


def _other(other: bytes, hits: set[_Hit], uses: dict[tuple[bytes, int], bytes]) -> None:
    """A decorator, a return annotation, a class's bases or an f-string's fields (imports are
    read by the caller)."""
    head = other[:1]
    if head == b"@":
        dec = other[1:].translate(None, _BLANKS)
        uses[dec, _DECORATOR] = other[1:].strip()
    elif head == b"-":
        ret = other[2:].strip()
        uses[ret, _TYPE] = ret
    elif other[:5] == b"class":
        bases = other.partition(b"(")[2].translate(None, _BLANKS)
        for base in _NAMES.findall(bases):
            if base not in _KEYWORDS and not base.startswith(b"metaclass"):
                uses[base, _TYPE] = base
    elif other[:4] != b"from" and other[:6] != b"import":  # an f-string: its fields, as code
        for field in _FIELD.findall(other):
            hits.update(_SCAN.findall(field))


# Kinds as small ints while a run is read (a RefKind hashes as slowly as a Python method).
_CALL, _ATTR, _TYPE, _NAME, _DECORATOR, _FIXTURE = range(6)
_KINDS = (RefKind.CALL, RefKind.ATTR, RefKind.TYPE, RefKind.NAME, RefKind.DECORATOR,
          RefKind.FIXTURE)  # fmt: skip
_BLANKS = b" \t\r\n\\"
_WRAPPED = re.compile(rb"[ \t\r\n\\]")
_PAREN = ord("(")


def _pytest(name: str, owner: Symbol, first: int, params: tuple[bytes, ...], uses: _Uses,
            refs: dict[tuple[str, str, int], Ref]) -> None:  # fmt: skip
    """`_fixtures`, for a definition that may have any (most have none: read them cheaply)."""
    decorators = [t for t, k in uses if k is _DECORATOR]
    test = len(params) > 1 or params[:1] not in ((), (b"self",), (b"cls",))
    if (test and name.rpartition(".")[2].startswith("test")) or decorators:
        _fixtures(name, owner, first, params, decorators, refs)
    elif "usefixtures" in owner.signature:
        _fixtures(name, owner, first, (), decorators, refs)


def _fixtures(name: str, owner: Symbol, first: int, params: Iterable[bytes],
              decorators: Iterable[bytes], refs: dict[tuple[str, str, int], Ref]) -> None:
    """pytest's references of a definition, read from its signature: a test's or a fixture's
    parameters, `usefixtures(...)`, and a fixture's own `name=`."""
    signature = owner.signature
    is_fixture = any(d.rsplit(b".", 1)[-1] == b"fixture" for d in decorators)
    short = name.rsplit(".", 1)[-1]
    kept: list[str] = []
    if owner.kind in ("function", "method") and (short.startswith("test") or is_fixture):
        kept.extend(p.decode() for p in params if p not in _NOT_FIXTURES)
    kept.extend(_usefixtures(signature))
    for fixture in kept:
        refs.setdefault((name, fixture, _FIXTURE), ref(name, fixture, RefKind.FIXTURE, first))
    if is_fixture:
        given = _fixture_name(signature)
        if given:
            target = f"pytest.fixture:name={given}"
            refs.setdefault((name, target, _DECORATOR),
                            ref(name, target, RefKind.DECORATOR, first))  # fmt: skip


def _find(source: bytes, word: bytes, lo: int, hi: int) -> int:
    """Where `word` is first written as a whole name in source[lo:hi], from its first occurrence
    `lo` on (-1: nowhere)."""
    at = lo
    while at >= 0:
        before = source[at - 1 : at] if at else b" "
        after = source[at + len(word) : at + len(word) + 1]
        if not (before.isalnum() or before in b"_.") and not (after.isalnum() or after == b"_"):
            return at
        at = source.find(word, at + 1, hi)
    return -1


_PARAM = re.compile(r"[(,]\**(\w+)")


@functools.lru_cache(maxsize=1 << 14)
def _params(signature: str) -> tuple[bytes, ...]:
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


_USEFIXTURES = re.compile(r"usefixtures\(([^)]*)\)")
_QUOTED = re.compile(r"""['"](\w+)['"]""")
_GIVEN_NAME = re.compile(r"""fixture\([^)]*\bname=['"](\w+)['"]""")


@functools.lru_cache(maxsize=1 << 12)
def _usefixtures(signature: str) -> tuple[str, ...]:
    if "usefixtures" not in signature:
        return ()
    return tuple(f for args in _USEFIXTURES.findall(signature) for f in _QUOTED.findall(args))


def _fixture_name(signature: str) -> str | None:
    found = _GIVEN_NAME.search(signature)
    return found.group(1) if found else None


_IMPORT_COMMENT = re.compile(rb"#[^\n]*")


def _imports(statement: bytes, line: int) -> list[Import]:
    """The names an import statement binds."""
    text = _IMPORT_COMMENT.sub(b"", statement).decode("utf-8", "replace")
    text = text.replace("\\\n", " ").replace("(", " ").replace(")", " ")
    if text.startswith("import"):
        out = []
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
    out = []
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
