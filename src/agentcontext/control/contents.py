"""Texts stored once by the sha256 of their UTF-8 bytes, whoever stores them and however often."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from agentcontext.control.models import ChatFile, ChatResource, Content, PersonalSkill, SnapshotResource


def key_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def put(session: Session, texts: Iterable[str]) -> dict[str, str]:
    """Store each text unless already stored; returns text -> key."""
    keys = {text: key_of(text) for text in texts}
    if not keys:
        return keys
    rows = [{"hash": key, "size_bytes": len(text.encode("utf-8")), "text": text} for text, key in keys.items()]
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    for start in range(0, len(rows), 200):  # well under either database's bound-parameter limit
        session.execute(insert(Content).on_conflict_do_nothing(index_elements=["hash"]), rows[start : start + 200])
    return keys


def get(session: Session, keys: Iterable[str]) -> dict[str, str]:
    """key -> text for the keys that exist."""
    wanted = set(keys)
    if not wanted:
        return {}
    found = session.execute(sa.select(Content.hash, Content.text).where(Content.hash.in_(wanted)))
    return {row[0]: row[1] for row in found}  # not dict(found): a Result has keys() of its own


def unreferenced(session: Session) -> int:
    """Delete contents nothing points at any more; returns how many."""
    used = sa.union(
        sa.select(SnapshotResource.content_key),
        sa.select(ChatResource.content_key),
        sa.select(PersonalSkill.content_key),
        sa.select(ChatFile.content_key),
    ).subquery()
    result: sa.CursorResult[Any] = session.execute(  # type: ignore[assignment]
        sa.delete(Content).where(Content.hash.not_in(sa.select(used.c[0]).where(used.c[0].is_not(None))))
    )
    return int(result.rowcount or 0)
