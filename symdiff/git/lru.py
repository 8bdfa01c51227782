"""A bounded least-recently-used map for in-process caches keyed by content (a blob id)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    """At most `entries` values weighing at most `weight` in all, the least recently used
    evicted first; safe to share between threads.

    A value weighing more than a quarter of the bound is not kept: one huge file would evict
    everything else.
    """

    def __init__(self, *, entries: int, weight: int = 0,
                 weigh: Callable[[V], int] = lambda _: 0) -> None:  # fmt: skip
        self._entries = entries
        self._weight = weight
        self._weigh = weigh
        self._held: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._heavy = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._held.get(key)
            if found is None:
                return None
            self._held.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V) -> None:
        weight = self._weigh(value)
        if self._weight and weight > self._weight // 4:
            return
        with self._lock:
            previous = self._held.pop(key, None)
            self._heavy -= 0 if previous is None else previous[1]
            self._held[key] = (value, weight)
            self._heavy += weight
            while len(self._held) > self._entries or (self._weight and self._heavy > self._weight):
                self._heavy -= self._held.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._heavy = 0
