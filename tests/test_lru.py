"""The bounded LRU behind the caches by blob id."""

from __future__ import annotations

from symdiff.git.lru import Lru


def test_entries_bound_evicts_the_least_recently_used() -> None:
    held: Lru[str, int] = Lru(entries=2)
    held.put("a", 1)
    held.put("b", 2)
    assert held.get("a") == 1  # "b" is now the least recently used
    held.put("c", 3)
    assert (held.get("a"), held.get("b"), held.get("c")) == (1, None, 3)


def test_weight_bound_and_a_value_too_heavy_to_keep() -> None:
    held: Lru[str, bytes] = Lru(entries=10, weight=40, weigh=len)
    held.put("a", b"x" * 10)
    held.put("b", b"y" * 10)
    held.put("big", b"z" * 11)  # over a quarter of the bound: not kept, nothing evicted
    assert held.get("big") is None and held.get("a") == b"x" * 10
    for key in "cde":
        held.put(key, b"w" * 10)
    assert held.get("b") is None and held.get("e") == b"w" * 10  # 40 bytes: "b" went first
    held.put("e", b"v" * 5)  # replacing a value re-weighs it: 35 bytes held
    held.put("f", b"u" * 10)
    assert held.get("a") is None and held.get("c") == b"w" * 10
    held.clear()
    assert held.get("a") is None
