"""What Coder's chats send, byte for byte: the ``<available-skills>`` index (coder.md 2.6) and the
``<workspace-context>`` block (coder.md 4.6); the control plane builds each turn's prompt from them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.resource import Resource, Status
from agentcontext.sanitize import sanitize
from agentcontext.views.render import plain_description

DESCRIPTION_CAP = 1024


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One line of ``<available-skills>``: the alias the model passes to ``read_skill``."""

    alias: str
    description: str
    personal: bool = False
    qualified: bool = False


@functools.lru_cache(maxsize=8192)  # the same descriptions come back in every turn's prompt
def sanitize_skill_description(text: str, *, cap: int | None = DESCRIPTION_CAP) -> str:
    """Coder's ``sanitizeSkillDescription``: clean, one line, capped, ``<``/``>`` escaped."""
    text = plain_description(text)
    if cap is not None and len(text) > cap:
        text = text[: cap - 1] + "…"
    return text.replace("<", "&lt;").replace(">", "&gt;")


def available_skills(entries: Sequence[IndexEntry]) -> str:
    """The ``<available-skills>`` block, or an empty string when there are no skills."""
    if not entries:
        return ""
    lines = ["<available-skills>", "Use read_skill to load a skill's full instructions before following them."]
    if any(not e.personal for e in entries):
        lines.append("Use read_skill_file to read supporting files referenced by a workspace skill.")
    if any(e.qualified for e in entries):
        lines.append(
            "When a skill is listed as personal/name or workspace/name, pass that qualified alias to read_skill."
        )
    lines.append("")
    for entry in entries:
        description = sanitize_skill_description(entry.description, cap=None if entry.personal else DESCRIPTION_CAP)
        lines.append(f"- {entry.alias}: {description}" if description else f"- {entry.alias}")
    return "\n".join(lines) + "\n</available-skills>"


@functools.lru_cache(maxsize=256)  # files of up to 64 KiB: at most 16 MiB held
def _sanitized(content: str) -> str:
    return sanitize(content)


def workspace_context(files: Sequence[Resource], *, os_name: str = "", directory: str = "") -> str:
    """Coder's ``<workspace-context>`` block from instruction files, their texts sanitised ("" when none is left)."""
    parts = [(f, _sanitized(f.content or "")) for f in files]
    parts = [(f, text) for f, text in parts if text]
    if not parts:
        return ""
    lines = ["<workspace-context>"]
    if os_name:
        lines.append(f"Operating System: {os_name}")
    if directory:
        lines.append(f"Working Directory: {directory}")
    for file, text in parts:
        lines.append("")
        lines.append(f"Source: {file.path}" + (" (truncated to 64KiB)" if file.status is Status.TRUNCATED else ""))
        lines.append(text)
    return "\n".join(lines) + "\n</workspace-context>"
