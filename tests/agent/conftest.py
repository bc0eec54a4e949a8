"""Fixtures and helpers for the workspace agent's tests: a running agent, waits on its events, free ports."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from starlette.types import ASGIApp

from agentcontext.agent.context import ContextAgent
from agentcontext.resource import Kind, Resource
from agentcontext.snapshot import Snapshot
from agentcontext.testing import isolated_environ, test_config

WAIT = 20.0  # seconds any single wait in these tests may take before it fails
AUTO_TRUST = {"mcp.trust": "auto"}  # the operator's choice: the work dir's MCP servers start unasked


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: the test process keeps its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, port: int | None = None) -> AsyncIterator[str]:
    """``app`` served by uvicorn on a loopback port (``port`` when given), listening before the block starts."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port or 0))
    sock.listen(16)
    server = _QuietServer(uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1))
    with sock:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            try:
                yield f"http://127.0.0.1:{sock.getsockname()[1]}"
            finally:  # a real shutdown: a cancelled uvicorn would leave its listener registered
                server.should_exit = True


def make_agent(
    work: Path, home: Path, *, profile: str = "default", settings: dict[str, Any] | None = None
) -> ContextAgent:
    """An agent over ``work`` with an isolated home and nothing from the real machine."""
    config = test_config(work, home=home, profile=profile, settings=settings)
    return ContextAgent(str(work), config, environ=isolated_environ(home))


@contextlib.asynccontextmanager
async def running(agent: ContextAgent) -> AsyncIterator[ContextAgent]:
    """The agent's run loop and MCP servers, for the duration of the block."""
    async with agent.mcp, anyio.create_task_group() as group:
        group.start_soon(agent.run)
        yield agent
        group.cancel_scope.cancel()


async def wait_snapshot(agent: ContextAgent, accept: Callable[[Snapshot], bool], timeout: float = WAIT) -> Snapshot:
    """The agent's snapshot once ``accept`` holds for it (woken by each published event)."""
    with anyio.fail_after(timeout), agent.subscription() as events:
        while not accept(agent.snapshot):
            await events.receive()
    return agent.snapshot


async def ready(agent: ContextAgent) -> Snapshot:
    """Mark the agent ready; returns its first snapshot once the agent is idle again.

    The first scan also settles the (here empty) MCP catalog, which triggers one more scan
    once its ``mcp`` event is out (debounced); a test that writes files while that scan
    reads them would see a transient state. Two resyncs queue behind it (the scan lock is
    first come, first served), so it is over.
    """
    with agent.subscription() as events:
        agent.set_ready()
        catalog = False
        with anyio.fail_after(WAIT):
            while agent.snapshot.version < 1 or not catalog:
                catalog = (await events.receive()).kind == "mcp" or catalog
    await agent.resync()
    return await agent.resync()


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s content in one step, so a scan running at that moment never sees half of it."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def of_kind(snapshot: Snapshot, kind: Kind) -> list[Resource]:
    return [r for r in snapshot.resources if r.kind is kind]


def paths(snapshot: Snapshot, kind: Kind) -> list[str]:
    return [r.path for r in of_kind(snapshot, kind)]


def time_server_config() -> str:
    """A ``.mcp.json`` declaring the real ``mcp-server-time`` of this virtualenv as ``time``."""
    command = str(Path(sys.executable).parent / "mcp-server-time")
    return json.dumps({"mcpServers": {"time": {"command": command}}})
