"""The skills list Claude Code sends, byte for byte (Claude Code 2.1.332), its own built-in skills aside.

:func:`claude_skill_lines`: ``- name: description`` lines: the user's skills, then each
``.claude/skills`` from the work dir up, each folder's skills in locale order; a skill is named by
its folder, with its frontmatter ``name`` beside it in brackets only where no other listed skill
already answers to that name; then the custom commands (:mod:`agentcontext.skills.commands`), all of them
sorted by name without case; descriptions over 1,536 characters end in ``…``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.resource import Resource
from agentcontext.skills.commands import is_command
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

    ordered = sorted((s for s in skills if not is_command(s)), key=key)
    commands = sorted((s for s in skills if is_command(s)), key=lambda s: _locale_key(s.name or ""))
    # every listed skill's own name (its folder's) and every command's
    taken = {_folder(skill) for skill in ordered} | {command.name or "" for command in commands}
    shown = [(_shown(skill, taken), skill) for skill in ordered] + [(c.name or "", c) for c in commands]
    lines: list[str] = []
    for name, skill in shown:
        description = skill.description or ""
        if len(description) > CLAUDE_DESCRIPTION_CAP:
            description = description[: CLAUDE_DESCRIPTION_CAP - 1] + "…"
        lines.append(f"- {name}: {description}")
    return lines


def _folder(skill: Resource) -> str:
    return skill.path.rpartition("/")[0].rpartition("/")[2]


def _shown(skill: Resource, taken: set[str]) -> str:
    """``folder (name)`` while ``name`` is no listed skill's folder nor an earlier skill's ``name``; else ``folder``.

    A skill is named by its folder; its frontmatter ``name`` is shown beside it once, by the first skill in
    the list to give it, and never when it is another skill's name (``Shared`` named ``shared`` beside a
    ``shared`` folder shows as ``Shared``).
    """
    name, folder = skill.name or "", _folder(skill)
    if not (name.startswith(f"{folder} (") and name.endswith(")")):
        return name
    given = name[len(folder) + 2 : -1]
    if given in taken:
        return folder
    taken.add(given)
    return name
