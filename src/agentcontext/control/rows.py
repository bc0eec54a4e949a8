"""Resources in and out of the database: columns for what is queried, ``meta`` for the rest."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import contents
from agentcontext.control.models import ChatResource, ResourceRow, SnapshotResource
from agentcontext.resource import Resource

_COLUMNS = ("kind", "path", "scope", "status", "size_bytes", "content_hash", "error")
_NOT_META = {*_COLUMNS, "id", "content"}


def to_row(resource: Resource, content_key: str | None) -> dict[str, Any]:
    data = resource.to_dict()
    row = {name: data[name] for name in _COLUMNS}
    row["source"] = resource.id
    row["content_key"] = content_key
    row["meta"] = {k: v for k, v in data.items() if k not in _NOT_META}
    return row


def to_resource(row: ResourceRow | sa.Row[Any], text: str | None) -> Resource:
    data: dict[str, Any] = dict(row.meta or {})
    data.update({name: getattr(row, name) for name in _COLUMNS})
    if text is not None:
        data["content"] = text
    return Resource.from_dict(data)


def store(session: Session, resources: Iterable[Resource]) -> list[dict[str, Any]]:
    """Rows for ``resources``, their contents stored (once) first."""
    listed = list(resources)
    keys = contents.put(session, [r.content for r in listed if r.content is not None and r.status.carries_content])
    return [
        to_row(r, keys.get(r.content) if r.content is not None and r.status.carries_content else None) for r in listed
    ]


Contents = bool | Collection[str]  # all, none, or those of these kinds only


def load(
    session: Session, rows: Iterable[ResourceRow | sa.Row[Any]], *, with_content: Contents = True
) -> list[Resource]:
    listed = list(rows)
    wanted = [r.content_key for r in listed if r.content_key and _wanted(r.kind, with_content)]
    texts: Mapping[str, str] = contents.get(session, wanted) if wanted else {}
    return [to_resource(r, texts.get(r.content_key) if r.content_key else None) for r in listed]


def _wanted(kind: str, with_content: Contents) -> bool:
    return with_content if isinstance(with_content, bool) else kind in with_content


def snapshot_resources(session: Session, agent_id: str, *, with_content: Contents = True) -> list[Resource]:
    rows = session.scalars(
        sa.select(SnapshotResource).where(SnapshotResource.agent_id == agent_id).order_by(SnapshotResource.source)
    )
    return load(session, rows, with_content=with_content)


def chat_resources(session: Session, chat_id: str, *, with_content: Contents = True) -> list[Resource]:
    rows = session.scalars(sa.select(ChatResource).where(ChatResource.chat_id == chat_id).order_by(ChatResource.source))
    return load(session, rows, with_content=with_content)
