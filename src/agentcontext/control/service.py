"""Running the control plane: migrate, bootstrap the first administrator, serve until a signal.

SQLite (the default) delivers events in-process; PostgreSQL through LISTEN/NOTIFY, so any
number of replicas can share one database. uvicorn runs with the edge's connection limits
(``web.serving``) and the app behind its request guard. The first start on an empty database creates
the user ``admin`` and prints its token once; it is never shown again.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import anyio
import uvicorn
from fastapi import FastAPI
from sqlalchemy.orm import Session

from agentcontext import dashboard
from agentcontext.control import agent_secret, identity, migrate
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.api import MAX_BODY, create_app
from agentcontext.control.db import Database
from agentcontext.control.events import Broker, LocalBroker, PostgresBroker
from agentcontext.control.plane import ControlPlane, ControlSettings
from agentcontext.web.guard import Edge
from agentcontext.web.serving import GuardedConfig

log = logging.getLogger("agentcontext.control")
DEFAULT_LISTEN = "127.0.0.1:8765"
GRACE = 5  # seconds a stopping server gives requests in flight before it closes their connections


def broker_for(db: Database) -> Broker:
    if db.dialect == "postgresql":
        return PostgresBroker(db.url.set(drivername="postgresql").render_as_string(hide_password=False))
    return LocalBroker()


def bootstrap_admin(db: Database) -> identity.Issued | None:
    """The first administrator and their token, on an empty database only (None otherwise)."""

    def work(session: Session) -> identity.Issued | None:
        if identity.has_users(session):
            return None
        return identity.create_user(session, "admin", admin=True)

    return db.write(work)


def prepare(db_url: str) -> tuple[Database, identity.Issued | None]:
    """Open the database, apply migrations, create the first administrator if there is none, and open the
    connections the requests will use."""
    db = Database(db_url)
    migrate.upgrade(db)
    admin = bootstrap_admin(db)
    db.warm()
    return db, admin


@dataclass(frozen=True, slots=True)
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    settings: ControlSettings = ControlSettings()
    edge: Edge | None = None  # the names served and the limits (default: loopback only)
    secrets: SecretBox | None = None  # the server key (agent_secret); default: the environment's, else the data dir's


def build_app(plane: ControlPlane, *, background: bool = True, edge: Edge | None = None) -> FastAPI:
    """The API with the dashboard added: what ``agentcontext server`` serves."""
    app = create_app(plane, background=background, edge=edge)
    dashboard.install(app)
    return app


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
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_stop_on_signal, server, plane)
            group.start_soon(_settle, server)
            if on_ready is not None:
                group.start_soon(_announce, server, on_ready, f"http://{options.host}:{options.port}")
            await server.serve()
            group.cancel_scope.cancel()
    finally:
        await plane.aclose()
        db.dispose()


async def _announce(server: uvicorn.Server, on_ready: Callable[[str], None], url: str) -> None:
    while not server.started:
        await anyio.sleep(0.02)
    on_ready(url)


async def _settle(server: uvicorn.Server) -> None:
    """Once serving, set what start-up made aside from the collector: a full collection need not walk the
    modules, schemas and statements again (tens of ms at the tail of a request, each time) (``gc.freeze``)."""
    while not server.started:
        await anyio.sleep(0.02)
    gc.collect()
    gc.freeze()


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
