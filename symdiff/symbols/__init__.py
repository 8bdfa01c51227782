"""One definition through time (docs/symbol_history.md).

    select.py    which definition a name means: [PATH:]NAME[#N|:LINE][@VERSION]
    lineage.py   its versions across symbol renames, file renames and moves
    texts.py     a version's texts (snapshots, or git objects) and its symbol-scoped diff
    history.py   symbol_history and symbol_source: the answers over a lineage
    restore.py   one definition put back as it was at a version (a SEARCH/REPLACE edit)
"""
