"""Resources in and out of the database: columns for what is queried, ``meta`` for the rest.

A snapshot row and a pinned chat row have the same columns; a row's text is in ``contents``
(``content_key``). Reads name the kinds whose texts they need (a prompt: instruction files;
a summary: none) and join just those. ``meta`` also keeps what the server works out once,
at push time, for the summaries: ``blank`` marks an instruction file with nothing left once
sanitised (Coder leaves those out of the listing).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
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
PIN_COLUMNS = (*ROW_COLUMNS, "origin", "caused_by")  # a chat's pinned row: where it came from, and why
BLANK = "blank"
SNAPSHOT, DISCOVERED = "snapshot", "discovered"  # a pinned row's origin

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
        Tool(
            str(t["name"]),
            str(t.get("description") or ""),
            dict(t.get("input_schema") or {}),
            dict(t.get("annotations") or {}),
        )
        for t in meta.get("tools", ())
    )
    return Resource(
        Kind(row.kind), row.path, Scope(row.scope), Status(row.status), row.size_bytes, row.content_hash, text,
        row.error, tuple(meta.get("warnings", ())), meta.get("name"), meta.get("description"), meta.get("doc_order"),
        meta.get("source"), tuple(meta.get("servers", ())), bool(meta.get("connect", True)), tools,
    )  # fmt: skip


def _select(table: sa.Table, owner: sa.Column[Any], texts: str | None) -> sa.Select[Any]:
    """The rows of one owner by source; with ``texts``, each row's text when its kind is that (``"*"``: any).

    A chat's rows come in ``PIN_COLUMNS`` order, a snapshot's in ``ROW_COLUMNS`` order."""
    columns = [table.c[name] for name in (PIN_COLUMNS if table is t.chat_resources else ROW_COLUMNS)]
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
    """The rows of a chat's pin (``chat``: ``PIN_COLUMNS``) or of an agent's snapshot (``ROW_COLUMNS``), by
    source; ``text`` with the kinds asked."""
    return list(executor.execute(_STATEMENTS[chat, _texts_of(with_content)], {"owner": owner}))


class Positional(tuple[Any, ...]):
    """A row of ``ROW_COLUMNS`` (or ``PIN_COLUMNS``) held by position, with the names readers use."""

    __slots__ = ()
    source = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    path = property(lambda self: self[2])
    scope = property(lambda self: self[3])
    status = property(lambda self: self[4])
    size_bytes = property(lambda self: self[5])
    content_hash = property(lambda self: self[6])
    error = property(lambda self: self[7])
    content_key = property(lambda self: self[8])
    meta = property(lambda self: self[9])


def of_snapshot(pinned: Iterable[Any]) -> list[tuple[Any, ...]]:
    """The pinned rows (``PIN_COLUMNS``) copied from a snapshot, in ``ROW_COLUMNS`` order: what a refresh
    compares with the snapshot's (discovered rows are re-resolved apart, ``discovered``)."""
    return [tuple(row[: len(ROW_COLUMNS)]) for row in pinned if row[len(ROW_COLUMNS)] == SNAPSHOT]


def load(rows: Iterable[Any]) -> list[Resource]:
    return [to_resource(row, getattr(row, "text", None)) for row in rows]


# --- resources by their raw rows: what a turn reads, mostly rows it has read before ------------------------

_RAW_META = sa.cast(t.chat_resources.c.meta, sa.Text).label("meta")  # its JSON text: a row is hashable
_PIN_RAW = {
    texts: sa.select(
        *(t.chat_resources.c[name] for name in ROW_COLUMNS[:-1]),
        _RAW_META,
        *([t.contents.c.text] if texts else []),
    )
    .select_from(
        t.chat_resources.outerjoin(
            t.contents,
            sa.and_(t.contents.c.hash == t.chat_resources.c.content_key, t.chat_resources.c.kind == texts),
        )
        if texts
        else t.chat_resources
    )
    .where(t.chat_resources.c.chat_id == sa.bindparam("owner"), t.chat_resources.c.origin == SNAPSHOT)
    .order_by(t.chat_resources.c.source)
    for texts in (None, str(Kind.INSTRUCTION_FILE))
}


def _snapshot_raw_mcp(owner: str) -> sa.Select[Any]:
    return (
        sa.select(
            *(t.snapshot_resources.c[name] for name in ROW_COLUMNS[:-1]),
            sa.cast(t.snapshot_resources.c.meta, sa.Text).label("meta"),
        )
        .where(
            t.snapshot_resources.c.agent_id == sa.bindparam(owner), t.snapshot_resources.c.kind == str(Kind.MCP_SERVER)
        )
        .order_by(t.snapshot_resources.c.source)
    )


_SNAPSHOT_RAW_MCP = _snapshot_raw_mcp("owner")
# a turn's two reads in one statement: the chat's pinned rows (side 0), then its agent's MCP servers (side 1)
_PIN_AND_MCP_RAW = {
    texts: sa.union_all(
        pinned.add_columns(sa.literal(0).label("side")).order_by(None),
        _snapshot_raw_mcp("agent")
        .add_columns(*([sa.null().label("text")] if texts else []), sa.literal(1).label("side"))
        .order_by(None),
    ).order_by(sa.literal_column("side"), sa.literal_column("source"))
    for texts, pinned in _PIN_RAW.items()
}
_LOADED: OrderedDict[tuple[Any, ...], Resource] = OrderedDict()
_LOADED_KEPT = 8192
_LOADED_LOCK = threading.Lock()


def pinned_resources(executor: Executor, chat_id: str, *, instruction_texts: bool) -> list[Resource]:
    """A chat's resources pinned from its snapshot, the instruction files' texts with them when asked.

    Rows come back as stored (``meta`` as its JSON text), and each is built into a resource once: a row read
    before (the same columns, the same text) gives the resource built then.
    """
    statement = _PIN_RAW[str(Kind.INSTRUCTION_FILE) if instruction_texts else None]
    return [_resource_of(tuple(row)) for row in executor.execute(statement, {"owner": chat_id})]


def latest_mcp_servers(executor: Executor, agent_id: str) -> list[Resource]:
    """The MCP servers of the agent's latest snapshot (no texts), built once each like ``pinned_resources``."""
    return [_resource_of(tuple(row)) for row in executor.execute(_SNAPSHOT_RAW_MCP, {"owner": agent_id})]


def pinned_and_mcp_servers(
    executor: Executor, chat_id: str, agent_id: str, *, instruction_texts: bool
) -> tuple[list[Resource], list[Resource]]:
    """``pinned_resources`` and ``latest_mcp_servers`` in one statement (one round trip)."""
    statement = _PIN_AND_MCP_RAW[str(Kind.INSTRUCTION_FILE) if instruction_texts else None]
    found: tuple[list[Resource], list[Resource]] = ([], [])
    for row in executor.execute(statement, {"owner": chat_id, "agent": agent_id}):
        found[row[-1]].append(_resource_of(tuple(row)[:-1]))
    return found


def _resource_of(raw: tuple[Any, ...]) -> Resource:
    """``raw``: the row's columns, ``meta`` as text, then the text when read (its content key stands for it)."""
    with_text = len(raw) > len(ROW_COLUMNS)
    key = (*raw[: len(ROW_COLUMNS)], with_text and raw[-1] is not None)
    with _LOADED_LOCK:
        found = _LOADED.get(key)
        if found is not None:
            _LOADED.move_to_end(key)
            return found
    resource = to_resource(_Raw(raw), raw[-1] if with_text else None)
    with _LOADED_LOCK:
        _LOADED[key] = resource
        while len(_LOADED) > _LOADED_KEPT:
            _LOADED.popitem(last=False)
    return resource


class _Raw:
    """A raw row read by name, its ``meta`` decoded."""

    __slots__ = ("kind", "path", "scope", "status", "size_bytes", "content_hash", "error", "meta")

    def __init__(self, raw: tuple[Any, ...]) -> None:
        _, self.kind, self.path, self.scope, self.status, self.size_bytes, self.content_hash, self.error, _ = raw[:9]
        self.meta = json.loads(raw[9]) if raw[9] else {}


def snapshot_resources(executor: Executor, agent_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, agent_id, chat=False, with_content=with_content))


def chat_resources(
    executor: Executor, chat_id: str, *, with_content: Contents = True, origin: str | None = None
) -> list[Resource]:
    """A chat's pinned resources; with ``origin``, only those of that origin."""
    found = read(executor, chat_id, chat=True, with_content=with_content)
    return load(row for row in found if origin is None or row.origin == origin)


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
