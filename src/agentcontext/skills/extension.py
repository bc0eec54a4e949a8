"""A skill as the SEP-2640 skills extension describes it: the extension's id and the frontmatter as JSON.

Shared by our MCP server (skills read from disk) and each chat's MCP endpoint on the control
plane (skills read from the pin), which must describe a skill the same way.
"""

from __future__ import annotations

import datetime
from typing import Any

from agentcontext.errors import FrontmatterError
from agentcontext.resource import Resource
from agentcontext.skills.frontmatter import parse

EXTENSION_ID = "io.modelcontextprotocol/skills"


def with_skills_declared(experimental: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The ``experimental`` capabilities of an ``initialize`` answer, the skills extension among them.

    The handshake era's schema (2025) has no ``extensions`` (the SDK drops them from its answer),
    so a 2025 client learns here that ``skills/list`` is served; ``server/discover`` (2026)
    declares it under ``extensions``. Both our MCP server and each chat's use this.
    """
    return {EXTENSION_ID: {}, **(experimental or {})}


def frontmatter_json(skill: Resource) -> dict[str, Any]:
    """The SKILL.md frontmatter rendered as JSON; ``name`` and ``description`` always present."""
    fields: dict[str, Any] = {}
    if skill.content is not None:
        try:
            fields = {str(k): _json_safe(v) for k, v in parse(skill.content).fields.items()}
        except FrontmatterError:
            fields = {}
    fields["name"] = (skill.name or "").split(":")[-1]
    fields.setdefault("description", skill.description or "")
    return fields


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
