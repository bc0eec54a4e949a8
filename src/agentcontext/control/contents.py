"""Texts stored once by the sha256 of their UTF-8 bytes, whoever stores them and however often.

A text nothing points at any more (a push that changed a file leaves the old one) is deleted a page
at a time (``unreferenced_page``, ``delete_unreferenced``) while pushes go on. On PostgreSQL a writer
that takes up a stored text locks its row (``put_keyed``), and the delete skips rows locked that way
and rechecks under its own lock: a text is never deleted under a writer about to point at it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentcontext.control import tables as t
from agentcontext.control.prepared import Prepared

Executor = Connection | Session  # a Core connection on hot paths, a session on cold ones

_PG_INSERT = postgresql.insert(t.contents)
# DO UPDATE ... WHERE false changes nothing but locks a row already there (FOR NO KEY UPDATE), so a collection
# cannot delete it before this transaction's rows point at it; DO NOTHING would lock nothing
_INSERT = {
    "postgresql": Prepared(
        _PG_INSERT.on_conflict_do_update(
            index_elements=["hash"], set_={"size_bytes": _PG_INSERT.excluded.size_bytes}, where=sa.false()
        ),
        only="postgresql",
    ),
    "sqlite": Prepared(sqlite.insert(t.contents).on_conflict_do_nothing(index_elements=["hash"]), only="sqlite"),
}
_GET = sa.select(t.contents.c.hash, t.contents.c.text).where(
    t.contents.c.hash.in_(sa.bindparam("keys", expanding=True))
)


def key_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dialect_of(executor: Executor) -> str:
    return executor.dialect.name if isinstance(executor, Connection) else executor.get_bind().dialect.name


def put(executor: Executor, texts: Iterable[str]) -> dict[str, str]:
    """Store each text unless already stored; returns text -> key."""
    keys = {text: key_of(text) for text in texts}
    put_keyed(executor, keys)
    return keys


def put_keyed(executor: Executor, keys: dict[str, str]) -> None:
    """Store each text (text -> its key, already computed) unless already stored."""
    if not keys:
        return
    # by key: two writers taking up the same stored texts lock their rows (``_INSERT``) in one order, never a circle
    ordered = sorted(keys.items(), key=lambda pair: pair[1])
    rows = [{"hash": key, "size_bytes": len(text.encode("utf-8")), "text": text} for text, key in ordered]
    _INSERT[dialect_of(executor)].execute(executor, rows)  # one row a parameter set


def get(executor: Executor, keys: Iterable[str]) -> dict[str, str]:
    """key -> text for the keys that exist."""
    wanted = list(set(keys))
    if not wanted:
        return {}
    return {row.hash: row.text for row in executor.execute(_GET, {"keys": wanted})}


# every column that points at a text: one none of them names is unreferenced (each is indexed, migration 0006)
_REFERRERS = (t.snapshot_resources, t.chat_resources, t.personal_skills, t.chat_files)
COLLECT_PAGE = 1000  # keys looked at per read, and the most deleted per write transaction


def _unreferenced(key: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    return sa.and_(*(~sa.exists().where(table.c.content_key == key) for table in _REFERRERS))


_PAGE = (
    sa.select(t.contents.c.hash, _unreferenced(t.contents.c.hash).label("free"))
    .where(t.contents.c.hash > sa.bindparam("after"))
    .order_by(t.contents.c.hash)
    .limit(COLLECT_PAGE)
)
# a collection's delete, in two statements at READ COMMITTED: first lock the keys no writer holds (one taking a
# text up holds its row, ``_INSERT``; one pointing a row at it holds it too, the foreign key's check), then, with a
# fresh view that sees every pointer committed before those locks and none after (a new one would wait on them),
# delete the locked ones nothing points at
_LOCK = (
    sa.select(t.contents.c.hash)
    .where(t.contents.c.hash.in_(sa.bindparam("keys", expanding=True)))
    .with_for_update(skip_locked=True)
)
_DELETE = sa.delete(t.contents).where(
    t.contents.c.hash.in_(sa.bindparam("keys", expanding=True)), _unreferenced(t.contents.c.hash)
)


@dataclass(frozen=True, slots=True)
class Page:
    """What one read of ``unreferenced_page`` found."""

    unreferenced: tuple[str, ...]  # keys nothing pointed at when read (a writer may take one up since)
    last: str | None  # the last key looked at, where the next page starts; None: the table is done


def unreferenced_page(executor: Executor, after: str = "") -> Page:
    """The keys past ``after`` (at most ``COLLECT_PAGE``) that nothing points at: a read, no lock taken."""
    found = executor.execute(_PAGE, {"after": after}).all()
    last = found[-1].hash if len(found) == COLLECT_PAGE else None
    return Page(tuple(row.hash for row in found if row.free), last)


def delete_unreferenced(connection: Connection, keys: Sequence[str]) -> int:
    """Delete those of ``keys`` nothing points at now; returns how many. ``connection``: a write transaction at
    READ COMMITTED (``Database.write_rows``; a session's REPEATABLE READ would not see pointers committed since
    its first statement)."""
    if not keys:
        return 0
    locked = list(keys)
    if connection.dialect.name == "postgresql":  # SQLite has one writer at a time: nothing to lock
        locked = list(connection.scalars(_LOCK, {"keys": locked}))
        if not locked:
            return 0
    result: sa.CursorResult[Any] = connection.execute(_DELETE, {"keys": locked})
    return int(result.rowcount or 0)


def unreferenced(connection: Connection) -> int:
    """Delete every text nothing points at, in one transaction (``delete_unreferenced``'s); returns how many. The
    server pages through them instead, a transaction a page (``SyncService.collect_contents``)."""
    removed, after = 0, ""
    while True:
        page = unreferenced_page(connection, after)
        removed += delete_unreferenced(connection, page.unreferenced)
        if page.last is None:
            return removed
        after = page.last
