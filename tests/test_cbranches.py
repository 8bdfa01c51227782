"""Preprocessor conditionals that split a declaration (`#if TARGET_OS_OSX … #else … #endif`),
read as ctags reads them: real tree-sitter parses of iOS/macOS-style Objective-C and of C++,
and the rules that choose which conditionals to read so."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from symdiff.parse.extract import extract
from symdiff.parse.languages import cbranches
from symdiff.parse.languages.engine import error_bytes

# An iOS and macOS view in the style of React Native's native modules: a superclass, a
# protocol list, a method head and an ivar block each split by the platform.
SPLIT_OBJC = b"""\
#import "RNCWebView.h"

#if TARGET_OS_OSX
@interface RNCWKWebView : WKWebView
#else
@interface RNCWKWebView : WKWebView <UIScrollViewDelegate>
#endif
@end

@interface RNCWebView () <WKUIDelegate,
#if !TARGET_OS_OSX
UIScrollViewDelegate,
#endif // !TARGET_OS_OSX
RCTAutoInsetsProtocol>
@property (nonatomic, copy) RNCWKWebView *webView;
@end

@implementation RNCWebView
{
#if !TARGET_OS_OSX
  UIColor * _savedBackgroundColor;
#else
  RCTUIColor * _savedBackgroundColor;
#endif
  BOOL _savedHideKeyboardAccessoryView;
}

- (instancetype)initWithFrame:(CGRect)frame
{
  return [super initWithFrame:frame];
}

#if !TARGET_OS_OSX
- (void)setBackgroundColor:(UIColor *)backgroundColor
#else
- (void)setBackgroundColor:(RCTUIColor *)backgroundColor
#endif // !TARGET_OS_OSX
{
  _savedBackgroundColor = backgroundColor;
  BOOL opaque = CGColorGetAlpha(backgroundColor.CGColor) == 1.0;
#if !TARGET_OS_OSX
  self.opaque = _webView.opaque = opaque;
#else
  [_webView setValue:@(opaque) forKey:@"drawsBackground"];
#endif // !TARGET_OS_OSX
}

#if TARGET_OS_OSX
- (void)scrollWheel:(NSEvent *)theEvent
{
  [super scrollWheel:theEvent];
}
#else
- (void)scrollViewDidScroll:(UIScrollView *)scrollView
{
  scrollView.decelerationRate = _decelerationRate;
}
#endif

- (void)__addInputAccessoryView {
  [self setKeyboardDisplayRequiresUserAction:NO];
}

- (void)reload
{
  [_webView reload];
}

@end
"""


def _names(language: str, source: bytes) -> dict[str, int]:
    return {s.name: s.start_line for s in extract(language, source)}


def test_objc_methods_keep_their_class_where_the_platform_splits_a_declaration() -> None:
    names = _names("objc", SPLIT_OBJC)
    assert names["RNCWebView"] == 18  # the @implementation, once an ERROR node
    for method, line in [("initWithFrame:", 28), ("setBackgroundColor:", 34),
                         ("__addInputAccessoryView", 60), ("reload", 64)]:
        assert names[f"RNCWebView.{method}"] == line, method
    # Whole methods in each branch are both kept, as ctags keeps them.
    assert names["RNCWebView.scrollWheel:"] == 49
    assert names["RNCWebView.scrollViewDidScroll:"] == 54
    assert "RNCWKWebView" in names


def test_the_source_itself_is_untouched_and_lines_are_the_files() -> None:
    [setter] = [s for s in extract("objc", SPLIT_OBJC) if s.name.endswith("setBackgroundColor:")]
    lines = SPLIT_OBJC.decode().splitlines()
    assert lines[setter.start_line - 1].startswith("- (void)setBackgroundColor:(UIColor *)")
    assert lines[setter.end_line - 1] == "}"
    # The signature is cut from the source: both platforms' heads are in it, so an edit of
    # either is a signature change.
    assert "(UIColor*)" in setter.signature and "(RCTUIColor*)" in setter.signature


def test_a_file_that_parses_is_never_blanked() -> None:
    source = b"#if A\nint f(void) { return 1; }\n#else\nint f(void) { return 2; }\n#endif\n"
    assert [(s.name, s.start_line) for s in extract("c", source)] == [("f", 2), ("f", 4)]


@pytest.mark.parametrize(("branches", "split"), [
    (b"#if A\n- (UIView *)view\n#else\n- (NSView *)view\n#endif\n{\n}\n", True),  # a head
    (b"#if A\nclass W : public B {\n#else\nclass W : public C {\n#endif\n};\n", True),
    (b"#if A\n@interface V : UIView\n#else\n@interface V : NSView\n#endif\n@end\n", True),
    (b"@interface V () <A,\n#if A\nB,\n#endif\nC>\n@end\n", True),  # a protocol list
    (b"#if A\nint f(void) { return 1; }\n#else\nint f(void) { return 2; }\n#endif\n", False),
    (b"#if A\n- (void)a {\n}\n#else\n- (void)b {\n}\n#endif\n", False),
    (b"#if A\nRCT_EXPORT_MODULE()\n#endif\n- (void)a;\n", False),  # a macro statement
    (b"#if A\n#define X 1 // {\n#else\n#define X 2 /* ( */\n#endif\n", False),
    (b"#if A\nint f(void) {\n  return g(\n#if B\n  1);\n#else\n  2);\n#endif\n}\n#endif\n", False),
    (b"if (a) x();\n#if B\nelse if (b) y();\n#endif\nelse z();\n", True),  # an `else` chain
    (b"T* f() const\n#if C\nrequires P<T> || requires(T i) { i.g(); }\n#endif\n{ }\n", True),
])
def test_which_conditionals_split_a_declaration(branches: bytes, split: bool) -> None:
    conds = sorted(cbranches.conditionals(branches), key=lambda c: c.span[0])
    starts = [c.span[0] for c in conds]
    code = cbranches._code(branches)
    assert cbranches.splits(code, conds[0], conds, starts) is split


def test_spans_keep_lines_and_only_conditionals_under_an_error() -> None:
    from symdiff.parse.extract import _family, _parser

    family, _query = _family("objc")  # type: ignore[misc]
    assert family.mask is not None
    text = family.mask(SPLIT_OBJC)
    tree = _parser("objc").parse(text)
    assert error_bytes(tree.root_node) > 0
    spans = cbranches.splitting(text, tree.root_node)
    blanked = bytearray(text)
    for start, end in spans:
        blanked[start:end] = bytes(b if b == 0x0A else 0x20 for b in text[start:end])
    assert len(blanked) == len(text) and blanked.count(b"\n") == text.count(b"\n")
    kept = bytes(blanked).decode()
    assert "- (void)setBackgroundColor:(UIColor *)" in kept
    assert "RCTUIColor *)backgroundColor" not in kept  # the second head is read as ctags reads it
    assert "- (void)scrollWheel:" in kept and "scrollViewDidScroll:" in kept  # whole: both kept
    assert error_bytes(_parser("objc").parse(bytes(blanked)).root_node) == 0


CPP = b"""\
namespace ui {

#ifdef _WIN32
class Window : public Win32Base {
#else
class Window : public X11Base {
#endif
 public:
  void show() { visible_ = true; }
  int width() const;
 private:
  bool visible_ = false;
};

int Window::width() const { return 0; }

}  // namespace ui
"""


def test_cpp_classes_split_by_a_conditional_keep_their_methods() -> None:
    assert [(s.name, s.start_line) for s in extract("cpp", CPP)] == [
        ("ui", 1), ("ui::Window", 4), ("ui::Window::show", 9), ("ui::Window::width", 10),
        ("ui::Window::width", 15)]


C_SPLITS = b"""\
#ifdef __cplusplus
extern "C" {
#endif

int api_open(const char *path);
int api_close(int fd);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
__attribute__((noreturn)) static void die(const char *msg) {
#else
static void die(const char *msg) {
#endif
  abort();
}

static int parse(int argc,
#ifdef HAVE_GETOPT_LONG
                 char **argv, const struct option *longopts)
#else
                 char **argv)
#endif
{
  return 0;
}

int main(int argc, char **argv) { return parse(argc, argv); }
"""

CPP_HEADS = b"""\
namespace store {

template <typename T>
class Queue {
 public:
  void push(const T &value) { items_.push_back(value); }

#if __cplusplus >= 201103L
  T
  pop(bool wait = false) noexcept
#else
  T
  pop(bool wait)
#endif
  {
    return items_.front();
  }

  void clear() { items_.clear(); }
};

}  // namespace store
"""


def test_c_functions_split_by_a_conditional_are_named_as_ctags_names_them() -> None:
    assert [(s.name, s.start_line) for s in extract("c", C_SPLITS)] == [
        ("api_open", 5), ("api_close", 6), ("die", 13), ("parse", 20), ("main", 30)]


def test_cpp_members_split_by_a_conditional_keep_their_class() -> None:
    assert [(s.name, s.start_line) for s in extract("cpp", CPP_HEADS)] == [
        ("store", 1), ("store::Queue", 3), ("store::Queue::push", 6),
        ("store::Queue::pop", 9), ("store::Queue::clear", 19)]


def _recall_script() -> ModuleType:
    """benchmarks/symbol_recall.py, whose by-name scoring the docs' figures rest on."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "symbol_recall.py"
    spec = importlib.util.spec_from_file_location("symbol_recall", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("scope", "name", "names", "found"),
    [
        # A specialization's members: ctags drops the template arguments from the scope.
        ("std::allocator_traits", "allocate", ["std::allocator_traits<allocator<_Tp>>::allocate"],
         True),
        ("std::__atomic_base", "operator ++", ["std::__atomic_base<_PTp*>::operator++"], True),
        # An operator's own `<` is not a template argument list.
        ("std::X", "operator <", ["std::X::operator<"], True),
        ("std::X", "operator <=>", ["std::X::operator<=>"], True),
        ("std::X", "operator _Tp*", ["std::X::operator _Tp*"], True),
        ("std::r", "operator r<_It2>", ["std::r::operator r<_It2>"], True),
        ("std::r", "operator r<_It2>", ["std::r::operator r<_It3>"], False),
        ("std::fs::d", "operator const fs::path&", ["std::fs::d::operator const fs::path&"],
         True),
        # Real differences stay misses: another class, a lost namespace, an in-class friend.
        ("std::X", "f", ["std::Y<int>::f"], False),
        ("std::X", "f", ["X<int>::f"], False),
        ("std", "operator ==", ["std::X::operator=="], False),
        ("std::X", "f", ["std::_Tp f"], False),
    ],
)
def test_by_name_scoring_ignores_only_notation(
    scope: str, name: str, names: list[str], found: bool
) -> None:
    tag = {"name": name, "scope": scope, "scopeKind": "class"}
    assert _recall_script()._qualified("cpp", tag, names) is found


# In the shape of libstdc++'s fs_path.h: `if … else if` chains split by `#if` inside member
# functions' bodies, and a struct per platform. The errors they made ended the namespace `fs`
# early, and the class defined after them lost it (`lib::path::iterator`).
BODY_SPLIT = b"""\
namespace lib
{
namespace fs
{
  class path
  {
    template<typename _Tp>
      static auto
      convert(_Tp str)
      {
\tif constexpr (is_same_v<typename _Tp::value_type, char>)
\t  return str;
#if !defined FS_WINDOWS && defined USE_CHAR8
\telse if constexpr (is_same_v<_Tp, std::u8string>)
\t  return string_type(convert(str.data()));
#endif
\telse
\t  return convert(str.data(), str.size());
      }
  };

  template<typename _Ch>
    auto
    path::convert(const _Ch* f, const _Ch* l)
    {
      if constexpr (is_same_v<_Ch, char>)
\treturn f;
#if !defined FS_WINDOWS && defined USE_CHAR8
      else if constexpr (is_same_v<_Ch, char8_t>)
\treturn string_view(f, l - f);
#endif
      else
\t{
#ifdef FS_WINDOWS
\t  std::wstring wide;
\t  if constexpr (is_same_v<_Ch, char>)
\t    {
\t      struct Cvt : std::codecvt<wchar_t, char, std::mbstate_t>
\t      { } cvt;
\t      if (convert_in(f, l, wide, cvt))
\t\treturn wide;
\t    }
#ifdef USE_CHAR8
\t  else if constexpr (is_same_v<_Ch, char8_t>)
\t    return from_utf8(f, l);
#endif
\t  else
\t    {
\t      struct Cvt : std::codecvt<_Ch, char, std::mbstate_t>
\t      { } cvt;
\t      return from_utf8(cvt);
\t    }
#else
\t  struct Cvt : std::codecvt<_Ch, char, std::mbstate_t>
\t  { } cvt;
\t  std::string narrow;
\t  if (convert_out(f, l, narrow, cvt))
\t    return narrow;
#endif
\t  throw_conversion_error();
\t}
    }

  class path::iterator
  {
    bool equals(iterator) const;
  };
} // namespace fs
} // namespace lib
"""


def test_cpp_an_else_chain_split_in_a_body_keeps_the_namespace() -> None:
    names = _names("cpp", BODY_SPLIT)
    assert names["lib::fs::path::iterator"] == 64
    assert names["lib::fs::path::iterator::equals"] == 66
    assert "lib::path::iterator" not in names


# libstdc++'s stl_iterator.h: a trailing requires-clause inside `#if`, between a member's head and
# its body. The class around it, and every class after it in the namespace, lost its scope.
REQUIRES_SPLIT = b"""\
namespace std
{
  template<typename _Iterator>
    class reverse_iterator
    {
    public:
      pointer
      operator->() const
#if __cplusplus > 201703L && __cpp_concepts >= 201907L
      requires is_pointer_v<_Iterator>
\t|| requires(const _Iterator __i) { __i.operator->(); }
#endif
      {
\t_Iterator __tmp = current;
\treturn _S_to_pointer(__tmp);
      }

      reverse_iterator&
      operator++()
      { return *this; }
    };

  template<typename _Container>
    class back_insert_iterator
    {
      back_insert_iterator&
      operator*()
      { return *this; }
    };
}
"""


def test_cpp_a_requires_clause_split_by_a_conditional_keeps_the_class() -> None:
    names = _names("cpp", REQUIRES_SPLIT)
    assert names["std::reverse_iterator::operator->"] == 7
    assert names["std::reverse_iterator::operator++"] == 18
    assert names["std::back_insert_iterator::operator*"] == 26
