"""The skills text the real agents send, byte for byte (Codex 0.169.0, Claude Code 2.1.328).

* :func:`codex_skills_block`: Codex's ``<skills_instructions>`` block. Skills are listed by
  scope (system, repo, user), then name, then path, each as ``- name: description (file:
  rN/<path below its root>)``; ``rN`` numbers the roots that list a skill, in Codex's root
  order: the repo's ``.codex/skills`` from the work dir up, the user's folders, the system
  skills, then the repo's ``.agents/skills`` from the root down. Descriptions over 1,024
  characters are cut to 1,021 and ``...``; the whole list keeps Codex's budget.
* :func:`claude_skill_lines`: Claude Code's ``- name: description`` lines (its own built-in
  skills aside): the user's skills, then each ``.claude/skills`` from the work dir up, each
  folder's skills in locale order; descriptions over 1,536 characters end in ``…``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agentcontext.fs.files import is_within
from agentcontext.resource import Resource, Scope
from agentcontext.views.render import Budget, SkillLine, codex_skills, prompt_rank

CODEX_INTRO = (
    "A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. Below is the list of "
    "skills that can be used. Each entry includes a name, description, and a short path that can be expanded into "
    "an absolute path using the skill roots table."
)
CODEX_DESCRIPTION_CAP = 1024
CLAUDE_DESCRIPTION_CAP = 1536


def root_of(path: str, roots: Sequence[str]) -> str | None:
    """The innermost root holding ``path``."""
    holding = [r for r in roots if is_within(path, r)]
    return max(holding, key=len) if holding else None


def codex_root_order(containers: Sequence[tuple[str, Scope]]) -> list[str]:
    """Codex's order of skill roots (see the module docstring)."""
    codex_repo = [p for p, s in containers if s is Scope.REPO and p.endswith(f"{os.sep}.codex{os.sep}skills")]
    other_repo = [p for p, s in containers if s in (Scope.REPO, Scope.SOURCE) and p not in codex_repo]
    users = [p for p, s in containers if s is Scope.USER]
    system = [p for p, s in containers if s is Scope.SYSTEM]
    return [*reversed(codex_repo), *users, *system, *other_repo]


def codex_description(text: str) -> str:
    return text if len(text) <= CODEX_DESCRIPTION_CAP else text[: CODEX_DESCRIPTION_CAP - 3] + "..."


def codex_skills_block(
    skills: Sequence[Resource], containers: Sequence[tuple[str, Scope]], budget: Budget
) -> tuple[str, str | None]:
    """The block and the budget warning, if any ("" when there is no skill to offer)."""
    order = codex_root_order(containers)
    ranked = sorted(skills, key=lambda s: (prompt_rank(s.scope), s.name or "", s.path))
    located = [(skill, root_of(skill.path, order)) for skill in ranked]
    used = [root for root in order if any(r == root for _, r in located)]
    number = {root: i for i, root in enumerate(used)}
    lines: list[SkillLine] = []
    for skill, root in located:
        shown = skill.path if root is None else f"r{number[root]}/" + os.path.relpath(skill.path, root)
        lines.append(SkillLine(skill.name or "", codex_description(skill.description or ""), shown, skill.scope))
    rendered = codex_skills(lines, budget, presorted=True)
    if rendered is None:
        return "", None
    table = [f"- `r{i}` = `{root}`" for i, root in enumerate(used)]
    body = ["<skills_instructions>", "## Skills", CODEX_INTRO, "### Skill roots", *table, "### Available skills"]
    return "\n".join([*body, *rendered.lines, "</skills_instructions>"]), rendered.warning


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
