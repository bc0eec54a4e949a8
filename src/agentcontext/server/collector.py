"""The server's garbage collector: what it tracks is frozen each second, so a full collection walks only what is new.

A generation-2 collection walks every object the collector tracks, with the event loop stopped. With a
thousand event streams open (about 200 objects each) and the caches full, that is 100-280 ms, and it comes
again each time the long-lived objects grew by a quarter (``bench/gc_streams.py``, bench/RESULTS.md). So
every ``freeze_every`` seconds what the collector tracks is frozen (``gc.freeze``): it no longer walks it.
A frozen object is still freed by its reference count, as an event stream's objects are when it closes
(``tests/server/test_collector.py``); what freezing keeps is a *cycle* that is garbage, or becomes garbage
after being frozen, so every ``thaw_every`` seconds everything is thawed and collected once: one full pause
in that period, and cyclic garbage kept at most that long (the server makes little: its collections free
almost nothing).
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass

import anyio

log = logging.getLogger("agentcontext.server.collector")
SLOW_THAW = 0.1  # seconds: a thaw's full collection this long is logged


@dataclass(frozen=True, slots=True)
class Collector:
    freeze_every: float = 1.0
    thaw_every: float = 600.0
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

    def thaw(self) -> float:
        """Everything thawed and collected once, the cycles kept meanwhile freed; then frozen again. Seconds taken."""
        start = time.perf_counter()
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        took = time.perf_counter() - start
        if took >= SLOW_THAW:
            log.info("a full collection of the frozen objects took %.0f ms (%d freed)", took * 1000, freed)
        return took

    async def run(self) -> None:
        """Settle, then freeze and thaw on their periods until cancelled."""
        self.settle()
        thawed = anyio.current_time()
        while True:
            await anyio.sleep(self.freeze_every)
            if anyio.current_time() - thawed >= self.thaw_every:
                self.thaw()
                thawed = anyio.current_time()
            else:
                self.freeze()
