"""Texts stored once by the sha256 of their UTF-8 bytes, whoever stores them and however often."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentcontext.control import tables as t
from agentcontext.control.prepared import Prepared

Executor = Connection | Session  # a Core connection on hot paths, a session on cold ones

_INSERT = {
    "postgresql": Prepared(
        postgresql.insert(t.contents).on_conflict_do_nothing(index_elements=["hash"]), only="postgresql"
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
    rows = [{"hash": key, "size_bytes": len(text.encode("utf-8")), "text": text} for text, key in keys.items()]
    _INSERT[dialect_of(executor)].execute(executor, rows)  # one row a parameter set


def get(executor: Executor, keys: Iterable[str]) -> dict[str, str]:
    """key -> text for the keys that exist."""
    wanted = list(set(keys))
    if not wanted:
        return {}
    return {row.hash: row.text for row in executor.execute(_GET, {"keys": wanted})}


def unreferenced(executor: Executor) -> int:
    """Delete contents nothing points at any more; returns how many."""
    used = sa.union(
        sa.select(t.snapshot_resources.c.content_key),
        sa.select(t.chat_resources.c.content_key),
        sa.select(t.personal_skills.c.content_key),
        sa.select(t.chat_files.c.content_key),
    ).subquery()
    result: sa.CursorResult[Any] = executor.execute(  # type: ignore[assignment]
        sa.delete(t.contents).where(t.contents.c.hash.not_in(sa.select(used.c[0]).where(used.c[0].is_not(None))))
    )
    return int(result.rowcount or 0)
