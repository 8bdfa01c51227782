"""Parsing: a file's language, its definitions as Symbols, and whether it is a test.

    languages/    extension -> language, and per language family the handlers that turn a
                  tree-sitter tree into Symbols (`engine.py` walks the tree)
    extract.py    extract(language, source, base=None) -> Symbols, cached by content hash
    reparse.py    incremental parsing from the tree of the text a text was edited from
    testpaths.py  a path's scope (test or impl) by its language's test conventions
"""
