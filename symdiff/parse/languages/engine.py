"""The language-neutral walk that turns a tree-sitter tree into Symbols.

A language family supplies a `Family`: which node types define something (each with a small
handler that names it), which nodes wrap a definition (decorators, `export`, templates), which
siblings lead one (Rust `#[attr]`), which nodes are comments, and how names are joined.

The `Family` data and the one walk that reads it are kept together in one module so that
adding a language stays a declarative entry checked against a single walk.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import operator
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Language, Node, Query, QueryCursor

from symdiff.model import Symbol

# Bytes that open a comment in some supported language; a header without any has none.
COMMENT_MARKS = (b"#", b"//", b"/*", b"(*")

# Kinds whose functions are methods.
CLASSLIKE = frozenset({"class", "struct", "interface", "trait", "enum", "impl", "object"})


class Enclosing(NamedTuple):
    """Where a definition sits: the qualified name and kind of its nearest enclosing definition.

    A named tuple: one is made per definition, and a frozen dataclass costs several times more.
    """

    name: str | None = None
    kind: str | None = None


@dataclass(slots=True)
class Def:
    """What a handler found at one node.

    `name` is the local name, or the full qualified name when `absolute` is set (Go methods,
    C++ out-of-class definitions); `cut` are the nodes removed from the signature (the name).
    """

    name: str
    kind: str
    body: Node | None
    cut: tuple[Node, ...] = ()
    absolute: bool = False
    scope_name: str | None = None  # the name nested definitions are qualified by, if not ours
    emit: bool = True  # False: only a scope for what it contains (a JS object literal)
    # The last node of a definition that runs on past its node (a Dart signature's body, a
    # Haskell function's later equations: siblings, not children).
    end: Node | None = None
    # The first node, when a token before the definition's node belongs to it (Zig's `pub`).
    start: Node | None = None


Handler = Callable[[Node, Enclosing], Def | None]
Joiner = Callable[[Enclosing, str], str]


@dataclass(frozen=True, slots=True)
class Family:
    """Everything the walk needs to know about one language."""

    handlers: dict[str, Handler]
    join: Joiner
    comments: frozenset[str] = frozenset({"comment"})
    # Bytes that open the language's comments (COMMENT_MARKS covers every language's): a header
    # without any has no comment to cut. Python's own (`#`) spare its `f(*args)` the search.
    comment_marks: tuple[bytes, ...] = COMMENT_MARKS
    wrappers: frozenset[str] = frozenset()
    # A byte every wrapper begins with (Python's `@`), if there is one: a definition with no
    # such byte between it and the definition before is not wrapped, and the keyword walk does
    # not ask the tree for its parent.
    wrapper_mark: bytes | None = None
    leading: frozenset[str] = frozenset()
    prefix: Callable[[Node], str | None] = field(default=lambda _root: None)
    # What the parser sees instead of the source (same length and lines), if not the source.
    mask: Callable[[bytes], bytes] | None = None
    # A second text to parse (same length and lines) when the first parse has syntax errors:
    # Bash's constructs the grammar cannot read, blanked. Kept if it parses with fewer errors.
    recover: Callable[[bytes], bytes] | None = None
    # The byte spans to blank so that the preprocessor conditionals that split a declaration
    # where the tree has syntax errors read as their first branch (C family: cbranches.py).
    # The blanked text is kept while it parses with fewer errors.
    branches: Callable[[bytes, Node], list[tuple[int, int]]] | None = None
    # The canonical form of a header's text, where the language writes one header two ways:
    # one quote style for literals (Python, JS/TS), `, do:` vs `do` (Elixir), `=` vs `<-` (R).
    canonical: Callable[[str], str] | None = None
    # Words of which every definition has one as its own token, a child of its node (Python:
    # `def`, `class`): in a tree without errors, the walk goes from one occurrence of a word
    # in the source to the next (`_by_keyword`). Without keywords, the query finds them.
    keywords: tuple[bytes, ...] = ()
    # The field of a definition's node that holds its keyword when the keyword is a named node
    # of its own rather than a token (Elixir: `def` in `def f(x)` is the identifier that is its
    # call's `target`): the keyword walk takes the node holding the keyword there, and skips
    # one that holds it elsewhere.
    keyword_field: str | None = None
    # Whether a header with no comment mark (`comment_marks`) has only whitespace between its
    # body and the node before it, and its body never opens with a token, so that the header's
    # end can be read from the source instead of the tree (Python: its other extra, a line
    # continuation `\`, ends on the line of its backslash either way; a block opens with a
    # statement). Names (the cut) must hold no newline, and a comment node must begin with one
    # of `comment_marks` and be the smallest named node at its first byte (Python's `#...`), so
    # that the comments in a header are found from its marks.
    header_from_bytes: bool = False
    # The query that finds candidate nodes, when a predicate can drop in C most of the nodes
    # whose handler would return None (Elixir: every expression is a call); default: every node
    # of a handled type.
    query: str | None = None


def join_with(sep: str) -> Joiner:
    """A joiner that puts `sep` between a parent's qualified name and a child's name."""
    return _JoinWith(sep)


@dataclass(frozen=True, slots=True)
class _JoinWith:
    """`join_with`'s joiner; the keyword walk reads its `sep` and joins names itself."""

    sep: str

    def __call__(self, scope: Enclosing, name: str) -> str:
        return name if scope.name is None else f"{scope.name}{self.sep}{name}"


def text(node: Node | None) -> str:
    """The source text of a node ('' for None)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def field_def(
    kind: str, *, name: str = "name", body: str = "body", methods: bool = False
) -> Handler:
    """The common case: the name and body are fields of the definition node.

    `methods`: a function directly inside a class-like is a method (`method_in_class`).
    """
    return _FieldDef(kind, name, body, methods)


@dataclass(frozen=True, slots=True)
class _FieldDef:
    """`field_def`'s handler: by field name, or by field id once bound to a language."""

    kind: str
    name: str
    body: str
    methods: bool

    def __call__(self, node: Node, scope: Enclosing) -> Def | None:
        name_node = node.child_by_field_name(self.name)
        if name_node is None:
            return None
        return self._def(name_node, node.child_by_field_name(self.body), scope)

    def bind(self, language: Language) -> Handler:
        """The same handler with its fields looked up by id (a lookup by name first finds the
        id from the name, on every call)."""
        name_id = language.field_id_for_name(self.name)
        body_id = language.field_id_for_name(self.body)
        if name_id is None or body_id is None:
            return self
        make = self._def

        def handle(node: Node, scope: Enclosing) -> Def | None:
            name_node = node.child_by_field_id(name_id)
            if name_node is None:
                return None
            return make(name_node, node.child_by_field_id(body_id), scope)

        return handle

    def _def(self, name_node: Node, body: Node | None, scope: Enclosing) -> Def:
        method = self.methods and scope.kind in CLASSLIKE
        return Def(text(name_node), "method" if method else self.kind, body, (name_node,))


def method_in_class(handler: Handler) -> Handler:
    """Wrap a function handler so that a function directly inside a class-like is a method."""

    def handle(node: Node, scope: Enclosing) -> Def | None:
        found = handler(node, scope)
        if found is not None and found.kind == "function" and scope.kind in CLASSLIKE:
            found.kind = "method"
        return found

    return handle


def first_child(node: Node, types: Iterable[str]) -> Node | None:
    """The first named child of one of `types`."""
    wanted = set(types)
    for child in node.named_children:
        if child.type in wanted:
            return child
    return None


_SPACE = re.compile(r"\s+")
# Lookarounds with an empty replacement: a template replacement (r"\1") costs twice as much.
_NEAR_PUNCT = re.compile(r" (?=[^\w\s])|(?<=[^\w\s]) ")
_TRAILING_COMMA = re.compile(r",(?=[)\]}>])")


@functools.lru_cache(maxsize=1 << 14)  # both versions of a file share most of their headers
def normalise(raw: str) -> str:
    """Collapse whitespace runs, drop spaces next to punctuation and trailing commas."""
    return _TRAILING_COMMA.sub("", _NEAR_PUNCT.sub("", _SPACE.sub(" ", raw).strip()))


@functools.lru_cache(maxsize=1 << 14)  # Django: 40,876 headers, 8,221 different texts
def _finish(raw: bytes, canonical: Callable[[str], str] | None) -> str:
    """The signature of a header's bytes (the name and comments cut out)."""
    flat = raw.decode("utf-8", "replace")
    if canonical is not None:
        flat = canonical(flat)
    return normalise(flat)


# Header bytes (from the definition's start to its body, the name cut out) -> (signature,
# length without the blanks at the end, newlines before the last byte that is not blank or -1
# when that byte is not ASCII and may be whitespace to the parser, such as U+200B). One table
# per `canonical`; Django's 40,876 headers have 8,221 different texts. Emptied when full.
_Header = tuple[str, int, int]
_HEADERS: collections.defaultdict[Callable[[str], str] | None, dict[bytes, _Header]] = (
    collections.defaultdict(dict)
)
_HEADERS_HELD = 1 << 14


def _header(raw: bytes, canonical: Callable[[str], str] | None) -> _Header:
    kept = len(raw.rstrip())
    lines = raw.count(b"\n", 0, kept) if kept and raw[kept - 1] < 0x80 else -1
    return _finish(raw, canonical), kept, lines


@dataclass(slots=True)
class _Walk:
    family: Family
    source: bytes
    out: list[Symbol] = field(default_factory=list)
    exact: bool = True  # read every header's end from the tree

    def run(self, root: Node, query: Query) -> list[Symbol]:
        # In a tree with errors, a node before a body may be made up (zero-width): ask the tree.
        self.exact = root.has_error or not self.family.header_from_bytes
        prefix = self.family.prefix(root)
        # Scopes still open, innermost last: (end byte of the definition, its scope).
        open_enclosings: list[tuple[int, Enclosing]] = [
            (root.end_byte + 1, Enclosing(prefix, "module" if prefix else None))
        ]
        bound = _BOUND.get(id(query))
        if bound is not None and (bound.query is not query or bound.family is not self.family):
            bound = None
        if bound is not None and bound.keywords is not None and not root.has_error:
            # A tree with errors may hold a definition anywhere: the query finds it there.
            return _by_keyword(self, bound.keywords, root, open_enclosings[0][1])
        handlers = self.family.handlers if bound is None else bound.handlers
        # The query finds candidate nodes in C; walking every node in Python is 6x slower.
        captured = QueryCursor(query).captures(root).get("def", [])
        captured.sort(key=lambda n: (n.start_byte, -n.end_byte))
        for node in captured:
            start = node.start_byte
            while start >= open_enclosings[-1][0]:
                open_enclosings.pop()
            scope = open_enclosings[-1][1]
            found = handlers[node.type](node, scope)
            if found is not None:
                inner = self.emit(node, scope, self.lead(node), found)
                open_enclosings.append(((found.end or node).end_byte, inner))
        self.out.sort(key=_START_LINE)
        return self.out

    def lead(self, node: Node) -> tuple[Node, ...]:
        """What leads a definition: its outermost wrapper, or attributes/decorators before it."""
        target = node
        above = node.parent
        while above is not None and above.type in self.family.wrappers:
            target, above = above, above.parent
        if not self.family.leading:
            # Nothing can lead it but a wrapper (comments before it are documentation).
            return (target,) if target is not node else ()
        run: list[Node] = []
        prev = target.prev_named_sibling
        leading_or_comment = self.family.leading | self.family.comments
        while prev is not None and prev.type in leading_or_comment:
            run.append(prev)
            prev = prev.prev_named_sibling
        while run and run[-1].type not in self.family.leading:
            run.pop()  # comments before the first attribute are documentation
        if run:
            return (*reversed(run), target)
        return (target,) if target is not node else ()

    def emit(self, node: Node, scope: Enclosing, lead: tuple[Node, ...], found: Def) -> Enclosing:
        """Record the definition a handler `found` at `node`; the scope of what it holds."""
        family = self.family
        qname = found.name if found.absolute else family.join(scope, found.name)
        if not found.emit:
            return Enclosing(found.scope_name or qname, found.kind)
        start_node = found.start or (lead[0] if lead else node)
        last = found.end or node
        body = found.body
        source = self.source
        start = start_node.start_byte
        start_row = start_node.start_point.row
        stop = body.start_byte if body is not None else node.end_byte
        cut = found.cut
        # Most headers hold no comment and one cut (the name): then the signature is cut with
        # no search for comment nodes, and comes from a cache by the header's bytes.
        commented = _marks(family.comment_marks).search(source, start, stop) is not None
        ends_at = -1
        if not commented and len(cut) == 1 and start <= cut[0].start_byte < stop:
            hole = cut[0].start_byte
            raw = source[start:hole] + b" " + source[cut[0].end_byte : stop]
            headers = _HEADERS[family.canonical]
            known = headers.get(raw)
            if known is None:
                if len(headers) >= _HEADERS_HELD:
                    headers.clear()
                known = headers[raw] = _header(raw, family.canonical)
            signature, kept, lines = known
            if kept > hole - start + 1:  # the last byte that is not blank follows the name
                ends_at = lines
        else:
            signature = self._signature(start, stop, node, lead, cut, commented)
        if body is None:
            header_end = _end_line(node)
        elif ends_at < 0 or self.exact:
            header_end = self.header_end(body)
        else:
            # No comment in the header: only whitespace lies between the body and the node
            # before it (`prev_sibling`, which asks the tree for the parent, costs more than
            # the rest of a definition), so the header ends on the line of its last byte that
            # is not blank (`Family.header_from_bytes`).
            header_end = start_row + 1 + ends_at
        self.out.append(
            _symbol(
                qname,
                found.kind,
                start_row + 1,
                _end_line(last),
                header_end,
                signature,
                scope.name,
                start,
                last.end_byte,
            )
        )
        return Enclosing(found.scope_name or qname, found.kind)

    def header_end(self, body: Node) -> int:
        """The last line of the header before `body`, as the tree tells it."""
        first = body.child(0) if body.child_count else None
        if first is not None and not first.is_named:
            # A body opened by a token (`{`, `:`, `=`, `do`): the header ends on its line.
            return first.start_point.row + 1
        prev = body.prev_sibling
        while prev is not None and prev.type in self.family.comments:
            prev = prev.prev_sibling
        if prev is None:
            return body.start_point.row + 1
        return _end_line(prev)

    def _signature(
        self,
        start: int,
        stop: int,
        node: Node,
        lead: tuple[Node, ...],
        cut: tuple[Node, ...],
        commented: bool,
    ) -> str:
        holes = {(c.start_byte, c.end_byte) for c in cut if start <= c.start_byte < stop}
        if commented:
            for top in (*lead, node):
                holes.update(self._comments(top, stop))
        return _cut(self.source, start, stop, holes, self.family.canonical)

    def _comments(self, top: Node, stop: int) -> Iterable[tuple[int, int]]:
        stack = [top]
        while stack:
            node = stack.pop()
            if node.start_byte >= stop:
                continue
            if node.type in self.family.comments:
                yield (node.start_byte, node.end_byte)
                continue
            for child in node.named_children:
                if child.start_byte >= stop:
                    break  # children come in order; the rest are body
                stack.append(child)


class _Keywords(NamedTuple):
    """What the keyword walk needs of a family, in its language's node kind ids."""

    finders: tuple[re.Pattern[bytes], ...]  # one per keyword: the word on its own
    handlers: dict[int, Handler]  # bound to the language
    # The definitions recorded without their handler: (name field, body field, kind, whether
    # it is a method inside a class-like) of each `field_def`, when the family reads headers
    # from bytes, joins names with a separator and has no mask and no leading nodes.
    fields: dict[int, tuple[int, int, str, bool]]
    wrappers: frozenset[int]
    sep: str
    comments: frozenset[int]
    held_by: int | None  # `Family.keyword_field`'s id


def _keywords(family: Family, language: Language, bound: dict[str, Handler]) -> _Keywords | None:
    """The keyword walk's view of `family` (None: the family has no keywords)."""
    if not family.keywords:
        return None
    ids: dict[str, list[int]] = collections.defaultdict(list)
    for kind_id in range(language.node_kind_count):  # an aliased type has several ids
        ids[language.node_kind_for_id(kind_id) or ""].append(kind_id)
    fields: dict[int, tuple[int, int, str, bool]] = {}
    sep = family.join.sep if isinstance(family.join, _JoinWith) else ""
    plain = family.header_from_bytes and sep != "" and family.mask is None and not family.leading
    for kind, handler in family.handlers.items():
        if plain and isinstance(handler, _FieldDef):
            name_id = language.field_id_for_name(handler.name)
            body_id = language.field_id_for_name(handler.body)
            if name_id is not None and body_id is not None:
                known = (name_id, body_id, handler.kind, handler.methods)
                fields.update(dict.fromkeys(ids[kind], known))
    # A keyword is a word of its own: `def` in `undefined` or `default` is none.
    finders = tuple(
        re.compile(re.escape(w) + rb"(?<!\w" + re.escape(w) + rb")(?!\w)")  # literal first: fast
        for w in family.keywords
    )
    return _Keywords(
        finders,
        {kind_id: handler for kind, handler in bound.items() for kind_id in ids[kind]},
        fields,
        frozenset(kind_id for kind in family.wrappers for kind_id in ids[kind]),
        sep,
        frozenset(kind_id for kind in family.comments for kind_id in ids[kind]),
        _field_id(language, family.keyword_field),
    )


def _field_id(language: Language, name: str | None) -> int | None:
    """The id of the grammar's field `name` (None for None); ValueError when it has none, so
    that a misspelt `keyword_field` fails at load instead of finding nothing."""
    if name is None:
        return None
    found = language.field_id_for_name(name)
    if found is None:
        raise ValueError(f"the grammar has no field {name!r} (Family.keyword_field)")
    return found


_Scope = tuple[str | None, str | None]  # an Enclosing's fields: the walk makes one per definition


def _by_keyword(walk: _Walk, plan: _Keywords, root: Node, top: Enclosing) -> list[Symbol]:
    """The definitions under `root`, a tree without errors, found from their keywords.

    Each definition's own keyword (Python: `def`, `class`) is a token of its node, so the
    smallest named node around an occurrence of a keyword in the source is the definition that
    it opens, or something else to skip (a string, a comment): one C call per keyword, and the
    statements between are never visited. Keywords come in document order, so definitions come
    in preorder and the ones still open are a stack by end byte. Where the keyword is a named
    node of its own (`Family.keyword_field`: Elixir's `def`, the target of its call), the
    definition is the node that holds it in that field.
    """
    source = walk.source
    hits = sorted(
        map(_MATCH_START, itertools.chain.from_iterable(f.finditer(source) for f in plan.finders))
    )
    handlers, fields, held_by = plan.handlers, plan.fields, plan.held_by
    record = _Plain(walk, plan).record
    # The root's entry outlasts every keyword, even one in text after the root's last byte.
    end, within, scope = len(source) + 1, root, (top.name, top.kind)
    stack = [(end, within, scope)]
    for at in hits:
        while at >= end:
            stack.pop()
            end, within, scope = stack[-1]
        node = within.named_descendant_for_byte_range(at, at + 1)
        if node is None:
            continue
        if held_by is not None:  # the keyword is a node: its definition holds it in the field
            above = node.parent
            if above is None or above.child_by_field_id(held_by) != node:
                continue
            node = above
        kind_id = node.kind_id
        known = fields.get(kind_id)  # a field_def (every one is also in handlers)
        entry = None if known is None else record(node, known, scope)
        if entry is None:  # not a field_def, or a name outside its header: the general way
            handler = handlers.get(kind_id)
            if handler is None:
                continue
            enclosing = Enclosing(*scope)
            found = handler(node, enclosing)
            if found is None:
                continue
            inner = walk.emit(node, enclosing, walk.lead(node), found)
            # A definition that runs on past its node: look for the rest from the root.
            last = node if found.end is None else found.end
            entry = (last.end_byte, node if found.end is None else root, inner)
        stack.append(entry)
        end, within, scope = entry
    walk.out.sort(key=_START_LINE)
    return walk.out


class _Plain:
    """`walk.emit` for the `field_def`s of a family that reads headers from bytes
    (`Family.header_from_bytes`, `_Keywords.fields`): no `Def`, no `Enclosing`, the name read
    from the source and the header looked up in the header table. One per file; the walk's
    most frequent work, so what it reads is held in slots."""

    __slots__ = ("append", "comments", "headers", "mark", "mark_at", "marks", "sep", "source",
                 "walk", "wrappers")  # fmt: skip

    def __init__(self, walk: _Walk, plan: _Keywords) -> None:
        self.walk = walk
        self.source = walk.source
        self.headers = _HEADERS[walk.family.canonical]
        self.marks = _marks(walk.family.comment_marks)
        self.comments = plan.comments
        self.wrappers = plan.wrappers
        self.sep = plan.sep
        self.append = walk.out.append
        # Where the first wrapper mark lies at or after the last definition recorded (its
        # start): a definition with none since is not wrapped, and its parent is not asked.
        # -1: the family has no mark, and every definition asks.
        self.mark = walk.family.wrapper_mark or b""
        found = self.source.find(self.mark) if self.mark else -1
        self.mark_at = -1 if not self.mark else found if found >= 0 else len(self.source)

    def record(self, node: Node, known: tuple[int, int, str, bool], scope: _Scope
               ) -> tuple[int, Node, _Scope] | None:  # fmt: skip
        """Record the definition at `node`; its entry on the walk's stack: its end, itself and
        the scope of what it holds (None: a field is missing or the name lies outside the
        header, for the general way to decide)."""
        name_id, body_id, kind, methods = known
        name_node = node.child_by_field_id(name_id)
        body = node.child_by_field_id(body_id)
        if name_node is None or body is None:
            return None
        first = node  # the outermost wrapper, if any (no leading nodes in such a family)
        start, end_byte = node.byte_range  # one attribute read for two (each is a lookup)
        if self.mark_at < start:  # a wrapper may begin between the definition before and this
            above = node.parent
            while above is not None and above.kind_id in self.wrappers:
                first, above = above, above.parent
            if self.mark_at >= 0:
                found = self.source.find(self.mark, start)
                self.mark_at = found if found >= 0 else len(self.source)
            start = first.start_byte
        hole, hole_end = name_node.byte_range
        stop = body.start_byte
        if not start <= hole < stop:
            return None
        source = self.source
        raw = source[start:hole] + b" " + source[hole_end:stop]
        header = self.headers.get(raw)
        if header is None:
            header = self._header(raw, first, start, hole, hole_end, stop)
        signature, kept, lines = header
        start_row = first.start_point[0]
        if lines < 0 or kept <= hole - start + 1:  # the tree tells where the header ends
            header_end = self.walk.header_end(body)
        else:
            header_end = start_row + 1 + lines
        try:
            name = source[hole:hole_end].decode()
        except UnicodeDecodeError:
            name = source[hole:hole_end].decode("utf-8", "replace")
        parent = scope[0]
        if methods and scope[1] in CLASSLIKE:
            kind = "method"
        qname = name if parent is None else f"{parent}{self.sep}{name}"
        end = node.end_point
        end_row = end[0]
        if end[1] or end_row <= node.start_point[0]:  # `_end_line`: column 0 ends the line before
            end_row += 1
        symbol = _Unfrozen()  # `_symbol`, inline: a call costs as much as two of its fields
        symbol.name = qname  # type: ignore[attr-defined]
        symbol.kind = kind  # type: ignore[attr-defined]
        symbol.start_line = start_row + 1  # type: ignore[attr-defined]
        symbol.end_line = end_row  # type: ignore[attr-defined]
        symbol.header_end_line = header_end  # type: ignore[attr-defined]
        symbol.signature = signature  # type: ignore[attr-defined]
        symbol.parent = parent  # type: ignore[attr-defined]
        symbol.start_byte = start  # type: ignore[attr-defined]
        symbol.end_byte = end_byte  # type: ignore[attr-defined]
        symbol.__class__ = Symbol  # type: ignore[assignment]
        self.append(symbol)  # type: ignore[arg-type]
        return end_byte, node, (qname, kind)

    def _header(self, raw: bytes, first: Node, start: int, hole: int, hole_end: int,
                stop: int) -> _Header:  # fmt: skip
        """The header table's entry for `raw`, added to it; for a header with a comment mark,
        an entry of its own (not kept) whose end the tree tells (`lines` -1)."""
        if self.marks.search(raw) is None:
            headers = self.headers
            if len(headers) >= _HEADERS_HELD:
                headers.clear()
            header = headers[raw] = _header(raw, self.walk.family.canonical)
            return header
        # A comment node begins with a mark, and is the smallest named node at its first byte
        # (`Family.header_from_bytes`): one C call per mark instead of a search of the tree.
        holes = {(hole, hole_end)}
        for mark in self.marks.finditer(self.source, start, stop):
            at = mark.start()
            found = first.named_descendant_for_byte_range(at, at + 1)
            if found is not None and found.kind_id in self.comments:
                holes.add((found.start_byte, found.end_byte))
        return _cut(self.source, start, stop, holes, self.walk.family.canonical), 0, -1


def _cut(source: bytes, start: int, stop: int, holes: Iterable[tuple[int, int]],
         canonical: Callable[[str], str] | None) -> str:  # fmt: skip
    """The signature of `source[start:stop]` with each hole (the name, comments) a space."""
    pieces: list[bytes] = []
    pos = start
    for lo, hi in sorted(holes):
        if lo >= pos:
            pieces.append(source[pos:lo])
            pos = hi
        pieces.append(b" ")
    pieces.append(source[pos:stop])
    return _finish(b"".join(pieces), canonical)


@functools.cache
def _marks(marks: tuple[bytes, ...]) -> re.Pattern[bytes]:
    return re.compile(b"|".join(re.escape(m) for m in marks))


_START_LINE = operator.attrgetter("start_line")
_MATCH_START = re.Match.start


class _Unfrozen:
    """Symbol's slots without its frozen `__setattr__`.

    Symbol's own __init__ sets each field through object.__setattr__ (it is frozen), which
    costs more than the rest of a definition's record. An _Unfrozen is filled by plain
    attribute stores and then becomes a Symbol by assigning its class: the two classes have the
    same slots, so the same layout, which is what Python checks before it lets the class change.
    """

    __slots__ = Symbol.__slots__


assert not hasattr(Symbol, "__post_init__") and len(dataclasses.fields(Symbol)) == 9


def _symbol(
    name: str,
    kind: str,
    start_line: int,
    end_line: int,
    header_end_line: int,
    signature: str,
    parent: str | None,
    start_byte: int,
    end_byte: int,
) -> Symbol:
    """`Symbol(...)` with every field given, built without the frozen class's __init__."""
    symbol = _Unfrozen()
    symbol.name = name  # type: ignore[attr-defined]
    symbol.kind = kind  # type: ignore[attr-defined]
    symbol.start_line = start_line  # type: ignore[attr-defined]
    symbol.end_line = end_line  # type: ignore[attr-defined]
    symbol.header_end_line = header_end_line  # type: ignore[attr-defined]
    symbol.signature = signature  # type: ignore[attr-defined]
    symbol.parent = parent  # type: ignore[attr-defined]
    symbol.start_byte = start_byte  # type: ignore[attr-defined]
    symbol.end_byte = end_byte  # type: ignore[attr-defined]
    symbol.__class__ = Symbol  # type: ignore[assignment]
    return symbol  # type: ignore[return-value]


def _end_line(node: Node) -> int:
    """The last line a node occupies (a node ending at column 0 ends on the line before)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row
    return end.row + 1


def error_spans(root: Node, *, skip: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """The byte spans of a tree's ERROR nodes and of the nodes the parser made up, except
    inside nodes of the `skip` types."""
    spans, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            spans.append((node.start_byte, node.end_byte))
        elif node.type not in skip:
            stack.extend(c for c in node.children if c.has_error)
    return spans


def error_bytes(root: Node) -> int:
    """How many bytes of a tree lie in ERROR nodes, plus one per node the parser made up."""
    total, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            total += node.end_byte - node.start_byte
        elif node.is_missing:
            total += 1
        else:
            stack.extend(c for c in node.children if c.has_error)
    return total


def definition_query(family: Family, language: Language) -> Query:
    """A query capturing every node type that the family has a handler for (or its own).

    Also binds the family's handlers to `language` (`_FieldDef.bind`), for `walk` to find by
    the query: both are made once per language, the query is the one `walk` receives.
    """
    if family.query is not None:
        query = Query(language, family.query)
    else:
        types = [
            t
            for t in family.handlers
            if t == "ERROR" or language.id_for_node_kind(t, True) is not None
        ]
        query = Query(language, "[" + " ".join(f"({t})" for t in types) + "] @def")
    bound = {
        kind: handler.bind(language) if isinstance(handler, _FieldDef) else handler
        for kind, handler in family.handlers.items()
    }
    with _BOUND_LOCK:  # holds the query: its id stays its own
        _BOUND[id(query)] = _Bound(query, family, bound, _keywords(family, language, bound))
    return query


class _Bound(NamedTuple):
    """A query made by `definition_query`, with what `walk` needs of its family."""

    query: Query
    family: Family
    handlers: dict[str, Handler]  # bound to the query's language
    keywords: _Keywords | None


_BOUND: dict[int, _Bound] = {}
_BOUND_LOCK = threading.Lock()


def walk(family: Family, source: bytes, root: Node, query: Query) -> list[Symbol]:
    """All definitions under `root`, ordered by start line."""
    return _Walk(family, source).run(root, query)
