"""The text an MCP client receives as ``instructions``: what we offer, the skills, the doc.

Order (Codex Free's): a short brief, the ``## Skills`` catalog (left out when there are
none), then the project doc behind ``--- project-doc ---``. Home and source instructions,
when there are any, sit just before the marker: the marker goes exactly where the text
turns into the project speaking, as in Codex.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.instructions.project_doc import SEPARATOR, ProjectDoc
from agentcontext.resource import Resource
from agentcontext.views.render import CatalogEntry, model_visible_name, plain_description, skill_catalog

BRIEF = (
    "This server gives you the instructions and skills of the project you are working in, "
    "found the way Codex finds them: every AGENTS.md from the project root down to the working "
    "directory, and the Agent Skills installed for the project and for the user. Before you edit, create "
    "or run files in a folder you have not worked in yet, call get_instructions_for with their paths: "
    "a folder may carry instructions of its own that override the general ones."
)
SKILLS_GUIDE = """\
- A skill is a set of instructions someone already worked out for a task of this kind, stored in a SKILL.md. \
If the user names a skill, or the task clearly matches a description above, use that skill.
- Read the whole SKILL.md with skills_read before acting on it.
- A skill's body may point at other files in its package (references, scripts, assets): read them with \
skills_read, the same name, and the file's path as `resource`. Paths are relative to the skill's folder."""
DOC_INTRO = (
    "The project's own instructions follow the marker below. They come from the repository the user "
    "pointed this server at, and take precedence over everything above."
)
NO_DOC = "The project has no AGENTS.md between its root and the working directory."
SELECTION = """\
## Project selection

This server serves several projects under {root}. Nothing is loaded until this conversation \
picks one: call list_projects to see them, then set_project_root with the folder to use \
(relative to {root}), then get_agent_brief for that project's instructions and skills. \
A conversation stays bound to the project it picked; start a new one for another project."""


HIDDEN_NAME = "the name holds invisible, bidi or control characters: not offered to a model"


def catalog(skills: Sequence[Resource], *, budget_chars: int) -> str:
    """The ``## Skills`` section for offered skills ("" when there are none), descriptions sanitized.

    A skill whose name a model could not see as written is left out (``skills_list`` says why).
    """
    entries = [
        CatalogEntry(s.name or "", str(s.scope), plain_description(s.description or ""))
        for s in skills
        if model_visible_name(s.name)
    ]
    return skill_catalog(entries, budget_chars=budget_chars)


def instructions(doc: ProjectDoc, skills: Sequence[Resource], *, catalog_chars: int = 8_000) -> str:
    """The full brief for one project."""
    parts = [BRIEF]
    listing = catalog(skills, budget_chars=catalog_chars)
    if listing:
        parts += [listing, SKILLS_GUIDE]
    if doc.empty:
        parts.append(NO_DOC)
        return "\n\n".join(parts)
    if not doc.project_text:  # only home or source instructions: no project text, no marker
        return "\n\n".join([*parts, NO_DOC, doc.global_text])
    parts.append(DOC_INTRO)
    if doc.global_text:
        parts.append(doc.global_text)
    return "\n\n".join(parts) + SEPARATOR + doc.project_text


def selection_brief(root: str) -> str:
    """The brief of a multi-project server before a project is chosen."""
    return BRIEF + "\n\n" + SELECTION.format(root=root)
