"""The skills list Copilot CLI sends, byte for byte (1.0.102), its own built-in skills aside.

The first copy of a name (exactly) wins, in folder order: ``.github/skills`` of the work dir and then of
each folder up to the project root, the same for ``.agents/skills`` and ``.claude/skills``, then
``~/.copilot/skills``, ``~/.agents/skills`` and ``COPILOT_SKILLS_DIRS``. Listed in that order, except
that consecutive folders of one kind (the work dir's, the folders above it, each user folder, the custom
folders) make one run sorted by name, bytewise; a folder without skills does not break a run. The custom
commands follow (:mod:`agentcontext.skills.commands`): the work dir's sorted by name bytewise, then
those of the folders above it, together. Each entry gives a name, a description and, instead of a path,
a scope word: ``project``, ``user`` or ``custom``; ``& < > ' "`` are escaped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import groupby

from agentcontext.fs.files import is_within
from agentcontext.peers.copilot.text import xml_escaped
from agentcontext.resource import Resource, Status
from agentcontext.skills.commands import is_command
from agentcontext.skills.discovery import root_of

COPILOT_BUILTIN_SKILLS = ("customize-cloud-agent", "github-pr-media")


def _kind(container: str, work_dir: str, project: str, home: str) -> tuple[str, str]:
    """The run a container's skills belong to, and its scope word."""
    if container in (os.path.join(home, ".copilot", "skills"), os.path.join(home, ".agents", "skills")):
        return container, "user"
    if is_within(container, project):
        return ("cwd" if os.path.dirname(os.path.dirname(container)) == work_dir else "parents"), "project"
    return "custom", "custom"


def copilot_skills(
    skills: Sequence[Resource], containers: Sequence[str], work_dir: str, project: str, home: str
) -> list[tuple[Resource, str]]:
    """The skills Copilot CLI lists, in its order, each with its location word (built-ins aside)."""
    rank = {root: i for i, root in enumerate(containers)}
    offered: list[tuple[int, Resource]] = []
    commands: list[Resource] = []
    for skill in skills:
        if skill.status is not Status.OK or not skill.name:
            continue
        if is_command(skill):
            commands.append(skill)
            continue
        root = root_of(skill.path, containers)
        offered.append((rank.get(root or "", len(rank)), skill))
    offered.sort(key=lambda item: item[0])
    out: list[tuple[Resource, str]] = []
    labelled = [(_kind(containers[i], work_dir, project, home), s) for i, s in offered if i < len(containers)]
    for (_, word), run in groupby(labelled, key=lambda item: item[0]):
        for _, skill in sorted(run, key=lambda item: (item[1].name or "").encode()):
            out.append((skill, word))
    here = os.path.join(work_dir, ".claude", "commands") + "/"
    for upward in (False, True):  # the work dir's commands, then those above it
        run_of = sorted((c for c in commands if c.path.startswith(here) != upward), key=_name_bytes)
        out += [(command, "project") for command in run_of]
    return out


def _name_bytes(skill: Resource) -> bytes:
    return (skill.name or "").encode()


def copilot_skills_xml(
    skills: Sequence[Resource], containers: Sequence[str], work_dir: str, project: str, home: str
) -> str:
    """The ``<available_skills>`` block Copilot CLI sends, without its built-ins ("" when none is left)."""
    listed = copilot_skills(skills, containers, work_dir, project, home)
    if not listed:
        return ""
    entries = "\n".join(
        f"<skill>\n  <name>{xml_escaped(s.name or '')}</name>\n  <description>{xml_escaped(s.description or '')}"
        f"</description>\n  <location>{word}</location>\n</skill>"
        for s, word in listed
    )
    return f"<available_skills>\n{entries}\n</available_skills>"
