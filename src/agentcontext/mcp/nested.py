"""``get_instructions_for``: the nested instructions of the paths a model is about to work on.

Any MCP client gets what its agent may not load itself (Codex loads no nested AGENTS.md):
the files :mod:`agentcontext.instructions.ondemand` finds for the paths under the server's profile. A
session remembers what it was given (path and content hash) and gets only what is new or
changed since; the rest is named as "already given". Without a session (a stateless
request with no conversation id) every answer is whole. Memory is bounded: the least
recently used sessions are forgotten first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from agentcontext.instructions.applied import Applicable, text
from agentcontext.mcp.spec import Outcome, ToolSpec, object_schema
from agentcontext.settings.declared import BY_KEY

MAX_SESSIONS = 1024
MAX_PATHS = int(BY_KEY["ondemand.max_paths"].default)

_ROW = object_schema({k: {"type": "string"} for k in ("path", "reason")}, ["path", "reason"])
SPEC = ToolSpec(
    "get_instructions_for",
    "Get the instructions that apply to files or folders you are about to work on. Call it before you "
    "edit, create or run files in a directory you have not worked in yet in this conversation: in a "
    "monorepo a package may carry its own AGENTS.md, CLAUDE.md or path-scoped rules, and they override "
    "the project's general instructions for files there. Pass the paths (relative to the project root or "
    f"absolute, at most {MAX_PATHS}). Returns only what was not already given in this conversation; "
    "follow what it returns for files in those directories.",
    object_schema(
        {
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": MAX_PATHS,
                "description": "Files or folders you will work on, e.g. ['services/billing/api.py'].",
            }
        },
        ["paths"],
    ),
    object_schema(
        {
            "files": {
                "type": "array",
                "items": object_schema(
                    {
                        "path": {"type": "string"},
                        "load": {"type": "string"},
                        "reason": {"type": "string"},
                        "bytes": {"type": "integer"},
                    },
                    ["path", "load", "reason", "bytes"],
                ),
            },
            "already_given": {"type": "array", "items": {"type": "string"}},
            "not_loaded": {"type": "array", "items": _ROW},
            "refused": {"type": "array", "items": _ROW},
            "content": {"type": "string"},
        },
        ["files", "already_given", "not_loaded", "refused", "content"],
    ),
)


class Given:
    """What each session was already given: path -> content hash, per session key."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._max = max_sessions
        self._lock = threading.Lock()

    def of(self, session: str | None) -> dict[str, str]:
        """The session's memory (a fresh, unkept one when there is no session)."""
        if session is None:
            return {}
        with self._lock:
            memory = self._sessions.pop(session, None) or {}
            self._sessions[session] = memory
            while len(self._sessions) > self._max:
                self._sessions.popitem(last=False)
            return memory


def paths_argument(args: Mapping[str, Any]) -> list[str] | str:
    """The ``paths`` argument, or why it is unusable."""
    paths = args.get("paths")
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        return "paths must be a non-empty list of file or folder paths (strings)"
    return paths


def outcome(answer: Applicable, given: dict[str, str], *, sanitized: bool) -> Outcome:
    """The tool's result; records what it hands out in ``given``."""
    new = [f for f in answer.files if given.get(f.resource.path) != f.resource.content_hash]
    old = [f.resource.path for f in answer.files if f not in new]
    for applied in new:
        given[applied.resource.path] = applied.resource.content_hash
    skip = frozenset(old)
    body = text(answer, sanitized=sanitized, skip=skip)
    asked = ", ".join(answer.paths) or "the paths given"
    lines: list[str] = []
    if body:
        lines += [f"Instructions for {asked} (follow them for files there):", "", body]
    elif not old:
        lines.append(f"No instructions beyond the ones you already have apply to {asked}.")
    if old:
        if lines:
            lines.append("")
        lines.append("Already given in this conversation, and still applying: " + ", ".join(old))
    for applied in answer.excluded:
        lines.append(f"Left out: {applied.resource.path}: {applied.reason}")
    for refused in answer.refused:
        lines.append(f"Not looked up: {refused.path}: {refused.reason}")
    content = "\n".join(lines).strip("\n")
    files = [
        {"path": f.resource.path, "load": str(f.resource.load.type) if f.resource.load else "", "reason": f.reason}
        | {"bytes": f.bytes}
        for f in new
    ]
    data = {
        "files": files,
        "already_given": old,
        "not_loaded": [{"path": f.resource.path, "reason": f.reason} for f in (*answer.excluded, *answer.not_loaded)],
        "refused": [r.to_dict() for r in answer.refused],
        "content": content,
    }
    return Outcome(content, data)
