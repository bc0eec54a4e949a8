"""One read-only picture of the deployment: server, workspaces, agents, snapshots, chats, problems.

What ``GET /api/v1/overview`` answers (``agentcontext status`` prints it) and what the
dashboard's workspaces page shows. A user sees what the API would let them see: the
workspaces that are unowned or theirs (administrators: all) and their own chats.

A problem is anything a person should look at: an agent offline, a snapshot error, a
resource whose status means it is not (or not wholly) in the context, an MCP server that
failed. Deliberate outcomes (shadowed, excluded, disabled) are shown, not reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import tables as t
from agentcontext.control import wire
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Chat, Snapshot, SnapshotResource, Workspace
from agentcontext.control.visibility import visible
from agentcontext.resource import Kind, Status
from agentcontext.snapshot import count_statuses

PROBLEM_STATUSES = frozenset({Status.INVALID, Status.UNREADABLE, Status.OVERSIZE, Status.TRUNCATED})


def visible_workspaces(session: Session, user: UserPrincipal) -> list[Workspace]:
    return list(
        session.scalars(sa.select(Workspace).where(visible(user, t.workspaces.c.owner_id)).order_by(Workspace.name))
    )


def build(session: Session, user: UserPrincipal, *, version: str, database: str) -> wire.OverviewResponse:
    """The overview (what ``GET /api/v1/overview`` answers)."""
    problems: list[wire.OverviewProblem] = []
    workspaces = [_workspace(session, w, problems) for w in visible_workspaces(session, user)]
    return wire.OverviewResponse(
        server=wire.OverviewServer(version=version, database=database),
        workspaces=workspaces,
        chats=_chat_counts(session, user),
        problems=problems,
    )


def _workspace(session: Session, workspace: Workspace, problems: list[wire.OverviewProblem]) -> wire.OverviewWorkspace:
    agents = session.scalars(
        sa.select(Agent).where(Agent.workspace_id == workspace.id).order_by(Agent.display_order, Agent.name, Agent.id)
    )
    return wire.OverviewWorkspace(
        id=workspace.id,
        name=workspace.name,
        agents=[_agent(session, f"{workspace.name}/{a.name}", a, problems) for a in agents],
    )


def _agent(session: Session, where: str, agent: Agent, problems: list[wire.OverviewProblem]) -> wire.OverviewAgent:
    if not agent.online:
        seen = agent.last_seen_at.isoformat() if agent.last_seen_at else "never"
        problems.append(
            wire.OverviewProblem(kind="agent_offline", where=where, message=f"agent is offline (last seen {seen})")
        )
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
    return wire.OverviewAgent(
        id=agent.id,
        name=agent.name,
        online=agent.online,
        last_seen_at=agent.last_seen_at.isoformat() if agent.last_seen_at else None,
        url=agent.url,
        snapshot=_snapshot(snapshot, rows, where, problems) if snapshot is not None else None,
        mcp=[_mcp(row) for row in rows if row.kind == Kind.MCP_SERVER],
    )


def _snapshot(
    snapshot: Snapshot, rows: Sequence[Any], where: str, problems: list[wire.OverviewProblem]
) -> wire.OverviewSnapshot:
    if snapshot.error:
        problems.append(wire.OverviewProblem(kind="snapshot_error", where=where, message=snapshot.error))
    for row in rows:
        if row.status in PROBLEM_STATUSES:
            kind = "mcp_server" if row.kind == Kind.MCP_SERVER else "resource"
            reason = row.error or row.status
            message = f"{row.kind} {row.status}: {reason}"
            problems.append(wire.OverviewProblem(kind=kind, where=f"{where}: {row.path}", message=message))
    return wire.OverviewSnapshot(
        version=snapshot.version,
        aggregate_hash=snapshot.aggregate_hash,
        received_at=snapshot.received_at.isoformat(),
        error=snapshot.error,
        resources=len(rows),
        by_status=count_statuses((str(row.kind), str(row.status)) for row in rows),
    )


def _mcp(row: Any) -> wire.OverviewMcp:
    meta = row.meta or {}
    return wire.OverviewMcp(name=row.path, status=row.status, tools=len(meta.get("tools") or ()), error=row.error)


def _chat_counts(session: Session, user: UserPrincipal) -> wire.OverviewChats:
    mine = sa.and_(Chat.owner_id == user.user_id, Chat.archived.is_(False))
    total = session.scalar(sa.select(sa.func.count()).select_from(Chat).where(mine)) or 0
    dirty = session.scalar(sa.select(sa.func.count()).select_from(Chat).where(mine, Chat.dirty_since.is_not(None)))
    return wire.OverviewChats(total=total, out_of_date=dirty or 0)
