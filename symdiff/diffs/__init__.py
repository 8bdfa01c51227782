"""Line diffs and what is built from them: hunks, counts, patches, the text_diff tool.

    linediff.py   the line diff engine (libgit2's xdiff): hunks, numstat counts, unified and
                  git patch text; `is_binary`, the one binary rule
    acp.py        ACP v2 Diff objects with real git patches
    textdiff.py   the text_diff tool: caps, modes, errors
    blobid.py     git's blob id of some bytes (content identity, shared by store and patches)
    blobpatch.py  libgit2's patch of two large texts handed over as in-memory blobs, so that
                  it does not hash them again
"""
