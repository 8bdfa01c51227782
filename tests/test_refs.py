"""A file's references (the reference index's input): one parse feeds symbols and refs, small
golden cases per language family, and an oracle for Python's calls built on `ast`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pycalls import ast_calls

from symdiff.parse.codec import (
    CodecError,
    from_raw,
    from_raw_refs,
    pack_refs,
    raw,
    raw_refs,
    unpack_refs,
)
from symdiff.parse.extract import extract, extract_refs, extract_uncached, extract_with_refs
from symdiff.parse.languages import FAMILIES
from symdiff.parse.pool import ParsePool
from symdiff.parse.reflangs.python import python_refs
from symdiff.parse.refs import FileRefs, Import, Ref, RefKind

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CALL, ATTR, TYPE = RefKind.CALL, RefKind.ATTR, RefKind.TYPE
NAME, DECORATOR, FIXTURE = RefKind.NAME, RefKind.DECORATOR, RefKind.FIXTURE


def sample(language: str) -> bytes:
    (path,) = [p for p in (FIXTURES / language).iterdir() if p.name.startswith("sample")]
    return path.read_bytes()


def uses(language: str, source: str) -> set[tuple[str, str, RefKind]]:
    return {(r.source, r.target, r.kind) for r in extract_refs(language, source.encode()).refs}


@pytest.mark.parametrize("language", sorted(FAMILIES))
def test_the_symbols_of_extract_with_refs_are_extracts(language: str) -> None:
    source = sample(language)
    symbols, refs = extract_with_refs(language, source)
    assert symbols == extract_uncached(language, source) == extract(language, source)
    names = {s.name for s in symbols} | {""}
    # (an OCaml interface declares and calls nothing; the C sample only includes stdio.h)
    assert refs.refs or refs.imports or language == "ocaml_interface", language
    assert {r.source for r in refs.refs} <= names  # each source is a definition, or the module
    assert unpack_refs(pack_refs(refs)) == refs


def test_a_language_without_a_family_has_no_refs() -> None:
    assert extract_with_refs("markdown", b"# x") == ([], FileRefs())


PYTHON = '''\
import os.path
import numpy as np
from . import sibling
from ..pkg.mod import (a, b as c,  # why
    d)
from x import *
import pytest

@pytest.fixture(name="db_thing")
def thing(tmp_path, request):
    request.getfixturevalue("other")
    return models.Thing(tmp_path)

@pytest.mark.usefixtures("x1", 'x2')
class TestA(Base, mixins.M, metaclass=Meta):
    @pytest.mark.parametrize("n, m", [(1, 2)])
    def test_f(self, thing, n, db: Database, m) -> Result:
        """Calls foo() in a docstring: no call."""
        x = Foo(1)
        y: models.Bar = get()
        x.save()
        y.load(a)
        db.query("s").all()
        os.path.join(sibling, "a # b")
        print(f"{np.sum(z)} and {{not_a_field}}")
        def inner():
            return c(thing)
        self.helper(
            key=value)
        super().tearDown()
        obj.attr.sub = 3
        return thing
'''


def test_python_imports() -> None:
    assert extract_refs("python", PYTHON.encode()).imports == (
        Import("os", "os.path", "", 1),
        Import("np", "numpy", "", 2),
        Import("sibling", ".", "sibling", 3),
        Import("a", "..pkg.mod", "a", 4),
        Import("c", "..pkg.mod", "b", 4),
        Import("d", "..pkg.mod", "d", 4),
        Import("", "x", "*", 6),
        Import("pytest", "pytest", "", 7),
    )


def test_python_references() -> None:
    assert uses("python", PYTHON) == {
        ("thing", "pytest.fixture", DECORATOR),
        ("thing", "pytest.fixture:name=db_thing", DECORATOR),
        ("thing", "tmp_path", FIXTURE),
        ("thing", "other", FIXTURE),
        ("thing", "request.getfixturevalue", CALL),
        ("thing", "models.Thing", CALL),
        ("TestA", "pytest.mark.usefixtures", DECORATOR),
        ("TestA", "x1", FIXTURE),
        ("TestA", "x2", FIXTURE),
        ("TestA", "Base", TYPE),
        ("TestA", "mixins.M", TYPE),
        ("TestA", "Meta", TYPE),
        ("TestA.test_f", "pytest.mark.parametrize", DECORATOR),
        ("TestA.test_f", "thing", FIXTURE),  # (n and m are parametrize's, no fixtures)
        ("TestA.test_f", "db", FIXTURE),
        ("TestA.test_f", "Database", TYPE),
        ("TestA.test_f", "Result", TYPE),
        ("TestA.test_f", "Foo", CALL),
        ("TestA.test_f", "Foo.save", CALL),  # x = Foo(1): x.save() is Foo.save
        ("TestA.test_f", "get", CALL),
        ("TestA.test_f", "models.Bar", TYPE),
        ("TestA.test_f", "models.Bar.load", CALL),  # y: models.Bar
        ("TestA.test_f", "a", NAME),  # imported, passed as a value
        ("TestA.test_f", "Database.query", CALL),  # db: Database, a parameter
        ("TestA.test_f", "os.path.join", CALL),
        ("TestA.test_f", "sibling", NAME),
        ("TestA.test_f", "np.sum", CALL),  # in an f-string's field
        ("TestA.test_f", "print", CALL),
        ("TestA.test_f", "self.helper", CALL),
        ("TestA.test_f", "super", CALL),
        ("TestA.test_f", "super.tearDown", CALL),  # the method a subclass's call reaches
        ("TestA.test_f", "obj.attr.sub", ATTR),
        ("TestA.test_f.inner", "c", CALL),
        ("TestA.test_f.inner", "thing", NAME),  # a top-level function, not inner's parameter
    }


def test_python_lines_and_order_are_stable() -> None:
    refs = extract_refs("python", PYTHON.encode()).refs
    assert Ref("TestA.test_f", "Foo", CALL, 19) in refs
    assert Ref("TestA.test_f", "obj.attr.sub", ATTR, 31) in refs
    assert Ref("TestA.test_f.inner", "c", CALL, 27) in refs
    kinds = list(RefKind)
    assert list(refs) == sorted(refs, key=lambda r: (r.source, r.target, kinds.index(r.kind)))


@pytest.mark.parametrize(
    "path", ["json/decoder.py", "json/encoder.py", "textwrap.py", "argparse.py", "pathlib.py"]
)
def test_python_calls_equal_asts(path: str) -> None:
    source = (STDLIB / path).read_bytes()
    refs = python_refs(source, extract("python", source), local_types=False)
    calls = {(r.source, r.target) for r in refs.refs if r.kind is CALL}
    assert calls == ast_calls(source)


ECMA = """\
import d, {a as b} from "./m";
import * as ns from "m";
import "side";
export {x} from "./y";
export * from "z";
const {a: q, c} = require("./r");
const m = require("m");
class K extends Base {
  go() { g(1); a.b.c(); new X(); foo().bar(); import("./dyn"); return <Foo.Bar x={1}/>; }
}
"""


def test_javascript() -> None:
    refs = extract_refs("javascript", ECMA.encode())
    assert set(refs.imports) == {
        Import("d", "./m", "default", 1), Import("b", "./m", "a", 1), Import("ns", "m", "", 2),
        Import("", "side", "", 3), Import("x", "./y", "x", 4), Import("", "z", "*", 5),
        Import("q", "./r", "a", 6), Import("c", "./r", "c", 6), Import("m", "m", "", 7),
        Import("", "./dyn", "", 9),
    }  # fmt: skip
    assert {(r.source, r.target, r.kind) for r in refs.refs} == {
        ("K", "Base", TYPE), ("K.go", "g", CALL), ("K.go", "a.b.c", CALL), ("K.go", "X", CALL),
        ("K.go", "foo", CALL), ("K.go", "bar", CALL), ("K.go", "Foo.Bar", CALL),
    }  # fmt: skip


def test_typescript_types() -> None:
    source = "class C extends B implements I { x: Foo<Bar.Baz>; m(a: T): R { return new Q<T>(); } }"
    assert uses("typescript", source) == {
        ("C", "B", TYPE), ("C", "I", TYPE), ("C", "Foo", TYPE), ("C", "Bar.Baz", TYPE),
        ("C.m", "T", TYPE), ("C.m", "R", TYPE), ("C.m", "Q", CALL),
    }  # fmt: skip


GO = """\
package p
import (
\tf "fmt"
\t_ "x/y"
\t. "z"
\t"a/b"
)
type T struct{ u b.U }
func (t *T) M(x X) { f.Println(); x.M(); _ = T{}; g() }
"""


def test_go() -> None:
    refs = extract_refs("go", GO.encode())
    assert refs.package == "p"
    assert refs.imports == (
        Import("f", "fmt", "", 3), Import("", "x/y", "", 4), Import("", "z", "*", 5),
        Import("b", "a/b", "", 6),
    )  # fmt: skip
    assert {(r.source, r.target, r.kind) for r in refs.refs} == {
        ("p.T", "b.U", TYPE), ("p.T.M", "X", TYPE), ("p.T.M", "f.Println", CALL),
        ("p.T.M", "x.M", CALL), ("p.T.M", "T", CALL), ("p.T.M", "T", TYPE), ("p.T.M", "g", CALL),
    }  # fmt: skip


def test_java_kotlin_csharp() -> None:
    java = extract_refs(
        "java",
        b"package p.q;\nimport a.b.C;\nimport static a.b.C.m;\nimport a.*;\n"
        b"class K extends S { void f(L l){ g(1); a.b(2); new X(); } }",
    )
    assert java.package == "p.q"
    assert java.imports == (
        Import("C", "a.b", "C", 2), Import("m", "a.b.C", "m", 3), Import("", "a", "*", 4),
    )  # fmt: skip
    assert {(r.source, r.target, r.kind) for r in java.refs} == {
        ("K", "S", TYPE), ("K.f", "L", TYPE), ("K.f", "g", CALL), ("K.f", "a.b", CALL),
        ("K.f", "X", CALL), ("K.f", "X", TYPE),
    }  # fmt: skip
    kotlin = extract_refs("kotlin", b"package a.b\nimport x.y.Z\nimport x.y.W as V\n"
                          b"fun f(z: Z) { g(1); a.b(2) }")  # fmt: skip
    assert kotlin.package == "a.b"
    assert kotlin.imports == (Import("Z", "x.y", "Z", 2), Import("V", "x.y", "W", 3))
    assert {("f", "g", CALL), ("f", "a.b", CALL), ("f", "Z", TYPE)} <= {
        (r.source, r.target, r.kind) for r in kotlin.refs
    }
    csharp = extract_refs(
        "csharp",
        b"using A.B;\nusing X = A.B.C;\n"
        b"namespace N { class C : Base { void F(T t){ G(1); a.B(2); } } }",
    )
    assert csharp.package == "N"
    assert csharp.imports == (Import("", "A.B", "*", 1), Import("X", "A.B", "C", 2))
    assert {(r.source, r.target, r.kind) for r in csharp.refs} == {
        ("N.C", "Base", TYPE), ("N.C.F", "T", TYPE), ("N.C.F", "G", CALL),
        ("N.C.F", "a.B", CALL),
    }  # fmt: skip


def test_rust() -> None:
    refs = extract_refs(
        "rust",
        b"use crate::a::{b, c as d};\nuse super::x;\nuse std::io::*;\nmod m;\n"
        b'fn f(p: P) { g(1); a::b(); x.m(); S{a:1}; println!("x"); }',
    )
    assert refs.imports == (
        Import("b", "crate.a", "b", 1), Import("d", "crate.a", "c", 1),
        Import("x", "super", "x", 2), Import("", "std.io", "*", 3), Import("m", "self.m", "", 4),
    )  # fmt: skip
    assert {(r.source, r.target, r.kind) for r in refs.refs} == {
        ("f", "P", TYPE), ("f", "g", CALL), ("f", "a.b", CALL), ("f", "x.m", CALL),
        ("f", "S", CALL), ("f", "println", CALL),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("c", "#include <stdio.h>\nvoid f(){ g(1); a.b(2); p->q(3); }"),
        ("ruby", "require 'x/y'\ndef f; g(1); a.b(2); end"),
        ("php", "<?php\nuse X\\Y\\Z;\nfunction f(){ g(1); $a->b(2); }"),
        ("lua", "function f() g(1); a.b(2) end"),
        ("swift", "func f(){ g(1); a.b(2) }"),
        ("r", "f <- function() { g(1); a$b(2) }"),
        ("elixir", "defmodule M do\n def f do g(1); A.b(2) end\nend"),
        ("perl", "sub f { g(1); $a->b(2); }"),
    ],
)
def test_other_languages_read_calls_by_name(language: str, source: str) -> None:
    found = {(r.target, r.kind) for r in extract_refs(language, source.encode()).refs}
    assert ("g", CALL) in found
    assert found & {("a.b", CALL), ("A.b", CALL)}


def test_codec_round_trip_and_errors() -> None:
    refs = extract_refs("python", PYTHON.encode())
    packed = pack_refs(refs)
    assert unpack_refs(packed) == refs
    assert unpack_refs(pack_refs(FileRefs())) == FileRefs()
    with pytest.raises(CodecError):
        unpack_refs(b"[1,2]")


def test_the_pool_reads_symbols_and_refs_from_one_parse() -> None:
    texts = [("python", PYTHON.encode()), ("go", GO.encode()), ("javascript", ECMA.encode())]
    want = [(extract(language, text), extract_refs(language, text)) for language, text in texts]
    stored = [(raw(symbols), raw_refs(refs)) for symbols, refs in want]
    with ParsePool(min_jobs=1, min_bytes=0, workers=2) as pool:
        assert pool.with_refs(texts) == want
        assert pool.worker_jobs == 3
        # the stored forms, encoded by the workers, read back as the same symbols and refs
        assert pool.stored_refs(texts) == stored
        assert pool.worker_jobs == 6
    assert [(list(from_raw(s)), from_raw_refs(r)) for s, r in stored] == want
    assert ParsePool(min_jobs=100).with_refs(texts) == want  # in-process
    assert ParsePool(min_jobs=100).stored_refs(texts) == stored


def test_a_stream_of_batches_answers_each_in_order() -> None:
    texts = [("python", PYTHON.encode()), ("go", GO.encode()), ("javascript", ECMA.encode())]
    batches = [texts, texts[::-1], [], texts[1:], texts[:1] * 5]
    want = [[(extract(language, text), extract_refs(language, text)) for language, text in batch]
            for batch in batches]  # fmt: skip
    stored = [[(raw(symbols), raw_refs(refs)) for symbols, refs in batch] for batch in want]
    with ParsePool(min_jobs=1, min_bytes=0, workers=2) as pool:
        assert list(pool.with_refs_each(batches)) == want
        assert list(pool.stored_refs_each(batches)) == stored
        assert pool.worker_jobs == 2 * sum(map(len, batches))
        pids = pool.pids()
        # left after the first batch: the chunks in flight are answered and dropped, and the
        # same workers answer the next batch
        answers = pool.stored_refs_each(batches)
        assert next(answers) == stored[0]
        answers.close()
        assert pool.stored_refs(texts) == stored[0]
        assert pool.pids() == pids and pool.starts == 1 and pool.local_jobs == 0


DETERMINISM = {
    "python": "def f(flag):\n    q = A()\n    q = B()\n    q.run()\n    if flag:\n"
              "        q.run()\n    return q.stop\n",
    "javascript": "var S = {\n  move: function(id) {\n    S.redisplay(id);\n"
                  "    S.redisplay(id + 1);\n    grunt.task(1);\n    grunt.task(2);\n  }\n};\n",
}


def test_the_refs_are_the_same_in_every_process() -> None:
    """A worker is a new interpreter with its own hash seed: the refs it reads (a variable
    bound to two classes, a call written twice) must not depend on it."""
    script = ("import sys, json\nfrom symdiff.parse.extract import extract_with_refs\n"
              "texts = json.loads(sys.stdin.read())\n"
              "print(repr({k: extract_with_refs(k, v.encode())[1] for k, v in texts.items()}))\n")
    seen = {subprocess.run([sys.executable, "-c", script], input=json.dumps(DETERMINISM),
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in range(1, 9)}  # fmt: skip
    assert len(seen) == 1, seen
