"""The command line (`symdiff`, `python -m symdiff`): click commands that parse, call
`symdiff.api` and format.

    main.py      the `symdiff` group, the list of its commands, the console-script entry point
    common.py    what the commands share: the error exit, options, notes, printed edits
    display.py   what a person sees: the changes table, watch lines, status text, notes worded
    record.py    index, watch, history import
    changes.py   changes (the diff query)
    symbols.py   log, show, restore
    status.py    status
    files.py     textdiff, apply
    db.py        db upgrade, db gc
    serve.py     serve (starts the MCP server, symdiff/mcp)
    ui.py        ui (starts the live page, symdiff/ui)
"""
