"""Prompt text, exactly as each peer renders it.

* :func:`available_skills` — Coder's ``<available-skills>`` block (coder.md 2.6);
* :func:`codex_skills` — Codex's ``## Skills`` section with its 2% / 8,000-character
  budget, round-robin description shortening and priority-ordered omission (A.3);
* :func:`agent_skills_xml` — ``skills-ref to-prompt``'s ``<available_skills>`` XML (B.3);
* :func:`workspace_context` — Coder's ``<workspace-context>`` block (coder.md 4.6);
* :func:`codex_instructions` — Codex's ``# AGENTS.md instructions for <cwd>`` wrapper;
* :func:`skill_catalog` — our MCP server's ``## Skills`` lines, within a budget that
  shortens descriptions before it ever leaves a skill out, and says so when it does.
"""

from __future__ import annotations

import functools
import html
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.resource import Resource, Scope, Status
from agentcontext.sanitize import sanitize

# --- Coder -----------------------------------------------------------------------

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


def plain_description(text: str) -> str:
    """A description fit for a model: sanitized, hidden characters gone, one line."""
    text = sanitize(text)
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    text = "".join(c for c in text if not _hidden_format(c))
    return " ".join(text.split())


def shown(text: str) -> str:
    """``text`` with every unprintable character written as an escape (``\\u202e``), so none hides in a path."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def model_visible_name(name: str | None) -> bool:
    """A skill name a model can see and send back as written: printable, one line, no hidden characters."""
    return bool(name) and (name or "").isprintable()


def _hidden_format(char: str) -> bool:
    if char == "\u200c":
        return False
    point = ord(char)
    return unicodedata.category(char) == "Cf" or 0xFE00 <= point <= 0xFE0F or 0xE0100 <= point <= 0xE01EF


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
        chars = _share_descriptions(ordered, budget, budget.limit - minimum)
        cut = sum(len(s.description) - c for s, c in zip(ordered, chars, strict=True))
        lines = tuple(s.render(c) for s, c in zip(ordered, chars, strict=True))
        average = (cut + len(ordered) - 1) // len(ordered) if cut else 0
        warning = (TRUNCATED_WARNING_PERCENT if budget.tokens else TRUNCATED_WARNING) if average > 100 else None
        return RenderedSkills(lines, len(ordered), 0, cut, warning)
    return _minimum_until_budget(ordered, budget)


def _share_descriptions(skills: Sequence[SkillLine], budget: Budget, limit: int) -> list[int]:
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


# --- Agent Skills (skills-ref to-prompt) -------------------------------------------


@dataclass(frozen=True, slots=True)
class XmlSkill:
    name: str
    description: str
    location: str


def agent_skills_xml(skills: Sequence[XmlSkill]) -> str:
    """``skills-ref to-prompt`` output: one element per line, HTML-escaped, no indentation."""
    lines = ["<available_skills>"]
    for skill in skills:
        lines += ["<skill>", "<name>", html.escape(skill.name), "</name>", "<description>"]
        lines += [html.escape(skill.description), "</description>", "<location>", skill.location, "</location>"]
        lines.append("</skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


# --- Our MCP catalog ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    name: str
    scope: str
    description: str


def skill_catalog(entries: Sequence[CatalogEntry], *, budget_chars: int = 8_000) -> str:
    """``## Skills`` with one ``- name (scope) — description`` line per skill ("" when none).

    Over budget, descriptions are shortened evenly (round robin) first; only when the bare
    lines do not fit are skills left out, and a final line says how many and where the
    full list is.
    """
    if not entries:
        return ""
    header = "## Skills"
    lines = [
        f"- {e.name} ({e.scope}) — {e.description}" if e.description else f"- {e.name} ({e.scope})" for e in entries
    ]
    if len(header) + sum(len(line) + 1 for line in lines) <= budget_chars:
        return "\n".join([header, *lines])
    bare = [f"- {e.name} ({e.scope})" for e in entries]
    room = (
        budget_chars
        - len(header)
        - sum(len(line) + 1 + (4 if e.description else 0) for line, e in zip(bare, entries, strict=True))
    )
    if room >= 0:
        skill_lines = [SkillLine(e.name, e.description, "") for e in entries]
        shares = _share_descriptions(skill_lines, Budget(room), room)
        return "\n".join(
            [header, *(_shortened(b, e.description, n) for b, e, n in zip(bare, entries, shares, strict=True))]
        )
    kept: list[str] = []
    used = len(header)
    for line in bare:
        if used + len(line) + 1 > budget_chars - 120:
            break
        kept.append(line)
        used += len(line) + 1
    left = len(entries) - len(kept)
    note = f"({left} more skill(s) not listed to fit the catalog budget; call skills_list for all of them.)"
    return "\n".join([header, *kept, note])


def _shortened(bare: str, description: str, chars: int) -> str:
    """A catalog line with ``chars`` characters of its description; a cut always shows ``…``."""
    if not description:
        return bare
    if chars >= len(description):
        return f"{bare} — {description}"
    return f"{bare} — {description[:chars].rstrip()}…"
