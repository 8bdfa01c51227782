"""The languages added after the first sixteen: names, signatures, and attribution of edits.

Every edit is made to the language's golden sample (tests/fixtures/languages/<lang>/), so what is
checked is real tree-sitter parses of real-shaped code: a body edit is `modified`, a parameter
change `signature_changed`, a new or deleted definition `added`/`removed`, and nothing else moves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from symdiff.attribute.spans import symbol_changes
from symdiff.model import SymbolChangeType
from symdiff.parse.extract import extract

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
ADDED = SymbolChangeType.ADDED
REMOVED = SymbolChangeType.REMOVED
MODIFIED = SymbolChangeType.MODIFIED
SIG = SymbolChangeType.SIGNATURE_CHANGED


def sample_of(language: str) -> bytes:
    (path,) = (p for p in (FIXTURES / language).iterdir() if p.name.startswith("sample"))
    return path.read_bytes()


# (language, old text, new text, the changes expected): each edit replaces exactly one occurrence.
EDITS: list[tuple[str, str, str, list[tuple[str, SymbolChangeType]]]] = [
    ("lua", "out[#out + 1] = piece", "table.insert(out, piece)", [("split", MODIFIED)]),
    ("lua", "function M.new(name, opts)", "function M.new(name, opts, extra)", [("M.new", SIG)]),
    ("lua", "function M:greet(greeting)", "function M:greet(greeting, loud)", [("M:greet", SIG)]),
    ("lua", 'return string.upper(text)', 'return text:upper()', [("M:greet.shout", MODIFIED)]),
    ("lua", "M.parse = function(line)", "M.parse = function(line, sep)", [("M.parse", SIG)]),
    ("lua", "local trim = function(s) return", "local trim = function(s, c) return",
     [("trim", SIG)]),
    ("lua", "return M\n", "function M.extra() end\n\nreturn M\n", [("M.extra", ADDED)]),
    ("lua", "function global_helper(...)\n  return select(\"#\", ...)\nend\n", "",
     [("global_helper", REMOVED)]),
    ("lua", "__call = function(self) return", "__call = function(self, x) return",
     [("Object.__call", SIG)]),
    ("perl", "uc $text : $text", "uc($text) : $text", [("Text::Greeter::greet", MODIFIED)]),
    ("perl", "my ($self, $greeting) = @_;", "my ($self, $greeting, $name) = @_;",
     [("Text::Greeter::greet", SIG)]),
    ("perl", "sub _trim($s, $chars", "sub _trim($s, $max, $chars",
     [("Text::Greeter::_trim", SIG)]),
    ("perl", "return uc $self->SUPER", "return lc $self->SUPER",
     [("Text::Greeter::Loud::greet", MODIFIED)]),
    ("perl", "sub run {", "sub stop { 0 }\n\nsub run {", [("main::stop", ADDED)]),
    ("perl", "sub Text::Util::join_words {\n    return join ' ', @_;\n}\n", "",
     [("Text::Util::join_words", REMOVED)]),
    ("ocaml", "q.front <- List.rev q.back;", "q.front <- List.rev_append q.back [];",
     [("pop", MODIFIED)]),
    ("ocaml", "let push x q =", "let push ?(front = false) x q =", [("push", SIG)]),
    ("ocaml", "(q : 'a t) : bool =", "(q : 'a t) : unit =", [("Bounded.push_checked", SIG)]),
    ("ocaml", "length q >= capacity", "length q > capacity",
     [("Bounded.push_checked.full", MODIFIED)]),
    ("ocaml", "method incr by = n <- n + by", "method incr by = n <- n + (2 * by)",
     [("counter.incr", MODIFIED)]),
    ("ocaml", "let default_size = 16\n", "let default_size = 16\n\nlet clear q = q.front <- []\n",
     [("clear", ADDED)]),
    ("ocaml", "let length q = List.length q.front + List.length q.back\n", "",
     [("length", REMOVED)]),
    ("ocaml_interface", "val push : 'a -> 'a t -> unit", "val push : 'a -> 'a t -> bool",
     [("push", SIG)]),
    ("elixir", "{:reply, Map.fetch(state, key), state}", "{:reply, Map.get(state, key), state}",
     [("MyApp.Cache.handle_call", MODIFIED)]),
    ("elixir", "def handle_cast({:put, key, value, _ttl}, state)",
     "def handle_cast({:put, key, value}, state)", [("MyApp.Cache.handle_cast", SIG)]),
    ("elixir", "def init(_opts), do: {:ok, %{}}", "def init(_opts) do\n    {:ok, %{}}\n  end",
     [("MyApp.Cache.init", MODIFIED)]),
    ("elixir", "when is_integer(ttl) do", "when is_integer(ttl) and ttl > 0 do",
     [("MyApp.Cache.put", SIG)]),
    ("elixir", ":error -> unquote(block)", ":error -> unquote(block) || nil",
     [("MyApp.Cache.cached", MODIFIED)]),
    ("elixir", "  def init(_opts), do: {:ok, %{}}\n",
     "  def init(_opts), do: {:ok, %{}}\n  def init(_opts, :extra), do: :ignore\n",
     [("MyApp.Cache.init", ADDED)]),
    ("elixir", "  defp expired?(%{at: at}, now), do: now > at\n", "",
     [("MyApp.Cache.expired?", REMOVED)]),
    ("elixir", "def size(map), do: map_size(map)", "def size(map), do: Kernel.map_size(map)",
     [("MyApp.Sizable.Map.size", MODIFIED)]),
    ("haskell", "Just (x, check (Queue f b))", "Just (x, check (Queue b f))",
     [("Data.Queue.pop", MODIFIED)]),
    ("haskell", "pop :: Queue a -> Maybe (a, Queue a)", "pop :: Queue a -> Maybe (Queue a, a)",
     [("Data.Queue.pop", SIG)]),
    ("haskell", "  | null f = Queue (L.reverse b) []", "  | null f = Queue (reverse b) []",
     [("Data.Queue.check", MODIFIED)]),
    ("haskell", "toList (Queue f b) =", "toList (Queue front b) =", [("Data.Queue.toList", SIG)]),
    ("haskell", "  size (Queue f b) = length f + length b",
     "  size (Queue f b) = length (f ++ b)", [("Data.Queue.Sized Queue.size", MODIFIED)]),
    ("haskell", "(|>) :: Queue a -> a -> Queue a\nq |> x = push x q\n", "",
     [("Data.Queue.|>", REMOVED)]),
    ("haskell", "toList (Queue f b)", "singleton :: a -> Queue a\nsingleton x = Queue [x] []\n\n"
     "toList (Queue f b)", [("Data.Queue.singleton", ADDED)]),
    ("r", "mean(x, trim = trim, na.rm = na.rm)", "mean(x, trim = trim)",
     [("trimmed_mean", MODIFIED)]),
    ("r", "trim = 0.1, na.rm = TRUE)", "trim = 0.2, na.rm = TRUE)", [("trimmed_mean", SIG)]),
    ("r", "summarise_by = function(df, group, ...)", "summarise_by <- function(df, group, ...)",
     [("summarise_by", MODIFIED)]),
    ("r", "split(d, d[[group]])", "split(d, d[[group]], drop = TRUE)",
     [("summarise_by$split_rows", MODIFIED)]),
    ("r", "add = function(n) {", "add = function(n, times = 1) {", [("Accumulator$add", SIG)]),
    ("r", "  shape@side^2\n", "  shape@side * shape@side\n", [("area", MODIFIED)]),
    ("r", "bump <- function(by = 1) .counter <<- .counter + by\n", "", [("bump", REMOVED)]),
    ("r", "utils_env <- new.env()\n", "utils_env <- new.env()\nclamp <- function(v) pmax(v, 0)\n",
     [("clamp", ADDED)]),
    ("julia", "return pi * c.r^2", "return π * c.r^2", [("Shapes.area", MODIFIED)]),
    ("julia", "area(r::Rect) = r.w * r.h", "area(r::Rect{Int}) = r.w * r.h",
     [("Shapes.area", SIG)]),
    ("julia", "function area(c::Circle)::Float64\n    return pi * c.r^2\nend",
     "area(c::Circle)::Float64 = pi * c.r^2", [("Shapes.area", MODIFIED)]),
    ("julia", "perimeter(r::Rect{T}) where {T}", "perimeter(r::Rect{T}) where {T<:Real}",
     [("Shapes.perimeter", SIG)]),
    ("julia", "clamp(x) = max(x, zero(x))", "clamp(x) = max(x, 0)",
     [("Shapes.scale!.clamp", MODIFIED)]),
    ("julia", 'print(io, "Circle(", c.r, ")")', 'print(io, "Circle r=", c.r)',
     [("Base.show", MODIFIED)]),
    ("julia", "Rect(side::Real) = Rect(side, side)\n", "", [("Shapes.Rect", REMOVED)]),
    ("julia", "const UNIT", "diameter(c::Circle) = 2 * c.r\n\nconst UNIT",
     [("Shapes.diameter", ADDED)]),
    ("objc", "return [self.storage objectForKey:key];", "return [_storage objectForKey:key];",
     [("ImageCache.dataForKey:", MODIFIED)]),
    ("objc", "- (NSData *)dataForKey:(NSString *)key {", "- (id)dataForKey:(NSString *)key {",
     [("ImageCache.dataForKey:", SIG)]),
    ("objc", "- (void)setData:(NSData *)data forKey:(NSString *)key;",
     "- (void)setData:(NSData *)data forKey:(id)key;", [("ImageCache.setData:forKey:", SIG)]),
    ("objc", "return data.length;", "return data.length + 1;", [("ImageCost", MODIFIED)]),
    ("objc", "@implementation ImageCache (Debug)\n\n",
     "@implementation ImageCache (Debug)\n\n- (void)dump {\n}\n\n",
     [("ImageCache(Debug).dump", ADDED)]),
    ("objc", "- (BOOL)cacheShouldEvict:(id)cache;\n", "",
     [("ImageCacheDelegate.cacheShouldEvict:", REMOVED)]),
    ("dart", "final p = Point(x * k, y * k);", "final p = Point(k * x, k * y);",
     [("Point.scale", MODIFIED)]),
    ("dart", "{bool round = false})", "{bool round = true})",
     [("Point.scale", SIG)]),
    ("dart", "factory Point.polar(double r, double theta)", "factory Point.polar(num r, num theta)",
     [("Point.polar", SIG)]),
    ("dart", "      : x = 0,\n        y = 0;", "      : x = 0.0,\n        y = 0.0;",
     [("Point.origin", MODIFIED)]),
    ("dart", "  @override\n  int compareTo", "  int compareTo", [("Point.compareTo", SIG)]),
    ("dart", "  double get length => math.sqrt(x * x + y * y);\n", "", [("Point.length", REMOVED)]),
    ("dart", "  String describe()", "  String shout() => describe();\n  String describe()",
     [("Named.shout", ADDED)]),
    ("dart", "int twice(int a) => a * 2;", "int twice(int a) => a + a;",
     [("main.twice", MODIFIED)]),
    ("zig", "self.len -= 1;", "self.len = self.len - 1;", [("RingBuffer.pop", MODIFIED)]),
    ("zig", "item: T) Error!void", "item: T) !void",
     [("RingBuffer.push", SIG)]),
    ("zig", "    fn sum(self: Pair)", "    pub fn sum(self: Pair)", [("Pair.sum", SIG)]),
    ("zig", "return @max(lo, @min(x, hi));", "return std.math.clamp(x, lo, hi);",
     [("clamp", MODIFIED)]),
    ("zig", "extern fn write(fd: c_int, buf: [*]const u8, n: usize) isize;\n", "",
     [("write", REMOVED)]),
    ("zig", "test \"push then pop\"", "fn twice(x: i32) i32 {\n    return x * 2;\n}\n\n"
     "test \"push then pop\"", [("twice", ADDED)]),
]  # fmt: skip


@pytest.mark.parametrize(("language", "old", "new", "expected"), EDITS)
def test_edit_of_the_sample_is_attributed(
    language: str, old: str, new: str, expected: list[tuple[str, SymbolChangeType]]
) -> None:
    before = sample_of(language)
    assert before.count(old.encode()) == 1, f"{old!r} must occur once in the {language} sample"
    after = before.replace(old.encode(), new.encode())
    got = [(c.name, c.change_type) for c in symbol_changes(language, before, after)]
    assert got == expected


def test_perl_shift_style_unpacking_is_the_parameter_list() -> None:
    old = b"sub new {\n    my $class = shift;\n    my %args = @_;\n    return bless {%args};\n}\n"
    new = old.replace(b"my %args = @_;", b"my ($name, %args) = @_;")
    body = old.replace(b"bless {%args}", b"bless {%args, n => 1}")
    assert [(c.name, c.change_type) for c in symbol_changes("perl", old, new)] == [("new", SIG)]
    assert [(c.name, c.change_type) for c in symbol_changes("perl", old, body)] == [
        ("new", MODIFIED)
    ]


def test_objc_availability_macros_do_not_hide_declarations() -> None:
    source = (
        b"typedef void (^Done)(NSError *error) AF_API_AVAILABLE(ios(10), macosx(10.12));\n"
        b"@interface Loader : NSObject\n"
        b"- (instancetype)init NS_UNAVAILABLE;\n"
        b"- (void)load:(NSURL *)url NS_SWIFT_NAME(load(url:));\n"
        b"@end\n"
    )
    got = {s.name: s.signature for s in extract("objc", source)}
    assert got["Loader.load:"] == "-(void):(NSURL*)url NS_SWIFT_NAME(load(url:));"
    assert "Loader.init" in got


# libstdc++'s attribute-like macros where a declaration's specifiers go: tree-sitter read the
# macro as the type and the type as part of the name (`std::_ForwardIterator rotate`), or lost
# the class around them, with its members' qualification.
GLIBCXX_SPECIFIERS = b"""\
namespace std _GLIBCXX_VISIBILITY(default)
{
  template<typename _Tp>
    _GLIBCXX14_CONSTEXPR
    pair<const _Tp&, const _Tp&>
    minmax(const _Tp&, const _Tp&);

  template<typename _Predicate>
    class _GLIBCXX17_DEPRECATED unary_negate
    : public unary_function<typename _Predicate::argument_type, bool>
    {
    public:
      using is_always_equal
\t_GLIBCXX20_DEPRECATED_SUGGEST("std::allocator_traits::is_always_equal")
\t= true_type;

      _GLIBCXX20_CONSTEXPR
      unary_negate(const unary_negate& __a) _GLIBCXX_NOTHROW
      : _M_pred(__a._M_pred) { }

      _GLIBCXX_NODISCARD _GLIBCXX14_CONSTEXPR
      bool
      empty() const _GLIBCXX_NOEXCEPT
      { return true; }

      friend _GLIBCXX20_CONSTEXPR bool
      operator==(const unary_negate&, const unary_negate&) _GLIBCXX_NOTHROW
      { return true; }

      _GLIBCXX20_CONSTEXPR
      ~unary_negate()
      { }
    };

  template<typename _Tp>
    inline _GLIBCXX20_CONSTEXPR bool
    operator!=(const unary_negate<_Tp>&, const unary_negate<_Tp>&)
    { return false; }
}
"""


def test_cpp_specifier_macros_are_not_read_as_the_type() -> None:
    got = [(s.name, s.kind, s.start_line) for s in extract("cpp", GLIBCXX_SPECIFIERS)]
    assert got == [
        ("std", "namespace", 1),
        ("std::minmax", "function", 3),
        ("std::unary_negate", "class", 8),
        ("std::unary_negate::is_always_equal", "type", 13),
        # A blanked macro on a line of its own before the head is outside the definition.
        ("std::unary_negate::unary_negate", "constructor", 18),
        ("std::unary_negate::empty", "method", 22),
        ("std::unary_negate::operator==", "method", 26),
        ("std::unary_negate::~unary_negate", "method", 31),
        ("std::operator!=", "function", 35),
    ]
    # Inside the definition, macros stay in its signature, which is cut from the original text.
    assert "_GLIBCXX14_CONSTEXPR" in next(s.signature for s in extract("cpp", GLIBCXX_SPECIFIERS)
                                          if s.name == "std::minmax")  # fmt: skip


# What the specifier mask must leave alone: a struct named by a reserved upper-case name, an
# enumerator, a `#define` continued on the next line, and a name after an export macro call.
C_RESERVED_NAMES = b"""\
struct _IO_FILE
{
  int _flags;
};
enum { _SC_ARG_MAX = 0, _SC_CHILD_MAX };
#define IOCTL_AFD_POLL \\
    _AFD_CONTROL_CODE(AFD_POLL, METHOD_BUFFERED)

int uv_convert(const struct sockaddr* addr);
extern NCURSES_EXPORT(int) COLOR_PAIR (int);
extern _IDN2_API int
  idn2_to_ascii_4i (const uint32_t * input, int flags) G_GNUC_DEPRECATED;
extern _IDN2_API int idn2_to_ascii_4i2 (const uint32_t * input, int flags);
"""


def test_c_specifier_mask_leaves_names_and_directives_alone() -> None:
    got = [(s.name, s.start_line) for s in extract("c", C_RESERVED_NAMES)]
    assert ("_IO_FILE", 1) in got
    assert ("IOCTL_AFD_POLL", 6) not in got  # an object-like macro is no definition here
    assert [n for n in got if n[0] not in ("_IO_FILE",)][-4:] == [
        ("uv_convert", 9), ("COLOR_PAIR", 10), ("idn2_to_ascii_4i", 11),
        ("idn2_to_ascii_4i2", 13)]  # fmt: skip


def test_cpp_conversion_functions_are_named_operator_type() -> None:
    source = (
        b"namespace n {\nstruct A {\n  operator _Fp() const volatile noexcept { return 1; }\n"
        b"  operator int*() const;\n};\nA::operator bool() const { return 1; }\n"
        b"template<class T> A<T>::operator T*() const { return 0; }\n"
        b"struct B {\n  operator const B& () const noexcept { return *this; }\n};\n}\n"
    )
    got = [(s.name, s.kind, s.start_line, s.signature) for s in extract("cpp", source)]
    assert got[2:] == [
        ("n::A::operator _Fp", "method", 3, "()const volatile noexcept"),
        ("n::A::operator int*", "method", 4, "()const;"),
        ("n::A::operator bool", "method", 6, "()const"),
        ("n::A<T>::operator T*", "method", 7, "template<class T>()const"),
        ("n::B", "struct", 8, "struct"),
        ("n::B::operator const B&", "method", 9, "()const noexcept"),
    ]


# Export and calling-convention macros that are not reserved names (Yoga's `YG_EXPORT`, imgui's
# `IMGUI_CDECL`): tree-sitter read the function's type as a scope with an invented `::`
# (`YGConfigRef::YGConfigNew`, `IMGUI_CDECL::Cmp`), and the class as named `YG_EXPORT`.
EXPORT_MACROS = b"""\
YG_EXPORT YGConfigRef YGConfigNew(void);
static int IMGUI_CDECL Cmp(const void* a) { return 0; }
namespace facebook::yoga {
class YG_EXPORT Config : public ::YGConfig {
 public:
  void setUseWebDefaults(bool useWebDefaults);
};
struct MY_TAG value;
}
"""


def test_cpp_export_macros_leave_names_alone() -> None:
    got = [(s.name, s.kind, s.start_line, s.signature) for s in extract("cpp", EXPORT_MACROS)]
    assert got == [
        ("YGConfigNew", "function", 1, "YG_EXPORT YGConfigRef(void);"),
        ("Cmp", "function", 2, "static int IMGUI_CDECL(const void*a)"),
        ("facebook::yoga", "namespace", 3, "namespace"),
        ("facebook::yoga::Config", "class", 4, "class YG_EXPORT:public::YGConfig"),
        ("facebook::yoga::Config::setUseWebDefaults", "method", 6, "void(bool useWebDefaults);"),
    ]


def test_cpp_deleted_functions_outside_a_class_are_definitions() -> None:
    # tree-sitter reads `= delete` outside a class as a variable's initialiser; ctags tags them.
    source = (
        b"namespace std {\nvoid begin(auto&) = delete;\n"
        b"template<typename _Tp> void ref(const _Tp&&) = delete;\nint x = 0;\n}\n"
    )
    got = [(s.name, s.kind, s.start_line, s.signature) for s in extract("cpp", source)]
    assert got[1:] == [
        ("std::begin", "function", 2, "void(auto&)=delete;"),
        ("std::ref", "function", 3, "template<typename _Tp>void(const _Tp&&)=delete;"),
    ]


STATEMENT_MACROS = b"""\
namespace re2 {
ABSL_FLAG(int, stack_limit, 256 << 10,
          "default stack limit (bytes)");
ABSL_FLAG(int, match_limit, 1000000,
          "default match limit (function calls)");

#ifndef USEPCRE
struct pcre_extra {
  int flags;
};

int pcre_exec(const pcre*, const pcre_extra*, int) {
  return 0;
}
#endif

void PCRE::Init(const char* pattern) {
  pattern_ = pattern;
}
}
"""


def test_statement_macros_do_not_swallow_what_follows() -> None:
    # re2's pcre.cc: `ABSL_FLAG(int, …);` at namespace scope made an ERROR that took the
    # namespace; curses.h's `GCC_PRINTFLIKE(3,4);` ends the prototype before it.
    assert [(s.name, s.start_line) for s in extract("cpp", STATEMENT_MACROS)] == [
        ("re2", 1), ("re2::pcre_extra", 8), ("re2::pcre_exec", 12), ("re2::PCRE::Init", 17)]
    c = (
        b"extern NCURSES_EXPORT(int) mvprintw (int,int, const char *,...)\n"
        b"\t\tGCC_PRINTFLIKE(3,4);\n"
        b"extern NCURSES_EXPORT(int) mvscanw (int,int, const char *,...);\n"
    )
    assert [(s.name, s.start_line) for s in extract("c", c)] == [("mvprintw", 1), ("mvscanw", 3)]
