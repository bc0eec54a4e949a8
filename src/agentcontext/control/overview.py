"""One read-only picture of the deployment: server, workspaces, agents, snapshots, chats, problems.

What ``GET /api/v1/overview`` answers (``agentcontext status`` prints it) and what the
dashboard's workspaces page shows. A user sees what the API would let them see: the
workspaces that are unowned or theirs (administrators: all) and their own chats.

A problem is anything a person should look at: an agent offline, a snapshot error, a
resource whose status means it is not (or not wholly) in the context, an MCP server that
failed. Deliberate outcomes (shadowed, excluded, disabled) are shown, not reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Chat, Snapshot, SnapshotResource, Workspace
from agentcontext.resource import Kind, Status

PROBLEM_STATUSES = frozenset({Status.INVALID, Status.UNREADABLE, Status.OVERSIZE, Status.TRUNCATED})


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str  # agent_offline, snapshot_error, resource, mcp_server
    where: str  # "workspace/agent", with ": path" for a resource
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "where": self.where, "message": self.message}


def visible_workspaces(session: Session, user: UserPrincipal) -> list[Workspace]:
    query = sa.select(Workspace).order_by(Workspace.name)
    if not user.is_admin:
        query = query.where(sa.or_(Workspace.owner_id.is_(None), Workspace.owner_id == user.user_id))
    return list(session.scalars(query))


def build(session: Session, user: UserPrincipal, *, version: str, database: str) -> dict[str, Any]:
    """The overview as JSON-ready data (the shape ``GET /api/v1/overview`` documents)."""
    problems: list[Problem] = []
    workspaces = [_workspace(session, w, problems) for w in visible_workspaces(session, user)]
    return {
        "server": {"version": version, "database": database},
        "workspaces": workspaces,
        "chats": _chat_counts(session, user),
        "problems": [p.to_dict() for p in problems],
    }


def _workspace(session: Session, workspace: Workspace, problems: list[Problem]) -> dict[str, Any]:
    agents = session.scalars(
        sa.select(Agent).where(Agent.workspace_id == workspace.id).order_by(Agent.display_order, Agent.name, Agent.id)
    )
    return {
        "id": workspace.id,
        "name": workspace.name,
        "agents": [_agent(session, f"{workspace.name}/{a.name}", a, problems) for a in agents],
    }


def _agent(session: Session, where: str, agent: Agent, problems: list[Problem]) -> dict[str, Any]:
    if not agent.online:
        seen = agent.last_seen_at.isoformat() if agent.last_seen_at else "never"
        problems.append(Problem("agent_offline", where, f"agent is offline (last seen {seen})"))
    snapshot = session.get(Snapshot, agent.id)
    rows = session.execute(
        sa.select(
            SnapshotResource.kind,
            SnapshotResource.path,
            SnapshotResource.status,
            SnapshotResource.error,
            SnapshotResource.meta,
        )
        .where(SnapshotResource.agent_id == agent.id)
        .order_by(SnapshotResource.source)
    ).all()
    return {
        "id": agent.id,
        "name": agent.name,
        "online": agent.online,
        "last_seen_at": agent.last_seen_at.isoformat() if agent.last_seen_at else None,
        "url": agent.url,
        "snapshot": _snapshot(snapshot, rows, where, problems) if snapshot is not None else None,
        "mcp": [_mcp(row) for row in rows if row.kind == Kind.MCP_SERVER],
    }


def _snapshot(snapshot: Snapshot, rows: Sequence[Any], where: str, problems: list[Problem]) -> dict[str, Any]:
    if snapshot.error:
        problems.append(Problem("snapshot_error", where, snapshot.error))
    for row in rows:
        if row.status in PROBLEM_STATUSES:
            kind = "mcp_server" if row.kind == Kind.MCP_SERVER else "resource"
            reason = row.error or row.status
            problems.append(Problem(kind, f"{where}: {row.path}", f"{row.kind} {row.status}: {reason}"))
    return {
        "version": snapshot.version,
        "aggregate_hash": snapshot.aggregate_hash,
        "received_at": snapshot.received_at.isoformat(),
        "error": snapshot.error,
        "resources": len(rows),
        "by_status": dict(sorted(Counter(str(row.status) for row in rows).items())),
    }


def _mcp(row: Any) -> dict[str, Any]:
    meta = row.meta or {}
    return {"name": row.path, "status": row.status, "tools": len(meta.get("tools") or ()), "error": row.error}


def _chat_counts(session: Session, user: UserPrincipal) -> dict[str, int]:
    mine = sa.and_(Chat.owner_id == user.user_id, Chat.archived.is_(False))
    total = session.scalar(sa.select(sa.func.count()).select_from(Chat).where(mine)) or 0
    dirty = session.scalar(sa.select(sa.func.count()).select_from(Chat).where(mine, Chat.dirty_since.is_not(None)))
    return {"total": total, "out_of_date": dirty or 0}
