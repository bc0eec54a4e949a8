"""Real parts for the control plane's turn-context and chat-tool tests.

A control plane on a SQLite database (migrated, in-process broker), a user and an agent
made through ``identity``, and a real :class:`ContextAgent` over a temp workspace serving
its real API on a loopback port. The agent's snapshot reaches the control plane through
``ControlPlane.push`` with the agent's principal, carrying the URL and the per-run peer
token the control plane calls back with, as the agent's pusher sends them.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.control import identity, migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.chats import NewChat
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.control.settings import ControlSettings
from agentcontext.control.tools import ToolResult
from agentcontext.scan import scan_full
from agentcontext.snapshot import Snapshot
from agentcontext.testing import make_workspace
from agentcontext.wire.sync import PushResponse
from tests.agent.conftest import make_agent, ready, running, serving, wait_snapshot
from tests.migrated import fresh_sqlite

AGENT_TOKEN = "agent-main-token-0123456789"
PEER_TOKEN = "agent-peer-token-0123456789"
WORKSPACE = "ws"
OS_NAME = "linux"
MISBEHAVING = str(Path(__file__).resolve().parent.parent / "mcp_servers" / "misbehaving.py")


def closed_url() -> str:
    """A loopback URL where nothing listens: every call to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def misbehaving(mode: str) -> dict[str, Any]:
    """A ``.mcp.json`` server entry running tests/mcp_servers/misbehaving.py in ``mode``."""
    return {"command": sys.executable, "args": [MISBEHAVING, mode]}


def time_server() -> dict[str, Any]:
    return {"command": str(Path(sys.executable).parent / "mcp-server-time")}


def mcp_json(servers: Mapping[str, Mapping[str, Any]]) -> str:
    return json.dumps({"mcpServers": dict(servers)})


@dataclass
class Control:
    """A control plane with one user and one agent (in workspace ``ws``)."""

    plane: ControlPlane
    db: Database
    user: identity.UserPrincipal
    principal: identity.AgentPrincipal
    pushed: int = 0
    peer_token: str = PEER_TOKEN  # what pushes say the agent's API accepts
    user_token: str = ""  # alice's API token

    async def push(self, snapshot: Snapshot, *, url: str, home: Path | str) -> PushResponse:
        """``snapshot`` pushed as the agent's pusher does (the first push of the run is ``initial``)."""
        info = {"url": url, "api_token": self.peer_token, "home": str(home), "os": OS_NAME}
        body = {**snapshot.to_dict(), "initial": self.pushed == 0, "agent": info}
        outcome = await self.plane.sync.push(self.principal, body)
        self.pushed += 1
        assert outcome.accepted, outcome
        return outcome

    async def chat(self, *, plan_mode: bool = False, parent_id: str | None = None) -> str:
        new = NewChat(workspace=None if parent_id else WORKSPACE, parent_id=parent_id, plan_mode=plan_mode)
        return str((await self.plane.chats.create(self.user, new)).id)

    async def prompt(self, chat_id: str) -> dict[str, Any]:
        return (await self.plane.chats.prompt(self.user, chat_id)).to_dict()

    async def system(self, chat_id: str) -> str:
        return str((await self.prompt(chat_id))["system"])

    async def tool_names(self, chat_id: str) -> list[str]:
        return [tool["name"] for tool in (await self.prompt(chat_id))["tools"]]

    async def call(self, chat_id: str, name: str, arguments: Any = None) -> ToolResult:
        return await self.plane.chats.call_tool(self.user, chat_id, name, {} if arguments is None else arguments)

    async def call_json(self, chat_id: str, name: str, arguments: Any = None) -> dict[str, Any]:
        """A call that must succeed, its JSON content decoded."""
        result = await self.call(chat_id, name, arguments)
        assert not result.is_error, result.content
        decoded: dict[str, Any] = json.loads(result.content)
        return decoded

    async def add_personal_skill(self, text: str) -> None:
        await self.plane.skills.create(self.user, text)


@contextlib.contextmanager
def frozen_url() -> Iterator[str]:
    """A loopback URL whose listener never answers, as a stopped (SIGSTOP) agent's: the kernel
    completes each connection, then nothing more ever happens on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextlib.asynccontextmanager
async def control_plane(
    tmp_path: Path,
    *,
    quick_timeout: float = 10.0,
    owned: bool = False,
    db_url: str | None = None,
    settings: ControlSettings | None = None,
) -> AsyncIterator[Control]:
    """``owned``: the workspace is the user's own (else nobody's), as ``agentcontext up`` makes it; ``db_url``: a
    database to use instead of a SQLite file in ``tmp_path``."""
    db = Database(db_url or fresh_sqlite(tmp_path / "c.db"))
    migrate.upgrade(db)  # a database of the caller's own may be empty
    link = AgentLink(connect_timeout=5.0, call_timeout=30.0, quick_timeout=quick_timeout)
    plane = ControlPlane(db, LocalBroker(), settings, link=link)
    try:
        user = db.write(lambda s: identity.create_user(s, "alice"))
        owner = db.write(lambda s: identity.user_id(s, "alice")) if owned else None
        agent = db.write(lambda s: identity.create_agent(s, WORKSPACE, "dev", owner_id=owner))
        principal = await plane.access.authenticate(agent.token)
        person = await plane.access.authenticate(user.token)
        assert isinstance(principal, identity.AgentPrincipal) and isinstance(person, identity.UserPrincipal)
        yield Control(plane, db, person, principal, user_token=user.token)
    finally:
        await plane.aclose()
        db.dispose()


@dataclass
class Workspace:
    """A real agent over ``work``; ``url`` is where its API listens (or listened)."""

    control: Control
    agent: ContextAgent
    work: Path
    home: Path
    url: str
    served: bool = field(default=True)

    async def push(self) -> PushResponse:
        return await self.control.push(self.agent.snapshot, url=self.url, home=self.home)

    async def rescan(self, accept: Callable[[Snapshot], bool] | None = None) -> Snapshot:
        """Scan now (and wait until ``accept`` holds, MCP servers reconnecting), then push the result."""
        await self.agent.resync()
        if accept is not None:
            await wait_snapshot(self.agent, accept, timeout=30)
        await self.push()
        return self.agent.snapshot


def approve_servers(agent: ContextAgent) -> None:
    """Approve every MCP server of the agent's work dir in its user's trust store (``agentcontext mcp trust``)."""
    servers = scan_full(agent.work_dir, agent.config, environ=agent.environ).servers
    agent.trust.approve([agent.mcp.launch(spec) for spec in servers])


@contextlib.asynccontextmanager
async def workspace(
    control: Control,
    root: Path,
    files: Mapping[str, str | bytes],
    *,
    home: Path,
    profile: str = "default",
    serve: bool = True,
    settings: dict[str, Any] | None = None,
    work_dir: str = "",
    accept: Callable[[Snapshot], bool] | None = None,
    advertise: str | None = None,
    approve: bool = True,
) -> AsyncIterator[Workspace]:
    """A real agent over a workspace made of ``files``, ready, its first snapshot pushed.

    ``serve=False`` runs no API at all: the pushed URL is a closed port (or ``advertise``).
    ``accept`` waits for a snapshot it holds for (MCP servers connect in the background)
    before the push. The workspace's MCP servers are approved first, as the user would
    (``approve=False``: they wait for an approval).
    """
    make_workspace(root, files)
    work = root / work_dir if work_dir else root
    agent = make_agent(work, home, profile=profile, settings=settings)
    if approve:
        approve_servers(agent)
    app = create_app(agent, token=AGENT_TOKEN, peer_token=PEER_TOKEN)
    async with running(agent), contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(serving(app)) if serve else advertise or closed_url()
        await ready(agent)
        if accept is not None:
            await wait_snapshot(agent, accept, timeout=30)
        live = Workspace(control, agent, work, home, url, served=serve)
        await live.push()
        yield live
