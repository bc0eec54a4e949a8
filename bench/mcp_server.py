"""MCP server benchmark: start-up to the initialize result, and skills_read latency over stdio.

    .venv/bin/python bench/mcp_server.py [--calls 2000] [--rounds 3]

On the 1,000-skill workspace of bench/workspace.py, side by side in one run:

* start-up: spawn ``agentcontext mcp`` and time until the client holds the initialize
  result (which carries the instructions built from a full scan), against the floor of the
  same for a minimal SDK server (``bench/floor_server.py``);
* ``skills_read`` latency p50/p99 over N sequential calls through a real stdio session,
  against the floor server's constant-string tool (the transport's own cost). Goal: within
  1.5x of the floor.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workspace import age, build  # noqa: E402


def server_params(kind: str, work: Path, home: Path) -> StdioServerParameters:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    if kind == "agentcontext":
        return StdioServerParameters(
            command=sys.executable, args=["-m", "agentcontext", "mcp", "--work-dir", str(work)], env=env
        )
    return StdioServerParameters(command=sys.executable, args=[str(HERE / "floor_server.py")], env=env)


async def measure(kind: str, work: Path, home: Path, calls: int) -> dict[str, Any]:
    start = time.perf_counter()
    async with Client(server_params(kind, work, home), mode="legacy", read_timeout_seconds=120) as client:
        startup = time.perf_counter() - start
        tool, args = ("skills_read", {"name": "skill-0042"}) if kind == "agentcontext" else ("constant", {})
        for _ in range(50):
            await client.call_tool(tool, args)
        samples = []
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool(tool, args)
            samples.append(time.perf_counter() - t0)
            if result.is_error:
                raise RuntimeError(f"{kind}: {result.content}")
    samples.sort()
    return {
        "startup_ms": startup * 1000,
        "p50_ms": samples[len(samples) // 2] * 1000,
        "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentcontext-mcp-bench-") as tmp:
        root, home = Path(tmp) / "repo", Path(tmp) / "home"
        home.mkdir()
        work = build(root)
        age(root)
        rows: dict[str, list[dict[str, Any]]] = {"agentcontext": [], "floor": []}
        for _ in range(args.rounds):
            for kind in rows:
                rows[kind].append(anyio.run(measure, kind, work, home, args.calls))
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    medians = {k: {m: statistics.median(r[m] for r in runs) for m in runs[0]} for k, runs in rows.items()}
    for kind, figures in medians.items():
        print(f"{kind:13} " + "  ".join(f"{m} {v:8.2f}" for m, v in figures.items()))
    ours, floor = medians["agentcontext"], medians["floor"]
    print(
        f"ratios: startup {ours['startup_ms'] / floor['startup_ms']:.2f}x, "
        f"skills_read p50 {ours['p50_ms'] / floor['p50_ms']:.2f}x (goal 1.5x), "
        f"p99 {ours['p99_ms'] / floor['p99_ms']:.2f}x"
    )


if __name__ == "__main__":
    main()
