"""A chat tool call through the MCP endpoint against the same call through ``/api/v1/chats/{id}/tools/{name}``.

    .venv/bin/python bench/chat_mcp.py [--calls 2000] [--rounds 3] [--src OTHER/src]

Starts ``agentcontext server`` (SQLite) and ``agentcontext agent`` over a small workspace
(an AGENTS.md, one skill, the real ``mcp-server-time``), creates a chat, then, in one process
and alternating call by call so that drift hits both alike: ``read_skill`` (answered by the
control plane from the pin) through an open MCP session (the SDK client, streamable HTTP,
2025 handshake era) and through ``POST /api/v1/chats/{id}/tools/read_skill`` on one kept-alive
connection; then the same for the workspace's ``get_current_time`` (proxied through the agent
to the time server). Reports p50 and p99 of each and the ratio MCP / REST; goal: within 1.3x.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from agentcontext.testing import make_workspace, skill_md
from control import free_port, pct, wait_ready

ADMIN = "acu_"


@dataclass(frozen=True)
class Running:
    base: str  # the server's URL
    admin: str  # its administrator's token
    server_pid: int


@contextlib.contextmanager
def running(tmp: Path, src: Path | None = None) -> Iterator[Running]:
    """A server and an agent (with ``src``: that checkout's ``src`` folder instead of this one's)."""
    work = make_workspace(
        tmp / "work",
        {
            ".git/": "",
            "AGENTS.md": "# Rules\n\nUse pytest.\n",
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship a release", body="\nStep one.\n"),
            ".mcp.json": json.dumps(
                {"mcpServers": {"time": {"command": str(Path(sys.executable).parent / "mcp-server-time")}}}
            ),
        },
    )
    env = {**os.environ, "HOME": str(tmp), "AGENTCONTEXT_MCP_TRUST": "auto"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp / "server.log"
    command = [
        sys.executable,
        "-m",
        "agentcontext",
        "server",
        "--db",
        f"sqlite:///{tmp / 'c.db'}",
        "--listen",
        f"127.0.0.1:{port}",
    ]
    processes = [subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)]
    try:
        wait_ready(base, processes[0], log)
        admin = next(w for w in log.read_text().split() if w.startswith(ADMIN))
        issued = httpx.post(f"{base}/api/v1/workspaces/ws/agents", json={"name": "dev"}, headers=_auth(admin))
        agent_port = free_port()
        command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work)]
        command += ["--listen", f"127.0.0.1:{agent_port}", "--control-plane", base, "--token", issued.json()["token"]]
        processes.append(
            subprocess.Popen(command, env=env, stdout=(tmp / "agent.log").open("wb"), stderr=subprocess.STDOUT)
        )
        yield Running(base, admin, processes[0].pid)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:  # a server holding 10,000 MCP sessions takes longer than that to stop
                process.kill()
                process.wait()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def pinned_chat(base: str, admin: str) -> tuple[str, str]:
    """A chat of ``ws`` once its pin carries the time server's tool; (chat id, that tool's name)."""
    chat = httpx.post(f"{base}/api/v1/chats", json={"workspace": "ws"}, headers=_auth(admin)).json()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        prompt = httpx.get(f"{base}/api/v1/chats/{chat['id']}/prompt", headers=_auth(admin)).json()
        names = [t["name"] for t in prompt.get("tools", [])]
        found = [n for n in names if n.endswith("get_current_time")]
        if found:
            return chat["id"], found[0]
        time.sleep(0.2)
    raise RuntimeError("the chat never got the time server's tool")


async def measure(
    base: str, admin: str, chat_id: str, calls: int, tool: str, arguments: dict[str, Any]
) -> dict[str, list[float]]:
    rest: list[float] = []
    over_mcp: list[float] = []
    async with (
        httpx.AsyncClient(base_url=base, headers=_auth(admin), timeout=60) as http,
        httpx2.AsyncClient(headers=_auth(admin), timeout=60) as mcp_http,
        Client(streamable_http_client(f"{base}/mcp/chats/{chat_id}", http_client=mcp_http), mode="legacy") as client,
    ):

        async def via_rest() -> None:
            response = await http.post(f"/api/v1/chats/{chat_id}/tools/{tool}", json=arguments)
            assert response.status_code == 200 and not response.json()["is_error"], response.text

        async def via_mcp() -> None:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result

        for _ in range(20):  # warm-up
            await via_rest()
            await via_mcp()
        for _ in range(calls):
            for samples, call in ((rest, via_rest), (over_mcp, via_mcp)):
                await _timed(samples, call)
    return {"rest": rest, "mcp": over_mcp}


async def _timed(samples: list[float], call: Callable[[], Awaitable[None]]) -> None:
    started = time.perf_counter()
    await call()
    samples.append(time.perf_counter() - started)


def command_line(doc: str | None, **numbers: int) -> argparse.Namespace:
    """A chat MCP benchmark's command line: its numbers (``--name N``, these defaults) and ``--src``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in numbers.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    parser.add_argument("--src", type=Path, default=None, help="run the server from this src folder instead")
    return parser.parse_args()


def main() -> None:
    args = command_line(__doc__, calls=2000, rounds=3)
    with tempfile.TemporaryDirectory() as folder, running(Path(folder), args.src) as stack:
        base, admin = stack.base, stack.admin
        chat_id, time_tool = pinned_chat(base, admin)
        cases = {"read_skill": ("read_skill", {"name": "deploy"}), "workspace tool": (time_tool, {"timezone": "UTC"})}
        heads = ("REST p50", "MCP p50", "ratio", "REST p99", "MCP p99", "ratio")
        print(f"{'call':16} {'round':>5} " + " ".join(f"{h:>9}" for h in heads))
        for label, (tool, arguments) in cases.items():
            ratios = []
            for round_ in range(args.rounds):
                got = anyio.run(measure, base, admin, chat_id, args.calls, tool, arguments)
                rest50, mcp50 = statistics.median(got["rest"]) * 1000, statistics.median(got["mcp"]) * 1000
                rest99, mcp99 = pct(got["rest"], 0.99), pct(got["mcp"], 0.99)
                ratios.append(mcp50 / rest50)
                print(
                    f"{label:16} {round_ + 1:>5} {rest50:8.2f}ms {mcp50:8.2f}ms {mcp50 / rest50:5.2f}x"
                    f" {rest99:8.2f}ms {mcp99:8.2f}ms {mcp99 / rest99:5.2f}x"
                )
            print(
                f"{label:16} median p50 ratio over {args.rounds} rounds: {statistics.median(ratios):.2f}x (goal 1.3x)"
            )


if __name__ == "__main__":
    main()
