"""Taking a pushed snapshot (coder.md 4.5): re-validate it, gate it by version, store it, mark chats.

The workspace is not trusted: every push is checked again here (counts, sizes, enums,
unique sources, the aggregate hash recomputed) and a bad one is refused whole. An
accepted push is one transaction: the snapshot row and its resources are upserted, rows no
longer present deleted, chats of the agent with no pin yet pinned to it ("hydrated"),
and pinned chats whose hash differs marked out of date. MCP resources are outside the
aggregate hash, so an MCP-only change never marks a chat.

One deliberate difference from Coder: a chat marked out of date whose pinned hash is
pushed again (the edit was reverted) is marked up to date, with an event; Coder keeps it
dirty until refreshed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import rows
from agentcontext.control.events import Event, agent_topic, chat_topic
from agentcontext.control.models import Agent, Chat, ChatResource, Snapshot, SnapshotResource
from agentcontext.errors import InvalidRequestError
from agentcontext.resource import Kind, LoadType, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash

MAX_RESOURCES = 1000
MAX_BODY_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MAX_SOURCE_BYTES = 1024
MAX_ERROR_BYTES = 4096
MAX_HASH_CHARS = 64
MAX_INT64 = 2**63 - 1
MAX_CHANGES = 512  # tool changes reported for one MCP server
MAX_DIFF_BYTES = 16 * 1024  # one tool's diff (the agent cuts them at 4,096 characters)
_HEX64 = re.compile(r"[0-9a-f]{64}")
ACTIVE_STATUSES = ("waiting", "running", "paused", "pending", "requires_action")


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """What the agent says about itself with each push and heartbeat."""

    url: str | None = None
    api_token: str | None = None
    run_id: str | None = None
    os: str | None = None
    home: str | None = None


@dataclass(frozen=True, slots=True)
class Push:
    version: int
    aggregate_hash: str
    initial: bool
    error: str | None
    work_dir: str
    project_root: str | None
    profile: str
    payload_bytes: int
    resources: tuple[Resource, ...]
    agent: AgentInfo


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    version: int
    stored_version: int | None
    events: tuple[Event, ...] = ()


def _bytes(value: str) -> int:
    return len(value.encode("utf-8"))


def _bounded(name: str, value: Any, limit: int, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidRequestError(f"{name} must be a string")
    if _bytes(value) > limit:
        raise InvalidRequestError(f"{name} is longer than {limit} bytes")
    return value


def _integer(name: str, value: Any, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError(f"{name} must be an integer")
    if not minimum <= value <= MAX_INT64:
        raise InvalidRequestError(f"{name} must be between {minimum} and {MAX_INT64}")
    return value


def _enum(name: str, value: Any, allowed: type[Kind] | type[Status] | type[Scope] | type[LoadType]) -> str:
    if not isinstance(value, str) or value not in {str(member) for member in allowed}:  # a list is not hashable
        raise InvalidRequestError(f"{name} {value!r} is not one of {', '.join(str(m) for m in allowed)}")
    return str(value)


def check_resource(index: int, raw: Any) -> Resource:
    """One pushed resource, checked as Coder's server does; the first problem found is raised."""
    where = f"resources[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidRequestError(f"{where} must be an object")
    if _bytes(json.dumps(raw, ensure_ascii=False, separators=(",", ":"))) > MAX_BODY_BYTES:
        raise InvalidRequestError(f"{where} is larger than {MAX_BODY_BYTES} bytes")
    kind = _enum(f"{where}.kind", raw.get("kind"), Kind)
    _enum(f"{where}.status", raw.get("status"), Status)
    _enum(f"{where}.scope", raw.get("scope"), Scope)
    path = _bounded(f"{where}.path", raw.get("path"), MAX_SOURCE_BYTES, optional=False)
    if not path:
        raise InvalidRequestError(f"{where}.path is empty")
    source = raw.get("id", f"{kind}:{path}")
    if source != f"{kind}:{path}":
        raise InvalidRequestError(f'{where}.id must be "{kind}:{path}"')
    _bounded(f"{where}.error", raw.get("error"), MAX_ERROR_BYTES)
    content_hash = _bounded(f"{where}.content_hash", raw.get("content_hash", ""), MAX_HASH_CHARS, optional=False)
    _integer(f"{where}.size_bytes", raw.get("size_bytes", 0))
    if raw.get("doc_order") is not None:  # the prompt sorts instruction files by it
        _integer(f"{where}.doc_order", raw.get("doc_order"))
    _bounded(f"{where}.content", raw.get("content"), MAX_BODY_BYTES)
    _bounded(f"{where}.name", raw.get("name"), MAX_ERROR_BYTES)
    # the declared source that contributed it is a path, bounded like Coder's source_path
    _bounded(f"{where}.source", raw.get("source"), MAX_SOURCE_BYTES)
    # a skill's description is only bounded by the resource's body cap (coder.md 4.5): lenient
    # validation keeps skills with long descriptions, and the prompt cuts them at 1,024
    _bounded(f"{where}.description", raw.get("description"), MAX_BODY_BYTES)
    warnings = raw.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) and _bytes(w) <= MAX_ERROR_BYTES for w in warnings):
        raise InvalidRequestError(f"{where}.warnings must be a list of strings of at most {MAX_ERROR_BYTES} bytes")
    if content_hash and not _HEX64.fullmatch(content_hash):  # the aggregate hash reads its 32 raw bytes
        raise InvalidRequestError(f"{where}.content_hash must be empty or 64 lowercase hex digits (a sha256)")
    _check_mcp_fields(where, raw)
    _check_load(where, raw.get("load"))
    try:
        return Resource.from_dict(dict(raw))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidRequestError(f"{where} is malformed: {exc}") from None


def _check_load(where: str, load: Any) -> None:
    """``load``: how the resource reaches the model; every field bounded and of its type."""
    if load is None:
        return
    if not isinstance(load, Mapping):
        raise InvalidRequestError(f"{where}.load must be an object")
    _enum(f"{where}.load.type", load.get("type"), LoadType)
    _bounded(f"{where}.load.importer", load.get("importer"), MAX_SOURCE_BYTES)
    _bounded(f"{where}.load.reason", load.get("reason"), MAX_ERROR_BYTES)
    for key in ("globs", "chain"):
        items = load.get(key, [])
        if not isinstance(items, list) or len(items) > 64:
            raise InvalidRequestError(f"{where}.load.{key} must be a list of at most 64 strings")
        for item in items:
            _bounded(f"{where}.load.{key}[]", item, MAX_SOURCE_BYTES, optional=False)


def _check_mcp_fields(where: str, raw: Mapping[str, Any]) -> None:
    """``servers`` and ``connect`` of an MCP config, ``tools`` of an MCP server: their shapes, named."""
    servers = raw.get("servers", [])
    if not isinstance(servers, list) or not all(isinstance(s, str) and _bytes(s) <= MAX_SOURCE_BYTES for s in servers):
        raise InvalidRequestError(f"{where}.servers must be a list of names of at most {MAX_SOURCE_BYTES} bytes")
    if not isinstance(raw.get("connect", True), bool):
        raise InvalidRequestError(f"{where}.connect must be true or false")
    tools = raw.get("tools", [])
    if not isinstance(tools, list):
        raise InvalidRequestError(f"{where}.tools must be a list")
    for number, tool in enumerate(tools):
        at = f"{where}.tools[{number}]"
        if not isinstance(tool, Mapping):
            raise InvalidRequestError(f"{at} must be an object")
        _bounded(f"{at}.name", tool.get("name"), MAX_SOURCE_BYTES, optional=False)
        _bounded(f"{at}.description", tool.get("description"), MAX_BODY_BYTES)
        if not isinstance(tool.get("input_schema") or {}, Mapping):
            raise InvalidRequestError(f"{at}.input_schema must be an object")
        if not isinstance(tool.get("annotations") or {}, Mapping):
            raise InvalidRequestError(f"{at}.annotations must be an object")
    if raw.get("approval") is not None:
        _check_approval(f"{where}.approval", raw["approval"])


def _check_approval(where: str, approval: Any) -> None:
    """An MCP server's approval: its state, what it runs, and what changed (each diff bounded)."""
    if not isinstance(approval, Mapping):
        raise InvalidRequestError(f"{where} must be an object")
    if approval.get("state") not in ("pending", "approved", "auto", "changed"):
        raise InvalidRequestError(f"{where}.state must be one of pending, approved, auto, changed")
    for key, limit in (("config_path", MAX_SOURCE_BYTES), ("command", MAX_ERROR_BYTES)):
        _bounded(f"{where}.{key}", approval.get(key, ""), limit, optional=False)
    for key in ("digest", "tool_set"):
        value = approval.get(key, "")
        if not isinstance(value, str) or (value and not _HEX64.fullmatch(value)):
            raise InvalidRequestError(f"{where}.{key} must be empty or 64 lowercase hex digits (a sha256)")
    changes = approval.get("changes", [])
    if not isinstance(changes, list) or len(changes) > MAX_CHANGES:
        raise InvalidRequestError(f"{where}.changes must be a list of at most {MAX_CHANGES} changes")
    for number, change in enumerate(changes):
        at = f"{where}.changes[{number}]"
        if not isinstance(change, Mapping) or change.get("change") not in ("added", "changed", "removed"):
            raise InvalidRequestError(f"{at} must be an object whose change is added, changed or removed")
        _bounded(f"{at}.tool", change.get("tool"), MAX_SOURCE_BYTES, optional=False)
        _bounded(f"{at}.diff", change.get("diff", ""), MAX_DIFF_BYTES, optional=False)


def check_push(raw: Any) -> Push:
    """A push body, re-validated whole.

    Raises:
        InvalidRequestError: the first rule it breaks, named (``resources[3].status ...``).
    """
    if not isinstance(raw, Mapping):
        raise InvalidRequestError("the push must be an object")
    version = _integer("version", raw.get("version"), minimum=1)
    pushed_hash = _bounded("aggregate_hash", raw.get("aggregate_hash"), MAX_HASH_CHARS, optional=False) or ""
    error = _bounded("error", raw.get("error"), MAX_ERROR_BYTES)
    items = raw.get("resources", [])
    if not isinstance(items, list):
        raise InvalidRequestError("resources must be a list")
    if len(items) > MAX_RESOURCES:
        raise InvalidRequestError(f"too many resources: {len(items)} (at most {MAX_RESOURCES})")
    total = 0
    resources: list[Resource] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        resource = check_resource(index, item)
        if resource.id in seen:
            raise InvalidRequestError(f'resources[{index}]: duplicate source "{resource.id}"')
        seen.add(resource.id)
        total += _bytes(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        if total > MAX_TOTAL_BYTES:
            raise InvalidRequestError(f"resources are larger than {MAX_TOTAL_BYTES} bytes in all")
        resources.append(resource)
    expected = aggregate_hash(resources)
    if pushed_hash != expected:
        raise InvalidRequestError(f"aggregate_hash {pushed_hash!r} does not match the resources ({expected})")
    return Push(
        version=version,
        aggregate_hash=expected,
        initial=raw.get("initial") is True,
        error=error,
        work_dir=_bounded("work_dir", raw.get("work_dir", ""), MAX_SOURCE_BYTES, optional=False) or "",
        project_root=_bounded("project_root", raw.get("project_root"), MAX_SOURCE_BYTES),
        profile=_bounded("profile", raw.get("profile", "default"), 32, optional=False) or "default",
        payload_bytes=_integer("payload_bytes", raw.get("payload_bytes", 0)),
        resources=tuple(resources),
        agent=check_agent_info(raw.get("agent")),
    )


def check_agent_info(raw: Any) -> AgentInfo:
    if raw is None:
        return AgentInfo()
    if not isinstance(raw, Mapping):
        raise InvalidRequestError("agent must be an object")
    url = _bounded("agent.url", raw.get("url"), 2048)
    if url is not None and not url.startswith(("http://", "https://")):
        raise InvalidRequestError("agent.url must be an http:// or https:// URL")
    return AgentInfo(
        url=url,
        api_token=_bounded("agent.api_token", raw.get("api_token"), 256),
        run_id=_bounded("agent.run_id", raw.get("run_id"), 64),
        os=_bounded("agent.os", raw.get("os"), 64),
        home=_bounded("agent.home", raw.get("home"), MAX_SOURCE_BYTES),
    )


def ingest(session: Session, agent_id: str, push: Push, *, now: dt.datetime) -> Outcome:
    """Store ``push`` for the agent unless the version gate refuses it (then nothing is written)."""
    stored = session.get(Snapshot, agent_id, with_for_update=True)
    events: list[Event] = list(touch_agent(session, agent_id, push.agent, now=now))
    if stored is not None and not push.initial and push.version <= stored.version:
        return Outcome(False, push.version, stored.version, tuple(events))
    if stored is None:
        stored = Snapshot(agent_id=agent_id)
        session.add(stored)
    stored.version = push.version
    stored.aggregate_hash = push.aggregate_hash
    stored.error = push.error
    stored.work_dir = push.work_dir
    stored.project_root = push.project_root
    stored.profile = push.profile
    stored.payload_bytes = push.payload_bytes
    stored.run_id = push.agent.run_id
    stored.received_at = now
    session.execute(sa.update(Agent).where(Agent.id == agent_id).values(work_dir=push.work_dir))
    session.flush()
    _replace_resources(session, agent_id, push.resources)
    events += hydrate(session, agent_id, push, now=now)
    events += mark_out_of_date(session, agent_id, push.aggregate_hash, now=now)
    return Outcome(True, push.version, push.version, tuple(events))


def touch_agent(session: Session, agent_id: str, info: AgentInfo, *, now: dt.datetime) -> list[Event]:
    """Record that the agent is alive (and where); an event when it was offline."""
    was_online = session.scalar(sa.select(Agent.online).where(Agent.id == agent_id))
    values: dict[str, Any] = {"online": True, "last_seen_at": now}
    for name in ("url", "api_token", "run_id", "os", "home"):
        value = getattr(info, name)
        if value is not None:
            values[name] = value
    session.execute(sa.update(Agent).where(Agent.id == agent_id).values(**values))
    if was_online:
        return []
    return [Event(agent_topic(agent_id), "agent_online", {"agent_id": agent_id, "at": now.isoformat()})]


def _replace_resources(session: Session, agent_id: str, resources: Sequence[Resource]) -> None:
    """Upsert changed rows, insert new ones, delete the ones no longer pushed.

    A row is unchanged only when every column is (scope, the server-computed content key, ...).
    """
    compared = [c for c in SnapshotResource.__table__.columns if c.name not in ("agent_id", "source")]
    existing = {
        row.source: {c.name: row._mapping[c.name] for c in compared}
        for row in session.execute(
            sa.select(SnapshotResource.source, *compared).where(SnapshotResource.agent_id == agent_id)
        )
    }
    new_rows = {row["source"]: row for row in rows.store(session, resources)}
    gone = existing.keys() - new_rows.keys()
    if gone:
        session.execute(
            sa.delete(SnapshotResource).where(SnapshotResource.agent_id == agent_id, SnapshotResource.source.in_(gone))
        )
    changed = [
        source for source, row in new_rows.items() if existing.get(source) != {c.name: row[c.name] for c in compared}
    ]
    if changed:
        session.execute(
            sa.delete(SnapshotResource).where(
                SnapshotResource.agent_id == agent_id, SnapshotResource.source.in_(changed)
            )
        )
        session.execute(sa.insert(SnapshotResource), [{**new_rows[s], "agent_id": agent_id} for s in changed])


def hydrate(session: Session, agent_id: str, push: Push, *, now: dt.datetime) -> list[Event]:
    """Pin the agent's chats that have no pin yet to this snapshot (they start up to date)."""
    chat_ids = list(
        session.scalars(
            sa.select(Chat.id).where(Chat.agent_id == agent_id, Chat.archived.is_(False), Chat.pinned_hash.is_(None))
        )
    )
    if not chat_ids:
        return []
    session.execute(
        sa.update(Chat)
        .where(Chat.id.in_(chat_ids))
        .values(
            pinned_hash=push.aggregate_hash,
            pinned_version=push.version,
            pinned_error=push.error,
            pinned_at=now,
            dirty_since=None,
            updated_at=now,
        )
    )
    copy_pin(session, agent_id, chat_ids)
    return [
        Event(chat_topic(c), "pinned", {"chat_id": c, "pinned_hash": push.aggregate_hash, "version": push.version})
        for c in chat_ids
    ]


def copy_pin(session: Session, agent_id: str, chat_ids: Sequence[str]) -> None:
    """Replace the chats' pinned rows with the agent's current snapshot rows (clear, then copy)."""
    session.execute(sa.delete(ChatResource).where(ChatResource.chat_id.in_(chat_ids)))
    columns = [c.name for c in SnapshotResource.__table__.columns if c.name != "agent_id"]
    chats = sa.select(Chat.id.label("chat_id")).where(Chat.id.in_(chat_ids)).subquery()
    select = (
        sa.select(chats.c.chat_id, *(SnapshotResource.__table__.c[name] for name in columns))
        .select_from(chats.join(SnapshotResource, sa.true()))  # every chat times every row, on purpose
        .where(SnapshotResource.agent_id == agent_id)
    )
    session.execute(sa.insert(ChatResource).from_select(["chat_id", *columns], select))


def mark_out_of_date(session: Session, agent_id: str, latest_hash: str, *, now: dt.datetime) -> list[Event]:
    """Coder's ``MarkChatsContextDirtyByAgent``, plus marking up to date what matches again."""
    active = sa.and_(Chat.agent_id == agent_id, Chat.archived.is_(False), Chat.status.in_(ACTIVE_STATUSES))
    dirty = list(
        session.execute(
            sa.update(Chat)
            .where(active, Chat.pinned_hash.is_not(None), Chat.pinned_hash != latest_hash, Chat.dirty_since.is_(None))
            .values(dirty_since=now, updated_at=now)
            .returning(Chat.id, Chat.pinned_hash)
        )
    )
    clean = list(
        session.scalars(
            sa.update(Chat)
            .where(active, Chat.pinned_hash == latest_hash, Chat.dirty_since.is_not(None))
            .values(dirty_since=None, updated_at=now)
            .returning(Chat.id)
        )
    )
    events = [
        Event(
            chat_topic(row.id),
            "out_of_date",
            {
                "chat_id": row.id,
                "pinned_hash": row.pinned_hash,
                "latest_hash": latest_hash,
                "dirty_since": now.isoformat(),
            },
        )
        for row in dirty
    ]
    events += [Event(chat_topic(c), "up_to_date", {"chat_id": c, "pinned_hash": latest_hash}) for c in clean]
    return events
