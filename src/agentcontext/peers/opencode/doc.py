"""The instructions OpenCode sends (1.18.33): ``Instructions from: <path>\\n<text>`` per file, joined by ``\\n``.

They sit in its one system message after the ``<env>`` block and before its skills text; the text
is the file's as read (a BOM dropped), untrimmed. The global file comes first (``global_text``),
the rest in order (``project_text``); no byte budget, nothing sanitized.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.instructions.project_doc import DocFile, ProjectDoc, in_doc_order
from agentcontext.resource import Resource, Scope, Status

PREFIX = "Instructions from: "


def section(path: str, text: str) -> str:
    return f"{PREFIX}{path}\n{text}"


def assemble_opencode(resources: Sequence[Resource]) -> ProjectDoc:
    files: list[DocFile] = []
    first: list[str] = []
    rest: list[str] = []
    for resource in in_doc_order(resources):
        if resource.status is not Status.OK or not resource.content:
            continue
        files.append(DocFile(resource.path, False, resource.scope))
        global_file = not first and not rest and resource.scope is Scope.HOME
        (first if global_file else rest).append(section(resource.path, resource.content))
    return ProjectDoc(tuple(files), "\n".join(first), "\n".join(rest))


def opencode_instructions(doc: ProjectDoc) -> str:
    """From the first ``Instructions from: `` line to the end of the last file's text ("" when none is sent)."""
    return "\n".join(part for part in (doc.global_text, doc.project_text) if part)
