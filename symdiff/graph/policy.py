"""The walk's policy on `name` edges, in one place (docs/impact.md, "The walk").

A `name` edge joins a use to every definition whose last name part is the same (`x.get()` to
every `get`); that is where precision dies. The accuracy benchmark tunes these numbers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Policy:
    """How far the walk trusts `name` edges, and how much work a walk may do."""

    # A name edge is followed only when at most this many definitions share the last name part
    # (0: never follow name edges).
    name_max_definitions: int = 4
    # Name edges are followed only from nodes nearer the change than this (1: only uses of the
    # changed symbols themselves); None for any depth. Applies to the callers and the tests.
    name_max_depth: int | None = None
    # A method changed in a subclass reaches the callers of the base class's method of the same
    # name (dynamic dispatch: `self.m()` in the base runs the override).
    overrides_reach_base_callers: bool = True
    # The test walk's bound: nodes visited across all changed symbols.
    node_budget: int = 20_000
    # A name shorter than this never makes a name edge (`f`, `id`, `x`).
    name_min_length: int = 3


DEFAULT_POLICY = Policy()
