"""Agent sessions: hook events, the session/turn/tool-window state, and attribution.

Data flows one way: a hook event (`events.py`) is appended to its session's journal under
`.symdiff/agents/` (`journal.py`); the journals fold into sessions, turns and tool windows
(`state.py`); the indexer asks `attribute.py` whether a write happened inside an agent's open
tool call. Everything here imports only the standard library, so that `symdiff hook` answers in
a few tens of milliseconds; the database side is `store/sessions.py`. docs/agents.md.
"""
