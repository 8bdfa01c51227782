"""extract(): golden samples per language, signatures, robustness."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import FIXTURES, LANGUAGES, sample_of
from tree_sitter_language_pack import get_language, get_parser

from symdiff.model import Symbol
from symdiff.parse.extract import _family, extract, extract_uncached
from symdiff.parse.languages import elixir
from symdiff.parse.languages.cmacros import mask
from symdiff.parse.languages.engine import definition_query, error_bytes, walk
from symdiff.parse.languages.shmask import recover


def rows(symbols: list[Symbol]) -> list[dict[str, object]]:
    return [
        {"name": s.name, "kind": s.kind, "start_line": s.start_line, "end_line": s.end_line}
        for s in symbols
    ]


def by_name(language: str, source: str) -> dict[str, Symbol]:
    return {s.name: s for s in extract(language, source.encode())}


def sig(language: str, source: str, name: str) -> str:
    return by_name(language, source)[name].signature


@pytest.mark.parametrize("language", LANGUAGES)
def test_sample_matches_expected(language: str) -> None:
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    assert rows(extract(language, sample_of(language))) == expected


@pytest.mark.parametrize("language", LANGUAGES)
def test_symbols_are_ordered_and_well_formed(language: str) -> None:
    symbols = extract(language, sample_of(language))
    assert [s.start_line for s in symbols] == sorted(s.start_line for s in symbols)
    for s in symbols:
        assert 1 <= s.start_line <= s.header_end_line <= s.end_line, s
        assert s.name and s.name.split(".")[-1] not in ("", " "), s


@pytest.mark.parametrize("language", LANGUAGES)
def test_truncated_and_garbled_input_never_raises(language: str) -> None:
    source = sample_of(language)
    for cut in range(0, len(source), max(1, len(source) // 40)):
        extract(language, source[:cut])
        extract(language, source[:cut] + b"\x00\xff(((" + source[cut:])


def test_unknown_language_yields_nothing() -> None:
    assert extract("cobol", b"IDENTIFICATION DIVISION.") == []
    assert extract("python", b"") == []


def test_deeply_nested_expression_does_not_overflow() -> None:
    source = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\ndef f(): pass\n"
    assert [s.name for s in extract("python", source.encode())] == ["f"]


def test_syntax_error_keeps_what_parses() -> None:
    source = "def ok(a):\n    return a\n\ndef broken(:\n    pass\n\n"
    source += "class K:\n    def m(self): ...\n"
    names = [s.name for s in extract("python", source.encode())]
    assert "ok" in names and "K.m" in names


# --- signatures ---------------------------------------------------------------------------

PY_BASE = "@dec\nasync def f(a: int, b=2) -> str:\n    return 'x'\n"


@pytest.mark.parametrize(
    "variant",
    [
        "@dec\nasync  def f( a : int,\n    b = 2 ) -> str :\n    return 'x'\n",
        "@dec\n# note\nasync def f(a: int,  # one\n    b=2) -> str:  # two\n    return 'y'\n",
        "@dec\nasync def f(a: int, b=2,) -> str:\n    return 'x'\n",
    ],
)
def test_python_signature_ignores_whitespace_comments_and_body(variant: str) -> None:
    assert sig("python", variant, "f") == sig("python", PY_BASE, "f")


@pytest.mark.parametrize(
    "variant",
    [
        "@dec\nasync def f(a: int, b=2) -> bytes:\n    return 'x'\n",  # return type
        "@other\nasync def f(a: int, b=2) -> str:\n    return 'x'\n",  # decorator
        "async def f(a: int, b=2) -> str:\n    return 'x'\n",  # decorator removed
        "@dec\ndef f(a: int, b=2) -> str:\n    return 'x'\n",  # async
        "@dec\nasync def f(a: int, b=3) -> str:\n    return 'x'\n",  # default
        "@dec\nasync def f(a: float, b=2) -> str:\n    return 'x'\n",  # parameter type
    ],
)
def test_python_signature_changes(variant: str) -> None:
    assert sig("python", variant, "f") != sig("python", PY_BASE, "f")


def test_python_signature_excludes_the_name() -> None:
    assert sig("python", PY_BASE, "f") == sig("python", PY_BASE.replace(" f(", " g("), "g")


def test_python_decorators_lead_but_docs_do_not() -> None:
    source = "# about f\n@dec\n@other(1)\ndef f(\n    a,\n):\n    pass\n"
    (f,) = extract("python", source.encode())
    assert (f.start_line, f.header_end_line, f.end_line) == (2, 6, 7)


def test_python_decorators_and_comment_marks_found_from_the_bytes() -> None:
    # An `@` that opens no decorator (an operator, an e-mail address, a string) before a
    # definition; `#` in a string and in a comment of a header; `@` inside a decorator.
    source = (
        "x = a @ b  # mail@example.org\n"
        "def f(sep='#',  # the mark\n"
        "      n=1):\n"
        "    return x\n"
        "@dec(c@d)\n"
        "# between\n"
        "@other\n"
        "async def g():  # after the colon\n"
        "    pass\n"
        "class A:\n"
        "    def h(self): return '@'\n"
        "    @property\n"
        "    def i(self): ...\n"
    )
    got = [(s.name, s.kind, s.start_line, s.header_end_line, s.end_line, s.signature)
           for s in extract("python", source.encode())]  # fmt: skip
    assert got == [
        ("f", "function", 2, 3, 4, 'def(sep="#",n=1):'),
        ("g", "function", 5, 8, 9, "@dec(c@d)@other async def():"),
        ("A", "class", 10, 10, 13, "class:"),
        ("A.h", "method", 11, 11, 11, "def(self):"),
        ("A.i", "method", 12, 13, 13, "@property def(self):"),
    ]


def test_python_same_named_methods_stay_apart() -> None:
    source = "class A:\n    def run(self): ...\nclass B:\n    def run(self): ...\n"
    names = [(s.name, s.kind) for s in extract("python", source.encode())]
    assert names == [("A", "class"), ("A.run", "method"), ("B", "class"), ("B.run", "method")]


# (language, base source, same-signature variant, changed-signature variant, name)
SIGNATURE_CASES = [
    (
        "go",
        "package p\nfunc (r *R) F(a int) (int, error) {\n\treturn 0, nil\n}\n",
        "package p\nfunc (r *R) F( a int /* x */ ) (int,\n error) {\n\treturn 1, nil\n}\n",
        "package p\nfunc (r *R) F(a int) (int64, error) {\n\treturn 0, nil\n}\n",
        "p.R.F",
    ),
    (
        "java",
        "class A {\n  @Override\n  public int f(int a) { return a; }\n}\n",
        "class A {\n  @Override // why\n  public  int f( int a ) { return a + 1; }\n}\n",
        "class A {\n  public int f(int a) { return a; }\n}\n",
        "A.f",
    ),
    (
        "rust",
        "impl S {\n    #[inline]\n    pub fn f(&self) -> u8 { 1 }\n}\n",
        "impl S {\n    #[inline]\n    /// doc\n    pub fn f( &self ) -> u8 { 2 }\n}\n",
        "impl S {\n    #[inline]\n    pub fn f(&self) -> u16 { 1 }\n}\n",
        "S::f",
    ),
    (
        "typescript",
        "class A {\n  async f(a: number): Promise<void> {}\n}\n",
        "class A {\n  async f(\n    a: number, // n\n  ): Promise<void> { go(); }\n}\n",
        "class A {\n  f(a: number): Promise<void> {}\n}\n",
        "A.f",
    ),
    (
        "cpp",
        "namespace n {\nint A::f(int a) const {\n  return a;\n}\n}\n",
        "namespace n {\nint A::f(int a) const // c\n{\n  return 2;\n}\n}\n",
        "namespace n {\nint A::f(int a) {\n  return a;\n}\n}\n",
        "n::A::f",
    ),
]


@pytest.mark.parametrize(("language", "base", "same", "changed", "name"), SIGNATURE_CASES)
def test_signatures_across_languages(
    language: str, base: str, same: str, changed: str, name: str
) -> None:
    assert sig(language, same, name) == sig(language, base, name)
    assert sig(language, changed, name) != sig(language, base, name)


def test_rust_attributes_lead_and_trait_impls_stay_apart() -> None:
    source = (
        "impl fmt::Display for P {\n    fn fmt(&self) {}\n}\n"
        "impl fmt::Debug for P {\n    #[inline]\n    fn fmt(&self) {}\n}\n"
    )
    symbols = by_name("rust", source)
    assert "<P as fmt::Display>::fmt" in symbols and "<P as fmt::Debug>::fmt" in symbols
    assert symbols["<P as fmt::Debug>::fmt"].start_line == 5


def test_csharp_file_scoped_namespace_qualifies_everything() -> None:
    source = "namespace Acme.Tools;\n\nclass A\n{\n    void M() { }\n}\n"
    assert list(by_name("csharp", source)) == ["Acme.Tools.A", "Acme.Tools.A.M"]


def test_overloads_are_separate_symbols_with_different_signatures() -> None:
    source = "class A {\n  void run() {}\n  void run(int n) {}\n}\n"
    runs = [s for s in extract("java", source.encode()) if s.name == "A.run"]
    assert len(runs) == 2 and runs[0].signature != runs[1].signature


def test_c_prototype_behind_an_unknown_macro_is_still_found() -> None:
    source = "extern int aio_cancel (int fd, struct aiocb *cb) __THROW;\nint g(void);\n"
    assert [s.name for s in extract("c", source.encode())] == ["aio_cancel", "g"]


def test_c_prototypes_behind_glibc_and_zlib_macros_are_found() -> None:
    source = (
        "__BEGIN_DECLS\n"
        "extern int posix_spawn (pid_t *__restrict __pid,\n"
        "\t\tchar *const __argv[__restrict_arr])\n"
        "    __nonnull ((2, 3));\n"
        "extern int getdomainname (char *__name, size_t __len)\n"
        "     __THROW __nonnull ((1)) __wur\n"
        "     __fortified_attr_access (__write_only__, 1, 2);\n"
        "ZEXTERN int ZEXPORT deflateInit OF((z_streamp strm, int level));\n"
        "__END_DECLS\n"
    )
    symbols = extract("c", source.encode())
    assert [(s.name, s.start_line, s.end_line) for s in symbols] == [
        ("posix_spawn", 2, 4),
        ("getdomainname", 5, 7),
        ("deflateInit", 8, 8),
    ]
    # The macros stay in the signature: the mask only steers the parser.
    assert "__wur" in symbols[1].signature and "OF((" in symbols[2].signature


def test_c_macro_mask_keeps_directives_and_offsets() -> None:
    source = b"#define OF(args) args\nint f OF((int a)) __THROW;\n"
    masked = mask(source)
    assert len(masked) == len(source) and masked.count(b"\n") == source.count(b"\n")
    assert masked.startswith(b"#define OF(args) args\n")
    assert masked.split(b"\n")[1].split() == [b"int", b"f", b"(int", b"a)", b";"]


# --- quote style ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "single", "double", "name"),
    [
        ("python", "@route('/x', methods=['GET'])\ndef f(): ...\n",
         '@route("/x", methods=["GET"])\ndef f(): ...\n', "f"),
        ("python", "def f(a=b'x', c=r'\\d', d='it\\'s'): ...\n",
         "def f(a=b\"x\", c=r\"\\d\", d=\"it's\"): ...\n", "f"),
        ("javascript", "function f(a = 'x') {}\n", 'function f(a = "x") {}\n', "f"),
        ("typescript", "function f(a: 'on' | 'off'): void {}\n",
         'function f(a: "on" | "off"): void {}\n', "f"),
    ],
)  # fmt: skip
def test_quote_style_does_not_change_a_signature(
    language: str, single: str, double: str, name: str
) -> None:
    assert sig(language, single, name) == sig(language, double, name)


@pytest.mark.parametrize(
    ("language", "one", "other", "name"),
    [
        ("python", "@route('/x')\ndef f(): ...\n", "@route('/y')\ndef f(): ...\n", "f"),
        # A literal holding a quote keeps its own style; its text differs from the other's.
        ("python", "def f(a='say \"hi\"'): ...\n", "def f(a='say hi'): ...\n", "f"),
        # Raw strings keep their backslashes: r'\\'' is not r"'".
        ("python", "def f(a=r'\\''): ...\n", 'def f(a=r"\'"): ...\n', "f"),
        # A template literal is not a plain string.
        ("javascript", "function f(a = `x`) {}\n", "function f(a = 'x') {}\n", "f"),
        # Rust lifetimes are not quotes.
        ("rust", "fn f<'a>(x: &'a str) {}\n", "fn f<'b>(x: &'b str) {}\n", "f"),
    ],
)
def test_quote_normalisation_keeps_real_differences(
    language: str, one: str, other: str, name: str
) -> None:
    assert sig(language, one, name) != sig(language, other, name)


def test_quote_inside_another_literal_is_left_alone() -> None:
    assert sig("python", "def f(a=\"it's\", b='x'): ...\n", "f") == 'def(a="it\'s",b="x"):'
    assert (
        sig("typescript", "function f(a = `it's ${'x'}`) {}\n", "f") == "function(a=`it's${'x'}`)"
    )


# --- content cache --------------------------------------------------------------------------


def test_repeated_content_gives_equal_independent_results() -> None:
    source = b"class A:\n    def m(self): ...\n"
    first = extract("python", source)
    first.clear()
    again = extract("python", source)
    assert [s.name for s in again] == ["A", "A.m"]
    assert again == extract_uncached("python", source)
    # The same bytes in another language are another entry.
    assert extract("ruby", source) != again


def test_cpp_namespace_macros_do_not_hide_the_namespace() -> None:
    source = (
        "namespace std _GLIBCXX_VISIBILITY(default)\n{\n_GLIBCXX_BEGIN_NAMESPACE_VERSION\n"
        "  template<typename _Tp>\n    struct box\n    {\n      box() { }\n    };\n"
        "_GLIBCXX_END_NAMESPACE_VERSION\n}\n"
    )
    assert [(s.name, s.kind, s.start_line) for s in extract("cpp", source.encode())] == [
        ("std", "namespace", 1),
        ("std::box", "struct", 4),
        ("std::box::box", "constructor", 7),
    ]


PY_NESTED = """\
if a:
    def f1(): ...
elif b:
    def f2(): ...
else:
    def f3(): ...
try:
    def f4(): ...
except E:
    def f5(): ...
except* G:
    def f6(): ...
else:
    def f7(): ...
finally:
    def f8(): ...
with c:
    async def f9(): ...
for i in d:
    def f10(): ...
else:
    def f11(): ...
while e:
    class K:
        @dec
        def f12(self): ...
match f:
    case 1:
        def f13(): ...
"""


@pytest.mark.parametrize("broken", [False, True])
def test_python_definitions_in_every_statement_container(broken: bool) -> None:
    source = PY_NESTED + ("x = (\n" if broken else "")
    names = [s.name for s in extract("python", source.encode())]
    expected = [f"f{i}" for i in range(1, 12)] + ["K", "K.f12", "f13"]
    assert names == expected


# --- Bash: definitions around constructs tree-sitter-bash cannot parse ----------------------

# Shapes from Debian's bash-completion that tree-sitter-bash cannot parse (issue 17); each one,
# alone in a function, used to lose that function or everything after it.
BASH_CHOKES = {
    "extglob after a dot (gpgv)":
        "if [[ ${COMP_LINE,,} == *.@(asc|sig|sign)\\ * ]]; then\n    :\nfi\n",
    "extglob in a word (_xinetd_services)":
        "local -a svcs=($(printf '%s\\n' $xinetddir/!($_backup_glob)))\n",
    "extglob in an array (cvs)": "[[ -z $cur ]] && files=(!(CVS)) || files=()\n",
    "extglob in a test (killall)": "[[ $OSTYPE == *@(linux|freebsd|darwin)* ]] || return 1\n",
    "extglob in a case (lsusb)":
        "case $prev in\n    --help | -!(-*)@([sD]|[hV]*))\n        return\n        ;;\nesac\n",
    "extglob group in a case (_longopt)":
        "case $prev in\n    --+([-a-z0-9_]))\n        _filedir\n        ;;\nesac\n",
    "extglob after a quote (ssh-keygen)":
        'case $line in\n    *" -t rsa"?( *))\n        bits=2048\n        ;;\nesac\n',
    "extglob in an expansion (_known_hosts_real)": 'host="${host%]?(:+([0-9]))}"\n',
    "brackets in an expansion pattern (__parse_options)": "option=${option%%[<{().[]*}\n",
    "regex with brackets (_parse_help)":
        "while [[ $line =~ \\[[[:space:]]*(-[^]]+)[[:space:]]*\\] ]]; do\n    :\ndone\n",
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(BASH_CHOKES))
def test_bash_functions_around_unparsable_constructs_are_found(shape: str) -> None:
    body = BASH_CHOKES[shape].replace("\n", "\n    ")
    source = f"_before()\n{{\n    :\n}}\n\n_gpgv()\n{{\n    {body}\n}}\n\n_after() {{ :; }}\n"
    last = source.count("\n")  # `_after` is on the last line; `_gpgv` ends two lines above
    got = {s.name: (s.start_line, s.end_line) for s in extract("bash", source.encode())}
    assert got == {"_before": (1, 4), "_gpgv": (6, last - 2), "_after": (last, last)}


def test_bash_recovery_is_what_the_plain_parse_misses() -> None:
    """Without the mask the grammar loses these functions: the test above would prove nothing."""
    source = b"f() {\n    [[ $OSTYPE == *@(linux|darwin)* ]] && files=(!(CVS))\n}\n"
    assert get_parser("bash").parse(source).root_node.has_error
    masked = recover(source)
    assert len(masked) == len(source) and masked.count(b"\n") == source.count(b"\n")
    assert not get_parser("bash").parse(masked).root_node.has_error
    (f,) = extract("bash", source)
    assert (f.name, f.start_line, f.end_line, f.signature) == ("f", 1, 3, "()")


@pytest.mark.parametrize("shape", sorted(BASH_CHOKES))
def test_bash_shapes_fail_without_the_mask(shape: str) -> None:
    source = f"f() {{\n{BASH_CHOKES[shape]}}}\n".encode()
    plain = get_parser("bash").parse(source).root_node
    masked = get_parser("bash").parse(recover(source)).root_node
    assert plain.has_error
    assert error_bytes(masked) < error_bytes(plain)


def test_bash_text_that_parses_is_never_masked() -> None:
    # `2*(3+4)` looks like an extended glob `*(…)`; the file parses, so no mask is applied.
    source = b"calc() {\n    echo $((2*(3+4)))\n}\n"
    (f,) = extract("bash", source)
    assert (f.name, f.end_line) == ("calc", 3)


# Words that a keyword walk meets where they open no definition, and definitions it must find.
_KEYWORD_TRAPS = {
    "python": b'''"""def not_a_function(): pass"""
class A:  # class B: in a comment
    x = "def nope(): pass"
    def f(self, undefined=1, default=2):
        classy = lambda: 0
        return f"{self} def"

    @staticmethod
    def g(): ...

def h(*, class_=None): pass
''',
    "elixir": b'''defmodule Outer.Mod do
  @moduledoc "def nope(x), do: x"
  @def :attribute_named_def
  def f(x), do: g(def: x)  # def in a comment
  defp g(def), do: def
  def def?(x), do: :def
  def unquote(name)(x), do: x
  defmacro m(a) do
    quote do
      def injected(y), do: y
    end
  end
  def h(x)
      # a comment between the head and the block: def inside(y)
      do
    x
  end
  defmodule Inner do
    defstruct [:a]
    defguard is_a(x) when is_atom(x)
    defdelegate d(x), to: Outer.Mod, as: :f
  end
  defimpl Size, for: Map do
    def size(m), do: map_size(m)
  end
  defprotocol P do
    def p(x)
  end
end
def outside(x), do: x
''',
}


@pytest.mark.parametrize("language", sorted(_KEYWORD_TRAPS))
def test_the_keyword_walk_finds_what_the_query_finds(language: str) -> None:
    # A family with keywords walks a tree without errors from one keyword to the next; the
    # query that finds every candidate node is the oracle, on the traps and on the sample.
    found = _family(language)
    assert found is not None
    family, query = found
    assert family.keywords
    plain = dataclasses.replace(family, keywords=(), keyword_field=None)
    plain_query = definition_query(plain, get_language(language))  # type: ignore[arg-type]
    for source in (_KEYWORD_TRAPS[language], sample_of(language)):
        tree = get_parser(language).parse(source)  # type: ignore[arg-type]
        assert not tree.root_node.has_error
        by_keyword = walk(family, source, tree.root_node, query)
        assert by_keyword == walk(plain, source, tree.root_node, plain_query)
        assert len(by_keyword) >= 4
    names = {s.name for s in extract(language, _KEYWORD_TRAPS[language])}
    wanted = {"python": {"A", "A.f", "A.g", "h"},
              "elixir": {"Outer.Mod", "Outer.Mod.f", "Outer.Mod.g", "Outer.Mod.def?",
                         "Outer.Mod.m", "Outer.Mod.h", "Outer.Mod.Inner",
                         "Outer.Mod.Inner.is_a", "Outer.Mod.Inner.d"}}[language]  # fmt: skip
    assert wanted <= names
    assert not {"not_a_function", "nope", "B", "Outer.Mod.inside", "outside"} & names


def test_a_keyword_field_the_grammar_lacks_fails_at_load() -> None:
    wrong = dataclasses.replace(elixir.FAMILY, keyword_field="targett")
    with pytest.raises(ValueError, match="no field 'targett'"):
        definition_query(wrong, get_language("elixir"))
