"""The MCP server (`symdiff serve`): tools declared with the SDK's decorator over `symdiff.api`.

    server.py    the server, the diff, text_diff and apply_edits tools, argument errors
    symbols.py   the symbol history tools
    schema.py    the tools' output and argument schemas
    replies.py   a tool's result or error, the client's name
    wire.py      JSON-RPC text that is not Unicode, answered at the transport
"""
