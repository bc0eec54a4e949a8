"""Prompt text of our own and of the Agent Skills spec (each agent's is its peer's: :mod:`agentcontext.peers`).

* :func:`plain_description`, :func:`shown`, :func:`model_visible_name` — what a model may be shown;
* :func:`agent_skills_xml` — ``skills-ref to-prompt``'s ``<available_skills>`` XML (B.3);
* :func:`skill_catalog` — our MCP server's ``## Skills`` lines, within a budget that
  shortens descriptions before it ever leaves a skill out, and says so when it does.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.peers.codex.render import Budget, SkillLine, share_descriptions
from agentcontext.sanitize import sanitize

# --- what a model may be shown -------------------------------------------------


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
        shares = share_descriptions(skill_lines, Budget(room), room)
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
