"""Who may see a workspace, and who may approve what it runs: the rules, each written once.

A workspace is open to a user when nobody owns it, when it is theirs, or when they are an
administrator; what is not open to them is "not found", exactly like what does not exist.
``may_see`` decides it for a row in hand, ``visible`` is the same rule as a SQL clause on a
workspace's owner column. Every read of workspaces, agents and snapshots for a user (the API, the
dashboard, chats over MCP) goes through one of the two.

Approving a workspace's MCP server runs code on its machine: only its owner may (an
administrator, for a workspace nobody owns): ``may_approve``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.sql import ColumnElement

from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.identity import UserPrincipal
from agentcontext.errors import NotFoundError


def may_see(user: UserPrincipal, owner_id: str | None) -> bool:
    """Whether ``user`` may see a workspace owned by ``owner_id`` (None: nobody)."""
    return user.is_admin or owner_id is None or owner_id == user.user_id


def visible(user: UserPrincipal, owner: ColumnElement[str | None]) -> ColumnElement[bool]:
    """``may_see`` as a clause on a workspace's owner column."""
    if user.is_admin:
        return sa.true()
    return sa.or_(owner.is_(None), owner == user.user_id)


# A chat query's check, beside its owner's: the chat's workspace is still the user's (``bindparam("user_id")``) to see.
# A chat outlives a change of who may see its workspace (its owner set by an operator, an admin no longer one), and
# must not keep reading the workspace's latest snapshot or calling its tools then.
CHAT_WORKSPACE_VISIBLE = sa.exists().where(
    t.workspaces.c.id == t.chats.c.workspace_id,
    sa.or_(
        t.workspaces.c.owner_id.is_(None),
        t.workspaces.c.owner_id == sa.bindparam("user_id"),
        sa.exists().where(t.users.c.id == sa.bindparam("user_id"), t.users.c.is_admin.is_(True)),
    ),
)
# the chat (``bindparam("chat_id")``) is the user's, in a workspace they may still see: else "not found"
OWNED_CHAT = sa.and_(
    t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"), CHAT_WORKSPACE_VISIBLE
)


def may_approve(user: UserPrincipal, owner_id: str | None) -> bool:
    """Whether ``user`` may approve what a workspace owned by ``owner_id`` runs."""
    return owner_id == user.user_id or (owner_id is None and user.is_admin)


_AGENT = (
    sa.select(
        t.agents.c.id,
        t.agents.c.name,
        t.workspaces.c.name.label("workspace"),
        t.workspaces.c.owner_id,
        t.agents.c.online,
        t.agents.c.url,
        t.agents.c.sealed_secret,
        t.agents.c.work_dir,
    )
    .join(t.workspaces, t.workspaces.c.id == t.agents.c.workspace_id)
    .where(t.agents.c.id == sa.bindparam("agent_id"))
)


@dataclass(frozen=True, slots=True)
class VisibleAgent:
    """An agent a user may see, with its workspace's name and owner."""

    id: str
    name: str
    workspace: str
    owner_id: str | None
    online: bool
    url: str | None
    sealed_secret: str | None  # its per-run secret, sealed: for ``AgentReach.address`` only
    work_dir: str | None


def visible_agent(executor: Executor, user: UserPrincipal, agent_id: str) -> VisibleAgent:
    """The agent, once the user may see its workspace.

    Raises:
        NotFoundError: no such agent, or not the user's to see.
    """
    row = executor.execute(_AGENT, {"agent_id": agent_id}).first()
    if row is None or not may_see(user, row.owner_id):
        raise NotFoundError(f'agent "{agent_id}" not found')
    return VisibleAgent(*row)
