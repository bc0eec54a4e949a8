"""An MCP server's tool text, checked and sanitised for a prompt as instruction files are.

A server writes the text a model reads as tool descriptions, so the same rules apply as
for AGENTS.md (:mod:`agentcontext.sanitize`), each with a warning naming the tool:

* a tool whose name holds hidden characters (invisible, bidirectional, tag characters),
  is empty or longer than :data:`MAX_NAME` (128, as SEP-986 allows) is not offered at
  all: a name is what a call routes by, so it cannot be cleaned;
* the description is sanitised (HTML comments and hidden code points removed, whitespace
  tidied) and cut at :data:`MAX_DESCRIPTION_BYTES` (2 KiB) with a visible marker;
* in the input schema, every ``description`` and ``title`` string is sanitised the same
  way; hidden text elsewhere (property names, enum values) is warned about and left, since
  changing it would change what the tool accepts.

At most :data:`MAX_WARNINGS` warnings are listed per tool; one more counts the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentcontext import storable
from agentcontext.resource import Tool
from agentcontext.sanitize import hidden_text_warnings, sanitize
from agentcontext.workspace_mcp.tool_pins import Definition

MAX_DESCRIPTION_BYTES = 2048
MAX_NAME = 128
MAX_WARNINGS = 10
MAX_WARNING_CHARS = 300
_SANITISED_KEYS = frozenset({"description", "title"})
_CUT_MARK = re.compile(r"… \[description cut at \d+ bytes of \d+\]$")


def cut(text: str, limit: int = MAX_DESCRIPTION_BYTES) -> str:
    """``text`` within ``limit`` bytes of UTF-8, with a visible marker when it was longer (idempotent)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    marked = _CUT_MARK.search(text)
    if marked is not None and len(text[: marked.start()].encode("utf-8")) <= limit:
        return text  # cut already
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}… [description cut at {limit} bytes of {len(data)}]"


def _hidden(where: str, text: str, what: str) -> list[str]:
    found = hidden_text_warnings(text)
    return [f"{where}: {w.removeprefix('hidden text: ')} in {what}"[:MAX_WARNING_CHARS] for w in found]


def _schema(value: Any, where: str, path: str, warnings: list[str]) -> Any:
    """``value`` with its description and title strings sanitised; hidden text anywhere noted."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key_text = str(key)
            warnings += _hidden(where, key_text, f"the input schema key at {path}")
            at = f"{path}/{key_text[:64]}"
            if key_text in _SANITISED_KEYS and isinstance(item, str):
                warnings += _hidden(where, item, f"the input schema's {at} (removed)")
                out[key_text] = cut(sanitize(item))
            else:
                out[key_text] = _schema(item, where, at, warnings)
        return out
    if isinstance(value, list):
        return [_schema(item, where, f"{path}/{index}", warnings) for index, item in enumerate(value)]
    if isinstance(value, str):
        warnings += _hidden(where, value, f"the input schema value at {path} (kept: it is data)")
    return value


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(map(_holds_nul, value))
    return False


def clean(tool: Definition) -> tuple[Tool | None, tuple[str, ...]]:
    """The tool as offered (None: not offered), and the warnings about it."""
    name = str(tool.get("name") or "")
    where = f'tool "{storable.shown(name[:MAX_NAME]).encode("ascii", "backslashreplace").decode()}"'
    if hidden_text_warnings(name):
        return None, (f"{where}: not offered: its name holds hidden characters",)
    if not name or len(name) > MAX_NAME:
        return None, (f"{where}: not offered: a tool name must have 1 to {MAX_NAME} characters",)
    warnings: list[str] = []
    description = str(tool.get("description") or "")
    warnings += _hidden(where, description, "its description (removed)")
    description = cut(sanitize(description))
    schema = _schema(tool.get("input_schema") or {}, where, "", warnings)
    annotations = tool.get("annotations")
    notes = _schema(annotations, where, "annotations", warnings) if isinstance(annotations, Mapping) else {}
    if len(warnings) > MAX_WARNINGS:
        warnings = [*warnings[: MAX_WARNINGS - 1], f"{where}: {len(warnings) - MAX_WARNINGS + 1} more hidden texts"]
    offered = Tool(name, description, schema, dict(notes))
    if _holds_nul(offered.to_dict()):  # JSON can carry a NUL; no database stores one in a snapshot
        return None, (*warnings, f"{where}: not offered: its definition holds a NUL character (\\u0000)")
    return offered, tuple(warnings)


def for_prompt(tool: Tool) -> Tool:
    """An offered tool cleaned again where a prompt is built (idempotent): its description and schema texts."""
    schema = _schema(tool.input_schema, "", "", [])  # its warnings were given where the tool was listed
    return Tool(tool.name, cut(sanitize(tool.description)), schema, tool.annotations)
