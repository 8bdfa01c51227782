"""The read side: what changed, as the adapters ask it (through `symdiff.api`).

    args.py        the diff query's arguments and their rules
    answer.py      the diff query over the index, and which notes its answer carries
    result.py      the Answer and its notes (inert values the adapters word)
    against.py     the work tree compared with a git revision
    follow.py      following new records (the live page)
    patches.py     a record's patch, ACP or `git diff` text
    workspaces.py  which workspaces of the database a read covers
    status.py      `symdiff status`: the daemon, the baseline, what is recorded
"""
