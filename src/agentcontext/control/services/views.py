"""Views: what a user may see of the deployment, read under the one visibility rule (``visibility``).

The overview and the workspaces the API answers; each agent profile's view of an agent's work dir
(relayed from the agent, which scans it live); and what the dashboard's agent pages show: an
agent, its latest snapshot's inventory, one resource with its text, its MCP servers, a skill's
files (asked of the agent), the event topics of the agents a page follows. An agent whose
workspace the user may not see is "not found", exactly like a missing one.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentcontext import __version__
from agentcontext.control import overview, rows, visibility, wire
from agentcontext.control import tables as t
from agentcontext.control.agent_link import AgentReplyError
from agentcontext.control.agent_reach import AgentReach
from agentcontext.control.events import agent_topic, snapshot_topic
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Snapshot, Workspace
from agentcontext.control.services.admin import UNREACHABLE
from agentcontext.control.store import Store
from agentcontext.errors import AgentContextError, NotFoundError, UnavailableError
from agentcontext.resource import Kind, McpApproval, Resource
from agentcontext.snapshot import count_statuses, shown_status
from agentcontext.views.agents import AgentView
from agentcontext.wire.views import AgentViewBody, AgentViewsBody

OFFLINE_VIEWS = "the workspace agent is offline: each agent's view is computed by the agent from the work dir"
STDERR_WARNING = "stderr (last lines): "  # how the workspace agent reports a failed server's stderr tail


@dataclass(frozen=True, slots=True)
class AgentInfo:
    id: str
    name: str
    workspace: str
    online: bool
    url: str | None
    work_dir: str | None


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    version: int
    aggregate_hash: str
    received_at: str
    error: str | None
    work_dir: str
    profile: str


@dataclass(frozen=True, slots=True)
class Inventory:
    agent: AgentInfo
    snapshot: SnapshotInfo | None
    resources: tuple[Resource, ...]  # without contents, filtered
    counts: dict[str, int]  # every resource by status, before the filter


@dataclass(frozen=True, slots=True)
class McpServer:
    name: str
    status: str
    error: str | None
    tools: tuple[tuple[str, str], ...]  # (name, description)
    warnings: tuple[str, ...]
    stderr_tail: str
    approval: McpApproval | None = None  # pending or changed: what the Approve button approves

    @property
    def awaits_approval(self) -> bool:
        return self.approval is not None and self.approval.state in ("pending", "changed")


@dataclass(frozen=True, slots=True)
class SkillFiles:
    """A skill folder's files, live from the agent, or why they could not be listed."""

    files: tuple[str, ...]
    unreachable: str | None


class ViewService:
    def __init__(self, store: Store, reach: AgentReach) -> None:
        self._store = store
        self._reach = reach

    async def overview(self, user: UserPrincipal) -> wire.OverviewResponse:
        """Server, the user's workspaces with agents, snapshots and MCP servers, chat counts, problems."""
        database = self._store.db.dialect
        return await self._store.read_orm(lambda s: overview.build(s, user, version=__version__, database=database))

    async def workspaces(self, user: UserPrincipal) -> list[wire.WorkspaceEntry]:
        return await self._store.read_orm(lambda s: _workspaces(s, user))

    async def agent_views(self, user: UserPrincipal, agent_id: str) -> AgentViewsBody:
        """What each agent profile loads in the workspace, computed by its agent from the work dir.

        The database holds the snapshot of the agent's own profile only; the others need the
        live work dir, so the agent must be online.

        Raises:
            NotFoundError: no such agent for this user. UnavailableError: the agent is offline or
                unreachable, or answered with an error (its detail says which).
        """
        row = await self._store.read(lambda c: visibility.visible_agent(c, user, agent_id))
        if not row.online:
            raise UnavailableError(OFFLINE_VIEWS)
        address = self._reach.address(agent_id, row.url, row.sealed_secret)
        if address is None:
            raise UnavailableError(UNREACHABLE)
        try:
            return await self._reach.link.agent_views(address)
        except AgentReplyError as exc:
            raise UnavailableError(f"the workspace agent answered {exc.status}: {exc}") from None

    async def stored_view(self, user: UserPrincipal, agent_id: str, profile: str) -> AgentViewBody:
        """``profile``'s view of the agent's snapshot as stored (the agent's own profile, shown while it is
        offline). Raises: NotFoundError."""

        def work(session: Session) -> AgentViewBody:
            visibility.visible_agent(session, user, agent_id)
            found = rows.snapshot_resources(session, agent_id, with_content=("instruction_file",))
            return AgentViewBody.model_validate(AgentView.of_snapshot(profile, found).to_dict())

        return await self._store.read_orm(work)

    # --- the dashboard's agent pages ------------------------------------------------------

    async def agent(self, user: UserPrincipal, agent_id: str) -> AgentInfo:
        """Raises: NotFoundError (no such agent, or not the user's to see)."""
        return await self._store.read(lambda c: _agent(c, user, agent_id))

    async def agent_topics(self, user: UserPrincipal, agent_id: str | None = None) -> tuple[str, ...]:
        """The event topics (online state, snapshots) of the agent, or of every agent the user may see."""
        if agent_id is not None:
            await self.agent(user, agent_id)
            ids: list[str] = [agent_id]
        else:
            ids = await self._store.read(lambda c: _visible_agent_ids(c, user))
        return tuple(topic for a in ids for topic in (agent_topic(a), snapshot_topic(a)))

    async def inventory(self, user: UserPrincipal, agent_id: str, status: str | None = None) -> Inventory:
        """Every resource of the agent's latest snapshot (``status`` keeps only those with it)."""
        return await self._store.read_orm(lambda s: _inventory(s, user, agent_id, status))

    async def resource(self, user: UserPrincipal, agent_id: str, source: str) -> tuple[AgentInfo, Resource]:
        """One resource of the agent's latest snapshot, with its content.

        Raises:
            NotFoundError: no such agent (for this user) or resource.
        """
        return await self._store.read_orm(lambda s: _resource(s, user, agent_id, source))

    async def mcp_servers(self, user: UserPrincipal, agent_id: str) -> tuple[AgentInfo, list[McpServer]]:
        return await self._store.read_orm(lambda s: _mcp_servers(s, user, agent_id))

    async def skill_files(self, user: UserPrincipal, agent_id: str, name: str) -> SkillFiles:
        """The skill folder's files, live from the agent (best effort, as ``read_skill`` lists them)."""
        row = await self._store.read(lambda c: visibility.visible_agent(c, user, agent_id))
        address = self._reach.address(agent_id, row.url, row.sealed_secret)
        if address is None or not name:
            return SkillFiles((), UNREACHABLE)
        try:
            files = await self._reach.link.skill_files(address, name)
        except AgentContextError as exc:
            return SkillFiles((), str(exc))
        return SkillFiles(tuple(files), None)


def _agent(executor: Connection | Session, user: UserPrincipal, agent_id: str) -> AgentInfo:
    row = visibility.visible_agent(executor, user, agent_id)
    return AgentInfo(row.id, row.name, row.workspace, row.online, row.url, row.work_dir)


def _visible_agent_ids(connection: Connection, user: UserPrincipal) -> list[str]:
    query = (
        sa.select(t.agents.c.id)
        .join(t.workspaces, t.workspaces.c.id == t.agents.c.workspace_id)
        .where(visibility.visible(user, t.workspaces.c.owner_id))
        .order_by(t.agents.c.id)
    )
    return list(connection.scalars(query))


def _workspaces(session: Session, user: UserPrincipal) -> list[wire.WorkspaceEntry]:
    query = sa.select(Workspace).where(visibility.visible(user, t.workspaces.c.owner_id)).order_by(Workspace.name)
    out = []
    for workspace in session.scalars(query):
        agents = session.scalars(sa.select(Agent).where(Agent.workspace_id == workspace.id).order_by(Agent.name))
        listed = [
            wire.WorkspaceAgent(
                id=a.id,
                name=a.name,
                online=a.online,
                last_seen_at=a.last_seen_at.isoformat() if a.last_seen_at else None,
                url=a.url,
                os=a.os,
            )
            for a in agents
        ]
        out.append(wire.WorkspaceEntry(id=workspace.id, name=workspace.name, agents=listed))
    return out


def _snapshot(session: Session, agent_id: str) -> SnapshotInfo | None:
    found = session.get(Snapshot, agent_id)
    if found is None:
        return None
    return SnapshotInfo(
        found.version, found.aggregate_hash, found.received_at.isoformat(), found.error, found.work_dir, found.profile
    )


def _inventory(session: Session, user: UserPrincipal, agent_id: str, status: str | None) -> Inventory:
    agent = _agent(session, user, agent_id)
    everything = rows.snapshot_resources(session, agent_id, with_content=False)
    counts = count_statuses((r.kind, r.status) for r in everything)
    kept = tuple(r for r in everything if status in (None, "", shown_status(r.kind, r.status)))
    return Inventory(agent, _snapshot(session, agent_id), kept, counts)


def _resource(session: Session, user: UserPrincipal, agent_id: str, source: str) -> tuple[AgentInfo, Resource]:
    agent = _agent(session, user, agent_id)
    found = [r for r in rows.read(session, agent_id, chat=False, with_content=True) if r.source == source]
    if not found:
        raise NotFoundError(f'resource "{source}" not found')
    return agent, rows.load(found)[0]


def _mcp_servers(session: Session, user: UserPrincipal, agent_id: str) -> tuple[AgentInfo, list[McpServer]]:
    agent = _agent(session, user, agent_id)
    servers = [r for r in rows.snapshot_resources(session, agent_id, with_content=False) if r.kind is Kind.MCP_SERVER]
    return agent, [_server(r) for r in servers]


def _server(resource: Resource) -> McpServer:
    tails = [w.removeprefix(STDERR_WARNING) for w in resource.warnings if w.startswith(STDERR_WARNING)]
    others = tuple(w for w in resource.warnings if not w.startswith(STDERR_WARNING))
    return McpServer(
        name=resource.path,
        status=str(resource.status),
        error=resource.error,
        tools=tuple((tool.name, tool.description) for tool in resource.tools),
        warnings=others,
        stderr_tail="\n".join(tails),
        approval=resource.approval,
    )
