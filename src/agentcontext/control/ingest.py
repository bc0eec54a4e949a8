"""Taking a pushed snapshot (coder.md 4.5): gate it by version, store what changed, pin and mark chats.

The workspace is not trusted: the body was checked against the contract
(``sync_contract``: counts, sizes, enums, unique sources, the aggregate hash recomputed)
and a bad one refused whole before anything here runs. An accepted push is one
transaction: the snapshot row upserted, the rows that changed rewritten (and only their
texts sent), rows no longer present deleted, chats of the agent with no pin yet pinned to
it ("hydrated"), and pinned chats whose hash differs marked out of date. MCP resources are
outside the aggregate hash, so an MCP-only change never marks a chat. The agent's own row
is written only when something about it changed (or its last-seen time is getting old).

Ordering against pins (PostgreSQL, where writes run at READ COMMITTED): a push locks its
agent's row ``FOR UPDATE`` before it reads anything, and whatever pins a chat to the
agent's snapshot (``chats``) holds that row ``FOR KEY SHARE`` while it reads the snapshot
and writes the pin. One waits for the other, and each statement of the one that goes second
sees what the first committed: a chat pinned while a push runs is pinned to the new snapshot
or marked (or hydrated) by the push, in the push's own transaction. SQLite has one writer.

One deliberate difference from Coder: a chat marked out of date whose pinned hash is
pushed again (the edit was reverted) is marked up to date, with an event; Coder keeps it
dirty until refreshed. A chat with discovered files (``discovered``) stays marked: the
mark may stand for a discovered file's change, which no push shows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from agentcontext.control import contents, prepared, rows
from agentcontext.control import tables as t
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.contents import Executor
from agentcontext.control.events import Event, agent_topic, chat_topic
from agentcontext.control.loop_store import COMMITS_WAIT_FOR_STANDBY
from agentcontext.control.prepared import Prepared
from agentcontext.errors import AuthError
from agentcontext.resource import Kind, Resource
from agentcontext.wire.sync import AgentInfo, PushRequest

ACTIVE_STATUSES = ("waiting", "running", "paused", "pending", "requires_action")
TOUCH_EVERY = dt.timedelta(seconds=5)  # how stale ``last_seen_at`` may get before a push writes it again


@dataclass(frozen=True, slots=True)
class Written:
    """The snapshot rows a replica wrote for an agent, as stored (``rows.ROW_COLUMNS``, by name), and the snapshot
    write they belong to (its version and time): the next push compares against them, and a refresh re-pins
    to them, without reading them back, when the snapshot row shows nobody wrote since."""

    tag: tuple[int, dt.datetime]
    rows: dict[str, Any]  # source -> row

    def sorted_rows(self) -> list[Any]:
        return [self.rows[source] for source in sorted(self.rows)]


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    version: int
    stored_version: int | None
    events: tuple[Event, ...] = ()
    written: Written | None = None  # to keep once the transaction has committed


def mcp_hash(resources: Sequence[Resource]) -> str:
    """A digest of the MCP servers of a snapshot: what a chat's prompt overlays from the latest one."""
    servers = [r.to_dict() for r in resources if r.kind is Kind.MCP_SERVER]
    if not servers:
        return ""
    return hashlib.sha256(
        json.dumps(servers, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()


# --- the agent -------------------------------------------------------------------------------

# An agent's last-seen time, and its age, are the database's clock's on PostgreSQL: replicas share the database,
# not a clock, and the sweep (``identity.offline_after``) measures silence on the database's too, so a replica
# whose clock is off neither marks a live agent offline nor keeps a silent one. SQLite has one server: its clock.


class _DatabaseClock(FunctionElement[dt.datetime]):
    """The time now on the database's clock (PostgreSQL's ``now()``, the transaction's start); NULL on SQLite, whose
    one server's clock is the clock (the caller's ``now``)."""

    type = t.agents.c.last_seen_at.type
    name = "database_clock"
    inherit_cache = True


@compiles(_DatabaseClock)
def _database_clock(element: _DatabaseClock, compiler: Any, **kw: Any) -> str:
    return "now()"


@compiles(_DatabaseClock, "sqlite")
def _no_database_clock(element: _DatabaseClock, compiler: Any, **kw: Any) -> str:
    return "NULL"


_AGENT = sa.select(
    t.agents.c.online,
    t.agents.c.last_seen_at,
    t.agents.c.url,
    t.agents.c.sealed_secret,
    t.agents.c.run_id,
    t.agents.c.os,
    t.agents.c.home,
    t.agents.c.work_dir,
    _DatabaseClock().label("clock"),  # read with the row: how old its last-seen time is, without a round trip
).where(t.agents.c.id == sa.bindparam("agent_id"))
_AGENT_LOCKED = Prepared(_AGENT.with_for_update(), only="postgresql")
_AGENT_ALONE = Prepared(_AGENT)
_TOUCHED = ("online", "last_seen_at", "url", "run_id", "os", "home", "work_dir", "sealed_secret")
_SAID = ("url", "run_id", "os", "home")  # what an agent says of itself, each kept where it says nothing


def _touch(last_seen_at: Any, only: str) -> Prepared:
    said: dict[str, Any] = {name: sa.bindparam(f"new_{name}") for name in _TOUCHED if name != "last_seen_at"}
    return Prepared(
        sa.update(t.agents)
        .where(t.agents.c.id == sa.bindparam("agent_id"))
        .values({**said, "last_seen_at": last_seen_at}),
        only=only,
    )


_TOUCH = {  # the last-seen time: the database's clock on PostgreSQL, the server's (bound) on SQLite
    "postgresql": _touch(sa.func.now(), "postgresql"),
    "sqlite": _touch(sa.bindparam("new_last_seen_at"), "sqlite"),
}


def touch_agent(
    executor: Executor,
    agent_id: str,
    info: AgentInfo,
    *,
    now: dt.datetime,
    box: SecretBox,
    work_dir: str | None = None,
    current: Any = None,
    last: bool = False,
) -> list[Event]:
    """Record that the agent is alive (and where), writing only what changed; an event when it was offline.

    ``current`` is the agent's row when the caller already read it (a push, under its lock). ``last``: nothing
    after this in the transaction reads the agent (a heartbeat), so on PostgreSQL its write goes with the
    ``COMMIT``, one round trip fewer (``prepared.at_commit``; ``executor`` is then a Core connection).
    """
    row = current if current is not None else _AGENT_ALONE.first(executor, {"agent_id": agent_id})
    if row is None:
        return []
    values = {name: getattr(row, name) for name in _TOUCHED}
    values["online"] = True
    for name in _SAID:
        if getattr(info, name) is not None:
            values[name] = getattr(info, name)
    if work_dir is not None:
        values["work_dir"] = work_dir
    if info.api_token is not None and not box.matches(agent_id, row.sealed_secret, info.api_token):
        values["sealed_secret"] = box.seal(agent_id, info.api_token)
    clock = row.clock if row.clock is not None else now  # the database's (PostgreSQL), else this server's
    stale = row.last_seen_at is None or clock - row.last_seen_at >= TOUCH_EVERY
    if stale or any(values[name] != getattr(row, name) for name in _TOUCHED):
        dialect = contents.dialect_of(executor)
        if dialect == "postgresql":  # the statement writes the database's clock
            del values["last_seen_at"]
        else:
            values["last_seen_at"] = now
        params = {"agent_id": agent_id, **{f"new_{k}": v for k, v in values.items()}}
        if last and isinstance(executor, Connection):
            prepared.at_commit(executor, _TOUCH[dialect], params)
        else:
            _TOUCH[dialect].execute(executor, params)
    if row.online:
        return []
    return [Event(agent_topic(agent_id), "agent_online", {"agent_id": agent_id, "at": now.isoformat()})]


# A heartbeat of an agent that is online, on PostgreSQL, in one statement outside any transaction: the full way
# (``touch_agent`` in a transaction) is three round trips, a BEGIN with the standby question, the agent's read,
# and its write with the COMMIT. The statement changes the row only while the agent is online (the full way tells
# that it came back: an event this one never has to send, so running it again loses nothing) and while commits do
# not wait for a synchronous standby (a statement that changed nothing commits without waiting). Its WHERE is
# checked again on the row's newest version once a lock it waited for is released, as an agent marked offline
# meanwhile is. (An UPDATE may not name a bound parameter after one of its columns: "new_url", not "url".)
_BEAT = Prepared(
    sa.update(t.agents)
    .where(
        t.agents.c.id == sa.bindparam("agent_id"),
        t.agents.c.online.is_(True),
        sa.text(f"NOT ({COMMITS_WAIT_FOR_STANDBY})"),
    )
    .values(
        last_seen_at=sa.func.now(),  # the database's clock, as every replica's sweep reads it
        **{name: sa.func.coalesce(sa.bindparam(f"new_{name}", type_=sa.String), t.agents.c[name]) for name in _SAID},
    )
    .returning(t.agents.c.sealed_secret),
    only="postgresql",
)


def beat(executor: Executor, agent_id: str, info: AgentInfo, *, box: SecretBox) -> bool:
    """A heartbeat recorded in one statement (PostgreSQL, ``_BEAT``): whether it was. False: the agent is offline
    or gone, the commits wait for a standby, or its per-run secret is new (the row keeps the old one meanwhile); the
    full way (``touch_agent`` in a write transaction) records it then, sealing the secret, telling the agent came
    back. Safe to run again: it sets what the heartbeat says."""
    params = {"agent_id": agent_id, **{f"new_{n}": getattr(info, n) for n in _SAID}}
    row = _BEAT.first(executor, params)
    if row is None:
        return False
    return info.api_token is None or box.matches(agent_id, row.sealed_secret, info.api_token)


_LOCK_AGENT = Prepared(
    sa.select(t.agents.c.id)
    .where(t.agents.c.id == sa.bindparam("agent_id"))
    .with_for_update(read=True, key_share=True),
    only="postgresql",
)


def lock_agent(executor: Executor, agent_id: str) -> None:
    """Hold the agent's row against pushes (``FOR KEY SHARE``) for the rest of the transaction: a pin, a refresh
    or a fork waits for a push of its agent to commit, and a push for them. Take it before any other lock.

    SQLite has no row locks to take: its one writer at a time orders pins and pushes already.
    """
    if contents.dialect_of(executor) != "sqlite":
        _LOCK_AGENT.all(executor, {"agent_id": agent_id})


# --- the snapshot ------------------------------------------------------------------------------

_SNAPSHOT = Prepared(
    sa.select(t.snapshots.c.version, t.snapshots.c.received_at).where(
        t.snapshots.c.agent_id == sa.bindparam("agent_id")
    )
)
# SQLite has one writer and no row locks: the agent and its snapshot's version in one statement
_AGENT_AND_VERSION = Prepared(
    sa.select(*_AGENT.selected_columns, t.snapshots.c.version, t.snapshots.c.received_at)
    .select_from(t.agents.outerjoin(t.snapshots, t.snapshots.c.agent_id == t.agents.c.id))
    .where(t.agents.c.id == sa.bindparam("agent_id"))
)
_SNAPSHOT_COLUMNS = (
    "version", "aggregate_hash", "error", "work_dir", "project_root", "profile", "payload_bytes", "run_id",
    "received_at", "mcp_hash",
)  # fmt: skip
_INSERT_SNAPSHOT = Prepared(
    sa.insert(t.snapshots).values({name: sa.bindparam(name) for name in ("agent_id", *_SNAPSHOT_COLUMNS)})
)
_UPDATE_SNAPSHOT = Prepared(
    sa.update(t.snapshots)
    .where(t.snapshots.c.agent_id == sa.bindparam("for_agent"))
    .values({name: sa.bindparam(f"new_{name}") for name in _SNAPSHOT_COLUMNS})
)
_EXISTING = Prepared(
    sa.select(*(t.snapshot_resources.c[name] for name in rows.ROW_COLUMNS)).where(
        t.snapshot_resources.c.agent_id == sa.bindparam("agent_id")
    )
)
# one row a parameter set (executemany): a list parameter would be expanded into the SQL on every call
_DELETE_ROWS = Prepared(
    sa.delete(t.snapshot_resources).where(
        t.snapshot_resources.c.agent_id == sa.bindparam("agent_id"),
        t.snapshot_resources.c.source == sa.bindparam("gone"),
    )
)


def _upsert(insert: Any) -> Any:
    statement = insert(t.snapshot_resources)
    replaced = {c.name: statement.excluded[c.name] for c in t.snapshot_resources.columns if not c.primary_key}
    return statement.on_conflict_do_update(index_elements=["agent_id", "source"], set_=replaced)


_UPSERT_ROWS = {
    "postgresql": Prepared(_upsert(postgresql.insert), only="postgresql"),
    "sqlite": Prepared(_upsert(sqlite.insert), only="sqlite"),
}


def ingest(
    executor: Executor,
    agent_id: str,
    push: PushRequest,
    *,
    now: dt.datetime,
    box: SecretBox,
    written: Written | None = None,
) -> Outcome:
    """Store ``push`` (validated: its resources are checked) for the agent unless the version gate refuses it
    (then only the agent's liveness is).

    ``box`` seals the per-run secret the agent sends (``agent_secret``); ``written`` is what this replica
    wrote for the agent last (``Outcome.written``), if it kept it.

    Raises:
        AuthError: the agent was deleted since its token was checked.
    """
    agent: Any
    if contents.dialect_of(executor) == "sqlite":
        agent = _AGENT_AND_VERSION.first(executor, {"agent_id": agent_id})
        snapshot = (agent.version, agent.received_at) if agent is not None and agent.version is not None else None
    else:  # the version read after the lock is taken: a push that held it has committed by then
        agent = _AGENT_LOCKED.first(executor, {"agent_id": agent_id})
        found = _SNAPSHOT.first(executor, {"agent_id": agent_id})
        snapshot = (found.version, found.received_at) if found is not None else None
    if agent is None:  # deleted since its token was checked (its workspace with its owner, say): a 401, not a 500
        raise AuthError("this agent no longer exists")
    stored = snapshot[0] if snapshot is not None else None
    info = push.agent or AgentInfo()
    if stored is not None and not push.initial and push.version <= stored:
        events = touch_agent(executor, agent_id, info, now=now, box=box, current=agent)
        return Outcome(False, push.version, stored, tuple(events))
    events = touch_agent(executor, agent_id, info, now=now, box=box, work_dir=push.work_dir, current=agent)
    values = {
        "version": push.version,
        "aggregate_hash": push.aggregate_hash,
        "error": push.error,
        "work_dir": push.work_dir,
        "project_root": push.project_root,
        "profile": push.profile,
        "payload_bytes": push.payload_bytes,
        "run_id": info.run_id,
        "received_at": now,
        "mcp_hash": mcp_hash(push.checked_resources),
    }
    if stored is None:
        _INSERT_SNAPSHOT.execute(executor, {"agent_id": agent_id, **values})
    else:
        _UPDATE_SNAPSHOT.execute(executor, {"for_agent": agent_id, **{f"new_{k}": v for k, v in values.items()}})
    known = written.rows if written is not None and snapshot is not None and written.tag == snapshot else None
    rows_now = _store_resources(executor, agent_id, push.checked_resources, known)
    events += pin_and_mark(executor, agent_id, push, now=now)
    return Outcome(True, push.version, push.version, tuple(events), Written((push.version, now), rows_now))


def _store_resources(
    executor: Executor, agent_id: str, resources: Sequence[Resource], known: dict[str, Any] | None
) -> dict[str, Any]:
    """Write the rows that changed (any column, the server-computed content key too), delete the ones gone.

    ``known``: the stored rows, when this replica knows them (else they are read). Returns the rows now stored.
    """
    if known is None:
        known = {row.source: row for row in _EXISTING.all(executor, {"agent_id": agent_id})}
    gone = set(known)
    texts: dict[str, str] = {}
    now_stored: dict[str, Any] = {}
    changed: list[dict[str, Any]] = []
    for resource in resources:
        row = rows.to_row(resource, rows.keyed(resource, texts), derived=False)
        source = row["source"]
        gone.discard(source)
        stored = known.get(source)
        if stored is not None and rows.pushed_form(stored) == row:
            now_stored[source] = stored
            continue
        rows.add_derived(resource, row)
        now_stored[source] = rows.Row(**row)
        changed.append({**row, "agent_id": agent_id})
    if gone:  # no longer pushed
        _DELETE_ROWS.execute(executor, [{"agent_id": agent_id, "gone": source} for source in gone])
    if changed:
        wanted = {row["content_key"] for row in changed}
        contents.put_keyed(executor, {text: key for text, key in texts.items() if key in wanted})
        _UPSERT_ROWS[contents.dialect_of(executor)].execute(executor, changed)
    return now_stored


# --- chats: pins and marks -----------------------------------------------------------------------

# (an UPDATE may not name a bound parameter after one of its columns: "for_agent", not "agent_id")
_LATEST: sa.BindParameter[str] = sa.bindparam("latest")
_NOW: sa.BindParameter[dt.datetime] = sa.bindparam("now", type_=t.chats.c.updated_at.type)
_UNPINNED = t.chats.c.pinned_hash.is_(None)
# In one statement: pin the agent's chats that have no pin yet ("hydrate": they start up to date), mark
# out of date the active ones pinned elsewhere and not marked yet, and up to date again the active ones
# pinned here and marked (a revert). SET reads the row as it was; a hydrated chat is told by its pin time.
# (An UPDATE may not name a bound parameter after one of its columns: "for_agent", not "agent_id".)
_PIN_AND_MARK = Prepared(
    sa.update(t.chats)
    .where(
        t.chats.c.agent_id == sa.bindparam("for_agent"),
        t.chats.c.archived.is_(False),
        sa.or_(
            _UNPINNED,
            sa.and_(
                sa.or_(*(t.chats.c.status == status for status in ACTIVE_STATUSES)),  # no list to expand
                sa.or_(
                    sa.and_(t.chats.c.pinned_hash != _LATEST, t.chats.c.dirty_since.is_(None)),
                    sa.and_(
                        t.chats.c.pinned_hash == _LATEST,
                        t.chats.c.dirty_since.is_not(None),
                        t.chats.c.discovered_at.is_(None),  # a discovered file may be what changed: no revert
                    ),
                ),
            ),
        ),
    )
    .values(
        pinned_hash=sa.func.coalesce(t.chats.c.pinned_hash, _LATEST),
        pinned_version=sa.case((_UNPINNED, sa.bindparam("version")), else_=t.chats.c.pinned_version),
        pinned_error=sa.case((_UNPINNED, sa.bindparam("error", type_=sa.Text)), else_=t.chats.c.pinned_error),
        pinned_at=sa.case((_UNPINNED, _NOW), else_=t.chats.c.pinned_at),
        dirty_since=sa.case((sa.or_(_UNPINNED, t.chats.c.pinned_hash == _LATEST), sa.null()), else_=_NOW),
        updated_at=_NOW,
    )
    .returning(t.chats.c.id, t.chats.c.pinned_hash, t.chats.c.dirty_since, t.chats.c.pinned_at)
)
_CLEAR_PIN = Prepared(sa.delete(t.chat_resources).where(t.chat_resources.c.chat_id == sa.bindparam("chat_id")))
_PIN_COLUMNS = [c.name for c in t.snapshot_resources.columns if c.name != "agent_id"]
_COPY_PIN = Prepared(
    sa.insert(t.chat_resources).from_select(
        ["chat_id", *_PIN_COLUMNS, "origin"],  # the origin said, not left to a default filled in at execution
        sa.select(
            sa.bindparam("chat_id", type_=sa.String),
            *(t.snapshot_resources.c[name] for name in _PIN_COLUMNS),
            sa.literal(rows.SNAPSHOT, type_=sa.String),
        ).where(t.snapshot_resources.c.agent_id == sa.bindparam("agent_id")),
    )
)


def pin_and_mark(executor: Executor, agent_id: str, push: PushRequest, *, now: dt.datetime) -> list[Event]:
    """Coder's hydration and ``MarkChatsContextDirtyByAgent`` (plus marking up to date what matches again)."""
    latest = push.aggregate_hash
    params = {"for_agent": agent_id, "latest": latest, "version": push.version, "error": push.error, "now": now}
    changed = sorted(_PIN_AND_MARK.all(executor, params), key=lambda row: row.id)
    pinned = [row.id for row in changed if row.pinned_at == now and row.dirty_since is None]
    copy_pin(executor, agent_id, pinned)
    events = [
        Event(chat_topic(c), "pinned", {"chat_id": c, "pinned_hash": latest, "version": push.version}) for c in pinned
    ]
    for row in changed:
        if row.id in pinned:
            continue
        if row.pinned_hash == latest:
            events.append(Event(chat_topic(row.id), "up_to_date", {"chat_id": row.id, "pinned_hash": latest}))
        else:
            data = {
                "chat_id": row.id,
                "pinned_hash": row.pinned_hash,
                "latest_hash": latest,
                "dirty_since": now.isoformat(),
            }
            events.append(Event(chat_topic(row.id), "out_of_date", data))
    return events


def copy_pin(executor: Executor, agent_id: str, chat_ids: Sequence[str]) -> None:
    """Replace the chats' pinned rows with the agent's current snapshot rows (clear, then copy), chat by chat."""
    for chat_id in chat_ids:
        _CLEAR_PIN.execute(executor, {"chat_id": chat_id})
        _COPY_PIN.execute(executor, {"chat_id": chat_id, "agent_id": agent_id})
