"""What Codex sends, byte for byte (Codex 0.171.0): its instruction frame and its skills list.

* :func:`codex_instructions`: the ``# AGENTS.md instructions for <cwd>`` wrapper of the doc;
* :func:`codex_skills`: the ``## Skills`` section with its 2% / 8,000-character budget,
  round-robin description shortening and priority-ordered omission;
* :func:`codex_skills_block`: the ``<skills_instructions>`` block. Skills are listed by
  scope (system, repo, user), then name, then path, each as ``- name: description (file:
  rN/<path below its root>)``; ``rN`` numbers the roots that list a skill, in Codex's root
  order: the repo's ``.codex/skills`` from the work dir up, the user's folders, the system
  skills, then the repo's ``.agents/skills`` from the root down. Descriptions over 1,024
  characters are cut to 1,021 and ``...``; the whole list keeps Codex's budget.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.resource import Resource, Scope
from agentcontext.skills.discovery import root_of

# --- Codex -----------------------------------------------------------------------

CODEX_DEFAULT_CHAR_BUDGET = 8_000
SKILLS_INTRO = (
    "A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. Below is the list "
    "of skills that can be used. Each entry includes a name, description, and file path so you can open the "
    "source for full instructions when using a specific skill."
)
SKILLS_HOW_TO_USE = """\
- Discovery: The list above is the skills available in this session (name + description + file path). \
Skill bodies live on disk at the listed paths.
- Trigger rules: If the user names a skill (with `$SkillName` or plain text) OR the task clearly matches a \
skill's description shown above, you must use that skill for that turn. Multiple mentions mean use them all. \
Do not carry skills across turns unless re-mentioned.
- Missing/blocked: If a named skill isn't in the list or the path can't be read, say so briefly and continue \
with the best fallback.
- How to use a skill (progressive disclosure):
  1) After deciding to use a skill, open its `SKILL.md`. Read only enough to follow the workflow.
  2) When `SKILL.md` references relative paths (e.g., `scripts/foo.py`), resolve them relative to the skill \
directory listed above first, and only consider other paths if needed.
  3) If `SKILL.md` points to extra folders such as `references/`, load only the specific files needed for \
the request; don't bulk-load everything.
  4) If `scripts/` exist, prefer running or patching them instead of retyping large code blocks.
  5) If `assets/` or templates exist, reuse them instead of recreating from scratch.
- Coordination and sequencing:
  - If multiple skills apply, choose the minimal set that covers the request and state the order you'll use them.
  - Announce which skill(s) you're using and why (one short line). If you skip an obvious skill, say why.
- Context hygiene:
  - Keep context small: summarize long sections instead of pasting them; only load extra files when needed.
  - Avoid deep reference-chasing: prefer opening only files directly linked from `SKILL.md` unless you're blocked.
  - When variants exist (frameworks, providers, domains), pick only the relevant reference file(s) and note \
that choice.
- Safety and fallback: If a skill can't be applied cleanly (missing files, unclear instructions), state the \
issue, pick the next-best approach, and continue."""
TRUNCATED_WARNING = (
    "Skill descriptions were shortened to fit the skills context budget. Codex can still see every skill, "
    "but some descriptions are shorter. Disable unused skills or plugins to leave more room for the rest."
)
TRUNCATED_WARNING_PERCENT = TRUNCATED_WARNING.replace("skills context budget", "2% skills context budget")
REMOVED_PREFIX = "Exceeded skills context budget. All skill descriptions were removed and"
_PROMPT_RANK = {Scope.SYSTEM: 0, Scope.REPO: 2, Scope.SOURCE: 2, Scope.PROJECT: 2}  # System 0, Admin 1, Repo 2, User 3


def prompt_rank(scope: Scope) -> int:
    """Codex's scope order in its skills list: system, admin, repo, user."""
    return _PROMPT_RANK.get(scope, 3)


@dataclass(frozen=True, slots=True)
class SkillLine:
    name: str
    description: str
    path: str
    scope: Scope = Scope.REPO

    def render(self, chars: int | None = None) -> str:
        description = self.description if chars is None else self.description[:chars]
        if not description:
            return f"- {self.name}: (file: {self.path})"
        return f"- {self.name}: {description} (file: {self.path})"


@dataclass(frozen=True, slots=True)
class Budget:
    """Codex's skill-metadata budget: tokens (2% of a context window) or characters."""

    limit: int
    tokens: bool = False

    @classmethod
    def for_window(cls, context_window: int | None) -> Budget:
        if context_window and context_window > 0:
            return cls(max(1, context_window * 2 // 100), tokens=True)
        return cls(CODEX_DEFAULT_CHAR_BUDGET)

    def cost_of(self, chars: int, nbytes: int) -> int:
        return (nbytes + 3) // 4 if self.tokens else chars

    def cost(self, text: str) -> int:
        return self.cost_of(len(text), len(text.encode("utf-8")))


@dataclass(frozen=True, slots=True)
class RenderedSkills:
    lines: tuple[str, ...]
    included: int
    omitted: int
    truncated_chars: int
    warning: str | None

    def section(self) -> str:
        """The ``## Skills`` body Codex sends (without the ``<skills_instructions>`` tags)."""
        body = [
            "## Skills",
            SKILLS_INTRO,
            "### Available skills",
            *self.lines,
            "### How to use skills",
            SKILLS_HOW_TO_USE,
        ]
        return "\n" + "\n".join(body) + "\n"


def codex_skills(skills: Sequence[SkillLine], budget: Budget, *, presorted: bool = False) -> RenderedSkills | None:
    """Codex's budgeted skills list; None when there is nothing to offer."""
    if not skills:
        return None
    ordered = list(skills) if presorted else sorted(skills, key=lambda s: (prompt_rank(s.scope), s.name, s.path))
    full = sum(budget.cost(s.render() + "\n") for s in ordered)
    if full <= budget.limit:
        return RenderedSkills(tuple(s.render() for s in ordered), len(ordered), 0, 0, None)
    minimum = sum(budget.cost(s.render(0) + "\n") for s in ordered)
    if minimum <= budget.limit:
        chars = share_descriptions(ordered, budget, budget.limit - minimum)
        cut = sum(len(s.description) - c for s, c in zip(ordered, chars, strict=True))
        lines = tuple(s.render(c) for s, c in zip(ordered, chars, strict=True))
        average = (cut + len(ordered) - 1) // len(ordered) if cut else 0
        warning = (TRUNCATED_WARNING_PERCENT if budget.tokens else TRUNCATED_WARNING) if average > 100 else None
        return RenderedSkills(lines, len(ordered), 0, cut, warning)
    return _minimum_until_budget(ordered, budget)


def share_descriptions(skills: Sequence[SkillLine], budget: Budget, limit: int) -> list[int]:
    """Hand out description characters one at a time, round robin (Codex's algorithm)."""
    extra_costs: list[list[int]] = []
    for skill in skills:
        base = skill.render(0)
        base_chars, base_bytes = len(base) + 1, len(base.encode()) + 1
        base_cost = budget.cost_of(base_chars, base_bytes)
        costs = [0]
        nbytes = 0
        for chars, char in enumerate(skill.description, start=1):
            nbytes += len(char.encode())
            costs.append(budget.cost_of(base_chars + chars + 1, base_bytes + nbytes + 1) - base_cost)
        extra_costs.append(costs)
    allocation = [0] * len(skills)
    current = [0] * len(skills)
    remaining = limit
    changed = True
    while changed:
        changed = False
        for index, skill in enumerate(skills):
            if allocation[index] >= len(skill.description):
                continue
            nxt = extra_costs[index][allocation[index] + 1]
            delta = max(0, nxt - current[index])
            if delta <= remaining:
                allocation[index] += 1
                current[index] = nxt
                remaining -= delta
                changed = True
    return allocation


def _minimum_until_budget(skills: Sequence[SkillLine], budget: Budget) -> RenderedSkills:
    lines: list[str] = []
    used = omitted = cut = 0
    for skill in skills:
        cost = budget.cost(skill.render(0) + "\n")
        if used + cost <= budget.limit:
            used += cost
            lines.append(skill.render(0))
        else:
            omitted += 1
        cut += len(skill.description)
    noun, verb = ("skill", "was") if omitted == 1 else ("skills", "were")
    prefix = REMOVED_PREFIX.replace("budget.", "budget of 2%.", 1) if budget.tokens else REMOVED_PREFIX
    warning = f"{prefix} {omitted} additional {noun} {verb} not included in the model-visible skills list."
    return RenderedSkills(tuple(lines), len(lines), omitted, cut, warning)


def codex_instructions(text: str, cwd: str, *, project: bool = True) -> str:
    """The user message Codex sends its AGENTS.md text in (no ``for <cwd>`` with home text alone)."""
    title = f"# AGENTS.md instructions for {cwd}" if project else "# AGENTS.md instructions"
    return f"{title}\n\n<INSTRUCTIONS>\n{text}\n</INSTRUCTIONS>"


CODEX_INTRO = (
    "A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. Below is the list of "
    "skills that can be used. Each entry includes a name, description, and a short path that can be expanded into "
    "an absolute path using the skill roots table."
)
CODEX_DESCRIPTION_CAP = 1024


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
