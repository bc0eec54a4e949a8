"""The skills list Gemini CLI sends, byte for byte (0.61.0), its own built-in skills aside.

Gemini CLI puts its skills in a map by exact name: its built-ins (``skill-creator``,
``antigravity-support``) first, then ``~/.gemini/skills``, ``~/.agents/skills``, the work dir's
``.gemini/skills`` and ``.agents/skills``. A later copy of a name replaces the earlier one at
the earlier one's place. In one folder the skills come in reverse byte order of their folder
names (``glob`` over libuv's sorted listing), the order rendered here; ``glob`` does not sort its
results, though, and on a busy machine Gemini CLI was once seen to list one folder's skills in
another order. Names and descriptions are written unescaped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agentcontext.resource import Resource, Status
from agentcontext.skills.discovery import root_of

GEMINI_BUILTIN_SKILLS = ("skill-creator", "antigravity-support")


def _ordered(skills: Sequence[Resource], containers: Sequence[str]) -> list[Resource]:
    """The skills in the order Gemini CLI meets them: by container, then each folder's names in reverse."""
    rank = {root: i for i, root in enumerate(containers)}

    def container(skill: Resource) -> int:
        root = root_of(skill.path, containers)
        return rank.get(root, len(rank)) if root else len(rank)

    by_folder = sorted(skills, key=lambda s: os.path.basename(os.path.dirname(s.path)).encode(), reverse=True)
    return sorted(by_folder, key=container)  # stable: each container keeps the reverse folder order


def gemini_skills(skills: Sequence[Resource], containers: Sequence[str]) -> list[Resource]:
    """The skills Gemini CLI lists, in its order, built-ins aside.

    ``skills``: every skill found, shadowed copies included (a name is listed where its first copy was met).
    """
    slots: dict[str, Resource | None] = dict.fromkeys(GEMINI_BUILTIN_SKILLS)
    for skill in _ordered([s for s in skills if s.name is not None], containers):
        name = skill.name or ""
        if skill.status is Status.OK:
            slots[name] = skill
        elif skill.status is Status.SHADOWED:
            slots.setdefault(name, None)
    return [skill for skill in slots.values() if skill is not None]


def gemini_skills_xml(skills: Sequence[Resource], containers: Sequence[str]) -> str:
    """The ``<available_skills>`` block Gemini CLI sends, without its built-ins ("" when none is left)."""
    listed = gemini_skills(skills, containers)
    if not listed:
        return ""
    entries = "\n".join(
        f"  <skill>\n    <name>{s.name}</name>\n    <description>{s.description or ''}</description>\n"
        f"    <location>{s.path}</location>\n  </skill>"
        for s in listed
    )
    return f"<available_skills>\n{entries}\n</available_skills>"
