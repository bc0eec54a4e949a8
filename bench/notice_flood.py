"""An upstream MCP server flooding ``notifications/tools/list_changed`` at a real agent that pushes (issue 31, item 8).

    .venv/bin/python bench/notice_flood.py [--seconds 30] [--rate 2000]

Starts ``agentcontext agent --mcp-trust auto --control-plane URL`` over a work dir whose
``.mcp.json`` declares ``tests/mcp_servers/flood.py`` as ``noisy``, with a stub control plane in
this process that accepts and counts pushes. Once the server is listed, its ``notices``
tool (called through the agent's API) sends ``--rate`` notices a second for ``--seconds``,
each one a real change of its listing. Reported: the notices sent, the ``tools/list`` requests the
server answered and the pushes the control plane received from the flood's start until
the agent is idle again, the agent process's CPU time and RSS (start, peak, end), how long
after the flood its snapshot showed the last version, and how long its CPU stayed busy.
Run it on two checkouts (``git stash`` the change) to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import free_port, rss_mb  # noqa: E402

FLOOD = HERE.parent / "tests" / "mcp_servers" / "flood.py"
TOKEN = "bench-notice-flood-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


class ControlPlane:
    """Accepts every push and heartbeat; counts the pushes."""

    def __init__(self) -> None:
        self.pushes = 0
        self.app = Starlette(
            routes=[
                Route("/api/v1/agent/context", self.push, methods=["POST"]),
                Route("/api/v1/agent/heartbeat", self.beat, methods=["POST"]),
            ]
        )

    async def push(self, request: Request) -> JSONResponse:
        self.pushes += 1
        version = (await request.json())["version"]
        return JSONResponse({"accepted": True, "version": version, "stored_version": version})

    async def beat(self, request: Request) -> JSONResponse:
        return JSONResponse({})


def noted_version(snapshot: dict[str, Any]) -> int | None:
    for resource in snapshot["resources"]:
        if resource["kind"] == "mcp_server" and resource["path"] == "noisy":
            for change in (resource.get("approval") or {}).get("changes", []):
                found = re.search(r'^\+\s*"description": "version (\d+)"', change["diff"], re.MULTILINE)
                if found:
                    return int(found.group(1))
    return None


async def call(api: httpx.AsyncClient, tool: str, arguments: dict[str, Any]) -> str:
    response = await api.post("/api/v0/mcp/call-tool", json={"tool_name": tool, "arguments": arguments})
    response.raise_for_status()
    text: str = response.json()["content"][0]["text"]
    return text


async def run(seconds: float, rate: float, tmp: Path) -> dict[str, Any]:
    work, home = tmp / "work", tmp / "home"
    work.mkdir()
    home.mkdir()
    entry = {"command": sys.executable, "args": [str(FLOOD)]}
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"noisy": entry}}), encoding="utf-8")
    plane = ControlPlane()
    plane_port, agent_port = free_port(), free_port()
    server = uvicorn.Server(uvicorn.Config(plane.app, port=plane_port, log_level="warning", lifespan="off"))
    env = {**os.environ, "HOME": str(home), "AGENTCONTEXT_AGENT_TOKEN": TOKEN}
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work), "--mcp-trust", "auto"]
    command += ["--listen", f"127.0.0.1:{agent_port}", "--control-plane", f"http://127.0.0.1:{plane_port}"]
    figures: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        log = (tmp / "agent.log").open("wb")
        agent = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{agent_port}"
        try:
            async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=seconds + 120) as api:
                with anyio.fail_after(60):
                    while True:
                        try:
                            tools = (await api.get("/api/v0/mcp/tools")).json()["tools"]
                        except httpx.TransportError:
                            tools = []
                        if any(t["name"] == "noisy__stats" for t in tools):
                            break
                        await anyio.sleep(0.1)
                await anyio.sleep(2)  # the first pushes are out
                before = json.loads(await call(api, "noisy__stats", {}))
                pushes, cpu = plane.pushes, cpu_seconds(agent.pid)
                rss_start = peak = rss_mb(agent.pid)
                start = time.monotonic()
                async with anyio.create_task_group() as sampling:

                    async def sample() -> None:
                        nonlocal peak
                        while True:
                            peak = max(peak, rss_mb(agent.pid))
                            await anyio.sleep(0.25)

                    sampling.start_soon(sample)
                    latest = int(await call(api, "noisy__notices", {"seconds": seconds, "rate": rate}))
                    sampling.cancel_scope.cancel()
                ended = time.monotonic()
                flood_cpu = cpu_seconds(agent.pid) - cpu
                shown: float | None = None
                last_busy = ended
                sample_cpu = cpu_seconds(agent.pid)
                while time.monotonic() - ended < 300:  # until the snapshot is current and the CPU idle for 2 s
                    await anyio.sleep(0.25)
                    peak = max(peak, rss_mb(agent.pid))
                    now_cpu = cpu_seconds(agent.pid)
                    if now_cpu - sample_cpu > 0.05:  # over 20% of a CPU in the last quarter second
                        last_busy = time.monotonic()
                    sample_cpu = now_cpu
                    if shown is None and noted_version((await api.get("/api/v0/context")).json()) == latest:
                        shown = time.monotonic() - ended
                    if shown is not None and time.monotonic() - last_busy > 2:
                        break
                after = json.loads(await call(api, "noisy__stats", {}))
                figures.update(
                    notices=latest - before["sent"],
                    flood_seconds=round(ended - start, 1),
                    tools_list=after["lists"] - before["lists"],
                    pushes=plane.pushes - pushes,
                    cpu_in_flood_s=round(flood_cpu, 2),
                    cpu_total_s=round(cpu_seconds(agent.pid) - cpu, 2),
                    last_version_shown_after_s=None if shown is None else round(shown, 2),
                    busy_after_s=round(last_busy - ended, 2),
                    rss_start_mb=round(rss_start, 1),
                    rss_peak_mb=round(peak, 1),
                    rss_end_mb=round(rss_mb(agent.pid), 1),
                )
        finally:
            agent.terminate()
            agent.wait(30)
            log.close()
            server.should_exit = True
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=2000.0, help="notices a second (0: as fast as read)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = anyio.run(run, args.seconds, args.rate, Path(tmp))
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(json.dumps({"machine": machine, "seconds": args.seconds, "rate": args.rate, **figures}, indent=2))


if __name__ == "__main__":
    main()
