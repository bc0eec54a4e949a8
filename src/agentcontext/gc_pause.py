"""Fewer young garbage collections during a scan pass: the generation-0 threshold is raised, then restored.

A cold scan allocates thousands of containers that outlive it (resources, entries, the
reader's cache, the snapshot) and next to no cycles, so at CPython's default threshold
(700 net allocations) it runs several young collections a pass that free nothing but
traverse everything young, and promote the pass's objects towards the costly full
collections. Collections are delayed, never disabled (``gc.freeze`` or ``gc.disable``
would change the whole process): the threshold is raised to ``GEN0_THRESHOLD`` for the
pass, so an unusually large pass still collects.

The rules, because the threshold is process-wide state:

* it is restored on every exit, an exception's included;
* passes in several threads share one raise: a count under a lock, the first pass in
  raises it, the last one out restores what it found;
* a threshold of 0 (collection off) or one already above ours is left alone, and a
  threshold someone else changed during the pass is theirs: it is not overwritten.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

GEN0_THRESHOLD = 50_000  # about ten cold scans' worth of surviving containers (1,000 skills each)

_lock = threading.Lock()
_active = 0  # passes running now
_saved: tuple[int, ...] | None = None  # the thresholds the first of them found, when it raised them


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the young-generation threshold raised (see the module docstring)."""
    global _active, _saved
    with _lock:
        if _active == 0:
            found = gc.get_threshold()
            if 0 < found[0] < GEN0_THRESHOLD:
                gc.set_threshold(GEN0_THRESHOLD, *found[1:])
                _saved = found
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                if gc.get_threshold()[0] == GEN0_THRESHOLD:  # still ours: nobody changed it meanwhile
                    gc.set_threshold(*_saved)
                _saved = None
