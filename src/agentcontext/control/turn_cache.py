"""Recently served prompts and authentications, kept so a turn costs one small query.

A chat's prompt is a pure function of a few columns: its pin (hash and time), its binding,
the agent's latest snapshot (for the MCP overlay) and the user's personal skills. Each
request reads those columns (the *turn key*) and reuses the rendered body when they have
not moved, so every replica stays exact without listening for events (``Recent``, by chat).
Renders shared across chats are kept by a digest of their inputs, bounded by the bytes they
weigh (``Weighed``). Authentications are kept for a short time-to-live: a rotated or revoked
token stops working within that time.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from agentcontext.settings.declared import BY_KEY

V = TypeVar("V")

AUTH_TTL_SECONDS: float = BY_KEY["server.auth_ttl"].default


class Recent(Generic[V]):
    """A thread-safe, bounded map of the most recently used entries, each tagged with a key.

    ``get(name, key)`` answers only when the stored key equals ``key``: a stale entry is a miss.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, tuple[Hashable, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str, key: Hashable) -> V | None:
        with self._lock:
            found = self._entries.get(name)
            if found is None or found[0] != key:
                return None
            self._entries.move_to_end(name)
            return found[1]

    def latest(self, name: str) -> V | None:
        """What is stored for ``name``, whatever its key (not counted as a use)."""
        with self._lock:
            found = self._entries.get(name)
            return None if found is None else found[1]

    def put(self, name: str, key: Hashable, value: V) -> None:
        with self._lock:
            self._entries[name] = (key, value)
            self._entries.move_to_end(name)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def discard(self, name: str) -> None:
        with self._lock:
            self._entries.pop(name, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class Weighed(Generic[V]):
    """A thread-safe map bounded by count and by the bytes its entries weigh, the least recently used out first.

    An entry heavier than a quarter of the bound is not kept: it would push out most of the others.
    """

    def __init__(self, weigh: Callable[[V], int], *, max_bytes: int, max_entries: int) -> None:
        self._weigh = weigh
        self._max_bytes = max_bytes
        self._max_entries = max_entries
        self._entries: OrderedDict[str, tuple[int, V]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> V | None:
        with self._lock:
            found = self._entries.get(name)
            if found is None:
                return None
            self._entries.move_to_end(name)
            return found[1]

    def put(self, name: str, value: V) -> bool:
        """Keep ``value`` under ``name``; whether it was kept (not when too heavy)."""
        weight = self._weigh(value)
        with self._lock:
            before = self._entries.pop(name, None)
            if before is not None:
                self.bytes -= before[0]
            if weight * 4 > self._max_bytes:
                return False
            self._entries[name] = (weight, value)
            self.bytes += weight
            while self.bytes > self._max_bytes or len(self._entries) > self._max_entries:
                _, (dropped, _) = self._entries.popitem(last=False)
                self.bytes -= dropped
            return True


class Expiring(Generic[V]):
    """``Recent`` whose entries also expire ``ttl`` seconds after they were stored."""

    def __init__(
        self, ttl: float = AUTH_TTL_SECONDS, capacity: int = 4096, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._recent: Recent[tuple[float, V]] = Recent(capacity)

    def get(self, name: str) -> V | None:
        found = self._recent.get(name, None)
        if found is None:
            return None
        if self._clock() >= found[0]:
            self._recent.discard(name)
            return None
        return found[1]

    def put(self, name: str, value: V) -> None:
        if self._ttl > 0:
            self._recent.put(name, None, (self._clock() + self._ttl, value))

    def discard(self, name: str) -> None:
        self._recent.discard(name)

    def clear(self) -> None:
        self._recent.clear()
