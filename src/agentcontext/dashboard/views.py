"""What the dashboard's agent pages show, read from the database under the API's access rules.

An agent is visible to a user when its workspace is: unowned, the user's own, or any for an
administrator. Anything else is "not found", exactly like a missing agent.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import overview, rows
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Snapshot, Workspace
from agentcontext.errors import NotFoundError
from agentcontext.resource import Kind, McpApproval, Resource, Status

STDERR_WARNING = "stderr (last lines): "  # how the workspace agent reports a failed server's stderr tail


@dataclass(frozen=True, slots=True)
class AgentInfo:
    id: str
    name: str
    workspace: str
    online: bool
    url: str | None
    sealed_secret: str | None  # the agent's per-run secret, sealed (the plane unseals it to call the agent)
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


def visible_agent(session: Session, user: UserPrincipal, agent_id: str) -> AgentInfo:
    """Raises: NotFoundError (no such agent, or not the user's to see)."""
    row = session.execute(
        sa.select(Agent, Workspace.name, Workspace.owner_id)
        .join(Workspace, Workspace.id == Agent.workspace_id)
        .where(Agent.id == agent_id)
    ).first()
    if row is None or not (user.is_admin or row.owner_id in (None, user.user_id)):
        raise NotFoundError(f'agent "{agent_id}" not found')
    agent: Agent = row[0]
    return AgentInfo(agent.id, agent.name, row.name, agent.online, agent.url, agent.sealed_secret, agent.work_dir)


def visible_agent_ids(session: Session, user: UserPrincipal) -> list[str]:
    workspaces = [w.id for w in overview.visible_workspaces(session, user)]
    return list(session.scalars(sa.select(Agent.id).where(Agent.workspace_id.in_(workspaces)).order_by(Agent.id)))


def _snapshot(session: Session, agent_id: str) -> SnapshotInfo | None:
    found = session.get(Snapshot, agent_id)
    if found is None:
        return None
    return SnapshotInfo(
        found.version, found.aggregate_hash, found.received_at.isoformat(), found.error, found.work_dir, found.profile
    )


def inventory(session: Session, user: UserPrincipal, agent_id: str, status: str | None = None) -> Inventory:
    """Every resource of the agent's latest snapshot (``status`` keeps only those with it)."""
    agent = visible_agent(session, user, agent_id)
    everything = rows.snapshot_resources(session, agent_id, with_content=False)
    counts: dict[str, int] = {}
    for resource in everything:
        counts[str(resource.status)] = counts.get(str(resource.status), 0) + 1
    kept = tuple(r for r in everything if status in (None, "", str(r.status)))
    return Inventory(agent, _snapshot(session, agent_id), kept, dict(sorted(counts.items())))


def resource(session: Session, user: UserPrincipal, agent_id: str, source: str) -> tuple[AgentInfo, Resource]:
    """One resource of the agent's latest snapshot, with its content.

    Raises:
        NotFoundError: no such agent (for this user) or resource.
    """
    agent = visible_agent(session, user, agent_id)
    found = [r for r in rows.read(session, agent_id, chat=False, with_content=True) if r.source == source]
    if not found:
        raise NotFoundError(f'resource "{source}" not found')
    return agent, rows.load(found)[0]


def mcp_servers(session: Session, user: UserPrincipal, agent_id: str) -> tuple[AgentInfo, list[McpServer]]:
    agent = visible_agent(session, user, agent_id)
    servers = [r for r in rows.snapshot_resources(session, agent_id, with_content=False) if r.kind is Kind.MCP_SERVER]
    return agent, [_server(r) for r in servers]


def _server(resource: Resource) -> McpServer:
    tails = [w.removeprefix(STDERR_WARNING) for w in resource.warnings if w.startswith(STDERR_WARNING)]
    others = tuple(w for w in resource.warnings if not w.startswith(STDERR_WARNING))
    return McpServer(
        name=resource.path,
        status=str(resource.status),
        error=resource.error,
        tools=tuple((t.name, t.description) for t in resource.tools),
        warnings=others,
        stderr_tail="\n".join(tails),
        approval=resource.approval,
    )


def status_tone(status: str) -> str:
    """The badge colour of a status: ok, warn (cut or left out on purpose) or bad (not in, with a reason)."""
    if status == Status.OK:
        return "ok"
    if status in (Status.TRUNCATED, Status.SHADOWED, Status.EXCLUDED, Status.DISABLED):
        return "warn"
    return "bad"
