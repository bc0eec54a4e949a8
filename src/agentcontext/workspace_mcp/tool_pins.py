"""Tool definitions pinned at approval, and what changed since ("rug pull" detection).

A tool's definition is its name, description, input schema and annotations exactly as
the server sent them (before any sanitising, so a change that only adds invisible
characters is a change too). Its fingerprint is the sha256 of that definition as
canonical JSON; the set's fingerprint covers every tool's name and fingerprint.

Comparing the pinned definitions with a new listing sorts each tool into: unchanged
(offered), ``changed`` (same name, another definition), ``added`` (not pinned) and
``removed`` (pinned, no longer listed). Changed and added tools are withheld until the
user approves the new set; each change carries a unified diff of the two definitions,
in JSON with every non-ASCII character escaped, so hidden characters show as ``\\u200b``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentcontext.resource import ToolChange

Definition = dict[str, Any]  # {"name", "description", "input_schema", "annotations"}
MAX_DIFF_CHARS = 4096


def definition(
    name: str, description: str | None, input_schema: Mapping[str, Any] | None, annotations: Mapping[str, Any] | None
) -> Definition:
    """A tool's definition as pinned: the four fields, ``None`` kept as the server sent it."""
    return {
        "name": name,
        "description": description,
        "input_schema": dict(input_schema) if input_schema is not None else None,
        "annotations": dict(annotations) if annotations is not None else None,
    }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def fingerprint(tool: Definition) -> str:
    return hashlib.sha256(_canonical(tool).encode()).hexdigest()


def set_fingerprint(tools: Iterable[Definition]) -> str:
    """The fingerprint of a whole tool set: every name with its fingerprint, in name order."""
    pairs = sorted((str(t.get("name")), fingerprint(t)) for t in tools)
    return hashlib.sha256(_canonical(pairs).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PinCheck:
    """A listing judged against the pins: what may be offered, and every change."""

    offered: tuple[Definition, ...]
    changes: tuple[ToolChange, ...]

    @property
    def withheld(self) -> frozenset[str]:
        return frozenset(c.tool for c in self.changes if c.change != "removed")


def compare(pinned: Mapping[str, Definition], current: Sequence[Definition]) -> PinCheck:
    """Unchanged tools are offered; changed and added ones are withheld; removed ones are reported."""
    offered: list[Definition] = []
    changes: list[ToolChange] = []
    listed: set[str] = set()
    for tool in current:
        name = str(tool.get("name"))
        listed.add(name)
        before = pinned.get(name)
        if before is None:
            changes.append(ToolChange(name, "added", diff(None, tool)))
        elif fingerprint(before) != fingerprint(tool):
            changes.append(ToolChange(name, "changed", diff(before, tool)))
        else:
            offered.append(tool)
    changes += [ToolChange(name, "removed", diff(pinned[name], None)) for name in sorted(set(pinned) - listed)]
    return PinCheck(tuple(offered), tuple(sorted(changes, key=lambda c: (c.tool, c.change))))


def _lines(tool: Definition | None) -> list[str]:
    if tool is None:
        return []
    return json.dumps(tool, sort_keys=True, indent=1, ensure_ascii=True).splitlines()


def diff(before: Definition | None, after: Definition | None) -> str:
    """A unified diff of two definitions (either may be missing), cut at :data:`MAX_DIFF_CHARS`."""
    name = str((after or before or {}).get("name"))
    text = "\n".join(
        difflib.unified_diff(_lines(before), _lines(after), f"{name} (approved)", f"{name} (now)", lineterm="")
    )
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n… (diff cut at {MAX_DIFF_CHARS} characters)"
    return text


def as_pins(tools: Iterable[Definition]) -> dict[str, Definition]:
    """Definitions by name, as the trust store keeps them (the first of a repeated name wins)."""
    out: dict[str, Definition] = {}
    for tool in tools:
        out.setdefault(str(tool.get("name")), tool)
    return out
