"""Instruction files found on demand for the paths a chat touched, pinned beside its snapshot's.

``POST /api/v1/chats/{id}/touched`` names the paths a chat's tools read, wrote or ran in
(at most ``MAX_PATHS``). The control plane asks the chat's agent which instruction files
apply there (``/api/v0/context/instructions``, ``AGENT_BATCH`` paths a request, as the
agent requires) and adds what it answers to the chat's pin, additively: each such row has
``origin`` "discovered" and ``caused_by``, the paths it was found for. Only instruction
files are ever pinned from an answer: the rows are built here as instruction files,
whatever the agent says, so no answer can add a skill or an MCP config to a pin. The agent
refuses paths outside its work dir and declared sources (and reads nothing there); those
come back as ``refused``, and a call where every path was refused is an error.

A discovered file the chat already has is "already pinned"; one whose text changed since it
was pinned marks the chat out of date (its pin keeps the old text until a refresh). A
refresh asks the agent again for the recorded causes and makes the discovered rows what it
answers now; when the agent cannot be asked, the rows stay as they were and the refresh
says so. ``chats.discovered_at`` moves whenever the discovered rows do: a turn's cache key
carries it (``turns``).
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentcontext.control import contents, rows
from agentcontext.control import tables as t
from agentcontext.control.agent_link import AgentAddress, AgentLink, AgentReplyError
from agentcontext.control.contents import Executor
from agentcontext.control.events import Event, chat_topic
from agentcontext.control.ingest import ACTIVE_STATUSES
from agentcontext.control.prompt import DiscoveredFile
from agentcontext.errors import ConflictError, InvalidRequestError, NotFoundError, UnavailableError
from agentcontext.resource import Kind, Load, Resource, Scope, Status

MAX_PATHS = 256  # paths one touched call may name
MAX_PATH_CHARS = 4096
AGENT_BATCH = 32  # the agent's ``ondemand.max_paths``
MAX_CAUSES = 64  # paths kept as the causes of one discovered row (the first ones)
MAX_DISCOVERED = 512  # discovered rows one chat may hold


def check_paths(paths: Sequence[str]) -> list[str]:
    """The paths to ask about, each once, in order.

    Raises:
        InvalidRequestError: none, too many, empty, too long, a NUL, or a ``..`` segment (named).
    """
    if not paths:
        raise InvalidRequestError("paths is empty: name at least one path the chat touched")
    if len(paths) > MAX_PATHS:
        raise InvalidRequestError(f"{len(paths)} paths in one call: at most {MAX_PATHS}")
    for path in paths:
        if not path or len(path) > MAX_PATH_CHARS or "\x00" in path:
            raise InvalidRequestError(f"a path is empty, longer than {MAX_PATH_CHARS} characters, or holds a NUL")
        if ".." in path.replace("\\", "/").split("/"):
            raise InvalidRequestError(f'path "{path[:200]}" has a ".." segment: name paths inside the work dir')
    return list(dict.fromkeys(paths))


# --- the agent's answer (a hostile peer's JSON: checked, bounded) ------------------------------------


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    scope: Scope
    status: Status
    load: dict[str, Any] | None = None
    size_bytes: int = Field(default=0, ge=0)
    content_hash: str = Field(default="", max_length=64)
    warnings: list[str] = Field(default_factory=list, max_length=64)
    for_: list[str] = Field(default_factory=list, alias="for", max_length=AGENT_BATCH)
    reason: str = Field(default="", max_length=4096)
    content: str | None = None


class _Refusal(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(max_length=MAX_PATH_CHARS + 16)
    reason: str = Field(max_length=4096)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    paths: list[str] = Field(default_factory=list, max_length=AGENT_BATCH)
    files: list[_File] = Field(default_factory=list, max_length=1024)
    excluded: list[_File] = Field(default_factory=list, max_length=1024)
    refused: list[_Refusal] = Field(default_factory=list, max_length=AGENT_BATCH)


@dataclass(frozen=True, slots=True)
class Found:
    """An instruction file the agent says applies, and the asked paths it applies to."""

    resource: Resource
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """What the agent answered for some paths: the files that load, those past its cap, the paths refused."""

    asked: tuple[str, ...]
    files: tuple[Found, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()  # (path, reason)
    refused: tuple[tuple[str, str], ...] = ()  # (path, reason)


def _found(file: _File) -> Found | None:
    """An instruction file, always (never a skill or an MCP config); None unless it is absolute and carries text."""
    if not posixpath.isabs(file.path) or not file.status.carries_content or file.content is None:
        return None
    try:
        load = Load.from_dict(file.load) if file.load else None
    except (KeyError, ValueError, TypeError):
        load = None
    resource = Resource(
        Kind.INSTRUCTION_FILE, file.path, file.scope, file.status, file.size_bytes, file.content_hash,
        file.content, None, tuple(w[:1024] for w in file.warnings), load=load,
    )  # fmt: skip
    return Found(resource, tuple(file.for_))


def parse(body: dict[str, Any], asked: Sequence[str]) -> Answer:
    """Raises: UnavailableError (the agent's answer is not what its API documents)."""
    try:
        answer = _Answer.model_validate(body)
    except ValidationError as exc:
        raise UnavailableError(f"the workspace agent's answer is malformed: {exc.errors()[0]['msg']}") from None
    files = tuple(found for found in map(_found, answer.files) if found is not None)
    excluded = tuple((f.path, f.reason) for f in answer.excluded)
    refused = tuple((r.path, r.reason) for r in answer.refused)
    return Answer(tuple(asked), files, excluded, refused)


def merge(answers: Iterable[Answer]) -> Answer:
    """One answer for several requests: each file once (in first-seen order), its paths joined."""
    asked: list[str] = []
    files: dict[str, tuple[Resource, list[str]]] = {}
    excluded: dict[str, str] = {}
    refused: list[tuple[str, str]] = []
    for answer in answers:
        asked += answer.asked
        for found in answer.files:
            _, paths = files.setdefault(found.resource.path, (found.resource, []))
            paths += [p for p in found.paths if p not in paths]
        for path, reason in answer.excluded:
            excluded.setdefault(path, reason)
        refused += answer.refused
    merged = tuple(Found(resource, tuple(paths)) for resource, paths in files.values())
    return Answer(tuple(asked), merged, tuple(excluded.items()), tuple(refused))


async def ask(link: AgentLink, address: AgentAddress | None, paths: Sequence[str]) -> Answer:
    """The agent's answer for ``paths``, in requests of ``AGENT_BATCH`` paths sent together.

    Raises:
        UnavailableError: the agent cannot be reached, or gave up. InvalidRequestError: it refused the request.
    """
    if address is None:
        raise UnavailableError("the chat's workspace agent has not said where it can be reached")
    batches = [list(paths[i : i + AGENT_BATCH]) for i in range(0, len(paths), AGENT_BATCH)]
    answers: list[Answer | None] = [None] * len(batches)

    async def one(index: int) -> None:
        try:
            body = await link.instructions(address, batches[index])
        except AgentReplyError as exc:
            if exc.status == 400:
                raise InvalidRequestError(f"the workspace agent refused the paths: {exc.detail or exc}") from None
            raise UnavailableError(f"the workspace agent could not answer: {exc}") from None
        answers[index] = parse(body, batches[index])

    if len(batches) == 1:
        await one(0)
    else:
        try:
            async with anyio.create_task_group() as group:
                for index in range(len(batches)):
                    group.start_soon(one, index)
        except ExceptionGroup as failed:  # the first failure says it (the others were cancelled with it)
            raise failed.exceptions[0] from None
    return merge(answer for answer in answers if answer is not None)


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
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "chat_id": self.chat_id,
            "added": [{"path": a.path, "bytes": a.bytes, "caused_by": list(a.caused_by)} for a in self.added],
            "bytes_added": sum(a.bytes for a in self.added),
            "already_pinned": list(self.already_pinned),
            "changed": list(self.changed),
            "excluded": [{"path": p, "reason": r} for p, r in self.excluded],
            "refused": [{"path": p, "reason": r} for p, r in self.refused],
            "dirty": self.dirty,
        }


_PINNED = sa.select(
    t.chat_resources.c.source,
    t.chat_resources.c.origin,
    t.chat_resources.c.content_hash,
    t.chat_resources.c.status,
    t.chat_resources.c.caused_by,
).where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"))
_LOCK_CHAT = (
    sa.select(t.chats.c.dirty_since)
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
    .with_for_update()
)
_INSERT = sa.insert(t.chat_resources)
_SET_CAUSES = (
    sa.update(t.chat_resources)
    .where(t.chat_resources.c.chat_id == sa.bindparam("for_chat"), t.chat_resources.c.source == sa.bindparam("row"))
    .values(caused_by=sa.bindparam("causes", type_=t.chat_resources.c.caused_by.type))
)
_MOVED = sa.update(t.chats).where(t.chats.c.id == sa.bindparam("for_chat"))
_SET_DISCOVERED = _MOVED.values(discovered_at=sa.bindparam("now"), updated_at=sa.bindparam("now"))
_SET_DIRTY = _MOVED.values(
    dirty_since=sa.func.coalesce(t.chats.c.dirty_since, sa.bindparam("now")), updated_at=sa.bindparam("now")
)


def _causes(old: Sequence[str], new: Iterable[str]) -> list[str]:
    joined = list(old)
    joined += [path for path in new if path not in joined]
    return joined[:MAX_CAUSES]


def _new_row(chat_id: str, found: Found, texts: dict[str, str]) -> dict[str, Any]:
    row = rows.to_row(found.resource, rows.keyed(found.resource, texts))
    return {**row, "chat_id": chat_id, "origin": rows.DISCOVERED, "caused_by": list(found.paths[:MAX_CAUSES])}


def pin(
    executor: Executor, user_id: str, chat_id: str, answer: Answer, *, now: dt.datetime
) -> tuple[Touched, list[Event]]:
    """Add the answer's files the chat has not pinned; mark it out of date when a discovered one changed.

    Raises: NotFoundError (the chat is gone).
    """
    locked = executor.execute(_LOCK_CHAT, {"chat_id": chat_id, "user_id": user_id}).first()
    if locked is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    dirty_since = locked.dirty_since
    pinned = {row.source: row for row in executor.execute(_PINNED, {"chat_id": chat_id})}
    discovered = sum(1 for row in pinned.values() if row.origin == rows.DISCOVERED)
    texts: dict[str, str] = {}
    new: list[dict[str, Any]] = []
    causes: list[dict[str, Any]] = []
    added: list[Added] = []
    already: list[str] = []
    changed: list[str] = []
    excluded = list(answer.excluded)
    for found in answer.files:
        resource = found.resource
        row = pinned.get(resource.id)
        if row is None:
            if discovered + len(new) >= MAX_DISCOVERED:
                excluded.append((resource.path, f"the chat holds {MAX_DISCOVERED} discovered files already"))
                continue
            new.append(_new_row(chat_id, found, texts))
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
    if new:
        wanted = {row["content_key"] for row in new}
        contents.put_keyed(executor, {text: key for text, key in texts.items() if key in wanted})
        executor.execute(_INSERT, new)
        executor.execute(_SET_DISCOVERED, {"for_chat": chat_id, "now": now})
        data = {"chat_id": chat_id, "added": [a.path for a in added]}
        events.append(Event(chat_topic(chat_id), "discovered", data))
    if causes:
        executor.execute(_SET_CAUSES, causes)
    if changed:
        executor.execute(_SET_DIRTY, {"for_chat": chat_id, "now": now})
        if dirty_since is None:
            data = {"chat_id": chat_id, "changed": changed, "dirty_since": now.isoformat()}
            events.append(Event(chat_topic(chat_id), "out_of_date", data))
    dirty = dirty_since is not None or bool(changed)
    done = Touched(chat_id, tuple(added), tuple(already), tuple(changed), tuple(excluded), answer.refused, dirty)
    return done, events


# --- refresh: the discovered rows re-resolved --------------------------------------------------------

MAX_RECHECKED = 2 * MAX_PATHS  # causes a refresh asks about again; with more, the rows are kept as they are

_DISCOVERED_ROWS = (
    sa.select(*(t.chat_resources.c[name] for name in rows.PIN_COLUMNS))
    .where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.origin == rows.DISCOVERED)
    .order_by(t.chat_resources.c.source)
)
_DROP_DISCOVERED = sa.delete(t.chat_resources).where(
    t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.origin == rows.DISCOVERED
)
_SET_DISCOVERED_AT = _MOVED.values(discovered_at=sa.bindparam("at"))


def pinned_rows(executor: Executor, chat_id: str) -> list[Any]:
    """The chat's discovered rows, in ``rows.PIN_COLUMNS`` order, by source."""
    return list(executor.execute(_DISCOVERED_ROWS, {"chat_id": chat_id}))


def causes(found: Iterable[Any]) -> list[str]:
    """The paths that caused the discovered rows (``PIN_COLUMNS`` rows), each once."""
    return list(dict.fromkeys(path for row in found for path in (row.caused_by or ())))


@dataclass(frozen=True, slots=True)
class Rediscovered:
    """The discovered rows before and after a refresh (``PIN_COLUMNS``), and why they were kept, if they were."""

    before: list[Any]
    after: list[Any]
    kept_because: str | None = None


class _Pinned(tuple[Any, ...]):
    """A row written here, read by the names ``chats.diff_rows`` uses."""

    __slots__ = ()
    source = property(lambda self: self[0])
    path = property(lambda self: self[2])
    status = property(lambda self: self[4])
    content_hash = property(lambda self: self[6])
    meta = property(lambda self: self[9])


def rediscover(
    executor: Executor,
    chat_id: str,
    answer: Answer | None,
    *,
    snapshot_sources: set[str],
    now: dt.datetime,
    kept_because: str | None = None,
) -> Rediscovered:
    """Make the chat's discovered rows what ``answer`` says applies now (files the snapshot holds now left out);
    with no answer (the agent could not be asked: ``kept_because``), keep them as they are."""
    before = pinned_rows(executor, chat_id)
    if answer is None:
        return Rediscovered(before, before, kept_because if before else None)
    texts: dict[str, str] = {}
    new = [
        _new_row(chat_id, found, texts)
        for found in answer.files[:MAX_DISCOVERED]
        if found.resource.id not in snapshot_sources
    ]
    after = [_Pinned(tuple(row[name] for name in rows.PIN_COLUMNS)) for row in new]
    if [tuple(row) for row in before] == [tuple(row) for row in sorted(after)]:
        return Rediscovered(before, before)
    executor.execute(_DROP_DISCOVERED, {"chat_id": chat_id})
    if new:
        contents.put_keyed(executor, texts)
        executor.execute(_INSERT, new)
    executor.execute(_SET_DISCOVERED_AT, {"for_chat": chat_id, "at": now if new else None})
    return Rediscovered(before, sorted(after))


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


# --- rechecks: a discovered file that changed on disk marks its chats out of date -------------------------

MAX_WATCHED = 4 * MAX_PATHS  # causes one recheck asks the agent about (the first ones)

_TARGET_AND_CAUSES = (
    sa.select(t.agents.c.url, t.agents.c.sealed_secret, t.chats.c.agent_id, t.chat_resources.c.caused_by)
    .select_from(
        t.chats.join(t.agents, t.agents.c.id == t.chats.c.agent_id).join(
            t.chat_resources,
            sa.and_(t.chat_resources.c.chat_id == t.chats.c.id, t.chat_resources.c.origin == rows.DISCOVERED),
        )
    )
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
)


def refresh_target(executor: Executor, user_id: str, chat_id: str) -> tuple[Target | None, list[str]]:
    """The chat's agent and the causes of its discovered rows (None and [] when it has none)."""
    found = executor.execute(_TARGET_AND_CAUSES, {"chat_id": chat_id, "user_id": user_id}).all()
    if not found:
        return None, []
    first = found[0]
    return Target(chat_id, first.agent_id, first.url, first.sealed_secret), causes(found)


_WATCHED = (
    sa.select(
        t.chat_resources.c.chat_id,
        t.chat_resources.c.path,
        t.chat_resources.c.content_hash,
        t.chat_resources.c.status,
        t.chat_resources.c.caused_by,
    )
    .select_from(t.chat_resources.join(t.chats, t.chats.c.id == t.chat_resources.c.chat_id))
    .where(
        t.chats.c.agent_id == sa.bindparam("agent_id"),
        t.chats.c.discovered_at.is_not(None),
        t.chats.c.dirty_since.is_(None),
        t.chats.c.archived.is_(False),
        sa.or_(*(t.chats.c.status == status for status in ACTIVE_STATUSES)),  # what a push marks
        t.chat_resources.c.origin == rows.DISCOVERED,
    )
)
_ADDRESS = sa.select(t.agents.c.url, t.agents.c.sealed_secret).where(t.agents.c.id == sa.bindparam("agent_id"))


@dataclass(frozen=True, slots=True)
class Watched:
    """The discovered rows of an agent's chats not marked out of date yet, and where to ask the agent."""

    rows: list[Any]
    url: str | None
    sealed_secret: str | None

    @property
    def causes(self) -> list[str]:
        return causes(self.rows)[:MAX_WATCHED]


def watched(executor: Executor, agent_id: str) -> Watched | None:
    found = executor.execute(_WATCHED, {"agent_id": agent_id}).all()
    if not found:
        return None
    address = executor.execute(_ADDRESS, {"agent_id": agent_id}).first()
    return Watched(found, address.url if address else None, address.sealed_secret if address else None)


def stale(found: Watched, answer: Answer) -> dict[str, list[str]]:
    """Chat id -> its discovered files the answer shows changed or gone (rows whose causes were all asked)."""
    now = {f.resource.path: f.resource for f in answer.files}
    asked = set(answer.asked)
    out: dict[str, list[str]] = {}
    for row in found.rows:
        if not set(row.caused_by or ()) <= asked:
            continue
        current = now.get(row.path)
        if current is None or (current.content_hash, str(current.status)) != (row.content_hash, row.status):
            out.setdefault(row.chat_id, []).append(row.path)
    return out


_MARK = (
    sa.update(t.chats)
    .where(t.chats.c.id == sa.bindparam("for_chat"), t.chats.c.dirty_since.is_(None))
    .values(dirty_since=sa.bindparam("now"), updated_at=sa.bindparam("now"))
    .returning(t.chats.c.id, t.chats.c.pinned_hash)
)


def mark(executor: Executor, changed: dict[str, list[str]], *, now: dt.datetime) -> list[Event]:
    """Mark the chats out of date (those not marked already), with an ``out_of_date`` event each."""
    events: list[Event] = []
    for chat_id, paths in sorted(changed.items()):
        row = executor.execute(_MARK, {"for_chat": chat_id, "now": now}).first()
        if row is not None:
            data = {"chat_id": chat_id, "pinned_hash": row.pinned_hash, "changed": paths, "dirty_since": now.isoformat()}
            events.append(Event(chat_topic(chat_id), "out_of_date", data))
    return events
