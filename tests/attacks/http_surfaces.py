"""The HTTP surfaces an attacker's request can reach, for the attack tests of the request guard.

``call`` sends one request straight to an ASGI app and counts how many bytes of its body the
app pulled: a refusal "before any work" pulls none. The workspace agent and the control plane
(with its dashboard) run in this process over real state; the MCP server over HTTP runs as a
real ``agentcontext mcp --http`` process (``mcp_process``), as users run it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from starlette.types import ASGIApp, Message

from agentcontext.agent.api import create_app as agent_app
from agentcontext.agent.context import ContextAgent
from agentcontext.server.app import build_app as control_app
from agentcontext.testing import make_workspace
from agentcontext.web.guard import Edge
from agentcontext.web.serving import GuardedConfig
from tests.agent.conftest import make_agent, ready, running
from tests.containment import outside_the_roots
from tests.control.conftest import CONTROL_EDGE
from tests.control.test_api import ROUTES, World, fill, sqlite_world
from tests.helpers import free_port, terminate
from tests.mcp.conftest import agentcontext_command, wait_for_port

AGENT_TOKEN = "agent-token-for-attacks"
AGENT_HOST = "127.0.0.1:8766"  # the agent's own name: the server address ``call`` gives it is this port
REBINDING_HOSTS = ("attacker.example", "attacker.example:8766", "127.0.0.1.attacker.example:8766", "localhost:9999")
FOREIGN_ORIGINS = ("http://attacker.example", "http://attacker.example:8766", "null", "http://localhost:3000")
MiB = 1024 * 1024


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    pulled: int  # bytes of the request body the app read

    def json(self) -> Any:
        return json.loads(self.body)


async def call(
    app: ASGIApp,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: Iterable[bytes] = (),
    *,
    server: tuple[str, int] = ("127.0.0.1", 8766),
) -> Answer:
    """One request to ``app`` as uvicorn would pass it; ``body`` is pulled chunk by chunk, only as the app asks."""
    path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "server": server,
        "client": ("127.0.0.1", 50000),
        "state": {},
    }
    chunks, pulled, answered = iter(body), 0, anyio.Event()
    status, sent_headers, sent = 0, {}, bytearray()
    pending: bytes | None = next(chunks, b"")  # made ahead, counted only when the app takes it

    async def receive() -> Message:
        nonlocal pulled, pending
        if pending is None:
            await answered.wait()
            return {"type": "http.disconnect"}
        chunk, pending = pending, next(chunks, None)
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": pending is not None}

    async def send(message: Message) -> None:
        nonlocal status, sent_headers
        if message["type"] == "http.response.start":
            status = message["status"]
            sent_headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            sent.extend(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    with anyio.fail_after(30):
        await app(scope, receive, send)
    return Answer(status, sent_headers, bytes(sent), pulled)


def endless(total: int, chunk: int = MiB) -> Iterator[bytes]:
    """``total`` bytes in ``chunk``-sized pieces, made only when pulled."""
    piece = b"x" * chunk
    for _ in range(total // chunk):
        yield piece


# --- the workspace agent ---------------------------------------------------------------------------


@dataclass
class AgentSurface:
    agent: ContextAgent
    app: ASGIApp
    secret_plan: Path  # a plan file outside every root: reading it fails the test (tests/containment.py)


@contextlib.asynccontextmanager
async def agent_surface(tmp_path: Path, home: Path) -> AsyncIterator[AgentSurface]:
    """A running agent over a workspace, its API app with ``AGENT_TOKEN``, and a secret ``.md`` it must not read."""
    work = make_workspace(tmp_path / "work", {".git/": "", "AGENTS.md": "Use pytest.\n"})
    secret = outside_the_roots(tmp_path) / "secret-plan.md"
    secret.write_text("# the user's private notes\n", encoding="utf-8")
    agent = make_agent(work, home)
    async with running(agent):
        await ready(agent)
        yield AgentSurface(agent, agent_app(agent, token=AGENT_TOKEN), secret)


# --- the control plane ----------------------------------------------------------------------------


@dataclass
class ControlSurface:
    world: World  # users admin, alice, bob; agents; an in-process client as http://control
    app: ASGIApp


@contextlib.asynccontextmanager
async def control_surface(tmp_path: Path) -> AsyncIterator[ControlSurface]:
    async with sqlite_world(tmp_path) as world:
        yield ControlSurface(world, control_app(world.plane, background=False, edge=CONTROL_EDGE))


@dataclass(frozen=True)
class ApiRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: list[bytes]


def every_api_request(world: World, headers: Mapping[str, str], *, token: bool = True) -> list[ApiRequest]:
    """One request to each control plane API route (``ROUTES``), with the token it needs unless ``token`` is off."""
    ids = {"chat_id": "c", "file_id": "f", "name": "notes", "workspace": "shared", "agent_id": "a"}
    requests = []
    for method, template, body in ROUTES:
        sent = {**headers, "Content-Type": "application/json"}
        if token:
            sent["Authorization"] = f"Bearer {world.tokens['agent' if '/agent/' in template else 'alice']}"
        content = [json.dumps(body).encode()] if body is not None else []
        requests.append(ApiRequest(method, fill(template, ids), sent, content))
    return requests


# --- the MCP server over HTTP ---------------------------------------------------------------------


@dataclass
class McpProcess:
    port: int
    token: str
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attack", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@contextlib.contextmanager
def mcp_process(root: Path, *extra: str) -> Iterator[McpProcess]:
    """``agentcontext mcp --http`` on a free loopback port with a token from a file, over a workspace in ``root``."""
    work = make_workspace(root / "work", {"AGENTS.md": "MCP rules\n"})
    home = root / "home"
    home.mkdir(exist_ok=True)
    token_file = root / "mcp.token"
    token_file.write_text("mcp-token-for-attacks\n", encoding="utf-8")
    token_file.chmod(0o600)
    port = free_port()
    command = agentcontext_command(
        "mcp", "--work-dir", str(work), "--http", f"127.0.0.1:{port}", "--token-file", str(token_file), *extra
    )
    with (root / "mcp.log").open("wb") as log:
        process = subprocess.Popen(command, env={**os.environ, "HOME": str(home)}, stdout=log, stderr=log)
    try:
        wait_for_port(port, process)
        yield McpProcess(port, "mcp-token-for-attacks", process)
    finally:
        terminate(process, timeout=15)


# --- a real uvicorn, as every server command runs it --------------------------------------------


@dataclass
class Served:
    url: str
    port: int
    server: uvicorn.Server

    def open_connections(self) -> int:
        return len(self.server.server_state.connections)


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def guarded_serving(
    app: ASGIApp, edge: Edge, *, h11: bool = False, send_buffer: int | None = None
) -> AsyncIterator[Served]:
    """``app`` on a loopback port through ``web.serving`` (the connection cap and the head deadline); with
    ``send_buffer``, each connection's kernel send buffer that small (loopback's takes megabytes unread)."""
    sock = socket.socket()
    if send_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)  # accepted sockets inherit it
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    config = GuardedConfig(app, edge, h11=h11, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = _QuietServer(config)
    port = sock.getsockname()[1]
    with sock:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            try:
                yield Served(f"http://127.0.0.1:{port}", port, server)
            finally:
                server.should_exit = True
