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
    # ... except into test code: a test's `obj.method()` joins by name at any depth (a test's
    # receivers are the objects it just built; its calls are where most name edges start).
    name_edges_into_tests: bool = True
    # A changed method that overrides a base class's method is reached, besides its own users,
    # by: "class" the users of its class (who makes a subclass instance can dispatch to the
    # override), "base_callers" every caller of the base's method (`self.m()` in the base:
    # dynamic dispatch, the widest), "none" nobody more.
    overrides: str = "class"
    # A setUp, a test class or an autouse fixture stands for every test it runs before only when
    # the walk reached it through resolved edges alone (framework code reached by name would
    # otherwise select the whole suite).
    expand_needs_resolved: bool = True
    # The walk goes on past a class reached through its body (its bases, decorators, class
    # attributes). Off: that code runs when the module is imported, not when a test uses the
    # class (per-test coverage does not see it), and every user of a central class would
    # follow. Methods are nodes of their own and are always followed.
    expand_classes: bool = False
    # A method with no user at all (dispatched by `getattr`, registered in a dict) is reached,
    # as a `name` edge, by the users of its class and of the classes below it.
    dead_end_methods: bool = True
    # Module-level code that uses a definition (`s = attrs`, `FILTERS = {"first": do_first}`)
    # is reached, by name, by the uses of that module's names it does not define.
    module_aliases: bool = True
    # The walk's bound: nodes visited across all changed symbols.
    node_budget: int = 20_000
    # A name shorter than this never makes a name edge (`f`, `id`, `x`).
    name_min_length: int = 3


DEFAULT_POLICY = Policy()
