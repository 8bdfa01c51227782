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
_COMMENT_MARK = re.compile(b"|".join(re.escape(m) for m in COMMENT_MARKS))

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
    wrappers: frozenset[str] = frozenset()
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
    # Where definitions can sit, for a language whose definitions are statements (Python): the
    # walk then enters only these nodes, skipping the expressions that are most of a tree.
    containers: frozenset[str] = frozenset()
    # Bytes that every definition's text holds (Python: `def`, `class`): the walk steps from
    # one to the next, down through `containers` only. Without keywords, the query finds them.
    keywords: tuple[bytes, ...] = ()
    # Whether a header with no comment mark (COMMENT_MARKS covers all of the language's
    # comments) has only whitespace between its body and the node before it, so that the
    # header's end can be read from the source instead of the tree (Python: its other extra,
    # a line continuation `\`, ends on the line of its backslash either way). Names (the cut)
    # must hold no newline.
    header_from_bytes: bool = False
    # The query that finds candidate nodes, when a predicate can drop in C most of the nodes
    # whose handler would return None (Elixir: every expression is a call); default: every node
    # of a handled type.
    query: str | None = None


def join_with(sep: str) -> Joiner:
    """A joiner that puts `sep` between a parent's qualified name and a child's name."""

    def join(scope: Enclosing, name: str) -> str:
        return name if scope.name is None else f"{scope.name}{sep}{name}"

    return join


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
        handlers = (
            bound[2] if bound is not None and bound[0] is query and bound[1] is self.family
            else self.family.handlers
        )  # fmt: skip
        found_nodes: Iterable[tuple[Node, Node | None, str]]
        if self.family.keywords and not root.has_error:
            # A tree with errors may hold a definition anywhere: the query finds it there.
            found_nodes = _statements(root, self.source, self.family)
        else:
            # The query finds candidate nodes in C; walking every node in Python is 6x slower.
            captured = QueryCursor(query).captures(root).get("def", [])
            captured.sort(key=lambda n: (n.start_byte, -n.end_byte))
            found_nodes = ((node, None, node.type) for node in captured)
        for node, parent, kind in found_nodes:
            start = node.start_byte
            while start >= open_enclosings[-1][0]:
                open_enclosings.pop()
            scope = open_enclosings[-1][1]
            found = handlers[kind](node, scope)
            if found is not None:
                inner = self._emit(node, scope, self._lead(node, parent), found)
                open_enclosings.append(((found.end or node).end_byte, inner))
        self.out.sort(key=_START_LINE)
        return self.out

    def _lead(self, node: Node, parent: Node | None) -> tuple[Node, ...]:
        """What leads a definition: its outermost wrapper, or attributes/decorators before it.

        `parent` is the node's parent when the walk knows it (None: ask the tree, which walks
        down from the root to answer).
        """
        target = node
        above = node.parent if parent is None else parent
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

    def _emit(self, node: Node, scope: Enclosing, lead: tuple[Node, ...], found: Def) -> Enclosing:
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
        commented = _COMMENT_MARK.search(source, start, stop) is not None
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
            header_end = self._header_end(body)
        else:
            # No comment in the header: only whitespace lies between the body and the node
            # before it (`prev_sibling`, which asks the tree for the parent, costs more than
            # the rest of a definition), so the header ends on the line of its last byte that
            # is not blank. Unless the body opens with a token (`_header_end`).
            first = body.child(0) if body.child_count else None
            if first is not None and not first.is_named:
                header_end = first.start_point.row + 1
            else:
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

    def _header_end(self, body: Node) -> int:
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
        source = self.source
        holes = {(c.start_byte, c.end_byte) for c in cut if start <= c.start_byte < stop}
        if commented:
            for top in (*lead, node):
                holes.update(self._comments(top, stop))
        pieces: list[bytes] = []
        pos = start
        for lo, hi in sorted(holes):
            if lo >= pos:
                pieces.append(source[pos:lo])
                pos = hi
            pieces.append(b" ")
        pieces.append(source[pos:stop])
        return _finish(b"".join(pieces), self.family.canonical)

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


def _statements(root: Node, source: bytes, family: Family) -> list[tuple[Node, Node, str]]:
    """The nodes under `root` that have a handler, each with its parent and type, in order.

    Every definition's text holds one of the family's `keywords` (Python: `def`, `class`), and
    so does each node above it. So the walk does not visit statements one by one: it takes the
    keywords in the source in order and steps down to each from the innermost open container,
    one `goto_first_child_for_byte` per level (C scans the children). A node on the way that
    has a handler is found; a container is entered; any other node ends the descent, and the
    keywords inside it (a word in a string, `default`) are skipped with it. A definition's first
    keyword is its own token (`def`, `async def`, `class`), so the descent stops at it too.
    Keywords come in document order, so definitions come out in preorder, each once: exactly
    the nodes that a walk entering every container would meet.
    """
    handlers, containers = family.handlers, family.containers
    found: list[tuple[Node, Node, str]] = []
    hits = sorted(m.start() for word in family.keywords for m in _finder(word).finditer(source))
    cursor = root.walk()
    parents, ends = [root], [root.end_byte]
    pos = 0  # keywords before this byte are done
    for at in hits:
        if at < pos:
            continue
        while at >= ends[-1]:
            if len(parents) == 1:
                return found  # past the end of the tree
            cursor.goto_parent()
            parents.pop()
            ends.pop()
        pos = at + 1
        while cursor.goto_first_child_for_byte(at) is not None:
            node = cursor.node
            assert node is not None  # a cursor always stands on a node
            if node.start_byte > at:  # the keyword lies between children: not in a node
                cursor.goto_parent()
                break
            kind = node.type
            if kind in containers:
                if kind in handlers:
                    found.append((node, parents[-1], kind))
                parents.append(node)
                ends.append(node.end_byte)
                if kind in handlers:
                    break  # the keyword is this definition's own
                continue
            if kind in handlers:
                found.append((node, parents[-1], kind))
            pos = max(pos, node.end_byte)
            cursor.goto_parent()
            break
    return found


@functools.cache
def _finder(word: bytes) -> re.Pattern[bytes]:
    return re.compile(re.escape(word))


_START_LINE = operator.attrgetter("start_line")

# Symbol's own __init__ sets each field through object.__setattr__ (it is frozen), which costs
# more than the rest of a definition's record; the slots' setters fill the same fields.
_NAME, _KIND, _START, _END, _HEADER, _SIGNATURE, _PARENT, _START_BYTE, _END_BYTE = (
    getattr(Symbol, f.name).__set__ for f in dataclasses.fields(Symbol)
)
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
    symbol: Symbol = object.__new__(Symbol)
    _NAME(symbol, name)
    _KIND(symbol, kind)
    _START(symbol, start_line)
    _END(symbol, end_line)
    _HEADER(symbol, header_end_line)
    _SIGNATURE(symbol, signature)
    _PARENT(symbol, parent)
    _START_BYTE(symbol, start_byte)
    _END_BYTE(symbol, end_byte)
    return symbol


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
    with _BOUND_LOCK:
        _BOUND[id(query)] = (query, family, bound)  # holds the query: its id stays its own
    return query


# id(query) -> (the query, its family, the family's handlers bound to the query's language).
_BOUND: dict[int, tuple[Query, Family, dict[str, Handler]]] = {}
_BOUND_LOCK = threading.Lock()


def walk(family: Family, source: bytes, root: Node, query: Query) -> list[Symbol]:
    """All definitions under `root`, ordered by start line."""
    return _Walk(family, source).run(root, query)
