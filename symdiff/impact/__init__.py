"""impact: the reference index of a workspace and the callers and tests a change reaches
(docs/impact.md)."""
