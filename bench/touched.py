"""The control plane's ``touched`` round trip: what it adds to a turn, against the agent route it wraps.

    .venv/bin/python bench/touched.py [--calls 300] [--db URL]

Real processes on loopback: ``agentcontext server`` on a fresh SQLite file (or ``--db``) and
``agentcontext agent`` over the generated monorepo of ``bench/ondemand.py`` (5,000 folders,
300 nested instruction files, 50 path-scoped rules), pushing to it. One chat, pinned to the
agent's snapshot. Timed, sequentially, alternating call by call on one connection each:

* ``POST /api/v1/chats/{id}/touched`` with the 32 source files of ``ondemand.build`` (leaf
  folders of 32 packages), after a first call that pinned what applies there: the steady
  state of a chat that keeps working where it worked (everything "already pinned");
* ``POST /api/v0/context/instructions`` to the agent with the same 32 paths: the lookup the
  control plane cannot avoid (its floor);
* ``GET /healthz`` on the control plane: an HTTP round trip with no work (the HTTP floor).

Reported: p50 and p99 of each, what ``touched`` adds over the agent route alone, and the
first call (it pins the files: 32 paths, tens of files). Goal: ``touched`` adds under 20 ms
p50 to a turn on loopback.

Then (issue 34, item 3) ``--edits`` rounds: one of the chat's discovered files (a nested
AGENTS.md, not in the snapshot) edited on disk, timed to the chat's ``out_of_date`` event (the
agent's watch tells the server at once; goal: within the debounce, 250 ms, plus a second),
then a refresh; and ``--beats`` heartbeats as the agent sends them, timed when its watch of
discovered files is whole (no recheck) and when it is not (a recheck of the chat's 32 causes
on each: the server runs with ``--recheck-every 0.001``, the agent beats hourly).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # the repo root: tests/control/processes.py

from tests.control.processes import event_stream, write_atomic  # noqa: E402

from agentcontext.control import identity  # noqa: E402
from agentcontext.control.service import prepare  # noqa: E402
from control import free_port, wait_ready  # noqa: E402
from ondemand import build  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.2f} ms, p99 {pct(values, 0.99):.2f} ms"


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def pinned_chat(base: str, user: str, timeout: float = 120) -> str:
    auth = {"Authorization": f"Bearer {user}"}
    chat = httpx.post(f"{base}/api/v1/chats", json={"workspace": "mono"}, headers=auth, timeout=30).json()
    deadline = time.monotonic() + timeout
    while chat["context"]["pinned_hash"] is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the agent never pushed its snapshot")
        time.sleep(0.2)
        chat = httpx.get(f"{base}/api/v1/chats/{chat['id']}", headers=auth, timeout=30).json()
    return str(chat["id"])


def measure(base: str, agent: str, user: str, agent_token: str, files: list[str], calls: int) -> tuple[str, list[str]]:
    """The ``touched`` figures; the chat and its discovered AGENTS.md files."""
    touched_url = f"{base}/api/v1/chats/{{}}/touched"
    with (
        httpx.Client(headers={"Authorization": f"Bearer {user}"}, timeout=30) as control,
        httpx.Client(headers={"Authorization": f"Bearer {agent_token}"}, timeout=30) as direct,
    ):
        chat = pinned_chat(base, user)
        url = touched_url.format(chat)
        started = time.perf_counter()
        first = control.post(url, json={"paths": files})
        first_s = time.perf_counter() - started
        if first.status_code != 200:
            raise RuntimeError(first.text)
        added = first.json()
        touched: list[float] = []
        lookup: list[float] = []
        health: list[float] = []
        for _ in range(calls):
            started = time.perf_counter()
            answer = control.post(url, json={"paths": files})
            touched.append(time.perf_counter() - started)
            started = time.perf_counter()
            floor = direct.post(f"{agent}/api/v0/context/instructions", json={"dirs": files})
            lookup.append(time.perf_counter() - started)
            started = time.perf_counter()
            control.get(f"{base}/healthz")
            health.append(time.perf_counter() - started)
            if answer.status_code != 200 or floor.status_code != 200:
                raise RuntimeError(answer.text + floor.text)
        last = answer.json()
    print(
        f"first call: {first_s * 1000:.1f} ms, added {len(added['added'])} files ({added['bytes_added']} bytes);"
        f" later calls: {len(last['already_pinned'])} already pinned, {len(last['added'])} added"
    )
    print(f"  POST /api/v1/chats/{{id}}/touched (32 paths):        {ms(touched)}")
    print(f"  POST /api/v0/context/instructions (agent, 32 paths): {ms(lookup)}")
    print(f"  GET /healthz (control plane, HTTP floor):            {ms(health)}")
    added_ms = (statistics.median(touched) - statistics.median(lookup)) * 1000
    ratio = statistics.median(touched) / statistics.median(lookup)
    print(f"  touched adds to a turn: {statistics.median(touched) * 1000:.2f} ms p50 (goal < 20 ms);")
    print(f"  over the agent route alone: +{added_ms:.2f} ms p50 ({ratio:.2f}x)")
    return chat, [item["path"] for item in added["added"] if item["path"].endswith("/AGENTS.md")]


def edits(base: str, user: str, chat: str, discovered: list[str], rounds: int) -> None:
    """Edit a discovered file, time it to the chat's ``out_of_date``, refresh; ``rounds`` times."""
    took: list[float] = []
    with (
        httpx.Client(headers={"Authorization": f"Bearer {user}"}, timeout=30) as control,
        event_stream(base, user, chat) as stream,
    ):
        stream.wait_for("state")
        for n in range(rounds):
            path = Path(discovered[n % len(discovered)])
            started = time.monotonic()
            write_atomic(path, f"# Edited\n\nRound {n}.\n")
            took.append(stream.wait_for("out_of_date", timeout=30).at - started)
            if control.put(f"{base}/api/v1/chats/{chat}/context").status_code != 200:
                raise RuntimeError("refresh failed")
            stream.wait_for("refreshed")
    print(f"  discovered file edited -> out_of_date ({rounds} edits): {ms(took)} (goal < 1250 ms)")


def beats(base: str, agent_token: str, count: int) -> None:
    """Heartbeats as the agent sends them: its discovered watch whole, then not (each rechecks the chat)."""
    url = f"{base}/api/v1/agent/heartbeat"
    agent = {"run_id": "bench-run", "os": platform.system().lower()}
    with httpx.Client(headers={"Authorization": f"Bearer {agent_token}"}, timeout=30) as client:
        figures = {}
        for label, watching in (("watch whole, no recheck", True), ("watch not whole, a recheck", False)):
            body = {"online": True, "agent": agent, "discovered": {"watching": watching}}
            client.post(url, json=body)  # the run's first: asked about every file, whole or not
            times: list[float] = []
            for _ in range(count):
                started = time.perf_counter()
                if client.post(url, json=body).status_code >= 400:
                    raise RuntimeError("heartbeat refused")
                times.append(time.perf_counter() - started)
            figures[label] = times
    for label, times in figures.items():
        print(f"  POST /api/v1/agent/heartbeat, {label}: {ms(times)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--edits", type=int, default=20, help="discovered files edited, each timed to out_of_date")
    parser.add_argument("--beats", type=int, default=300, help="heartbeats timed, with and without a recheck")
    args = parser.parse_args()
    print(f"{platform.machine()} · {os.cpu_count()} CPUs · Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="agentcontext-touched-bench-") as name:
        tmp = Path(name)
        root, files = build(tmp / "mono")
        url = args.db or f"sqlite:///{tmp / 'control.db'}"
        db, _ = prepare(url)
        try:
            user = db.write(lambda s: identity.create_user(s, "bench")).token
            agent_token = db.write(lambda s: identity.create_agent(s, "mono", "main")).token
        finally:
            db.dispose()
        home = tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "AGENTCONTEXT_DB"} | {"HOME": str(home)}
        port, agent_port = free_port(), free_port()
        base, agent = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{agent_port}"
        server = start(
            [sys.executable, "-m", "agentcontext", "server", "--db", url, "--listen", f"127.0.0.1:{port}"]
            + ["--recheck-every", "0.001"],
            env,
            tmp / "server.log",
        )
        processes = [server]
        try:
            wait_ready(base, server, tmp / "server.log")
            command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(root)]
            command += ["--listen", f"127.0.0.1:{agent_port}", "--control-plane", base, "--heartbeat", "3600"]
            processes.append(start(command, env | {"AGENTCONTEXT_AGENT_TOKEN": agent_token}, tmp / "agent.log"))
            chat, discovered = measure(base, agent, user, agent_token, files, args.calls)
            edits(base, user, chat, discovered, args.edits)
            beats(base, agent_token, args.beats)
        finally:
            for process in processes:
                process.terminate()
                process.wait(30)


if __name__ == "__main__":
    main()
