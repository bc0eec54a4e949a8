"""The custom instructions Copilot CLI sends (1.0.102): the part of its system message after its tool guidelines.

``<custom_instruction>`` blocks, then the always-applying instruction files bare, then its two
tables (the nested AGENTS.md files, the path-scoped instruction files), joined by a blank line.
The message holds them as ``\\n<parts>\\n`` (one more ``\\n`` when there are blocks and anything after
them) before ``<system_notifications>``; what is printed is the parts alone. No budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.instructions.project_doc import DocFile, ProjectDoc, in_doc_order
from agentcontext.peers.copilot import text as ctext
from agentcontext.peers.copilot.discovery import ALWAYS, NESTED
from agentcontext.resource import LoadType, Resource, Status


def parts(resources: Sequence[Resource]) -> list[str]:
    """Each block, always-applying text and table, in the order Copilot CLI sends them."""
    blocks: list[str] = []
    always: list[str] = []
    nested: list[str] = []
    scoped: list[str] = []
    for resource in in_doc_order(resources):
        load = resource.load
        if resource.status is not Status.OK or resource.content is None or load is None:
            continue
        if load.type is LoadType.PATH_SCOPED:
            shown = resource.name or resource.path
            if load.reason == NESTED:
                nested.append(ctext.nested_row(resource.description or "", shown))
            else:
                scoped.append(ctext.scoped_row(load.globs, shown, resource.description or ""))
        elif load.reason == ALWAYS:
            always.append(resource.content)
        else:
            blocks.append(ctext.block(resource.content))
    tables = [
        "\n".join((header, *rows)) for header, rows in ((ctext.NESTED_HEADER, nested), (ctext.SCOPED_HEADER, scoped))
    ]
    return [*blocks, *always, *(t for t, rows in zip(tables, (nested, scoped), strict=True) if rows)]


def assemble_copilot(resources: Sequence[Resource]) -> ProjectDoc:
    files = tuple(
        DocFile(r.path, False, r.scope)
        for r in in_doc_order(resources)
        if r.status is Status.OK and r.content is not None
    )
    return ProjectDoc(files, "", "\n\n".join(parts(resources)))


def copilot_instructions(doc: ProjectDoc) -> str:
    """The custom instructions as sent, without the region's own leading and trailing newlines."""
    return doc.project_text
