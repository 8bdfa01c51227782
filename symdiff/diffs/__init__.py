"""diffs."""
