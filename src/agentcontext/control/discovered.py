"""Instruction files found on demand for the paths a chat touched, pinned beside its snapshot's.

``POST /api/v1/chats/{id}/touched`` names the paths a chat's tools read, wrote or ran in
(at most ``MAX_PATHS``). The control plane asks the chat's agent which instruction files
apply there (``discovered_answer``) and adds what it answers to the chat's pin, additively: each such row has
``origin`` "discovered" and ``caused_by``, the paths it was found for. Only instruction
files are ever pinned from an answer: the rows are built here as instruction files,
whatever the agent says, so no answer can add a skill or an MCP config to a pin. The agent
refuses paths outside its work dir and declared sources (and reads nothing there); those
come back as ``refused``, and a call where every path was refused is an error.

A snapshot row the prompt leaves out until the agent works there (``load`` ``on_demand`` or
``path_scoped``: a nested CLAUDE.md, a rule with ``paths:``) is added by becoming discovered when
an answer names it. A discovered file the chat already has is "already pinned"; one whose text changed since it
was pinned marks the chat out of date (its pin keeps the old text until a refresh). A
refresh asks the agent again for the recorded causes and makes the discovered rows what it
answers now; when the agent cannot be asked, the rows stay as they were and the refresh
says so. ``chats.discovered_at`` moves whenever the discovered rows do: a turn's cache key
carries it (``turns``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from agentcontext.control import contents, rows
from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.discovered_answer import MAX_CAUSES, MAX_DISCOVERED, MAX_DISCOVERED_BYTES, Answer, Found
from agentcontext.control.events import Event, chat_topic
from agentcontext.control.ingest import lock_agent
from agentcontext.control.prompt import DiscoveredFile
from agentcontext.control.visibility import OWNED_CHAT
from agentcontext.control.wire import AddedFile, PathReason, TouchedResponse
from agentcontext.errors import ConflictError, NotFoundError
from agentcontext.resource import LoadType

# --- the pin ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """The chat a touched call pins to, and its agent's address columns."""

    chat_id: str
    agent_id: str
    url: str | None
    sealed_secret: str | None


_TARGET = (
    sa.select(t.chats.c.id, t.chats.c.agent_id, t.chats.c.pinned_hash, t.agents.c.url, t.agents.c.sealed_secret)
    .select_from(t.chats.outerjoin(t.agents, t.agents.c.id == t.chats.c.agent_id))
    .where(OWNED_CHAT)
)


def target(executor: Executor, user_id: str, chat_id: str) -> Target:
    """Raises: NotFoundError (no such chat of this user), ConflictError (not bound and pinned yet)."""
    row = executor.execute(_TARGET, {"chat_id": chat_id, "user_id": user_id}).first()
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    if row.agent_id is None or row.pinned_hash is None:
        raise ConflictError("the chat is not pinned to a workspace snapshot yet: nothing to add discovered files to")
    return Target(row.id, row.agent_id, row.url, row.sealed_secret)


@dataclass(frozen=True, slots=True)
class Added:
    path: str
    bytes: int
    caused_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Touched:
    """What a touched call did to the chat's pin."""

    chat_id: str
    added: tuple[Added, ...]
    already_pinned: tuple[str, ...]
    changed: tuple[str, ...]  # pinned files whose text changed since: the chat is out of date
    excluded: tuple[tuple[str, str], ...]
    refused: tuple[tuple[str, str], ...]
    dirty: bool

    def to_wire(self) -> TouchedResponse:
        return TouchedResponse(
            chat_id=self.chat_id,
            added=[AddedFile(path=a.path, bytes=a.bytes, caused_by=list(a.caused_by)) for a in self.added],
            bytes_added=sum(a.bytes for a in self.added),
            already_pinned=list(self.already_pinned),
            changed=list(self.changed),
            excluded=[PathReason(path=p, reason=r) for p, r in self.excluded],
            refused=[PathReason(path=p, reason=r) for p, r in self.refused],
            dirty=self.dirty,
        )


_PINNED = sa.select(
    t.chat_resources.c.source,
    t.chat_resources.c.origin,
    t.chat_resources.c.content_hash,
    t.chat_resources.c.status,
    t.chat_resources.c.size_bytes,
    t.chat_resources.c.caused_by,
    t.chat_resources.c.meta,
).where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"))
_LOCK_CHAT = sa.select(t.chats.c.dirty_since).where(OWNED_CHAT).with_for_update()
INSERT = sa.insert(t.chat_resources)
# a snapshot row the prompt leaves out until the chat works there (on demand, path-scoped), found for the
# paths touched: it becomes discovered, so the prompt's <discovered-context> carries it from now on
_ACTIVATE = (
    sa.update(t.chat_resources)
    .where(t.chat_resources.c.chat_id == sa.bindparam("for_chat"), t.chat_resources.c.source == sa.bindparam("row"))
    .values(origin=rows.DISCOVERED, caused_by=sa.bindparam("causes", type_=t.chat_resources.c.caused_by.type))
)
_SET_CAUSES = (
    sa.update(t.chat_resources)
    .where(t.chat_resources.c.chat_id == sa.bindparam("for_chat"), t.chat_resources.c.source == sa.bindparam("row"))
    .values(caused_by=sa.bindparam("causes", type_=t.chat_resources.c.caused_by.type))
)
MOVED = sa.update(t.chats).where(t.chats.c.id == sa.bindparam("for_chat"))
_SET_DISCOVERED = MOVED.values(discovered_at=sa.bindparam("now"), updated_at=sa.bindparam("now"))
_SET_DIRTY = MOVED.values(
    dirty_since=sa.func.coalesce(t.chats.c.dirty_since, sa.bindparam("now")), updated_at=sa.bindparam("now")
)


def startup(meta: Mapping[str, Any] | None) -> bool:
    """Whether a pinned row's resource is in the prompt from the first turn (no ``load``: the chain's files)."""
    load = (meta or {}).get("load")
    return not isinstance(load, Mapping) or LoadType(load["type"]).at_startup


def _causes(old: Sequence[str], new: Iterable[str]) -> list[str]:
    joined = list(old)
    joined += [path for path in new if path not in joined]
    return joined[:MAX_CAUSES]


def _full(count: int, size: int, more: int) -> str | None:
    """Why a chat holding ``count`` discovered files of ``size`` bytes takes no other of ``more`` bytes."""
    if count >= MAX_DISCOVERED:
        return f"the chat holds {MAX_DISCOVERED} discovered files already"
    if size + more > MAX_DISCOVERED_BYTES:
        return f"the chat's discovered files would pass {MAX_DISCOVERED_BYTES} bytes"
    return None


def new_row(chat_id: str, found: Found, texts: dict[str, str]) -> dict[str, Any]:
    row = rows.to_row(found.resource, rows.keyed(found.resource, texts))
    return {**row, "chat_id": chat_id, "origin": rows.DISCOVERED, "caused_by": list(found.paths[:MAX_CAUSES])}


def pin(
    executor: Executor, user_id: str, chat_id: str, agent_id: str, answer: Answer, *, now: dt.datetime
) -> tuple[Touched, list[Event]]:
    """Add the answer's files the chat has not pinned; mark it out of date when a discovered one changed.

    The chat's agent is held first (``lock_agent``), as a refresh holds it: a push locks its agent, then the texts
    it takes up, then the agent's chats; a pin that locked the chat first and then waited on a text the push held
    would close the circle (a deadlock, a second lost and the work done again).

    Raises: NotFoundError (the chat is gone).
    """
    lock_agent(executor, agent_id)
    locked = executor.execute(_LOCK_CHAT, {"chat_id": chat_id, "user_id": user_id}).first()
    if locked is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    dirty_since = locked.dirty_since
    pinned = {row.source: row for row in executor.execute(_PINNED, {"chat_id": chat_id})}
    held = [row.size_bytes for row in pinned.values() if row.origin == rows.DISCOVERED]
    count, size = len(held), sum(held)
    texts: dict[str, str] = {}
    new: list[dict[str, Any]] = []
    causes: list[dict[str, Any]] = []
    added: list[Added] = []
    already: list[str] = []
    activated: list[dict[str, Any]] = []
    changed: list[str] = []
    excluded = list(answer.excluded)
    for found in answer.files:
        resource = found.resource
        row = pinned.get(resource.id)
        if row is None:
            full = _full(count, size, resource.size_bytes)
            if full:
                excluded.append((resource.path, full))
                continue
            count, size = count + 1, size + resource.size_bytes
            new.append(new_row(chat_id, found, texts))
            added.append(Added(resource.path, resource.payload_bytes, found.paths[:MAX_CAUSES]))
            continue
        if row.origin != rows.DISCOVERED and not startup(row.meta):
            activated.append({"for_chat": chat_id, "row": row.source, "causes": list(found.paths[:MAX_CAUSES])})
            added.append(Added(resource.path, resource.payload_bytes, found.paths[:MAX_CAUSES]))
            continue
        already.append(resource.path)
        if row.origin != rows.DISCOVERED:
            continue
        if (row.content_hash, row.status) != (resource.content_hash, str(resource.status)):
            changed.append(resource.path)
        joined = _causes(row.caused_by or (), found.paths)
        if joined != list(row.caused_by or ()):
            causes.append({"for_chat": chat_id, "row": row.source, "causes": joined})
    events: list[Event] = []
    if _add(executor, chat_id, new, activated, texts, now=now):
        events.append(Event(chat_topic(chat_id), "discovered", {"chat_id": chat_id, "added": [a.path for a in added]}))
    if causes:
        executor.execute(_SET_CAUSES, causes)
    events += _mark_changed(executor, chat_id, changed, dirty_since, now=now)
    dirty = dirty_since is not None or bool(changed)
    done = Touched(chat_id, tuple(added), tuple(already), tuple(changed), tuple(excluded), answer.refused, dirty)
    return done, events


def _add(
    executor: Executor,
    chat_id: str,
    new: list[dict[str, Any]],
    activated: list[dict[str, Any]],
    texts: dict[str, str],
    *,
    now: dt.datetime,
) -> bool:
    """Write the new rows and activate the snapshot's on-demand ones; whether anything was added."""
    if new:
        wanted = {row["content_key"] for row in new}
        contents.put_keyed(executor, {text: key for text, key in texts.items() if key in wanted})
        executor.execute(INSERT, new)
    if activated:
        executor.execute(_ACTIVATE, activated)
    if not (new or activated):
        return False
    executor.execute(_SET_DISCOVERED, {"for_chat": chat_id, "now": now})
    return True


def _mark_changed(
    executor: Executor, chat_id: str, changed: list[str], dirty_since: dt.datetime | None, *, now: dt.datetime
) -> list[Event]:
    if not changed:
        return []
    executor.execute(_SET_DIRTY, {"for_chat": chat_id, "now": now})
    if dirty_since is not None:
        return []
    data = {"chat_id": chat_id, "changed": changed, "dirty_since": now.isoformat()}
    return [Event(chat_topic(chat_id), "out_of_date", data)]


# --- the prompt's read --------------------------------------------------------------------------------

_WITH_TEXTS = (
    sa.select(*(t.chat_resources.c[name] for name in rows.PIN_COLUMNS), t.contents.c.text)
    .select_from(t.chat_resources.outerjoin(t.contents, t.contents.c.hash == t.chat_resources.c.content_key))
    .where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.origin == rows.DISCOVERED)
    .order_by(t.chat_resources.c.source)
)


def resources(executor: Executor, chat_id: str) -> list[DiscoveredFile]:
    """The chat's discovered files with their texts, for its prompt and its MCP resources."""
    return [
        DiscoveredFile(rows.to_resource(row, row.text), tuple(row.caused_by or ()))
        for row in executor.execute(_WITH_TEXTS, {"chat_id": chat_id})
    ]
