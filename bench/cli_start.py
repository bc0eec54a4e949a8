"""How long the command line takes to start, side by side with another checkout.

    .venv/bin/python bench/cli_start.py [--base DIR] [--rounds 9]

Each command runs as ``python -m agentcontext …`` with ``PYTHONPATH`` set to a checkout's
``src`` (this one, and ``--base`` if given, e.g. a ``git worktree`` of the commit before a
change), interleaved round by round so both see the same machine load. Reported: the median
wall time of each command (the last scans this checkout), and the ratio base / this.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("scan", "--help"),
    ("scan", str(HERE.parent)),
)


def _seconds(src: Path, command: tuple[str, ...]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "agentcontext", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    sources = {"this": HERE}
    if args.base is not None:
        sources["base"] = args.base.resolve() / "src"
    print("| command | " + " | ".join(sources) + (" | base / this |" if args.base else " |"))
    print("|---" * (len(sources) + 1 + bool(args.base)) + "|")
    for command in COMMANDS:
        times: dict[str, list[float]] = {name: [] for name in sources}
        for _ in range(args.rounds):
            for name, src in sources.items():
                times[name].append(_seconds(src, command))
        medians = {name: statistics.median(values) for name, values in times.items()}
        cells = [f"{medians[name]:.2f} s" for name in sources]
        if args.base is not None:
            cells.append(f"{medians['base'] / medians['this']:.1f}x")
        shown = " ".join("<this checkout>" if part == str(HERE.parent) else part for part in command)
        print(f"| `agentcontext {shown}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
