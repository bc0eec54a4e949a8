"""Loaded by ``bench/gc_streams.py``'s server (on its ``PYTHONPATH``; ``GC_PROBE`` names the output file).

Each collection of generation 1 or 2, and any over 5 ms, is written with its duration; on SIGUSR1 a census:
the tracked objects (the frozen apart), then one full collection timed and the count after it, and the
most common types; on SIGUSR2 a thaw as the server's collector makes one (everything frozen thawed, collected
once, frozen again), with what it walked, freed and took, and the RSS. Lines are JSON.
"""

import collections
import gc
import json
import os
import signal
import time

_path = os.environ.get("GC_PROBE")
if _path:
    _out = open(_path, "a", buffering=1)  # noqa: SIM115  # open as long as the process
    _began = [0.0]

    def _timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _began[0] = time.perf_counter()
            return
        took = (time.perf_counter() - _began[0]) * 1000
        if info["generation"] >= 1 or took > 5:
            line = {"at": time.time(), "pid": os.getpid(), "generation": info["generation"], "ms": round(took, 2)}
            _out.write(json.dumps({**line, "collected": info["collected"]}) + "\n")

    def _census(*_: object) -> None:
        objects = gc.get_objects()
        kinds = collections.Counter(type(o).__qualname__ for o in objects).most_common(25)
        coroutines = collections.Counter(o.cr_code.co_qualname for o in objects if type(o).__name__ == "coroutine")
        tracked = len(objects)
        del objects
        start = time.perf_counter()
        collected = gc.collect()
        took = (time.perf_counter() - start) * 1000
        line = {"census": time.time(), "tracked": tracked, "frozen": gc.get_freeze_count(), "collected": collected}
        after = {"full_ms": round(took, 2), "tracked_after": len(gc.get_objects()), "kinds": kinds}
        after["coroutines"] = coroutines.most_common(40)
        _out.write(json.dumps({**line, **after}) + "\n")

    def _rss_mb() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))

    def _thaw(*_: object) -> None:
        from agentcontext.server.collector import Collector  # the server's own thaw (imported once it serves)

        rss = _rss_mb()
        thawed = Collector().thaw()
        line = {"thaw": time.time(), "pid": os.getpid(), "walked": thawed.walked, "freed": thawed.freed}
        line["ms"] = round(thawed.seconds * 1000, 1)
        _out.write(json.dumps({**line, "rss_mb_before": rss, "rss_mb_after": _rss_mb()}) + "\n")

    gc.callbacks.append(_timed)
    signal.signal(signal.SIGUSR1, _census)
    signal.signal(signal.SIGUSR2, _thaw)
