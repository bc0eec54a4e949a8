"""The doc Claude Code sends: one trimmed ``Contents of <path> (<kind>):`` section per loaded file, in its order,
inside a ``<system-reminder>``, with no byte budget and nothing sanitized."""

from __future__ import annotations

from agentcontext.instructions.project_doc import DocFile, ProjectDoc, in_doc_order
from agentcontext.peers.claude.text import js_trim
from agentcontext.resource import Resource, Scope, Status

CLAUDE_PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These "
    "instructions OVERRIDE any default behavior and you MUST follow them exactly as written."
)
CLAUDE_KINDS = {
    Scope.PROJECT: "project instructions, checked into the codebase",
    Scope.LOCAL: "user's private project instructions, not checked in",
    Scope.HOME: "user's private global instructions for all projects",
}


def assemble_claude(resources: tuple[Resource, ...] | list[Resource]) -> ProjectDoc:
    """Claude Code's instruction text: one trimmed ``Contents of`` section per loaded file."""
    ordered = in_doc_order(resources)
    files: list[DocFile] = []
    sections: list[str] = []
    for resource in ordered:
        if resource.status is not Status.OK or resource.content is None:
            continue
        files.append(DocFile(resource.path, False, resource.scope))
        kind = CLAUDE_KINDS.get(resource.scope, CLAUDE_KINDS[Scope.PROJECT])
        sections.append(f"Contents of {resource.path} ({kind}):\n\n{js_trim(resource.content)}")
    return ProjectDoc(tuple(files), "\n\n".join(sections), "")


def claude_reminder(doc: ProjectDoc) -> str:
    """The ``<system-reminder>`` block Claude Code sends its instruction files in ("" when none)."""
    if not doc.global_text:
        return ""
    return f"<system-reminder>\n{CLAUDE_PREAMBLE}\n\n{doc.global_text}\n</system-reminder>"
