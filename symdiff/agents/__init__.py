"""Agent sessions (docs/agents.md): every write an agent makes is the agent's, whatever tool
made it.

The hook side imports only the standard library, so that `symdiff hook` answers in a few tens
of milliseconds: a hook event (`events.py`) is appended to its session's journal under
`.symdiff/agents/` (`journal.py`); the journals fold into sessions, turns and tool windows
(`state.py`, `reader.py`); the indexer asks `attribute.py` whether a write happened inside an
agent's open tool call. These sit beside `workspace/` in the layers.

The services sit beside `record/` and `query/`: `hook.py` (one hook run), `recorder.py` (the
sessions kept in the database, a reconcile without a daemon, the next turn's context),
`listing.py` (`symdiff sessions`), `merge.py` and `undo.py` (a turn undone three-way),
`blame.py` (each line's last writer) and `trace.py` (Agent Trace records), `setup.py`
(`symdiff init claude-code`). The database side is `store/sessions.py` and
`store/filehistory.py`.
"""
