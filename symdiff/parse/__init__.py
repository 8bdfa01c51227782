"""Parsing: a file's language, its definitions as Symbols, and whether it is a test.

    languages/    extension -> language, and per language family the handlers that turn a
                  tree-sitter tree into Symbols (`engine.py` walks the tree)
    extract.py    extract(language, source, base=None) -> Symbols, cached by content hash;
                  extract_with_refs: the symbols and the references from one parse
    refs.py       a file's references (Ref, Import, FileRefs): inert values
    reflangs/     per language, the reader of references: Python's from the text
                  (`python.py`), every other's by a tree-sitter query (`queries.py`)
    reparse.py    incremental parsing from the tree of the text a text was edited from
    testpaths.py  a path's scope (test or impl) by its language's test conventions
    version.py    the extractor's version (a digest of its code and grammars): symbols by
                  content are stored under it
    codec.py      a blob's symbols, references, and a pair of blobs' change, as stored bytes
                  and back
    shelf.py      a batch's symbols by blob and changes by pair, read from and kept in a store
    pool.py       worker processes that parse batches of files, reused; small batches in-process
"""
