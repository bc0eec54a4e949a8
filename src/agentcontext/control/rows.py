"""Resources in and out of the database: columns for what is queried, ``meta`` for the rest.

A snapshot row and a pinned chat row have the same columns; a row's text is in ``contents``
(``content_key``). Reads name the kinds whose texts they need (a prompt: instruction files;
a summary: none) and join just those. ``meta`` also keeps what the server works out once,
at push time, for the summaries: ``blank`` marks an instruction file with nothing left once
sanitised (Coder leaves those out of the listing).

Both ways go through the resource's one codec: ``to_row`` splits ``Resource.to_dict`` into
the columns and ``meta``, ``to_resource`` joins them again for ``Resource.from_dict``. A row
is read by column name: as the database gives it, or as a ``Row`` (``PinRow``) in hand.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict, namedtuple
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
SCALAR_COLUMNS = tuple(name for name in ROW_COLUMNS if name != "meta")  # each but the JSON one
PIN_COLUMNS = (*ROW_COLUMNS, "origin", "caused_by")  # a chat's pinned row: where it came from, and why
Row: Any = namedtuple("Row", ROW_COLUMNS)  # type: ignore[misc]  # a snapshot row in hand (or a pinned one's columns)
PinRow: Any = namedtuple("PinRow", PIN_COLUMNS)  # type: ignore[misc]  # a chat's pinned row in hand
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


def to_resource(row: Any, text: str | None) -> Resource:
    """The resource of a row (its columns by name; ``meta`` decoded, or its JSON text as read raw) and its text.

    Fields of a newer core that ``meta`` holds are read by ``Resource.from_dict`` as it reads any of them."""
    meta = row.meta
    data = dict((json.loads(meta) if isinstance(meta, str) else meta) or {})
    for name in _COLUMNS:
        data[name] = getattr(row, name)
    if text is not None:
        data["content"] = text
    return Resource.from_dict(data)


def row_of(found: Any) -> Any:
    """A row as read (or in hand, with these columns or more) as a ``Row``: its ``ROW_COLUMNS``, by name."""
    return Row._make([getattr(found, name) for name in ROW_COLUMNS])


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


def of_snapshot(pinned: Iterable[Any]) -> list[Any]:
    """The pinned rows (``PIN_COLUMNS``) copied from a snapshot, as ``Row``s: what a refresh compares with the
    snapshot's (discovered rows are re-resolved apart, ``discovered``)."""
    return [row_of(row) for row in pinned if row.origin == SNAPSHOT]


def load(rows: Iterable[Any]) -> list[Resource]:
    return [to_resource(row, getattr(row, "text", None)) for row in rows]


# --- resources by their raw rows: what a turn reads, mostly rows it has read before ------------------------

_RAW_META = sa.cast(t.chat_resources.c.meta, sa.Text).label("meta")  # its JSON text: a row is hashable
_PIN_RAW = {
    texts: sa.select(
        *(t.chat_resources.c[name] for name in SCALAR_COLUMNS),
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
            *(t.snapshot_resources.c[name] for name in SCALAR_COLUMNS),
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
_LOADED: OrderedDict[tuple[Any, bool], Resource] = OrderedDict()
_LOADED_KEPT = 8192
_LOADED_LOCK = threading.Lock()


def pinned_resources(executor: Executor, chat_id: str, *, instruction_texts: bool) -> list[Resource]:
    """A chat's resources pinned from its snapshot, the instruction files' texts with them when asked.

    Rows come back as stored (``meta`` as its JSON text), and each is built into a resource once: a row read
    before (the same columns, the same text) gives the resource built then.
    """
    statement = _PIN_RAW[str(Kind.INSTRUCTION_FILE) if instruction_texts else None]
    return [_resource_of(row) for row in executor.execute(statement, {"owner": chat_id})]


def latest_mcp_servers(executor: Executor, agent_id: str) -> list[Resource]:
    """The MCP servers of the agent's latest snapshot (no texts), built once each like ``pinned_resources``."""
    return [_resource_of(row) for row in executor.execute(_SNAPSHOT_RAW_MCP, {"owner": agent_id})]


def pinned_and_mcp_servers(
    executor: Executor, chat_id: str, agent_id: str, *, instruction_texts: bool
) -> tuple[list[Resource], list[Resource]]:
    """``pinned_resources`` and ``latest_mcp_servers`` in one statement (one round trip)."""
    statement = _PIN_AND_MCP_RAW[str(Kind.INSTRUCTION_FILE) if instruction_texts else None]
    found: tuple[list[Resource], list[Resource]] = ([], [])
    for row in executor.execute(statement, {"owner": chat_id, "agent": agent_id}):
        found[row.side].append(_resource_of(row))
    return found


def _resource_of(found: Any) -> Resource:
    """A row read raw (``meta`` as its JSON text; ``text`` when read), built once: the same columns and a text
    for the same content key give the resource built before."""
    text = getattr(found, "text", None)
    key = (row_of(found), text is not None)
    with _LOADED_LOCK:
        resource = _LOADED.get(key)
        if resource is not None:
            _LOADED.move_to_end(key)
            return resource
    resource = to_resource(key[0], text)
    with _LOADED_LOCK:
        _LOADED[key] = resource
        while len(_LOADED) > _LOADED_KEPT:
            _LOADED.popitem(last=False)
    return resource


def snapshot_resources(executor: Executor, agent_id: str, *, with_content: Contents = True) -> list[Resource]:
    return load(read(executor, agent_id, chat=False, with_content=with_content))


def chat_resources(
    executor: Executor, chat_id: str, *, with_content: Contents = True, origin: str | None = None
) -> list[Resource]:
    """A chat's pinned resources; with ``origin``, only those of that origin."""
    found = read(executor, chat_id, chat=True, with_content=with_content)
    return load(row for row in found if origin is None or row.origin == origin)


def pushed_form(stored: Any) -> dict[str, Any]:
    """A stored row (as ``rows.read`` gives it) as ``to_row(..., derived=False)`` makes it: without what the server
    works out itself, to compare with a pushed resource's."""
    data = {name: getattr(stored, name) for name in ROW_COLUMNS}
    meta = data["meta"] or {}
    data["meta"] = {k: v for k, v in meta.items() if k != BLANK} if BLANK in meta else meta
    return data
