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
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
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


_KNOWN_META = frozenset(
    {"warnings", "name", "description", "doc_order", "source", "servers", "connect", "tools", BLANK}
)


def to_resource(row: Any, text: str | None) -> Resource:
    """The row's resource: built here from what this version stores; by ``Resource.from_dict`` when ``meta``
    holds more (a field of a newer core), so nothing it knows is lost."""
    meta: dict[str, Any] = row.meta or {}
    if not meta.keys() <= _KNOWN_META:
        data = {**meta, **{name: getattr(row, name) for name in _COLUMNS}}
        if text is not None:
            data["content"] = text
        return Resource.from_dict(data)
    tools = tuple(
        Tool(str(t["name"]), str(t.get("description") or ""), dict(t.get("input_schema") or {}))
        for t in meta.get("tools", ())
    )
    return Resource(
        Kind(row.kind), row.path, Scope(row.scope), Status(row.status), row.size_bytes, row.content_hash, text,
        row.error, tuple(meta.get("warnings", ())), meta.get("name"), meta.get("description"), meta.get("doc_order"),
        meta.get("source"), tuple(meta.get("servers", ())), bool(meta.get("connect", True)), tools,
    )  # fmt: skip


def _select(table: sa.Table, owner: sa.Column[Any], texts: str | None) -> sa.Select[Any]:
    """The rows of one owner by source; with ``texts``, each row's text when its kind is that (``"*"``: any)."""
    columns = [table.c[name] for name in ROW_COLUMNS]
    if texts is None:
        return sa.select(*columns).where(owner == sa.bindparam("owner")).order_by(table.c.source)
    joined = t.contents.c.hash == table.c.content_key
    if texts != "*":
        joined = sa.and_(joined, table.c.kind == texts)  # a literal: no list parameter to expand on each call
    return (
        sa.select(*columns, t.contents.c.text)
        .select_from(table.outerjoin(t.contents, joined))
        .where(owner == sa.bindparam("owner"))
        .order_by(table.c.source)
    )


_KINDS_WITH_TEXT: tuple[str | None, ...] = (None, "*", *ALL_KINDS)
_STATEMENTS = {
    (chat, texts): _select(
        t.chat_resources if chat else t.snapshot_resources,
        t.chat_resources.c.chat_id if chat else t.snapshot_resources.c.agent_id,
        texts,
    )
    for chat in (True, False)
    for texts in _KINDS_WITH_TEXT
}


def _texts_of(with_content: Contents) -> str | None:
    if isinstance(with_content, bool):
        return "*" if with_content else None
    kinds = set(with_content)
    if not kinds:
        return None
    if len(kinds) == 1:
        return next(iter(kinds))
    return "*"  # several kinds: all texts are read (no caller asks for that but "all")


def read(executor: Executor, owner: str, *, chat: bool, with_content: Contents = False) -> list[Any]:
    """The rows of a chat's pin (``chat``) or of an agent's snapshot, by source; ``text`` with the kinds asked."""
    return list(executor.execute(_STATEMENTS[chat, _texts_of(with_content)], {"owner": owner}))


def load(rows: Iterable[Any]) -> list[Resource]:
    return [to_resource(row, getattr(row, "text", None)) for row in rows]


def snapshot_resources(executor: Executor, agent_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, agent_id, chat=False, with_content=with_content))


def chat_resources(executor: Executor, chat_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, chat_id, chat=True, with_content=with_content))


def same_rows(before: Iterable[Any], after: Iterable[Any]) -> bool:
    """Whether two lists of rows (as read here) hold the same resources, column for column."""
    return [tuple(row) for row in before] == [tuple(row) for row in after]


def pushed_form(stored: Any) -> dict[str, Any]:
    """A stored row (as ``rows.read`` gives it) as ``to_row(..., derived=False)`` makes it: without what the server
    works out itself, to compare with a pushed resource's."""
    data = dict(zip(ROW_COLUMNS, stored, strict=True))
    meta = data["meta"] or {}
    data["meta"] = {k: v for k, v in meta.items() if k != BLANK} if BLANK in meta else meta
    return data
