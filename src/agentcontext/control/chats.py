"""Chats: created bound to a workspace agent and pinned to its snapshot, marked out of date, refreshed.

A chat is written once, in its final create-time state (seed 001): status, binding and
pin together. The binding (workspace, agent) is persisted and reused; when the bound agent
is gone (deleted) or was never found, the next use re-resolves it by the chat-suffix rule
and re-pins. Child chats inherit the parent's binding and pin.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import rows
from agentcontext.control.agentselect import Candidate, find_chat_agent
from agentcontext.control.events import Event, chat_topic
from agentcontext.control.identity import UserPrincipal, workspace_by_name_or_id
from agentcontext.control.ingest import copy_pin
from agentcontext.control.models import Agent, Chat, ChatResource, Snapshot
from agentcontext.control.skill_index import usable_skill_name
from agentcontext.errors import InvalidRequestError, NotFoundError
from agentcontext.resource import Kind, Resource, Status
from agentcontext.sanitize import sanitize
from agentcontext.snapshot import Diff, diff

STATUSES = ("pending", "waiting", "running", "paused", "requires_action", "completed", "error")
DEFAULT_STATUS = "pending"
MAX_TITLE = 256


def owned_chat(session: Session, user: UserPrincipal, chat_id: str, *, lock: bool = False) -> Chat:
    """The user's chat; another user's chat is "not found" too, so ids leak nothing.

    Raises:
        NotFoundError: no such chat of this user.
    """
    query = sa.select(Chat).where(Chat.id == chat_id, Chat.owner_id == user.user_id)
    chat = session.scalar(query.with_for_update() if lock else query)
    if chat is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    return chat


def usable_workspace(session: Session, user: UserPrincipal, key: str) -> str:
    """The id of a workspace the user may open chats in (unowned, or theirs).

    Raises:
        NotFoundError: no such workspace, or not theirs.
    """
    workspace = workspace_by_name_or_id(session, key)
    if workspace.owner_id not in (None, user.user_id) and not user.is_admin:
        raise NotFoundError(f'workspace "{key}" not found')
    return workspace.id


def select_agent(session: Session, workspace_id: str, suffix: str) -> str:
    """The chat agent of the workspace (coder.md 9).

    Raises:
        NotFoundError: no agents. ConflictError: more than one matches the suffix.
    """
    candidates = [
        Candidate(row.id, row.name, row.display_order, row.parent_id)
        for row in session.execute(
            sa.select(Agent.id, Agent.name, Agent.display_order, Agent.parent_id).where(
                Agent.workspace_id == workspace_id
            )
        )
    ]
    return find_chat_agent(candidates, suffix).id


def pinnable_snapshot(session: Session, agent_id: str) -> Snapshot | None:
    """The agent's snapshot, to pin a chat to, share-locked (a no-op on SQLite, which has one writer).

    On PostgreSQL (REPEATABLE READ) a push that committed after this transaction began makes
    the lock fail with a serialization failure, and the write is retried on the new snapshot;
    a push that comes after waits for the lock, and the control plane re-checks the agent's
    chats once it has committed (``ControlPlane.push``). Pins never share a lock among
    themselves, so chats are created and refreshed side by side.
    """
    return session.scalar(sa.select(Snapshot).where(Snapshot.agent_id == agent_id).with_for_update(read=True))


def _pin_values(snapshot: Snapshot | None, now: dt.datetime) -> dict[str, Any]:
    if snapshot is None:
        return {"pinned_hash": None, "pinned_version": None, "pinned_error": None, "pinned_at": None}
    return {
        "pinned_hash": snapshot.aggregate_hash,
        "pinned_version": snapshot.version,
        "pinned_error": snapshot.error,
        "pinned_at": now,
    }


@dataclass(frozen=True, slots=True)
class NewChat:
    workspace: str | None = None
    status: str = DEFAULT_STATUS
    parent_id: str | None = None
    title: str = ""
    plan_mode: bool = False


def check_new_chat(new: NewChat) -> None:
    if new.status not in STATUSES:
        raise InvalidRequestError(f"status {new.status!r} is not one of {', '.join(STATUSES)}")
    if len(new.title) > MAX_TITLE:
        raise InvalidRequestError(f"title is longer than {MAX_TITLE} characters")
    if new.parent_id is None and not new.workspace:
        raise InvalidRequestError("workspace is required (a name or an id), unless parent_id is given")


def create(session: Session, user: UserPrincipal, new: NewChat, *, suffix: str, now: dt.datetime) -> Chat:
    """A chat, bound and pinned, written once.

    Raises:
        InvalidRequestError, NotFoundError (workspace or parent), ConflictError (agent selection).
    """
    check_new_chat(new)
    values: dict[str, Any] = {
        "owner_id": user.user_id,
        "status": new.status,
        "title": new.title,
        "plan_mode": new.plan_mode,
        "created_at": now,
        "updated_at": now,
    }
    if new.parent_id is not None:
        parent = owned_chat(session, user, new.parent_id)
        if new.workspace and usable_workspace(session, user, new.workspace) != parent.workspace_id:
            raise InvalidRequestError("a child chat stays in its parent's workspace")
        values |= {
            "parent_id": parent.id,
            "workspace_id": parent.workspace_id,
            "agent_id": parent.agent_id,
            "pinned_hash": parent.pinned_hash,
            "pinned_version": parent.pinned_version,
            "pinned_error": parent.pinned_error,
            "pinned_at": parent.pinned_at,
            "dirty_since": parent.dirty_since,
        }
        chat = Chat(**values)
        session.add(chat)
        session.flush()
        _copy_chat_pin(session, parent.id, chat.id)
        return chat
    assert new.workspace is not None
    workspace_id = usable_workspace(session, user, new.workspace)
    agent_id = _try_select(session, workspace_id, suffix)
    snapshot = pinnable_snapshot(session, agent_id) if agent_id else None
    chat = Chat(**values, workspace_id=workspace_id, agent_id=agent_id, **_pin_values(snapshot, now))
    session.add(chat)
    session.flush()
    if snapshot is not None and agent_id is not None:
        copy_pin(session, agent_id, [chat.id])
    return chat


def _try_select(session: Session, workspace_id: str, suffix: str) -> str | None:
    """The chat agent, or None while the workspace has none (the chat binds on first use)."""
    try:
        return select_agent(session, workspace_id, suffix)
    except NotFoundError:
        return None


def _copy_chat_pin(session: Session, from_chat: str, to_chat: str) -> None:
    columns = [c.name for c in ChatResource.__table__.columns if c.name != "chat_id"]
    select = sa.select(sa.literal(to_chat), *(ChatResource.__table__.c[n] for n in columns)).where(
        ChatResource.chat_id == from_chat
    )
    session.execute(sa.insert(ChatResource).from_select(["chat_id", *columns], select))


def ensure_bound(session: Session, chat: Chat, *, suffix: str, now: dt.datetime) -> list[Event]:
    """Repair a missing binding (the agent was deleted, or none existed) and pin a chat that has no pin.

    Raises:
        ConflictError: the workspace has more than one chat agent.
    """
    events: list[Event] = []
    if chat.agent_id is None:
        agent_id = _try_select(session, chat.workspace_id, suffix)
        if agent_id is None:
            return events  # nothing to bind to: the old pin (if any) keeps serving
        chat.agent_id = agent_id
        # a new agent: its snapshot, not the old pin; with none yet, no pin at all (its first push pins)
        for name, value in _pin_values(None, now).items():
            setattr(chat, name, value)
        chat.dirty_since = None
        chat.updated_at = now
        session.flush()
        session.execute(sa.delete(ChatResource).where(ChatResource.chat_id == chat.id))
    if chat.pinned_hash is None:
        snapshot = pinnable_snapshot(session, chat.agent_id)
        if snapshot is not None:
            for name, value in _pin_values(snapshot, now).items():
                setattr(chat, name, value)
            chat.dirty_since = None
            chat.updated_at = now
            session.flush()
            copy_pin(session, chat.agent_id, [chat.id])
            events.append(
                Event(chat_topic(chat.id), "pinned", {"chat_id": chat.id, "pinned_hash": snapshot.aggregate_hash})
            )
    session.flush()
    return events


@dataclass(frozen=True, slots=True)
class Refreshed:
    chat: Chat
    diff: Diff
    events: tuple[Event, ...]


def refresh(session: Session, user: UserPrincipal, chat_id: str, *, suffix: str, now: dt.datetime) -> Refreshed:
    """Re-pin the chat to its agent's latest snapshot, clear the out-of-date mark, say what changed.

    Raises:
        NotFoundError: no such chat of this user. ConflictError: agent selection.
    """
    chat = owned_chat(session, user, chat_id, lock=True)
    before = rows.chat_resources(session, chat.id, with_content=False)
    events = ensure_bound(session, chat, suffix=suffix, now=now)
    snapshot = pinnable_snapshot(session, chat.agent_id) if chat.agent_id else None
    for name, value in _pin_values(snapshot, now).items():
        setattr(chat, name, value)
    chat.dirty_since = None
    chat.updated_at = now
    session.flush()
    if snapshot is not None and chat.agent_id is not None:
        copy_pin(session, chat.agent_id, [chat.id])
    else:
        session.execute(sa.delete(ChatResource).where(ChatResource.chat_id == chat.id))
    after = rows.chat_resources(session, chat.id, with_content=False)
    changes = diff(before, after)
    events = [e for e in events if e.kind != "pinned"]
    events.append(
        Event(
            chat_topic(chat.id),
            "refreshed",
            {"chat_id": chat.id, "pinned_hash": chat.pinned_hash, "version": chat.pinned_version, **changes.to_dict()},
        )
    )
    return Refreshed(chat, changes, tuple(events))


def update(
    session: Session,
    user: UserPrincipal,
    chat_id: str,
    *,
    status: str | None,
    archived: bool | None,
    title: str | None,
    now: dt.datetime,
) -> Chat:
    """Raises: NotFoundError, InvalidRequestError."""
    chat = owned_chat(session, user, chat_id, lock=True)
    if status is not None:
        if status not in STATUSES:
            raise InvalidRequestError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        chat.status = status
    if archived is not None:
        chat.archived = archived
    if title is not None:
        if len(title) > MAX_TITLE:
            raise InvalidRequestError(f"title is longer than {MAX_TITLE} characters")
        chat.title = title
    chat.updated_at = now
    return chat


def list_chats(session: Session, user: UserPrincipal, *, limit: int = 100, archived: bool = False) -> Sequence[Chat]:
    return session.scalars(
        sa.select(Chat)
        .where(Chat.owner_id == user.user_id, Chat.archived.is_(archived))
        .order_by(Chat.created_at.desc(), Chat.id)
        .limit(limit)
    ).all()


# --- the summary the API shows ---------------------------------------------------------


def listed(resource: Resource) -> bool:
    """Coder's pinned listing leaves out ok-but-empty instruction files and skills without a usable name.

    Empty as the prompt sees it: nothing left once sanitised (invisible characters, HTML comments).
    """
    if resource.status is Status.OK and resource.kind is Kind.INSTRUCTION_FILE and not sanitize(resource.content or ""):
        return False
    return not (resource.kind is Kind.SKILL and resource.status is Status.OK and not usable_skill_name(resource.name))


def resource_summary(resource: Resource) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": resource.path,
        "kind": str(resource.kind),
        "status": str(resource.status),
        "size_bytes": resource.size_bytes,
        "error": resource.error,
    }
    if resource.kind is Kind.SKILL:
        data["skill_name"] = resource.name
        data["skill_description"] = resource.description
    if resource.kind is Kind.MCP_SERVER:
        data["tools"] = [{"name": t.name, "description": t.description} for t in resource.tools]
    return data


def _by_source(resource: Resource) -> tuple[str, str]:
    """Coder lists by source ascending: its source is the file's path (ours is ``kind:path``)."""
    return (resource.path, str(resource.kind))


def summary(session: Session, chat: Chat, *, error: str | None = None) -> dict[str, Any]:
    """The chat as the API returns it, with its context summary."""
    resources = rows.chat_resources(session, chat.id)
    latest = (
        session.scalar(sa.select(Snapshot.aggregate_hash).where(Snapshot.agent_id == chat.agent_id))
        if chat.agent_id
        else None
    )
    return {
        "id": chat.id,
        "status": chat.status,
        "title": chat.title,
        "workspace_id": chat.workspace_id,
        "agent_id": chat.agent_id,
        "parent_id": chat.parent_id,
        "plan_mode": chat.plan_mode,
        "archived": chat.archived,
        "created_at": chat.created_at.isoformat(),
        "updated_at": chat.updated_at.isoformat(),
        "context": {
            "pinned_hash": chat.pinned_hash,
            "pinned_version": chat.pinned_version,
            "pinned_at": chat.pinned_at.isoformat() if chat.pinned_at else None,
            "latest_hash": latest,
            "dirty": chat.dirty_since is not None,
            "dirty_since": chat.dirty_since.isoformat() if chat.dirty_since else None,
            "error": error or chat.pinned_error,
            "resources": [resource_summary(r) for r in sorted(resources, key=_by_source) if listed(r)],
        },
    }
