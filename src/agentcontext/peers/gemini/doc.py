"""The context Gemini CLI sends (0.61.0): one ``--- Context from: <path> ---`` section per file, in two blocks.

The global files go into the system instruction as ``<loaded_context>\\n<sections>\\n</loaded_context>``;
the project's into the first user message's ``<session_context>`` as ``<loaded_context>\\n<project_context>
\\n<sections>\\n</project_context>\\n</loaded_context>``. Sections are joined by a blank line; each holds
the file's text with its imports expanded, trimmed. No byte budget, nothing sanitized.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.instructions.project_doc import DocFile, ProjectDoc, in_doc_order
from agentcontext.peers.gemini.text import section
from agentcontext.resource import Resource, Scope, Status


def assemble_gemini(resources: Sequence[Resource]) -> ProjectDoc:
    """The global part (``~/.gemini``) and the project part, each its files' sections in doc order."""
    ordered = in_doc_order(resources)
    files: list[DocFile] = []
    global_sections: list[str] = []
    project_sections: list[str] = []
    for resource in ordered:
        if resource.status is not Status.OK or resource.content is None:
            continue
        text = section(resource.path, resource.content)
        if text is None:
            continue
        files.append(DocFile(resource.path, False, resource.scope))
        (global_sections if resource.scope is Scope.HOME else project_sections).append(text)
    return ProjectDoc(tuple(files), "\n\n".join(global_sections), "\n\n".join(project_sections))


def gemini_blocks(doc: ProjectDoc) -> list[str]:
    """Every ``<loaded_context>`` block Gemini CLI sends, in request order (none when it sends none)."""
    blocks: list[str] = []
    if doc.global_text:
        blocks.append(f"<loaded_context>\n{doc.global_text}\n</loaded_context>")
    if doc.project_text:
        blocks.append(f"<loaded_context>\n<project_context>\n{doc.project_text}\n</project_context>\n</loaded_context>")
    return blocks


def gemini_context(doc: ProjectDoc) -> str:
    """The blocks joined by one blank line ("" when Gemini CLI sends no context file)."""
    return "\n\n".join(gemini_blocks(doc))
