"""Resources in and out of the database: columns for what is queried, ``meta`` for the rest.

A snapshot row and a pinned chat row have the same columns; a row's text is in ``contents``
(``content_key``). Reads name the kinds whose texts they need (a prompt: instruction files;
a summary: none) and join just those. ``meta`` also keeps what the server works out once,
at push time, for the summaries: ``blank`` marks an instruction file with nothing left once
sanitised (Coder leaves those out of the listing).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import sqlalchemy as sa

from agentcontext.control import tables as t
from agentcontext.control.contents import Executor, key_of
from agentcontext.resource import Kind, Resource
from agentcontext.sanitize import sanitize

_COLUMNS = ("kind", "path", "scope", "status", "size_bytes", "content_hash", "error")
_NOT_META = {*_COLUMNS, "id", "content"}
ROW_COLUMNS = ("source", *_COLUMNS, "content_key", "meta")
BLANK = "blank"

Contents = bool | Collection[str]  # all, none, or those of these kinds only
ALL_KINDS = tuple(str(kind) for kind in Kind)


def text_of(resource: Resource) -> str | None:
    """The text stored for a resource: its content, when its status carries one."""
    return resource.content if resource.content is not None and resource.status.carries_content else None


def to_row(resource: Resource, content_key: str | None, *, derived: bool = True) -> dict[str, Any]:
    """The row of ``resource``; ``derived``: with what the summaries need worked out (``blank``)."""
    data = resource.to_dict()
    row = {name: data[name] for name in _COLUMNS}
    row["source"] = resource.id
    row["content_key"] = content_key
    row["meta"] = {k: v for k, v in data.items() if k not in _NOT_META}
    if derived:
        add_derived(resource, row)
    return row


def add_derived(resource: Resource, row: dict[str, Any]) -> None:
    if resource.kind is Kind.INSTRUCTION_FILE and not sanitize(resource.content or ""):
        row["meta"][BLANK] = True


def keyed(resource: Resource, texts: dict[str, str]) -> str | None:
    """The key of the resource's text, hashed here (a pushed hash is never a key); ``texts`` collects text -> key."""
    text = text_of(resource)
    if text is None:
        return None
    key = texts.get(text)
    if key is None:
        key = texts[text] = key_of(text)
    return key


def to_resource(row: Any, text: str | None) -> Resource:
    data: dict[str, Any] = dict(row.meta or {})
    data.update({name: getattr(row, name) for name in _COLUMNS})
    if text is not None:
        data["content"] = text
    return Resource.from_dict(data)


def _select(table: sa.Table, owner: sa.Column[Any], *, texts: bool) -> sa.Select[Any]:
    columns = [table.c[name] for name in ROW_COLUMNS]
    if not texts:
        return sa.select(*columns).where(owner == sa.bindparam("owner")).order_by(table.c.source)
    wanted = sa.and_(t.contents.c.hash == table.c.content_key, table.c.kind.in_(sa.bindparam("kinds", expanding=True)))
    return (
        sa.select(*columns, t.contents.c.text)
        .select_from(table.outerjoin(t.contents, wanted))
        .where(owner == sa.bindparam("owner"))
        .order_by(table.c.source)
    )


SNAPSHOT_ROWS = _select(t.snapshot_resources, t.snapshot_resources.c.agent_id, texts=False)
SNAPSHOT_ROWS_TEXT = _select(t.snapshot_resources, t.snapshot_resources.c.agent_id, texts=True)
CHAT_ROWS = _select(t.chat_resources, t.chat_resources.c.chat_id, texts=False)
CHAT_ROWS_TEXT = _select(t.chat_resources, t.chat_resources.c.chat_id, texts=True)


def kinds_of(with_content: Contents) -> tuple[str, ...]:
    if isinstance(with_content, bool):
        return ALL_KINDS if with_content else ()
    return tuple(with_content)


def read(executor: Executor, owner: str, *, chat: bool, with_content: Contents = False) -> list[Any]:
    """The rows of a chat's pin (``chat``) or of an agent's snapshot, by source; ``text`` with the kinds asked."""
    kinds = kinds_of(with_content)
    if not kinds:
        return list(executor.execute(CHAT_ROWS if chat else SNAPSHOT_ROWS, {"owner": owner}))
    statement = CHAT_ROWS_TEXT if chat else SNAPSHOT_ROWS_TEXT
    return list(executor.execute(statement, {"owner": owner, "kinds": list(kinds)}))


def load(rows: Iterable[Any]) -> list[Resource]:
    return [to_resource(row, getattr(row, "text", None)) for row in rows]


def snapshot_resources(executor: Executor, agent_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, agent_id, chat=False, with_content=with_content))


def chat_resources(executor: Executor, chat_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, chat_id, chat=True, with_content=with_content))


def same_rows(before: Iterable[Any], after: Iterable[Any]) -> bool:
    """Whether two lists of rows (as read here) hold the same resources, column for column."""
    return [tuple(row) for row in before] == [tuple(row) for row in after]


def pushed_form(row: Any) -> dict[str, Any]:
    """A stored row as ``to_row(..., derived=False)`` makes it, to compare with a pushed resource's."""
    data = {name: getattr(row, name) for name in ROW_COLUMNS}
    meta = data["meta"] or {}
    if BLANK in meta:
        data["meta"] = {k: v for k, v in meta.items() if k != BLANK}
    return data
