"""What an open event stream costs the server's collector: objects held, a full collection's pause, freed on close.

    .venv/bin/python bench/gc_streams.py [--streams 1000] [--src OTHER/src]

One ``agentcontext server`` on a fresh SQLite database (``--src``: another checkout's code, to compare),
``--streams / 2`` agents with their first push and two chats each (``bench/load.py``'s ``setup``), and
the server's collector watched by ``bench/gc_probe/sitecustomize.py`` (on its ``PYTHONPATH``). Then:
a census with no stream open; every chat's ``GET /events`` opened and its first event read; a census;
every stream closed; a census. A census counts the objects the collector tracks (the frozen apart),
then times one full collection: its pause is what a generation-2 collection costs that many open
streams. Reported: objects an open stream holds, the full collection's pause with none and with all
open, and the objects left once the streams closed (before that census's collection: freed by their
reference counts; after it: what only a collection frees).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from control import populate, servers
from http1 import Connection
from load import ROTATE, setup, user_tokens

HERE = Path(__file__).resolve().parent
PER_TOKEN = 8  # the server allows 16 streams a token


def census(pid: int, probe: Path) -> dict[str, Any]:
    seen = len(probe.read_text().splitlines()) if probe.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in probe.read_text().splitlines()[seen:]:
            if line.startswith('{"census"'):
                found: dict[str, Any] = json.loads(line)
                return found
        time.sleep(0.05)
    raise RuntimeError("the server wrote no census")


async def hold(base: str, chat: str, token: str, opened: list[str]) -> None:
    http = Connection.to(base, {"Authorization": f"Bearer {token}"})
    try:
        async for _kind, _data in http.stream(f"/api/v1/chats/{chat}/events"):
            opened.append(chat)
    finally:
        http.close()


async def drive(base: str, pid: int, probe: Path, user: str, tokens: list[str], streams: list[str]) -> list[Any]:
    _agents, chats = await setup([base], user, tokens, len(streams) * PER_TOKEN, ROTATE)
    await anyio.sleep(1)
    figures = [census(pid, probe)]
    opened: list[str] = []
    async with anyio.create_task_group() as group:
        for n, chat in enumerate(chats):
            group.start_soon(hold, base, chat.id, streams[n // PER_TOKEN], opened)
        with anyio.fail_after(120):
            while len(opened) < len(chats):
                await anyio.sleep(0.05)
        await anyio.sleep(1)
        figures.append(census(pid, probe))
        group.cancel_scope.cancel()
    await anyio.sleep(2)  # the server sees each close and ends its stream
    figures.append(census(pid, probe))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=1000, help="chats, each with an event stream open")
    parser.add_argument("--src", type=Path, help="serve another checkout's src (its PYTHONPATH)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gc-streams-") as name:
        tmp = Path(name)
        probe = Path(os.environ.get("GC_PROBE_KEEP", tmp / "probe.jsonl"))
        url = f"sqlite:///{tmp / 'control.db'}"
        user, tokens = populate(url, max(1, args.streams // 2))
        streams = user_tokens(url, -(-args.streams // PER_TOKEN))
        path = [str(HERE / "gc_probe"), *([str(args.src.resolve())] if args.src else [])]
        os.environ["PYTHONPATH"] = os.pathsep.join(path)
        os.environ["GC_PROBE"] = str(probe)
        with servers(url, 1, tmp, "gc-streams") as (bases, _logs, processes):
            none, open_, closed = anyio.run(
                drive, bases[0], processes[0].pid, probe, user, tokens, streams, backend_options={"use_uvloop": True}
            )
            pauses = [json.loads(line) for line in probe.read_text().splitlines() if '"generation"' in line]
    n = args.streams
    alive = [c["tracked"] + c["frozen"] for c in (none, open_, closed)]
    before = none["tracked_after"] + none["frozen"]
    print(f"{n} event streams on one server ({args.src or 'this checkout'}), SQLite")
    print(
        f"objects: none open {before:,} ({none['frozen']:,} frozen),"
        f" all open {alive[1]:,} ({open_['frozen']:,} frozen): {(alive[1] - before) / n:.0f} a stream"
    )
    print(f"a full collection: none open {none['full_ms']:.1f} ms, all open {open_['full_ms']:.1f} ms")
    left, freed = alive[2] - before, closed["collected"]
    print(f"after closing them: {left:,} objects more than before they opened ({freed:,} freed by that collection)")
    for phase, (start, end) in {
        "the setup (pushes, chats)": (0.0, none["census"]),
        "the streams opening": (none["census"], open_["census"]),
    }.items():
        slowest = sorted((p for p in pauses if start <= p["at"] < end), key=lambda p: -p["ms"])
        said = ", ".join(f"gen{p['generation']} {p['ms']:.0f} ms" for p in slowest[:4]) or "none over 5 ms"
        print(f"slowest automatic collections during {phase}: {said}")
    print("most common while open:", ", ".join(f"{k} {v:,}" for k, v in open_["kinds"][:12]))
    print("coroutines while open:", ", ".join(f"{k} {v:,}" for k, v in open_["coroutines"]))


if __name__ == "__main__":
    main()
