"""One server's tool listing judged against the user's approval: what is offered, what is withheld.

The first listing after approval (or under ``mcp.trust = auto``, the first listing at
all) is pinned in the user's trust store. Every later listing is compared with the pins
(:mod:`agentcontext.workspace_mcp.tool_pins`): unchanged tools are offered, sanitised for the prompt
(:mod:`agentcontext.workspace_mcp.tool_text`); changed and added tools are withheld, and the server is
``changed`` until the user approves the new listing, which the store keeps as ``seen``
so that ``agentcontext mcp trust`` approves exactly what was reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcontext.resource import Tool, ToolChange
from agentcontext.workspace_mcp.launch import Launch
from agentcontext.workspace_mcp.tool_pins import Definition, as_pins, compare, definition, set_fingerprint
from agentcontext.workspace_mcp.tool_text import clean
from agentcontext.workspace_mcp.trust import TrustStore

if TYPE_CHECKING:  # listings come from a session; judging them needs no SDK (``status`` imports this module)
    import mcp.types as types

MAX_SERVER_WARNINGS = 50


@dataclass(frozen=True, slots=True)
class Judged:
    """A listing as the catalog shows it."""

    tools: tuple[Tool, ...]  # offered, sanitised, by name
    withheld: frozenset[str]  # changed or added since approval: not offered, not callable
    changes: tuple[ToolChange, ...]
    warnings: tuple[str, ...]  # hidden text in names, descriptions and schemas
    tool_set: str  # fingerprint of the listing as the server sent it


NOTHING = Judged((), frozenset(), (), (), "")


def input_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """An input schema passed through, with ``properties`` kept as ``{}`` when empty (Coder)."""
    out = dict(schema or {})
    out.setdefault("type", "object")
    if out.get("properties") is None:
        out["properties"] = {}
    return out


def raw_definition(tool: types.Tool) -> Definition:
    """A tool as the server sent it, for pinning: name, description, input schema, annotations."""
    annotations = tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None
    return definition(tool.name, tool.description, tool.input_schema, annotations)


def judge(launch: Launch, store: TrustStore, listed: Sequence[Definition]) -> Judged:
    """Pin a first listing; compare a later one; offer the unchanged tools, cleaned. (File I/O: run in a thread.)"""
    current = as_pins(listed)
    pinned = store.pins(launch)
    if pinned is None:
        pinned = store.pin(launch, current)
    check = compare(pinned, list(current.values()))
    store.note_seen(launch, current if check.changes else None)
    offered: list[Tool] = []
    warnings: list[str] = []
    for tool in current.values():
        cleaned, found = clean(tool)
        warnings += found
        if cleaned is not None and cleaned.name not in check.withheld:
            offered.append(
                Tool(cleaned.name, cleaned.description, input_schema(cleaned.input_schema), cleaned.annotations)
            )
    if len(warnings) > MAX_SERVER_WARNINGS:
        more = len(warnings) - MAX_SERVER_WARNINGS + 1
        warnings = [*warnings[: MAX_SERVER_WARNINGS - 1], f"{more} more warnings about this server's tools"]
    return Judged(
        tuple(sorted(offered, key=lambda t: t.name)),
        check.withheld,
        check.changes,
        tuple(warnings),
        set_fingerprint(current.values()),
    )
