"""Chats: created bound to a workspace agent and pinned to its snapshot, marked out of date, refreshed.

A chat is written once, in its final create-time state (seed 001): status, binding and
pin together. The binding (workspace, agent) is persisted and reused; when the bound agent
is gone (deleted) or was never found, the next use re-resolves it by the chat-suffix rule
and re-pins. Child chats inherit the parent's binding and pin.

Everything that pins a chat to its agent's snapshot (creating, binding, refreshing it) first
takes the agent's row ``FOR KEY SHARE`` and only then reads the snapshot: a push holds that
row ``FOR UPDATE`` for its whole transaction, so a pin and a push never overlap and each
sees what the other committed (``ingest`` says why). These run on Core connections at READ
COMMITTED (``Database.write_rows``); the summary is built from the rows a call has in hand.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from agentcontext.control import rediscovery, rows
from agentcontext.control import tables as t
from agentcontext.control.agentselect import Candidate, find_chat_agent
from agentcontext.control.chat_view import refreshed, view
from agentcontext.control.contents import Executor, dialect_of
from agentcontext.control.discovered_answer import Answer
from agentcontext.control.events import Event, chat_topic
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.ingest import Written, copy_pin, lock_agent
from agentcontext.control.models import new_id
from agentcontext.control.prepared import Prepared
from agentcontext.control.visibility import OWNED_CHAT, may_see
from agentcontext.control.wire import DEFAULT_STATUS, STATUSES, ChatResponse, RefreshResponse
from agentcontext.errors import InvalidRequestError, NotFoundError
from agentcontext.snapshot import Diff

MAX_TITLE = 256


@dataclass(frozen=True, slots=True)
class ChatRow:
    """A chat as stored."""

    id: str
    owner_id: str
    workspace_id: str
    agent_id: str | None
    parent_id: str | None
    title: str
    status: str
    plan_mode: bool
    archived: bool
    pinned_hash: str | None
    pinned_version: int | None
    pinned_error: str | None
    pinned_at: dt.datetime | None
    dirty_since: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime
    discovered_at: dt.datetime | None  # when its discovered rows last moved (``discovered``)

    @classmethod
    def of(cls, row: Any) -> ChatRow:
        return cls(**{name: getattr(row, name) for name in _CHAT_FIELDS})


_CHAT_FIELDS = tuple(ChatRow.__dataclass_fields__)
_CHAT_COLUMNS = [t.chats.c[name] for name in _CHAT_FIELDS]
_OWNED = sa.select(*_CHAT_COLUMNS).where(OWNED_CHAT)
_OWNED_LOCKED = Prepared(_OWNED.with_for_update())
_OWNED_UNLOCKED = Prepared(_OWNED)


def owned_chat(executor: Executor, user: UserPrincipal, chat_id: str, *, lock: bool = False) -> ChatRow:
    """The user's chat; another user's chat is "not found" too, so ids leak nothing.

    Raises:
        NotFoundError: no such chat of this user.
    """
    row = (_OWNED_LOCKED if lock else _OWNED_UNLOCKED).first(executor, {"chat_id": chat_id, "user_id": user.user_id})
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    return ChatRow.of(row)


_WORKSPACE_BY_ID = sa.select(t.workspaces.c.id, t.workspaces.c.owner_id).where(t.workspaces.c.id == sa.bindparam("key"))
_WORKSPACE_BY_NAME = sa.select(t.workspaces.c.id, t.workspaces.c.owner_id).where(
    t.workspaces.c.name == sa.bindparam("key")
)


def usable_workspace(executor: Executor, user: UserPrincipal, key: str) -> str:
    """The id of a workspace the user may open chats in (``visibility.may_see``); an id wins over a name.

    Raises:
        NotFoundError: no such workspace, or not theirs.
    """
    found = executor.execute(_WORKSPACE_BY_ID, {"key": key}).first()
    found = found or executor.execute(_WORKSPACE_BY_NAME, {"key": key}).first()
    if found is None or not may_see(user, found.owner_id):
        raise NotFoundError(f'workspace "{key}" not found')
    return str(found.id)


_CANDIDATES = sa.select(t.agents.c.id, t.agents.c.name, t.agents.c.display_order, t.agents.c.parent_id).where(
    t.agents.c.workspace_id == sa.bindparam("workspace_id")
)


def select_agent(executor: Executor, workspace_id: str, suffix: str) -> str:
    """The chat agent of the workspace (coder.md 9).

    Raises:
        NotFoundError: no agents. ConflictError: more than one matches the suffix.
    """
    candidates = [
        Candidate(row.id, row.name, row.display_order, row.parent_id)
        for row in executor.execute(_CANDIDATES, {"workspace_id": workspace_id})
    ]
    return find_chat_agent(candidates, suffix).id


def _try_select(executor: Executor, workspace_id: str, suffix: str) -> str | None:
    """The chat agent, or None while the workspace has none (the chat binds on first use)."""
    try:
        return select_agent(executor, workspace_id, suffix)
    except NotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class PinSource:
    """The agent's latest snapshot, as a chat is pinned to it."""

    aggregate_hash: str
    version: int
    error: str | None
    received_at: dt.datetime | None = None  # with the version: which write of the snapshot this is


_PIN_SOURCE = Prepared(
    sa.select(
        t.snapshots.c.aggregate_hash, t.snapshots.c.version, t.snapshots.c.error, t.snapshots.c.received_at
    ).where(t.snapshots.c.agent_id == sa.bindparam("agent_id"))
)


def pin_source(executor: Executor, agent_id: str) -> PinSource | None:
    """The agent's snapshot to pin a chat to, read after locking the agent (None: it has not pushed)."""
    lock_agent(executor, agent_id)
    row = _PIN_SOURCE.first(executor, {"agent_id": agent_id})
    return None if row is None else PinSource(row.aggregate_hash, row.version, row.error, row.received_at)


def _pin_values(source: PinSource | None, now: dt.datetime) -> dict[str, Any]:
    if source is None:
        return {"pinned_hash": None, "pinned_version": None, "pinned_error": None, "pinned_at": None}
    return {
        "pinned_hash": source.aggregate_hash,
        "pinned_version": source.version,
        "pinned_error": source.error,
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


_INSERT_CHAT = sa.insert(t.chats)
_CHAT_PIN_COLUMNS = [c.name for c in t.chat_resources.columns if c.name != "chat_id"]
_COPY_CHAT_PIN = sa.insert(t.chat_resources).from_select(
    ["chat_id", *_CHAT_PIN_COLUMNS],
    sa.select(sa.bindparam("to_chat", type_=sa.String), *(t.chat_resources.c[n] for n in _CHAT_PIN_COLUMNS)).where(
        t.chat_resources.c.chat_id == sa.bindparam("from_chat")
    ),
)


def create(executor: Executor, user: UserPrincipal, new: NewChat, *, suffix: str, now: dt.datetime) -> ChatRow:
    """A chat, bound and pinned, written once.

    Raises:
        InvalidRequestError, NotFoundError (workspace or parent), ConflictError (agent selection).
    """
    check_new_chat(new)
    values: dict[str, Any] = {
        "id": new_id(),
        "owner_id": user.user_id,
        "parent_id": None,
        "title": new.title,
        "status": new.status,
        "plan_mode": new.plan_mode,
        "archived": False,
        "dirty_since": None,
        "created_at": now,
        "updated_at": now,
        "discovered_at": None,
    }
    if new.parent_id is not None:
        parent = owned_chat(executor, user, new.parent_id)
        if new.workspace and usable_workspace(executor, user, new.workspace) != parent.workspace_id:
            raise InvalidRequestError("a child chat stays in its parent's workspace")
        if parent.agent_id is not None:
            lock_agent(executor, parent.agent_id)
            parent = owned_chat(executor, user, new.parent_id)  # its pin as of now, with pushes held off
        inherited = (
            "agent_id", "pinned_hash", "pinned_version", "pinned_error", "pinned_at", "dirty_since", "discovered_at",
        )  # fmt: skip
        values |= {"parent_id": parent.id, "workspace_id": parent.workspace_id}
        values |= {name: getattr(parent, name) for name in inherited}
        executor.execute(_INSERT_CHAT, values)
        executor.execute(_COPY_CHAT_PIN, {"to_chat": values["id"], "from_chat": parent.id})
        return _written(values)
    assert new.workspace is not None
    workspace_id = usable_workspace(executor, user, new.workspace)
    agent_id = _try_select(executor, workspace_id, suffix)
    source = pin_source(executor, agent_id) if agent_id else None
    values |= {"workspace_id": workspace_id, "agent_id": agent_id, **_pin_values(source, now)}
    executor.execute(_INSERT_CHAT, values)
    if source is not None and agent_id is not None:
        copy_pin(executor, agent_id, [values["id"]])
    return _written(values)


def _written(values: dict[str, Any]) -> ChatRow:
    return ChatRow(**{name: values[name] for name in _CHAT_FIELDS})


_SET_PIN = Prepared(
    sa.update(t.chats)
    .where(t.chats.c.id == sa.bindparam("chat_id"))
    .values(
        agent_id=sa.bindparam("new_agent_id"),
        pinned_hash=sa.bindparam("new_pinned_hash"),
        pinned_version=sa.bindparam("new_pinned_version"),
        pinned_error=sa.bindparam("new_pinned_error"),
        pinned_at=sa.bindparam("new_pinned_at"),
        dirty_since=None,
        updated_at=sa.bindparam("now"),
    )
    .returning(*_CHAT_COLUMNS)
)
_CLEAR_PIN = sa.delete(t.chat_resources).where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"))


def _set_pin(
    executor: Executor, chat_id: str, agent_id: str | None, source: PinSource | None, now: dt.datetime
) -> ChatRow:
    pin = {f"new_{name}": value for name, value in _pin_values(source, now).items()}
    row = _SET_PIN.first(executor, {"chat_id": chat_id, "new_agent_id": agent_id, "now": now, **pin})
    if row is None:  # the chat's row is read before it is pinned, in the same transaction
        raise AssertionError(f"chat {chat_id} vanished while being pinned")
    return ChatRow.of(row)


def bind(executor: Executor, chat: ChatRow, *, suffix: str, now: dt.datetime) -> tuple[ChatRow, list[Event]]:
    """Repair a missing binding (the agent was deleted, or none existed) and pin a chat that has no pin.

    Raises:
        ConflictError: the workspace has more than one chat agent.
    """
    events: list[Event] = []
    if chat.agent_id is None:
        agent_id = _try_select(executor, chat.workspace_id, suffix)
        if agent_id is None:
            return chat, events  # nothing to bind to: the old pin (if any) keeps serving
        # a new agent: its snapshot, not the old pin; with none yet, no pin at all (its first push pins)
        chat = _set_pin(executor, chat.id, agent_id, None, now)
        executor.execute(_CLEAR_PIN, {"chat_id": chat.id})
    if chat.pinned_hash is None and chat.agent_id is not None:
        agent_id = chat.agent_id
        source = pin_source(executor, agent_id)
        if source is not None:
            chat = _set_pin(executor, chat.id, agent_id, source, now)
            copy_pin(executor, agent_id, [chat.id])
            events.append(
                Event(chat_topic(chat.id), "pinned", {"chat_id": chat.id, "pinned_hash": source.aggregate_hash})
            )
    return chat, events


@dataclass(frozen=True, slots=True)
class Refreshed:
    chat: ChatRow
    diff: Diff
    events: tuple[Event, ...]
    view: RefreshResponse
    pinned: Pinned | None = None  # the chat's pinned rows now, to keep once the transaction has committed
    discovered_kept: str | None = None  # why the discovered rows were kept as they were (the agent unreachable)


@dataclass(frozen=True, slots=True)
class Pinned:
    """A chat's pinned rows (``rows.Row``s, by source) as a replica last wrote them, and the pin they belong to (its
    time and hash): the next refresh compares against them without reading them back."""

    tag: tuple[dt.datetime | None, str | None]
    rows: list[Any]
    discovered: bool = False  # the chat had discovered rows then: its next refresh asks the agent about them first


class MustAsk(Exception):
    """The chat has discovered rows, and the agent was not asked about them yet: ask it, then refresh again."""


def refresh(
    executor: Executor,
    user: UserPrincipal,
    chat_id: str,
    *,
    suffix: str,
    now: dt.datetime,
    pinned: Pinned | None = None,
    latest: Callable[[str], Written | None] | None = None,
    rediscovered: Answer | None = None,
    kept_because: str | None = None,
    asked: bool = True,
) -> Refreshed:
    """Re-pin the chat to its agent's latest snapshot, clear the out-of-date mark, say what changed.

    The chat's pinned rows and the snapshot's are each read once (without their texts), or not at all when
    this replica wrote them last (``pinned``; ``latest`` gives what it wrote for an agent's snapshot); only the
    rows that differ are written, and the summary is built from the rows in hand. Its discovered rows become
    what ``rediscovered`` (the agent asked again) says, or stay as they are without it (``kept_because``).
    Without ``asked`` (the agent not asked yet: most chats have no discovered rows), a chat that has discovered
    rows raises ``MustAsk`` before anything is written.

    On PostgreSQL the chat's row is read with its agent's row held in the same statement, and the pin is set
    from the snapshot in one ``UPDATE ... FROM``, which reads the snapshot once the agent's row is held.

    Raises:
        NotFoundError: no such chat of this user. ConflictError: agent selection. MustAsk.
    """
    sqlite = dialect_of(executor) == "sqlite"
    owned = _OWNED_WITH_SOURCE if sqlite else _OWNED_HOLDING_AGENT
    found = owned.first(executor, {"chat_id": chat_id, "user_id": user.user_id})
    if found is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    chat = ChatRow.of(found)
    if not asked and chat.discovered_at is not None:
        raise MustAsk(chat_id)
    if chat.agent_id is None or chat.pinned_hash is None:  # its first use: bind and pin it first (rare)
        before = rows.of_snapshot(rows.read(executor, chat.id, chat=True))
        chat, events = bind(executor, chat, suffix=suffix, now=now)
        source = pin_source(executor, chat.agent_id) if chat.agent_id else None
        chat = _set_pin(executor, chat.id, chat.agent_id, source, now)
        after = rows.read(executor, chat.agent_id, chat=False) if source is not None and chat.agent_id else []
        _repin(executor, chat.id, rows.of_snapshot(rows.read(executor, chat.id, chat=True)), after)
    else:
        events = []
        known_before = pinned.rows if pinned is not None and pinned.tag == (chat.pinned_at, chat.pinned_hash) else None
        if sqlite:  # one writer: what the join read is the latest
            source = (
                PinSource(found.aggregate_hash, found.version, found.error, found.received_at)
                if found.version is not None
                else None
            )
            chat = _set_pin(executor, chat.id, chat.agent_id, source, now)
        else:  # the agent's row is held: a push that held it has committed, and the UPDATE reads after it
            chat, source = _pin_to_snapshot(executor, chat, now)
        written = latest(chat.agent_id) if latest is not None and source is not None and chat.agent_id else None
        fresh = written is not None and source is not None and written.tag == (source.version, source.received_at)
        if known_before is not None and (source is None or fresh):
            before = list(known_before)
            after = written.sorted_rows() if fresh and written is not None else []
        else:
            before, after = _pinned_and_latest(executor, chat.id, chat.agent_id if source is not None else None)
        _repin(executor, chat.id, before, after)
    again = rediscovery.Rediscovered([], [])
    if chat.discovered_at is not None:  # it has discovered rows: re-resolved (or kept, and said so)
        sources = {row.source for row in after}
        again = rediscovery.rediscover(
            executor, chat.id, rediscovered, snapshot_sources=sources, now=now, kept_because=kept_because
        )
        chat = replace(chat, discovered_at=now if again.after != again.before else chat.discovered_at)
    changes = diff_rows([*before, *again.before], [*after, *again.after])
    events = [e for e in events if e.kind != "pinned"]
    data = {"chat_id": chat.id, "pinned_hash": chat.pinned_hash, "version": chat.pinned_version, **changes.to_dict()}
    events.append(Event(chat_topic(chat.id), "refreshed", data))
    latest_hash = source.aggregate_hash if source is not None else None
    kept = Pinned((chat.pinned_at, chat.pinned_hash), list(map(rows.row_of, after)), chat.discovered_at is not None)
    shown = refreshed(chat, [*after, *again.after], latest_hash, changes, again.kept_because)
    return Refreshed(chat, changes, tuple(events), shown, kept, again.kept_because)


_OWNED_WITH_SOURCE = Prepared(
    sa.select(
        *_CHAT_COLUMNS,
        t.snapshots.c.aggregate_hash,
        t.snapshots.c.version,
        t.snapshots.c.error,
        t.snapshots.c.received_at,
    )
    .select_from(t.chats.outerjoin(t.snapshots, t.snapshots.c.agent_id == t.chats.c.agent_id))
    .where(OWNED_CHAT)
)
# PostgreSQL: the chat, and its agent's row held against pushes (``lock_agent``) by the same statement
_OWNED_HOLDING_AGENT = Prepared(
    sa.select(
        *_CHAT_COLUMNS,
        sa.select(t.agents.c.id)
        .where(t.agents.c.id == t.chats.c.agent_id)
        .with_for_update(read=True, key_share=True)
        .scalar_subquery()
        .label("held"),
    ).where(OWNED_CHAT),
    only="postgresql",
)
# PostgreSQL: ``_set_pin`` to the agent's snapshot as this statement reads it (no row: the agent has none)
_PIN_TO_SNAPSHOT = Prepared(
    sa.update(t.chats)
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.snapshots.c.agent_id == t.chats.c.agent_id)
    .values(
        pinned_hash=t.snapshots.c.aggregate_hash,
        pinned_version=t.snapshots.c.version,
        pinned_error=t.snapshots.c.error,
        pinned_at=sa.bindparam("now"),
        dirty_since=None,
        updated_at=sa.bindparam("now"),
    )
    .returning(*_CHAT_COLUMNS, t.snapshots.c.received_at),
    only="postgresql",
)


def _pin_to_snapshot(executor: Executor, chat: ChatRow, now: dt.datetime) -> tuple[ChatRow, PinSource | None]:
    """Pin the chat (bound, its agent's row held) to its agent's snapshot in one statement; unpinned if none."""
    row = _PIN_TO_SNAPSHOT.first(executor, {"chat_id": chat.id, "now": now})
    if row is None:
        return _set_pin(executor, chat.id, chat.agent_id, None, now), None
    pinned = ChatRow.of(row)
    assert pinned.pinned_hash is not None and pinned.pinned_version is not None
    return pinned, PinSource(pinned.pinned_hash, pinned.pinned_version, pinned.pinned_error, row.received_at)


_PINNED_AND_LATEST = Prepared(
    sa.union_all(
        sa.select(sa.literal(0).label("side"), *(t.chat_resources.c[name] for name in rows.ROW_COLUMNS)).where(
            t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.origin == rows.SNAPSHOT
        ),
        sa.select(sa.literal(1).label("side"), *(t.snapshot_resources.c[name] for name in rows.ROW_COLUMNS)).where(
            t.snapshot_resources.c.agent_id == sa.bindparam("agent_id")
        ),
    ).order_by(sa.literal_column("side"), sa.literal_column("source"))
)


def _pinned_and_latest(executor: Executor, chat_id: str, agent_id: str | None) -> tuple[list[Any], list[Any]]:
    """The chat's pinned rows and its agent's snapshot rows, each by source, in one query."""
    pinned: list[Any] = []
    latest: list[Any] = []
    for row in _PINNED_AND_LATEST.all(executor, {"chat_id": chat_id, "agent_id": agent_id or ""}):
        (latest if row.side else pinned).append(rows.row_of(row))
    return pinned, latest


_DROP_PINNED = Prepared(
    sa.delete(t.chat_resources).where(
        t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.source == sa.bindparam("gone")
    )
)


def _upsert_pinned(insert: Any) -> Any:
    """A snapshot's row into a chat's pin. ``caused_by`` is SQL's NULL, as when a row leaves it out: a JSON ``null``
    (what a bound None becomes) would change the stored text the render digest takes (``turns._RAW``)."""
    columns = t.chat_resources.c
    bound = {name: sa.bindparam(name, type_=columns[name].type) for name in ("chat_id", *rows.ROW_COLUMNS, "origin")}
    statement = insert(t.chat_resources).values({**bound, "caused_by": sa.null()})
    replaced = {c.name: statement.excluded[c.name] for c in t.chat_resources.columns if not c.primary_key}
    return statement.on_conflict_do_update(index_elements=["chat_id", "source"], set_=replaced)


_UPSERT_PINNED = {
    "postgresql": Prepared(_upsert_pinned(postgresql.insert), only="postgresql"),
    "sqlite": Prepared(_upsert_pinned(sqlite.insert), only="sqlite"),
}


def _repin(executor: Executor, chat_id: str, pinned: Sequence[Any], latest: Sequence[Any]) -> None:
    """Make the chat's pinned rows the snapshot's, writing only the rows that differ."""
    old = {row.source: rows.row_of(row) for row in pinned}
    new = [rows.row_of(row) for row in latest]
    gone = old.keys() - {row.source for row in new}
    if gone:
        _DROP_PINNED.execute(executor, [{"chat_id": chat_id, "gone": source} for source in gone])
    changed = [row for row in new if old.get(row.source) != row]
    if changed:
        values = [{"chat_id": chat_id, **row._asdict(), "origin": rows.SNAPSHOT} for row in changed]
        # one row (a push edits a file at a time) goes as a single statement, through libpq on PostgreSQL
        _UPSERT_PINNED[dialect_of(executor)].execute(executor, values[0] if len(values) == 1 else values)


def diff_rows(before: Iterable[Any], after: Iterable[Any]) -> Diff:
    """Resources added, removed, or changed in content, status or tools (by source), as paths."""
    old = {row.source: row for row in before}
    new = {row.source: row for row in after}

    def signature(row: Any) -> tuple[Any, ...]:
        return (row.content_hash, row.status, (row.meta or {}).get("tools") or [])

    return Diff(
        added=tuple(sorted(new[s].path for s in new.keys() - old.keys())),
        removed=tuple(sorted(old[s].path for s in old.keys() - new.keys())),
        changed=tuple(sorted(new[s].path for s in new.keys() & old.keys() if signature(new[s]) != signature(old[s]))),
    )


def update(
    executor: Executor,
    user: UserPrincipal,
    chat_id: str,
    *,
    status: str | None,
    archived: bool | None,
    title: str | None,
    now: dt.datetime,
) -> ChatRow:
    """Raises: NotFoundError, InvalidRequestError."""
    chat = owned_chat(executor, user, chat_id, lock=True)
    values: dict[str, Any] = {"updated_at": now}
    if status is not None:
        if status not in STATUSES:
            raise InvalidRequestError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        values["status"] = status
    if archived is not None:
        values["archived"] = archived
    if title is not None:
        if len(title) > MAX_TITLE:
            raise InvalidRequestError(f"title is longer than {MAX_TITLE} characters")
        values["title"] = title
    executor.execute(sa.update(t.chats).where(t.chats.c.id == chat.id).values(**values))
    return _written({**{name: getattr(chat, name) for name in _CHAT_FIELDS}, **values})


def list_chats(executor: Executor, user: UserPrincipal, *, limit: int = 100, archived: bool = False) -> list[ChatRow]:
    found = executor.execute(
        sa.select(*_CHAT_COLUMNS)
        .where(t.chats.c.owner_id == user.user_id, t.chats.c.archived.is_(archived))
        .order_by(t.chats.c.created_at.desc(), t.chats.c.id)
        .limit(limit)
    )
    return [ChatRow.of(row) for row in found]


# --- the summary the API shows (built by chat_view) ------------------------------------


_LATEST_HASH = sa.select(t.snapshots.c.aggregate_hash).where(t.snapshots.c.agent_id == sa.bindparam("agent_id"))
_OWNED_WITH_LATEST = (
    sa.select(*_CHAT_COLUMNS, t.snapshots.c.aggregate_hash.label("latest_hash"))
    .select_from(t.chats.outerjoin(t.snapshots, t.snapshots.c.agent_id == t.chats.c.agent_id))
    .where(OWNED_CHAT)
)


def summary(executor: Executor, chat: ChatRow) -> ChatResponse:
    latest = executor.scalar(_LATEST_HASH, {"agent_id": chat.agent_id}) if chat.agent_id else None
    return view(chat, rows.read(executor, chat.id, chat=True), latest)


def owned_summary(executor: Executor, user: UserPrincipal, chat_id: str) -> ChatResponse:
    """The user's chat as the API returns it, in two queries.

    Raises:
        NotFoundError: no such chat of this user.
    """
    row = executor.execute(_OWNED_WITH_LATEST, {"chat_id": chat_id, "user_id": user.user_id}).first()
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    return view(ChatRow.of(row), rows.read(executor, chat_id, chat=True), row.latest_hash)


def summaries(executor: Executor, listing: Sequence[ChatRow]) -> list[ChatResponse]:
    """Summaries of many chats in two queries."""
    if not listing:
        return []
    ids = [chat.id for chat in listing]
    pinned: dict[str, list[Any]] = {chat_id: [] for chat_id in ids}
    columns = [t.chat_resources.c.chat_id, *(t.chat_resources.c[name] for name in rows.PIN_COLUMNS)]
    for row in executor.execute(sa.select(*columns).where(t.chat_resources.c.chat_id.in_(ids))):
        pinned[row.chat_id].append(row)
    agents = {chat.agent_id for chat in listing if chat.agent_id}
    found = executor.execute(
        sa.select(t.snapshots.c.agent_id, t.snapshots.c.aggregate_hash).where(t.snapshots.c.agent_id.in_(agents))
    )
    latest = {row.agent_id: row.aggregate_hash for row in found}
    return [view(chat, pinned[chat.id], latest.get(chat.agent_id) if chat.agent_id else None) for chat in listing]
