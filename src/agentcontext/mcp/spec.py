"""The shape of our MCP tools: a spec (name, description, schemas, hints) and an outcome.

A tool is a plain function to an :class:`Outcome`; the server turns outcomes into
``CallToolResult`` (errors as ``isError`` results, never protocol failures).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Outcome:
    text: str
    structured: dict[str, Any] | None = None
    error: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    needs_project: bool = True
    multi_only: bool = False
    read_only: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def object_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema
