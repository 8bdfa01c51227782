"""One definition through time: which definition a name means (lineage.py), its texts and
scoped diffs (texts.py), its versions and source (history.py), putting it back (restore.py)."""
