"""The skills list Claude Code sends, byte for byte (Claude Code 2.1.328), its own built-in skills aside.

:func:`claude_skill_lines`: ``- name: description`` lines: the user's skills, then each
``.claude/skills`` from the work dir up, each folder's skills in locale order; descriptions
over 1,536 characters end in ``…``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.resource import Resource
from agentcontext.skills.discovery import root_of

CLAUDE_DESCRIPTION_CAP = 1536


def _locale_key(name: str) -> tuple[str, str]:
    """Close to ``localeCompare``: letters without case first, then lower case before upper."""
    return name.casefold(), name.swapcase()


def claude_skill_lines(skills: Sequence[Resource], containers: Sequence[str]) -> list[str]:
    """Claude Code's listing of the offered skills, in its order."""
    rank = {root: i for i, root in enumerate(containers)}

    def key(skill: Resource) -> tuple[int, tuple[str, str]]:
        root = root_of(skill.path, containers)
        return (rank.get(root, len(rank)) if root else len(rank), _locale_key(skill.name or ""))

    lines: list[str] = []
    for skill in sorted(skills, key=key):
        description = skill.description or ""
        if len(description) > CLAUDE_DESCRIPTION_CAP:
            description = description[: CLAUDE_DESCRIPTION_CAP - 1] + "…"
        lines.append(f"- {skill.name}: {description}")
    return lines
