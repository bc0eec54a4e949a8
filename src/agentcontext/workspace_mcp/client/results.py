"""Tool results from upstream servers in Coder's shape (coder.md 3.5), within the output limit.

Text blocks stay text; images and audio carry base64 ``data`` and a ``media_type``; an
embedded resource or a resource link becomes a line naming it; anything else says its type
is unsupported. Past ``mcp.max_output_bytes`` of text and data the rest is dropped and a
last text block says how much: ``[output truncated: N bytes over the M-byte limit]``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import mcp.types as types


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A proxied call in Coder's shape: content blocks and the error flag."""

    content: list[dict[str, Any]]
    is_error: bool

    def to_dict(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error}


def convert_result(result: types.CallToolResult | None, max_bytes: int) -> CallOutcome:
    """Coder's content mapping; past ``max_bytes`` of text and data the rest is dropped, with a marker."""
    if result is None:
        return CallOutcome([], False)
    content: list[dict[str, Any]] = []
    remaining = max_bytes
    dropped = 0
    for item in map(_convert_block, result.content):
        key = "data" if "data" in item else "text"
        size = len(item[key].encode("utf-8"))
        if size <= remaining:
            remaining -= size
            content.append(item)
            continue
        dropped += size - (remaining if key == "text" else 0)
        if key == "text" and remaining:
            item["text"] = item["text"].encode("utf-8")[:remaining].decode("utf-8", errors="ignore")
            content.append(item)
        remaining = 0
    if dropped:
        content.append({"type": "text", "text": f"[output truncated: {dropped} bytes over the {max_bytes}-byte limit]"})
    return CallOutcome(content, bool(result.is_error))


def _convert_block(block: Any) -> dict[str, Any]:
    if isinstance(block, types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        data = block.data if isinstance(block.data, str) else base64.b64encode(block.data).decode()
        return {"type": kind, "data": data, "media_type": block.mime_type}
    if isinstance(block, types.EmbeddedResource):
        return {"type": "resource", "text": f"[embedded resource: {block.resource.uri}]"}
    if isinstance(block, types.ResourceLink):
        return {"type": "resource", "text": f"[resource link: {block.uri}]"}
    return {"type": "text", "text": f"[unsupported content type: {getattr(block, 'type', type(block).__name__)}]"}
