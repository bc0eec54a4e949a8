"""How long the command line takes to start, side by side with another checkout.

    .venv/bin/python bench/cli_start.py [--base DIR] [--rounds 9]

Each command runs as ``python -m agentcontext …`` with ``PYTHONPATH`` set to a checkout's
``src`` (this one, and ``--base`` if given, e.g. a ``git worktree`` of the commit before a
change), interleaved round by round so both see the same machine load. Reported: the median
wall time of each command (the last scans this checkout), and the ratio base / this;
``agentcontext server`` on a fresh SQLite file: from its launch to its first ``/healthz`` answer
(its database made and migrated, its app built), then stopped; and ``agentcontext agent`` over a
workspace of one AGENTS.md whose ``.mcp.json`` declares a server nobody approved: from its launch
to its first snapshot answered on ``/api/v0/context``, then stopped. The last row: a user's first
request to the server's ``/mcp`` (an ``initialize`` for a workspace it does not have), sent 2 s
after the server's first ``/healthz`` answer, as a chat client connecting just after the start.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
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


def _server_ready_seconds(src: Path) -> float:
    """From launching ``agentcontext server`` on a fresh SQLite file to its first ``/healthz`` answer."""
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="agentcontext-start-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(src), "HOME": tmp, "AGENTCONTEXT_SERVER_KEY": "k" * 48}
        command = [sys.executable, "-m", "agentcontext", "server", "--db", f"sqlite:///{tmp}/control.db"]
        command += ["--listen", f"127.0.0.1:{port}"]
        return _first_answer_seconds(command, env, f"http://127.0.0.1:{port}/healthz", {})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _first_answer_seconds(command: list[str], env: dict[str, str], url: str, headers: dict[str, str]) -> float:
    """From launching ``command`` to the first 200 from ``url``; the process is stopped after."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5):
                    return time.perf_counter() - started
            except OSError:
                if process.poll() is not None:
                    raise SystemExit(f"{command[3]} exited with {process.returncode}") from None
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _first_mcp_seconds(src: Path, after: float = 2.0) -> float:
    """A user's first ``/mcp`` request, sent ``after`` seconds after the server's first ``/healthz`` answer."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="agentcontext-start-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(src), "HOME": tmp, "AGENTCONTEXT_SERVER_KEY": "k" * 48}
        command = [sys.executable, "-m", "agentcontext", "server", "--db", f"sqlite:///{tmp}/control.db"]
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen([*command, "--listen", f"127.0.0.1:{port}"], env=env, stdout=out, stderr=out)
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/healthz", timeout=5):
                        break
                except OSError:
                    time.sleep(0.01)
            time.sleep(after)
            token = re.findall(r"acu_[A-Za-z0-9_-]+", log.read_text())[0]
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            headers["Accept"] = "application/json, text/event-stream"
            request = urllib.request.Request(f"{base}/mcp/workspaces/ws", json.dumps(body).encode(), headers)
            started = time.perf_counter()
            try:
                urllib.request.urlopen(request, timeout=30).close()
            except urllib.error.HTTPError as answer:  # 404: no such workspace, answered by the endpoint
                answer.close()
            return time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=30)


def _agent_ready_seconds(src: Path) -> float:
    """From launching ``agentcontext agent`` to its first snapshot answered (a server waiting for approval)."""
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="agentcontext-start-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "AGENTS.md").write_text("# Rules\n\nKeep it tidy.\n")
        (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": "mcp-server-time"}}}))
        env = {**os.environ, "PYTHONPATH": str(src), "HOME": tmp, "AGENTCONTEXT_AGENT_TOKEN": "t" * 32}
        command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work)]
        command += ["--listen", f"127.0.0.1:{port}"]
        url = f"http://127.0.0.1:{port}/api/v0/context"
        return _first_answer_seconds(command, env, url, {"Authorization": f"Bearer {'t' * 32}"})


def _row(label: str, sources: dict[str, Path], rounds: int, measure: Callable[[Path], float]) -> str:
    """A table row: ``measure``'s median for each checkout, interleaved round by round, and base / this."""
    times: dict[str, list[float]] = {name: [] for name in sources}
    for _ in range(rounds):
        for name, src in sources.items():
            times[name].append(measure(src))
    medians = {name: statistics.median(values) for name, values in times.items()}
    cells = [f"{medians[name]:.2f} s" for name in sources]
    if "base" in sources:
        cells.append(f"{medians['base'] / medians['this']:.1f}x")
    return f"| {label} | " + " | ".join(cells) + " |"


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
        shown = " ".join("<this checkout>" if part == str(HERE.parent) else part for part in command)
        print(_row(f"`agentcontext {shown}`", sources, args.rounds, functools.partial(_seconds, command=command)))
    print(_row("`agentcontext server` to its first `/healthz`", sources, args.rounds, _server_ready_seconds))
    print(_row("`agentcontext agent` to its first snapshot", sources, args.rounds, _agent_ready_seconds))
    print(_row("a user's first `/mcp` request, 2 s after `/healthz`", sources, args.rounds, _first_mcp_seconds))


if __name__ == "__main__":
    main()
