"""Skill aliases across workspace and personal skills (coder.md 2.4, 2.6).

A skill is listed by its name; when a personal and a workspace skill share a name, both
are listed by qualified aliases (``personal/<name>``, ``workspace/<name>``) and the bare
name becomes ambiguous. Qualified aliases always resolve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.errors import AgentContextError, NotFoundError
from agentcontext.peers.coder.render import IndexEntry

PERSONAL = "personal/"
WORKSPACE = "workspace/"


def usable_skill_name(name: str | None) -> bool:
    """A name the model can pass back: one printable line, no ``/`` (kept for aliases), at most 128 characters."""
    return bool(name) and len(name or "") <= 128 and "/" not in (name or "") and (name or "").isprintable()


class AmbiguousSkill(AgentContextError):
    """A bare name that is both a personal and a workspace skill."""


@dataclass(frozen=True, slots=True)
class SkillRef:
    alias: str
    name: str
    description: str
    personal: bool

    @property
    def entry(self) -> IndexEntry:
        return IndexEntry(self.alias, self.description, personal=self.personal, qualified="/" in self.alias)


def index(workspace: Sequence[tuple[str, str]], personal: Sequence[tuple[str, str]]) -> list[SkillRef]:
    """Workspace skills then personal skills, each ``(name, description)``, with their aliases."""
    personal_names = {name for name, _ in personal}
    workspace_names = {name for name, _ in workspace}
    both = personal_names & workspace_names
    refs = [
        SkillRef(f"{WORKSPACE}{name}" if name in both else name, name, description, False)
        for name, description in workspace
    ]
    refs += [
        SkillRef(f"{PERSONAL}{name}" if name in both else name, name, description, True)
        for name, description in personal
    ]
    return refs


def resolve(refs: Sequence[SkillRef], requested: str) -> SkillRef:
    """The skill a name or alias means.

    Raises:
        NotFoundError: ``skill "<name>" not found``.
        AmbiguousSkill: a bare name that both kinds carry.
    """
    for prefix, personal in ((PERSONAL, True), (WORKSPACE, False)):
        if requested.startswith(prefix):
            name = requested.removeprefix(prefix)
            for ref in refs:
                if ref.personal is personal and ref.name == name:
                    return ref
            raise NotFoundError(f'skill "{requested}" not found')
    matches = [ref for ref in refs if ref.name == requested]
    if len(matches) > 1:
        raise AmbiguousSkill(
            f'skill lookup is ambiguous: "{requested}" is both {PERSONAL}{requested} and {WORKSPACE}{requested};'
            " pass one of those qualified aliases"
        )
    if not matches:
        raise NotFoundError(f'skill "{requested}" not found')
    return matches[0]
