"""Instruction files named in another case (``agents.md``, ``Claude.md``): listed, not passed over.

Codex, Claude Code, Gemini CLI and OpenCode compare names with case, so on a file system that
does too (Linux's) an ``agents.md`` is never read, without a word; Copilot CLI reads one such file
per name (:mod:`agentcontext.peers.copilot.discovery`). Each file of a folder of the walk whose name
differs from one the agent reads only in case, and that the scan did not read, is listed
``invalid`` with the name the agent wants. Only the folders where the agent reads those names are
looked at, from the listings the pass already took where it took them.
"""

from __future__ import annotations

from agentcontext.fs.files import EntryKind, Reader, is_within
from agentcontext.instructions.chain import Found
from agentcontext.layout import Layout
from agentcontext.peers import Peer
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.settings.config import Config


def misspelled(found: list[Found], layout: Layout, peer: Peer, config: Config, reader: Reader) -> list[Found]:
    """The files of the walk's folders named as the agent's instruction files but for case, and not read."""
    wanted = {name.lower(): name for name in peer.read_names(config.project_doc) if "/" not in name}
    sizes = {len(name) for name in wanted}  # a folder of thousands of files: most names end at their length
    taken = {item.resource.path for item in found}
    boundary = layout.doc_boundary
    out: list[Found] = []
    for folder in layout.chain:
        if not is_within(folder, boundary):
            continue
        names = reader.listed(folder) or reader.names(folder, boundary)  # None: a busy folder, looked at unstated
        for name in names.files if names is not None else reader.peek(folder, boundary):
            exact = wanted.get(name.lower()) if len(name) in sizes else None
            path = f"{folder}/{name}"
            if exact is None or name == exact or path in taken or peer.unread_here(folder, layout) is not None:
                continue
            if reader.probe(path, boundary).kind is not EntryKind.FILE:  # stated: a rescan sees it go
                continue
            why = f"not read: {peer.agent} reads the name {exact} exactly, with its case"
            spelled = [
                p for p in taken if p.rpartition("/")[0] == folder and p.rpartition("/")[2].lower() == exact.lower()
            ]
            if spelled:  # the agent read another spelling (Copilot CLI)
                why = f"not read: {peer.agent} reads {spelled[0].rpartition('/')[2]} for this name, one file for it"
            resource = Resource(Kind.INSTRUCTION_FILE, path, Scope.PROJECT, Status.INVALID, error=why)
            out.append(Found(resource, candidate=False))
    return out
