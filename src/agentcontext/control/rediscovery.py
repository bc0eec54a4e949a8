"""Discovered files kept true: re-resolved by a refresh, rechecked on the agent's heartbeats.

A refresh asks the agent again for the paths that caused the chat's discovered rows and
makes the rows what it answers now (files the snapshot holds now left out); when the agent
cannot be asked, the rows stay as they are and the refresh says why. No push shows an edit
of a discovered file (it is not in the snapshot), so the agent's heartbeats (one at once when
its watch of them saw a change: ``agent/discovered.py``) lead the control plane to ask again
for the discovered files of its active chats not marked yet, and to mark out of date those
whose files changed or no longer apply, and those where a new file applies.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from agentcontext.control import contents, rows
from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.discovered import INSERT, MOVED, Target, new_row
from agentcontext.control.discovered_answer import MAX_DISCOVERED, MAX_PATHS, Answer
from agentcontext.control.events import Event, chat_topic
from agentcontext.control.ingest import ACTIVE_STATUSES
from agentcontext.control.prepared import Prepared
from agentcontext.control.visibility import OWNED_CHAT
from agentcontext.resource import Resource

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
_SET_DISCOVERED_AT = MOVED.values(discovered_at=sa.bindparam("at"))


def pinned_rows(executor: Executor, chat_id: str) -> list[Any]:
    """The chat's discovered rows (``rows.PIN_COLUMNS``), by source."""
    return list(executor.execute(_DISCOVERED_ROWS, {"chat_id": chat_id}))


def _by_source(row: Any) -> str:
    return str(row.source)


def causes(found: Iterable[Any]) -> list[str]:
    """The paths that caused the discovered rows (``PIN_COLUMNS`` rows), each once."""
    return list(dict.fromkeys(path for row in found for path in (row.caused_by or ())))


@dataclass(frozen=True, slots=True)
class Rediscovered:
    """The discovered rows before and after a refresh (``PIN_COLUMNS``), and why they were kept, if they were."""

    before: list[Any]
    after: list[Any]
    kept_because: str | None = None


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
    with no answer (the agent could not be asked: ``kept_because``), keep them as they are. Rows whose causes
    the answer was not asked about (a touched call since it was asked) stay as they are."""
    before = pinned_rows(executor, chat_id)
    if answer is None:
        return Rediscovered(before, before, kept_because if before else None)
    asked = set(answer.asked)
    unasked = [row for row in before if not set(row.caused_by or ()) <= asked]  # added since, or past the cap
    kept = [{name: getattr(row, name) for name in rows.PIN_COLUMNS} | {"chat_id": chat_id} for row in unasked]
    skip = snapshot_sources | {row.source for row in unasked}
    texts: dict[str, str] = {}
    new = [new_row(chat_id, found, texts) for found in answer.files if found.resource.id not in skip]
    new = kept + new[: max(0, MAX_DISCOVERED - len(kept))]
    after = sorted((rows.PinRow(**{name: row[name] for name in rows.PIN_COLUMNS}) for row in new), key=_by_source)
    if [tuple(row) for row in before] == after:
        return Rediscovered(before, before)
    executor.execute(_DROP_DISCOVERED, {"chat_id": chat_id})
    if new:
        contents.put_keyed(executor, texts)
        executor.execute(INSERT, new)
    executor.execute(_SET_DISCOVERED_AT, {"for_chat": chat_id, "at": now if new else None})
    return Rediscovered(before, after)


# --- rechecks: a discovered file that changed on disk marks its chats out of date -------------------------

MAX_WATCHED = 4 * MAX_PATHS  # causes one recheck asks the agent about (the first ones)
MAX_WATCHED_ROWS = 4096  # discovered rows one recheck compares (the others wait for a refresh)

_TARGET_AND_CAUSES = (
    sa.select(t.agents.c.url, t.agents.c.sealed_secret, t.chats.c.agent_id, t.chat_resources.c.caused_by)
    .select_from(
        t.chats.join(t.agents, t.agents.c.id == t.chats.c.agent_id).join(
            t.chat_resources,
            sa.and_(t.chat_resources.c.chat_id == t.chats.c.id, t.chat_resources.c.origin == rows.DISCOVERED),
        )
    )
    .where(OWNED_CHAT)
)


def refresh_target(executor: Executor, user_id: str, chat_id: str) -> tuple[Target | None, list[str]]:
    """The chat's agent and the causes of its discovered rows (None and [] when it has none)."""
    found = executor.execute(_TARGET_AND_CAUSES, {"chat_id": chat_id, "user_id": user_id}).all()
    if not found:
        return None, []
    first = found[0]
    return Target(chat_id, first.agent_id, first.url, first.sealed_secret), causes(found)


# Asked on an agent's heartbeats (each agent's first one after a restart: thousands at once), mostly to find
# nothing: one prepared statement, where the agent's address comes with each row.
_WATCHED = Prepared(
    sa.select(
        t.chat_resources.c.chat_id,
        t.chat_resources.c.path,
        t.chat_resources.c.content_hash,
        t.chat_resources.c.status,
        t.chat_resources.c.caused_by,
        t.agents.c.url,
        t.agents.c.sealed_secret,
    )
    .select_from(
        t.chat_resources.join(t.chats, t.chats.c.id == t.chat_resources.c.chat_id).join(
            t.agents, t.agents.c.id == t.chats.c.agent_id
        )
    )
    .where(
        t.chats.c.agent_id == sa.bindparam("agent_id"),
        t.chats.c.discovered_at.is_not(None),
        t.chats.c.dirty_since.is_(None),
        t.chats.c.archived.is_(False),
        sa.or_(*(t.chats.c.status == status for status in ACTIVE_STATUSES)),  # what a push marks
        t.chat_resources.c.origin == rows.DISCOVERED,
    )
    .limit(MAX_WATCHED_ROWS)
)


@dataclass(frozen=True, slots=True)
class Watched:
    """The discovered rows of an agent's chats not marked out of date yet, and where to ask the agent."""

    rows: list[Any]
    url: str | None
    sealed_secret: str | None

    @property
    def causes(self) -> list[str]:
        return causes(self.rows)[:MAX_WATCHED]

    @property
    def complete(self) -> bool:
        """Whether :attr:`causes` holds every cause of the agent's chats not marked yet."""
        return len(self.rows) < MAX_WATCHED_ROWS and len(causes(self.rows)) <= MAX_WATCHED


def watched(executor: Executor, agent_id: str) -> Watched | None:
    """The discovered rows of the agent's chats to recheck, in one statement; None when there are none."""
    found = _WATCHED.all(executor, {"agent_id": agent_id})
    if not found:
        return None
    return Watched(found, found[0].url, found[0].sealed_secret)


def stale(found: Watched, answer: Answer) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Chat id -> its discovered files the answer shows changed or gone (rows whose causes were all asked); and
    chat id -> the files the answer shows applying to its causes that it holds no discovered row of (sources):
    new, unless its snapshot holds them (:func:`appeared`)."""
    now = {f.resource.path: f.resource for f in answer.files}
    asked = set(answer.asked)
    unknown = {path for path, _ in answer.excluded}  # past the answer's cap: there, but not shown
    out: dict[str, list[str]] = {}
    chats: dict[str, list[Any]] = {}
    for row in found.rows:
        chats.setdefault(row.chat_id, []).append(row)
        if not set(row.caused_by or ()) <= asked or row.path in unknown:
            continue
        current = now.get(row.path)
        if current is None or (current.content_hash, str(current.status)) != (row.content_hash, row.status):
            out.setdefault(row.chat_id, []).append(row.path)
    new: dict[str, list[str]] = {}
    if not found.complete:  # a chat's rows may be cut short: a file it holds could look new
        return out, new
    applying: dict[str, list[Resource]] = {}  # asked path -> the files that apply to it
    for f in answer.files:
        for path in f.paths:
            applying.setdefault(path, []).append(f.resource)
    for chat_id, held in chats.items():
        causes = {path for row in held for path in row.caused_by or ()}
        if len(held) >= MAX_DISCOVERED or not causes <= asked:  # a full chat takes no new file; unasked: unknown
            continue
        paths = {row.path for row in held}
        unheld = {r.id: None for cause in causes for r in applying.get(cause, ()) if r.path not in paths}
        if unheld:
            new[chat_id] = list(unheld)
    return out, new


_HELD_BY_SNAPSHOT = sa.select(t.snapshot_resources.c.source).where(
    t.snapshot_resources.c.agent_id == sa.bindparam("agent_id"),
    t.snapshot_resources.c.source.in_(sa.bindparam("sources", expanding=True)),
)


def appeared(executor: Executor, agent_id: str, new: dict[str, list[str]]) -> dict[str, list[str]]:
    """Chat id -> the paths of its ``new`` files (sources) that the agent's snapshot does not hold: files that
    appeared where it works (a snapshot file the answer names is the snapshot's, and a push marks for it)."""
    sources = sorted({source for found in new.values() for source in found})
    held = set(executor.execute(_HELD_BY_SNAPSHOT, {"agent_id": agent_id, "sources": sources}).scalars())
    out = {chat: [s.split(":", 1)[1] for s in found if s not in held] for chat, found in new.items()}
    return {chat: paths for chat, paths in out.items() if paths}


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
            data = {
                "chat_id": chat_id,
                "pinned_hash": row.pinned_hash,
                "changed": paths,
                "dirty_since": now.isoformat(),
            }
            events.append(Event(chat_topic(chat_id), "out_of_date", data))
    return events
