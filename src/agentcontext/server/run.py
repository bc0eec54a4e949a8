"""Serving the composed app (``app``) until a signal: uvicorn with the edge's connection limits
(``web.serving``), the app behind its request guard, the database closed when it stops."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import anyio
import uvicorn

from agentcontext.control import agent_secret
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.api import MAX_BODY
from agentcontext.control.db import Database
from agentcontext.control.plane import ControlPlane
from agentcontext.control.service import broker_for
from agentcontext.control.settings import ControlSettings
from agentcontext.server.app import build_app
from agentcontext.server.collector import Collector
from agentcontext.web.guard import Edge
from agentcontext.web.serving import GuardedConfig, bind

DEFAULT_LISTEN = "127.0.0.1:8765"
GRACE = 5  # seconds a stopping server gives requests in flight before it closes their connections


@dataclass(frozen=True, slots=True)
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    settings: ControlSettings = ControlSettings()
    edge: Edge | None = None  # the names served and the limits (default: loopback only)
    secrets: SecretBox | None = None  # the server key (agent_secret); default: the environment's, else the data dir's
    listening: socket.socket | None = None  # bound by the caller (``agentcontext server``); else bound here
    collector: Collector = Collector()  # how often what the collector tracks is frozen, and everything thawed


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: ``serve`` stops it and closes the database."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(db: Database, options: ServerOptions, on_ready: Callable[[str], None] | None = None) -> None:
    secrets = options.secrets or agent_secret.load(os.environ)
    plane = ControlPlane(db, broker_for(db), options.settings, secrets=secrets)
    edge = options.edge or Edge(max_body=MAX_BODY)
    config = GuardedConfig(
        build_app(plane, edge=edge),
        edge,
        host=options.host,
        port=options.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACE,
    )
    server = _Server(config)
    listening = options.listening or bind(options.host, options.port)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_stop_on_signal, server, plane)
            group.start_soon(_collect, server, options.collector)
            if on_ready is not None:
                group.start_soon(_announce, server, on_ready, f"http://{options.host}:{options.port}")
            await server.serve(sockets=[listening])
            group.cancel_scope.cancel()
    finally:
        await plane.aclose()
        db.dispose()


async def _announce(server: uvicorn.Server, on_ready: Callable[[str], None], url: str) -> None:
    while not server.started:
        await anyio.sleep(0.02)
    on_ready(url)


async def _collect(server: uvicorn.Server, collector: Collector) -> None:
    """Once serving, keep the collector's full collections short (``server.collector``): what start-up made
    and what lives on after (event streams, caches) need not be walked again each time."""
    while not server.started:
        await anyio.sleep(0.02)
    await collector.run()


async def _stop_on_signal(server: uvicorn.Server, plane: ControlPlane) -> None:
    """Stop serving, and end every event stream: uvicorn waits for open responses, and those never end."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            server.should_exit = True
            plane.broker.close()
            return


def run(db: Database, options: ServerOptions, *, on_ready: Callable[[str], None] | None = None) -> None:
    use_uvloop = importlib.util.find_spec("uvloop") is not None  # from uvicorn[standard]; absent on Windows
    try:
        anyio.run(serve, db, options, on_ready, backend_options={"use_uvloop": use_uvloop})
    except KeyboardInterrupt:  # pragma: no cover - the signal receiver normally gets it first
        sys.exit(0)
