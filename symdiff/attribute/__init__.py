"""Attribution: which symbols a change touched, and the one builder of a change.

    spans.py        old and new symbols with the line hunks -> SymbolChanges (interval logic,
                    byte spans on shared lines); pure
    filechange.py   two versions of a file -> its FileChange: line counts, scope, language,
                    symbols (parse/ for the symbols, spans.py for what happened to them)
"""
