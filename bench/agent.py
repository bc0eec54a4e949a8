"""Workspace agent benchmark: proxy overhead, edit-to-publish latency, idle memory.

    .venv/bin/python bench/agent.py [--calls 2000] [--skip-peers]

(a) ``call-tool`` through the agent's HTTP API against the floor of calling the same stdio
    echo server directly with the SDK client, side by side with FastMCP's proxy and
    mcp-proxy (both serving streamable HTTP in front of the same server): added p50/p99
    latency over N sequential calls, and throughput with 8 concurrent callers. The peers
    are installed on first use into bench/out/venv-fastmcp and bench/out/venv-mcpproxy
    (mcp-proxy needs mcp 1.x, so it cannot share our environment).
(b) Edit-to-publish: AGENTS.md edited 50 times; time from the write to the "snapshot"
    event on /api/v0/events. Goal: within the debounce (250 ms) plus 50 ms.
(c) Idle memory (VmRSS) of the agent watching the 1,000-skill workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from workspace import age, build  # noqa: E402

ECHO = [sys.executable, str(HERE / "echo_server.py")]
TOKEN = "bench-agent-token"  # the agent's API always needs one; given in its environment
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} never opened")


def peer_python(name: str, requirement: str) -> Path:
    """A venv of its own for a peer, created once."""
    path = OUT / f"venv-{name}"
    python = path / "bin" / "python"
    if not python.exists():
        venv.create(path, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", requirement], check=True)
    return python


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def timed(call: Callable[[int], Awaitable[None]], calls: int, concurrency: int) -> dict[str, float]:
    for i in range(50):
        await call(i)
    samples: list[float] = []
    for i in range(calls):
        start = time.perf_counter()
        await call(i)
        samples.append(time.perf_counter() - start)
    samples.sort()
    limiter = anyio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with limiter:
            await call(i)

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for i in range(calls):
            group.start_soon(one, i)
    elapsed = time.perf_counter() - start
    return {
        "p50_ms": samples[len(samples) // 2] * 1000,
        "p99_ms": samples[int(len(samples) * 0.99)] * 1000,
        "calls_per_s_8": calls / elapsed,
    }


async def via_client(target: Any, tool: str, calls: int, mode: str = "auto") -> dict[str, float]:
    async with Client(target, mode=mode, read_timeout_seconds=60) as client:

        async def call(i: int) -> None:
            result = await client.call_tool(tool, {"text": f"m{i}"})
            if result.is_error:
                raise RuntimeError(result)

        return await timed(call, calls, 8)


async def via_agent(port: int, calls: int) -> dict[str, float]:
    url = f"http://127.0.0.1:{port}/api/v0/mcp/call-tool"
    limits = httpx.Limits(max_keepalive_connections=16)
    async with httpx.AsyncClient(timeout=60, limits=limits, headers=AUTH) as http:

        async def call(i: int) -> None:
            response = await http.post(url, json={"tool_name": "echo__echo", "arguments": {"text": f"m{i}"}})
            if response.status_code != 200 or response.json()["content"][0]["text"] != f"m{i}":
                raise RuntimeError(response.text)

        return await timed(call, calls, 8)


def start_agent(work: Path, home: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "HOME": str(home), "AGENTCONTEXT_AGENT_TOKEN": TOKEN}
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work), "--listen", f"127.0.0.1:{port}"]
    command += ["--mcp-trust", "auto"]  # the bench's own echo server: the operator vouches for it
    process = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    wait_port(port)
    return process, port


def wait_tools(port: int, name: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tools = httpx.get(f"http://127.0.0.1:{port}/api/v0/mcp/tools", headers=AUTH, timeout=10).json()["tools"]
        if any(t["name"] == name for t in tools):
            return
        time.sleep(0.1)
    raise RuntimeError("the agent never listed the echo tool")


def proxy_figures(calls: int, skip_peers: bool, tmp: Path) -> dict[str, dict[str, float]]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    work = tmp / "proxy-work"
    work.mkdir()
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"echo": {"command": ECHO[0], "args": ECHO[1:]}}}))
    figures: dict[str, dict[str, float]] = {}
    params = StdioServerParameters(command=ECHO[0], args=ECHO[1:])
    figures["direct stdio (floor)"] = anyio.run(via_client, params, "echo", calls)
    agent, port = start_agent(work, home, tmp / "agent-proxy.log")
    try:
        wait_tools(port, "echo__echo")
        figures["agentcontext agent HTTP API"] = anyio.run(via_agent, port, calls)
    finally:
        agent.terminate()
        agent.wait(30)
    if skip_peers:
        return figures
    fastmcp = peer_python("fastmcp", "fastmcp==4.2.3")
    script = tmp / "fastmcp_proxy.py"
    script.write_text(
        "import sys\nfrom fastmcp.server import create_proxy\n"
        "proxy = create_proxy({'mcpServers': {'echo': {'command': sys.argv[2], 'args': [sys.argv[3]]}}},"
        " name='fastmcp-proxy', mode='auto')\n"
        "proxy.run('http', host='127.0.0.1', port=int(sys.argv[1]), show_banner=False, log_level='WARNING')\n"
    )
    mcpproxy = peer_python("mcpproxy", "mcp-proxy==0.13.0").parent / "mcp-proxy"
    for label, command, mode in (
        ("FastMCP 4.2.3 proxy (HTTP)", [str(fastmcp), str(script), "{port}", *ECHO], "auto"),
        ("mcp-proxy 0.13.0 (HTTP)", [str(mcpproxy), "--port", "{port}", "--host", "127.0.0.1", "--", *ECHO], "legacy"),
    ):
        port = free_port()
        process = subprocess.Popen(
            [part.replace("{port}", str(port)) for part in command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(port)
            figures[label] = anyio.run(via_client, f"http://127.0.0.1:{port}/mcp", "echo", calls, mode)
        finally:
            process.terminate()
            process.wait(30)
    return figures


async def publish_latency(port: int, agents_md: Path, edits: int) -> list[float]:
    latencies: list[float] = []
    async with (
        httpx.AsyncClient(timeout=None, headers=AUTH) as http,
        http.stream("GET", f"http://127.0.0.1:{port}/api/v0/events") as stream,
    ):
        lines = stream.aiter_lines()
        async for line in lines:  # the current snapshot comes first
            if line.startswith("data:"):
                break
        for i in range(edits):
            await anyio.sleep(0.3)
            start = time.perf_counter()
            agents_md.write_text(f"# Rules, edit {i}\n", encoding="utf-8")
            with anyio.fail_after(10):
                async for line in lines:
                    if line.startswith("event: snapshot"):
                        latencies.append(time.perf_counter() - start)
                        break
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--skip-peers", action="store_true", help="measure only the floor and our agent")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentcontext-agent-bench-") as name:
        tmp = Path(name)
        proxies = proxy_figures(args.calls, args.skip_peers, tmp)
        root = tmp / "repo"
        work = build(root)
        age(root)
        (root / ".mcp.json").write_text("{}")
        agent, port = start_agent(work, tmp / "home", tmp / "agent-edits.log")
        try:
            time.sleep(2)
            idle = rss_mb(agent.pid)
            latencies = anyio.run(publish_latency, port, work / "AGENTS.md", args.edits)
        finally:
            agent.terminate()
            agent.wait(30)
    floor = proxies["direct stdio (floor)"]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"(a) {args.calls} sequential calls, then {args.calls} with 8 in flight")
    print(f"{'front':32} {'p50 ms':>8} {'p99 ms':>8} {'+p50 ms':>8} {'+p99 ms':>8} {'calls/s x8':>10}")
    for label, f in proxies.items():
        print(
            f"{label:32} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f} {f['p50_ms'] - floor['p50_ms']:8.2f} "
            f"{f['p99_ms'] - floor['p99_ms']:8.2f} {f['calls_per_s_8']:10.0f}"
        )
    print(
        f"(b) edit-to-publish over {len(latencies)} edits: p50 {statistics.median(latencies) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms (goal: debounce 250 ms + 50 ms)"
    )
    print(f"(c) idle RSS of the agent watching 1,000 skills: {idle:.1f} MB")


if __name__ == "__main__":
    main()
