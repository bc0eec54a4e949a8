"""The server's garbage collector: what it tracks is frozen each second, so a full collection walks only what is new.

A generation-2 collection walks every object the collector tracks, with the event loop stopped. With a
thousand event streams open (about 200 objects each) and the caches full, that is 100-280 ms, and it comes
again each time the long-lived objects grew by a quarter (``bench/gc_streams.py``, bench/RESULTS.md). So
every ``freeze_every`` seconds what the collector tracks is frozen (``gc.freeze``): it no longer walks it.
A frozen object is still freed by its reference count, as an event stream's objects are when it closes
(``tests/server/test_collector.py``); what freezing keeps is a *cycle* that is garbage, or becomes garbage
after being frozen. So now and then everything is thawed and collected once: a pause as long as the
full collections freezing avoids (about a second with 2,000 agents and 4,000 chats on two replicas), so
the gap between thaws grows while they find next to no garbage (``next_gap``), as this server's do, and
shrinks again when they find some: the cyclic garbage kept stays a small share of what the server holds.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass

import anyio

log = logging.getLogger("agentcontext.server.collector")
SLOW_THAW = 0.1  # seconds: a thaw's full collection this long is logged
LITTLE_GARBAGE = 0.01  # a thaw that frees at most this share of what it walked found next to no garbage


@dataclass(frozen=True, slots=True)
class Thaw:
    """What one thaw walked (the frozen objects), freed (the cycles kept meanwhile) and took."""

    walked: int
    freed: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Collector:
    freeze_every: float = 1.0
    thaw_every: float = 600.0  # the first gap between thaws, and the shortest
    thaw_at_least_every: float = 4 * 3600.0  # the longest gap, however little the thaws find
    full_after: int = 100  # young collections before an automatic full one (Python's default: 10)

    def settle(self) -> None:
        """What the server made so far, collected once and set aside (start-up: modules, schemas, statements)."""
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, self.full_after)
        gc.collect()
        gc.freeze()

    def freeze(self) -> None:
        """Everything tracked now frozen, with no young collection first: the form measured (bench/RESULTS.md,
        "The collector set aside")."""
        gc.freeze()

    def thaw(self) -> Thaw:
        """Everything thawed and collected once, the cycles kept meanwhile freed; then frozen again."""
        start = time.perf_counter()
        walked = gc.get_freeze_count()
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        took = time.perf_counter() - start
        if took >= SLOW_THAW:
            log.info("a full collection of the %d frozen objects took %.0f ms (%d freed)", walked, took * 1000, freed)
        return Thaw(walked, freed, took)

    def next_gap(self, gap: float, thawed: Thaw) -> float:
        """The gap before the next thaw: doubled after one that found next to no garbage (a pause saved), up to
        ``thaw_at_least_every``; halved after one that found more, down to ``thaw_every``."""
        if thawed.freed <= thawed.walked * LITTLE_GARBAGE:
            return min(gap * 2, self.thaw_at_least_every)
        return max(gap / 2, self.thaw_every)

    async def run(self) -> None:
        """Settle, then freeze each ``freeze_every`` and thaw on a gap that ``next_gap`` sets, until cancelled."""
        self.settle()
        gap = self.thaw_every
        thawed = anyio.current_time()
        while True:
            await anyio.sleep(self.freeze_every)
            if anyio.current_time() - thawed >= gap:
                gap = self.next_gap(gap, self.thaw())
                thawed = anyio.current_time()
            else:
                self.freeze()
