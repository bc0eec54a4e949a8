"""A chat as the API shows it (``wire.ChatResponse``), built from rows already in hand (no queries here).

Rows are read by column name: ``rows.PIN_COLUMNS`` (or ``rows.ROW_COLUMNS`` alone: then copied from the
snapshot); the listing follows Coder's (by source path, without ok-but-empty instruction files and skills
without a usable name). Each resource says where it came from: ``origin`` "snapshot", or
"discovered" with ``caused_by``, the touched paths it was found for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentcontext.control import rows
from agentcontext.control.skill_index import usable_skill_name
from agentcontext.control.wire import ChatResponse, RefreshResponse
from agentcontext.resource import Kind, Status
from agentcontext.snapshot import Diff

if TYPE_CHECKING:
    from agentcontext.control.chats import ChatRow

_SKILL, _MCP_SERVER, _INSTRUCTION, _OK = (
    str(Kind.SKILL),
    str(Kind.MCP_SERVER),
    str(Kind.INSTRUCTION_FILE),
    str(Status.OK),
)


def listed(row: Any) -> bool:
    """Coder's pinned listing leaves out ok-but-empty instruction files and skills without a usable name.

    Empty as the prompt sees it: nothing left once sanitised (worked out at push time: ``rows.BLANK``).
    """
    kind, meta = row.kind, row.meta
    if row.status != _OK:
        return True
    if kind == _INSTRUCTION:
        return not (meta or {}).get(rows.BLANK)
    return not (kind == _SKILL and not usable_skill_name((meta or {}).get("name")))


def resource_view(row: Any) -> dict[str, Any]:
    """A pinned resource as the API lists it (a row without ``origin`` was copied from the snapshot)."""
    kind, meta, origin = row.kind, row.meta, getattr(row, "origin", rows.SNAPSHOT)
    data: dict[str, Any] = {"path": row.path, "kind": kind, "status": row.status, "size_bytes": row.size_bytes}
    data["error"] = row.error
    data["origin"] = origin
    if origin == rows.DISCOVERED:
        data["caused_by"] = list(row.caused_by or ())
    if kind == _SKILL:
        data["skill_name"] = (meta or {}).get("name")
        data["skill_description"] = (meta or {}).get("description")
    elif kind == _MCP_SERVER:
        tools = (meta or {}).get("tools") or ()
        data["tools"] = [{"name": str(t["name"]), "description": str(t.get("description") or "")} for t in tools]
    return data


def view(chat: ChatRow, pinned: Iterable[Any], latest_hash: str | None) -> ChatResponse:
    """The chat's summary from its pinned rows (texts not needed)."""
    return ChatResponse.model_validate(_summary(chat, pinned, latest_hash))


def refreshed(
    chat: ChatRow, pinned: Iterable[Any], latest_hash: str | None, changes: Diff, kept_because: str | None
) -> RefreshResponse:
    """The summary of a chat just re-pinned, with what changed and why its discovered files were kept (if so)."""
    kept = {"discovered_error": kept_because} if kept_because else {}
    return RefreshResponse.model_validate({**_summary(chat, pinned, latest_hash), "diff": changes.to_dict(), **kept})


def _summary(chat: ChatRow, pinned: Iterable[Any], latest_hash: str | None) -> dict[str, Any]:
    listing = sorted((r for r in pinned if listed(r)), key=lambda r: (r.path, r.kind))  # Coder: by source (path)
    return {
        "id": chat.id,
        "status": chat.status,
        "title": chat.title,
        "workspace_id": chat.workspace_id,
        "agent_id": chat.agent_id,
        "parent_id": chat.parent_id,
        "plan_mode": chat.plan_mode,
        "archived": chat.archived,
        "created_at": chat.created_at.isoformat(),
        "updated_at": chat.updated_at.isoformat(),
        "context": {
            "pinned_hash": chat.pinned_hash,
            "pinned_version": chat.pinned_version,
            "pinned_at": chat.pinned_at.isoformat() if chat.pinned_at else None,
            "latest_hash": latest_hash,
            "dirty": chat.dirty_since is not None,
            "dirty_since": chat.dirty_since.isoformat() if chat.dirty_since else None,
            "error": chat.pinned_error,
            "resources": [resource_view(r) for r in listing],
        },
    }
