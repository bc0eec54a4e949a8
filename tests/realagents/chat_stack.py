"""The real agents, each pointed at a chat's MCP endpoint: run inside ``unshare -n``.

The test process starts this script as ``unshare -n python chat_stack.py SCRATCH``. In the
loopback-only namespace it starts ``agentcontext server`` (SQLite) and ``agentcontext agent``
over a workspace whose AGENTS.md carries a marker, gives the administrator ("alice") a
personal skill and a chat of that workspace, and a second user ("bob") a personal skill of
his own and his own chat. Then it runs each agent (``driver.run_job``) configured with
alice's ``/mcp/workspaces/ws`` endpoint and her token, and prints what each sent to its fake
model API, with the markers, as one JSON object. Each agent reaches the server through a local
proxy that holds its first connection ``HOLD`` seconds (the server answers the proxies' ``Host``
by ``--allow-host``): configured as docs/chat-mcp.md says, each must wait for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repository's root
from tests.realagents import driver
from tests.realagents.harness import binary

ALICE_RULE = "ALICE-RULE-7f3a: run the linters before committing."
ALICE_SKILL = "alice-notes"
BOB_SKILL = "bob-private"
BOB_SECRET = "BOB-SECRET-91c2"
BIN = Path(__file__).resolve().parents[2] / "node_modules" / ".bin"
AGENTS = ("claude", "codex", "gemini", "opencode", "copilot")
HOLD = 2.5  # seconds; left to their defaults, Claude Code's and Codex's first request goes without a server this slow


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} never answered")


def held_door(port: int, target: int, hold: float) -> None:
    """A TCP proxy on ``port`` to ``target`` that holds the first connection ``hold`` seconds: a slow server."""
    first = threading.Event()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        if not first.is_set():
            first.set()
            await asyncio.sleep(hold)
        reader, writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(client_reader, writer), pipe(reader, client_writer), return_exceptions=True)

    async def serve() -> None:
        async with await asyncio.start_server(relay, "127.0.0.1", port) as server:
            await server.serve_forever()

    threading.Thread(target=asyncio.run, args=(serve(),), daemon=True).start()


def skill_text(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nBody of {name}.\n"


def main() -> int:
    scratch = Path(sys.argv[1])
    interfaces = driver.loopback_only()
    if interfaces != ["lo"]:
        print(json.dumps({"error": f"interfaces besides lo: {interfaces}"}))
        return 3
    work = scratch / "work"
    work.mkdir(parents=True)
    (work / ".git").mkdir()
    (work / "AGENTS.md").write_text(f"# Rules\n\n{ALICE_RULE}\n")
    env = {**os.environ, "HOME": str(scratch / "server-home")}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        port = free_port()
        doors = {agent: free_port() for agent in AGENTS}  # a proxy each, its first connection held
        base = f"http://127.0.0.1:{port}"
        log = scratch / "server.log"
        command = [sys.executable, "-m", "agentcontext", "server", "--db", f"sqlite:///{scratch / 'c.db'}"]
        command += ["--listen", f"127.0.0.1:{port}"]
        command += [arg for door in doors.values() for arg in ("--allow-host", f"127.0.0.1:{door}")]
        processes.append(subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT))
        wait(f"{base}/healthz", processes[0], log)
        alice = re.findall(r"acu_[A-Za-z0-9_-]+", log.read_text())[0]
        as_alice = {"Authorization": f"Bearer {alice}"}
        bob = httpx.post(f"{base}/api/v1/users", json={"name": "bob"}, headers=as_alice).json()["token"]
        as_bob = {"Authorization": f"Bearer {bob}"}
        agent_token = httpx.post(f"{base}/api/v1/workspaces/ws/agents", json={"name": "dev"}, headers=as_alice).json()
        agent_port = free_port()
        agent_log = scratch / "agent.log"
        command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work)]
        command += ["--listen", f"127.0.0.1:{agent_port}", "--control-plane", base, "--token", agent_token["token"]]
        processes.append(subprocess.Popen(command, env=env, stdout=agent_log.open("wb"), stderr=subprocess.STDOUT))
        skill = skill_text(ALICE_SKILL, "Alice's own notes")
        httpx.post(f"{base}/api/v1/users/me/skills", json={"content": skill}, headers=as_alice).raise_for_status()
        secret = skill_text(BOB_SKILL, f"Bob's {BOB_SECRET}")
        httpx.post(f"{base}/api/v1/users/me/skills", json={"content": secret}, headers=as_bob).raise_for_status()
        httpx.post(
            f"{base}/api/v1/chats", json={"workspace": "ws", "title": "bob's"}, headers=as_bob
        ).raise_for_status()
        _wait_pinned(base, as_alice)
        url = {agent: f"http://127.0.0.1:{door}/mcp/workspaces/ws" for agent, door in doors.items()}
        for door in doors.values():
            held_door(door, port, HOLD)
        jobs: list[dict[str, Any]] = [
            {
                "id": "claude",
                "agent": "claude",
                "binary": str(BIN / "claude"),
                "cwd": str(work),
                "home": _home(scratch, "claude"),
                # as docs/chat-mcp.md says for `claude -p`: wait for the server; and give that connection time
                "env": {"MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": "60000"},
                "setup": [
                    [
                        str(BIN / "claude"),
                        "mcp",
                        "add",
                        "--scope",
                        "user",
                        "--transport",
                        "http",
                        "agentcontext",
                        url["claude"],
                        "--header",
                        f"Authorization: Bearer {alice}",
                    ],
                ],
            },
            {
                "id": "codex",
                "agent": "codex",
                "binary": str(BIN / "codex"),
                "cwd": str(work),
                "home": _home(scratch, "codex"),
                "env": {"AGENTCONTEXT_TOKEN": alice},
                "args": [
                    "-c",
                    f'mcp_servers.agentcontext.url="{url["codex"]}"',
                    "-c",
                    "mcp_servers.agentcontext.required=true",  # as docs/chat-mcp.md says: wait for it
                    "-c",
                    'mcp_servers.agentcontext.bearer_token_env_var="AGENTCONTEXT_TOKEN"',
                ],
            },
        ]
        jobs += [_configured(agent, scratch, work, url[agent], alice) for agent in AGENTS[2:]]
        results = [driver.run_job(job) for job in jobs]
        chats = httpx.get(f"{base}/api/v1/chats", headers=as_alice).json()
        print(json.dumps({"interfaces": interfaces, "results": results, "alice_chats": chats}))
        return 0
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)


def _configured(agent: str, scratch: Path, work: Path, url: str, token: str) -> dict[str, Any]:
    """The job of Gemini CLI, OpenCode or Copilot CLI with the chat endpoint in its own config, as
    docs/chat-mcp.md shows it: the token read from ``AGENTCONTEXT_TOKEN``."""
    home = Path(_home(scratch, agent))
    job: dict[str, Any] = {"id": agent, "agent": agent, "binary": str(binary(agent)), "cwd": str(work)}
    job["home"] = str(home)
    job["env"] = {"AGENTCONTEXT_TOKEN": token}
    if agent == "gemini":
        server = {"httpUrl": url, "headers": {"Authorization": "Bearer $AGENTCONTEXT_TOKEN"}, "trust": True}
        write_config(home / ".gemini" / "settings.json", {"mcpServers": {"agentcontext": server}})
    elif agent == "opencode":
        server = {"type": "remote", "url": url, "headers": {"Authorization": "Bearer {env:AGENTCONTEXT_TOKEN}"}}
        write_config(home / ".config" / "opencode" / "opencode.json", {"mcp": {"agentcontext": server}})
    else:
        server = {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${AGENTCONTEXT_TOKEN}"}}
        write_config(
            home / ".copilot" / "mcp-config.json", {"mcpServers": {"agentcontext": {**server, "tools": ["*"]}}}
        )
        job["env"]["COPILOT_PKG_CACHE_HOME"] = str(scratch / "copilot-pkg")
    return job


def write_config(path: Path, content: dict[str, Any]) -> None:
    """An agent's JSON config file, its folders made."""
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(content))


def _home(scratch: Path, agent: str) -> str:
    home = scratch / f"{agent}-home"
    home.mkdir()
    return str(home)


def _wait_pinned(base: str, headers: dict[str, Any]) -> None:
    """Until the agent's first snapshot reached the control plane (a chat created now is pinned at once)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        overview = httpx.get(f"{base}/api/v1/overview", headers=headers).json()
        agents = [a for w in overview["workspaces"] for a in w["agents"]]
        if agents and agents[0]["snapshot"] is not None:
            return
        time.sleep(0.2)
    raise RuntimeError("the agent never pushed a snapshot")


if __name__ == "__main__":
    sys.exit(main())
