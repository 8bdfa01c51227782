"""Python's references, read from the text with one scan per definition (no tree walk).

A tree walk or a query over every node costs about as much as the parse itself; the scan below
runs in the regular expression engine, which consumes what makes no reference (blanks, strings,
comments, plain names) without handing Python anything, and hands it one tuple per thing that
does; a set collapses them to what each definition uses. The definitions (and so which bytes
each one holds) come from the symbols, which the tree gave. The scan skips strings and comments
(an f-string's fields are scanned again on their own), reads import statements, decorators,
return annotations and base classes, and tells a call (`a.b(`) from a read (`a.b`) from a
binding (`x =`, `x: T =`, `a: T,` in a signature).

What is kept (docs/impact.md, "References per language"): a call of a name or a dotted chain
(CALL); a dotted chain read or written (ATTR); a decorator (DECORATOR, with `pytest.fixture`'s
`name=` as `pytest.fixture:name=x`); an annotation, a return annotation and a base class (TYPE);
a bare name read that the file binds at module level (an import, a top-level function or
class) and that is no parameter of the enclosing function, where it is capitalised (a class:
`isinstance(x, Foo)`, `except FooError`) or passed on (`f(g)`, `[g, h]`, `key=g)`) (NAME); a
pytest test's or fixture's parameters, `usefixtures("a")` and
`request.getfixturevalue("a")` (FIXTURE). One Ref per (definition, target, kind), at the first
line of that definition that writes the name (a mention in a docstring before the use can take
it).
"""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Iterable, Sequence
from operator import itemgetter

from symdiff.model import Symbol
from symdiff.parse.reflangs.common import Unfrozen, ref, segments
from symdiff.parse.reflangs.pyparts import fixtures, imports, may_use_fixtures, params
from symdiff.parse.refs import FileRefs, Import, Ref, RefKind

_STRING = (
    rb'"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    rb'|"(?:[^"\\\n]++|\\.)*+"'
    rb"|'(?:[^'\\\n]++|\\.)*+'"
)
_DOTTED = rb"[A-Za-z_]\w*+(?:\s*+\.\s*+[A-Za-z_]\w*+)*+"
_TIGHT = rb"[A-Za-z_][\w.]*+"  # a dotted name written without spaces
_CALLED = rb"[ \t]*+\("
_ANNOTATED = rb"[ \t]*+:[ \t]*+" + _TIGHT + rb"[ \t]*+(?:=(?!=)|(?=[,)]))"
_BOUND = rb"[ \t]*+=(?!=)[ \t]*+(?:(?!super[ \t]*+\()" + _TIGHT + rb"[ \t]*+\()?"
# What no reference is made of, consumed inside the engine without a match (a match costs a
# tuple): blanks and punctuation, a name that is not ASCII, a definition's own name, a name
# that is neither called, dotted, annotated nor bound to a call, a comment, a string, a number,
# `.attr` after a call or a subscript, a newline.
_BORING = (
    rb"[^A-Za-z_#\"'@\n\-.0-9\x80-\xff]++"
    rb"|[\x80-\xff][\w\x80-\xff]*+"  # (the rest of) a name that is not ASCII: not read
    rb"|def[ \t]++\w++|class[ \t]++\w++(?![ \t]*+\()"
    rb"|(?!(?:def|class|from|import)[ \t]|[fF][rR]?[\"']|[rR][fF][\"'])[a-z_]\w*+"
    rb"(?!" + _CALLED + rb"|\s*+\.\s*+[A-Za-z_]|" + _ANNOTATED + rb"|[ \t]*+=(?!=)[ \t]*+"
    + _TIGHT + rb"[ \t]*+\(|[ \t]*+[,)\]}])"
    rb"|#[^\n]*+|" + _STRING + rb"|\n"
    rb"|[0-9]\w*+"
    rb"|\.\s*+\w*+"
    rb"|-(?!>)"
    rb"|@(?![ \t]*+[A-Za-z_])"
    rb"|[\"']"
)  # fmt: skip
# Then one thing references are made of, or (at the end, or past a stray byte) nothing (a
# bracket's insides are bounded: text without its closing bracket is not scanned to its end
# again at each opening).
# findall gives one tuple per match: (other, called, bound, trailer, read, name). `other` is a
# decorator (`@a.b`), a return annotation (`->T`), an import statement, an f-string, or a
# class with its bases; `called` a name or chain that is called; `bound` one that is annotated
# (`x: T =`, `a: T,`) or bound (`x =`, `x = Ctor(`), with what follows it in `trailer`; `read`
# a dotted chain read; `name` a bare name read that may be a class (capitalised) or a function
# passed on (`f(g, h)`, `[g]`, `key=g)`).
_SCAN = re.compile(
    rb"(?:" + _BORING + rb")*+(?:("
    rb"@[ \t]*+" + _DOTTED
    + rb"|->[ \t]*+" + _TIGHT
    + rb"|(?:from[ \t]++[\w.]++[ \t]++)?+import[ \t](?:[^\n(\\#]++|\\\n|\([^)]{0,8192}+\))*+"
    rb"|(?:[fF][rR]?|[rR][fF])(?:" + _STRING + rb")"
    rb"|class[ \t]++\w++[ \t]*+\([^)]{0,4096}+\)"
    rb"|super[ \t]*+\(\s*+\)\s*+\.\s*+\w++(?=[ \t]*+\()"
    rb")|(?:from|import)(?=[ \t])"
    rb"|(" + _DOTTED + rb")" + _CALLED
    + rb"|(" + _DOTTED + rb")(" + _ANNOTATED + rb"|" + _BOUND + rb")"
    rb"|([A-Za-z_]\w*+(?:\s*+\.\s*+[A-Za-z_]\w*+)++)"
    rb"|([A-Za-z_]\w*+)"
    rb"|[\s\S]|\Z)",
)  # fmt: skip
_Hit = tuple[bytes, bytes, bytes, bytes, bytes, bytes]
_NOTHING: _Hit = (b"", b"", b"", b"", b"", b"")
_OTHER, _CALL_OF, _BOUND_OF = itemgetter(0), itemgetter(1), itemgetter(2)
_READ_OF, _NAME_OF = itemgetter(4), itemgetter(5)
_FIELD = re.compile(rb"(?<!\{)\{(?!\{)([^{}]*+)\}")  # an f-string's replacement field
_NAMES = re.compile(rb"[A-Za-z_][\w.]*")
_KEYWORDS = frozenset(w.encode() for w in keyword.kwlist)
_FIXTURE_VALUE = re.compile(rb"getfixturevalue\(\s*['\"](\w+)['\"]")
_BLANKS = b" \t\r\n\\"
_WRAPPED = re.compile(rb"[ \t\r\n\\]")
# Kinds as small ints while a file is read (a RefKind hashes as slowly as a Python method).
_CALL, _ATTR, _TYPE, _NAME, _DECORATOR, _FIXTURE = range(6)
_KINDS = (RefKind.CALL, RefKind.ATTR, RefKind.TYPE, RefKind.NAME, RefKind.DECORATOR,
          RefKind.FIXTURE)  # fmt: skip


def python_refs(source: bytes, symbols: Sequence[Symbol], *, local_types: bool = True
                ) -> FileRefs:  # fmt: skip
    """The imports and references of a Python file whose definitions are `symbols`.

    `local_types`: rewrite `x.m` as `Foo.m` where the definition binds `x = Foo(...)`,
    `x: Foo = ...` or has a parameter `x: Foo` (Foo's last part capitalised, as classes are).
    """
    reader = _Reader(source, local_types)
    line, at = 1, 0
    for lo, hi, name, owner in segments(symbols, len(source)):
        if hi - lo < _SHORT_RUN and source[lo:hi].isspace():
            continue  # the blank between two methods
        line += source.count(b"\n", at, lo)
        at = lo
        hits = set(_SCAN.findall(source, lo, hi))
        hits.discard(_NOTHING)
        if hits:
            reader.run(lo, hi, name, owner, line, hits)
    reader.names(symbols)
    reader.imports.sort(key=_import_order)
    refs = reader.refs
    return FileRefs("", tuple(reader.imports), tuple([refs[key] for key in sorted(refs)]))


_SHORT_RUN = 64


def _import_order(i: Import) -> tuple[int, str, str, str]:
    return i.line, i.module, i.name, i.local


class _Reader:
    """One file's references as they are read, run by run, keyed by (source, target, kind)."""

    def __init__(self, source: bytes, local_types: bool) -> None:
        self.source = source
        self.local_types = local_types
        self.refs: dict[tuple[str, str, int], Ref] = {}
        self.imports: list[Import] = []
        self.texts: dict[bytes, str] = {}
        self.bare: list[tuple[int, int, str, Symbol | None, int, set[bytes]]] = []

    def run(self, lo: int, hi: int, name: str, owner: Symbol | None, first: int,
            hits: set[_Hit]) -> None:  # fmt: skip
        """The references of one run of a definition's bytes."""
        decorators: set[bytes] = set()
        types: set[bytes] = set()
        calls = set(map(_CALL_OF, hits))
        others = list(filter(None, map(_OTHER, hits)))
        if others:
            self._others(others, hits, lo, hi, first, decorators, types, calls)
            calls.update(map(_CALL_OF, hits))  # an f-string's fields
        reads = set(map(_READ_OF, hits))
        names = set(map(_NAME_OF, hits))
        names.discard(b"")
        if names:
            self.bare.append((lo, hi, name, owner, first, names))
        local: dict[bytes, bytes] = {}  # a local variable -> the class it holds
        # In a fixed order (the hits are a set, whose order changes with the interpreter's
        # hash seed): a name bound to two classes gets the same one in every process.
        bound = sorted(filter(_BOUND_OF, hits))
        if bound:
            _bindings(bound, calls, reads, types, local)
        calls.discard(b"")
        reads.discard(b"")
        if _WRAPPED.search(b"\0".join(calls | reads)) is not None:
            calls, reads = _flat(calls), _flat(reads)
        calls -= _KEYWORDS
        reads -= calls
        if local and self.local_types:
            retyped = _retyped(calls, local)
            self.emit(name, lo, hi, first, retyped, _CALL, retyped)
            retyped = _retyped(reads, local)
            self.emit(name, lo, hi, first, retyped, _ATTR, retyped)
        else:
            self.emit(name, lo, hi, first, calls, _CALL)
            self.emit(name, lo, hi, first, reads, _ATTR)
        if types:
            self.emit(name, lo, hi, first, types, _TYPE)
        if decorators:
            self.emit(name, lo, hi, first, decorators, _DECORATOR)
        if (
            owner is not None
            and lo == owner.start_byte
            and (decorators or "test" in name or "usefixtures" in owner.signature)
        ):
            self._pytest(name, owner, first, decorators)
        if b"request.getfixturevalue" in calls:
            found = _FIXTURE_VALUE.findall(self.source, lo, hi)
            self.emit(name, lo, hi, first, found, _FIXTURE)

    def emit(self, name: str, lo: int, hi: int, first: int, targets: Iterable[bytes], kind: int,
             written: dict[bytes, bytes] | None = None) -> None:  # fmt: skip
        """A Ref of `name` to each target; its line is where it is first written in the run (as
        `written` says, if not as itself)."""
        source, refs, ref_kind, texts = self.source, self.refs, _KINDS[kind], self.texts
        for target in targets:
            text = texts.get(target)
            if text is None:  # one string per name, shared by every file's refs (interned)
                text = texts[target] = sys.intern(target.decode("utf-8", "replace"))
            key = (name, text, kind)
            if key in refs:
                continue
            at = source.find(target if written is None else written[target], lo, hi)
            made = Unfrozen()
            made.source, made.target, made.kind = name, text, ref_kind
            made.line = first if at < 0 else first + source.count(b"\n", lo, at)
            made.__class__ = Ref  # type: ignore[assignment]
            refs[key] = made  # type: ignore[assignment]

    def _others(self, others: list[bytes], hits: set[_Hit], lo: int, hi: int, first: int,
                decorators: set[bytes], types: set[bytes], calls: set[bytes]) -> None:  # fmt: skip
        """Decorators, return annotations, base classes, imports, `super().m(` (a call of
        `super.m`); an f-string's fields, whose tuples join `hits`."""
        for other in others:
            head = other[:1]
            if head == b"@":
                decorators.add(other[1:].translate(None, _BLANKS))
            elif head == b"-":
                types.add(other[2:].strip())
            elif other[:5] == b"class":
                bases = other.partition(b"(")[2].translate(None, _BLANKS)
                types.update(b for b in _NAMES.findall(bases) if not b.startswith(b"metaclass"))
            elif other[:5] == b"super":
                calls.update((b"super", b"super." + other.rpartition(b".")[2].strip(_BLANKS)))
            elif other[:4] == b"from" or other[:6] == b"import":
                at = self.source.find(other, lo, hi)
                self.imports.extend(imports(other, first + self.source.count(b"\n", lo, at)))
            else:  # an f-string
                for field in _FIELD.findall(other):
                    hits.update(_SCAN.findall(field))
        types.difference_update(_KEYWORDS)

    def _pytest(self, name: str, owner: Symbol, first: int, decorators: set[bytes]) -> None:
        names = params(owner.signature)
        if not may_use_fixtures(name, owner, names, bool(decorators)):
            return
        used, given = fixtures(name, owner, names, decorators)
        for fixture in used:
            key = (name, fixture, _FIXTURE)
            self.refs.setdefault(key, ref(name, fixture, RefKind.FIXTURE, first))
        if given is not None:
            target = f"pytest.fixture:name={given}"
            key = (name, target, _DECORATOR)
            self.refs.setdefault(key, ref(name, target, RefKind.DECORATOR, first))

    def names(self, symbols: Sequence[Symbol]) -> None:
        """NAME refs: each bare name read that the file binds at module level, but a parameter
        of the definition that reads it or one it calls or uses as a type."""
        words = {i.local.encode() for i in self.imports if i.local}
        words.update(s.name.encode() for s in symbols if s.parent is None)
        refs = self.refs
        for lo, hi, name, owner, first, names in self.bare:
            names &= words
            if not names:
                continue
            if owner is not None:
                names.difference_update(params(owner.signature))
            for word in names:
                text = word.decode("utf-8", "replace")
                if (name, text, _CALL) in refs or (name, text, _TYPE) in refs:
                    continue
                self.emit(name, lo, hi, first, (word,), _NAME)


def _bindings(bound: list[_Hit], calls: set[bytes], reads: set[bytes], types: set[bytes],
              local: dict[bytes, bytes]) -> None:  # fmt: skip
    """What annotations and bindings use (a type, a constructor, a chain written), and the
    classes of the local variables they bind."""
    for _, _, chain, trailer, _, _ in bound:
        flat = chain.translate(None, _BLANKS)
        if trailer.lstrip(b" \t")[:1] == b":":  # `x: T =`, a parameter's `x: T,`
            ann = trailer.partition(b":")[2].strip(b" \t=,)")
            types.add(ann)
            if b"." not in flat and ann.rpartition(b".")[2][:1].isupper():
                local[flat] = ann
            continue
        if b"." in flat:
            reads.add(flat)
        if trailer.endswith(b"("):  # `x = Ctor(`
            ctor = trailer.partition(b"=")[2].strip(b" \t(")
            calls.add(ctor)
            if b"." not in flat and ctor.rpartition(b".")[2][:1].isupper():
                local[flat] = ctor


def _flat(chains: set[bytes]) -> set[bytes]:
    """Chains written over several lines or with blanks (`a .b`, `a\\n.b`), without them."""
    return {c.translate(None, _BLANKS) for c in chains}


def _retyped(targets: set[bytes], local: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """Each target with a local variable's name for its head replaced by its class (`x.m` ->
    `Foo.m`), mapped to the text it is written as."""
    out: dict[bytes, bytes] = {}
    for target in sorted(targets):  # two texts for one target: the same one on every run
        head, dot, rest = target.partition(b".")
        cls = local.get(head) if dot else None
        out.setdefault(target if cls is None else cls + b"." + rest, target)
    return out
