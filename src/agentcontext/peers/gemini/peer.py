"""Gemini CLI as a peer: ``GEMINI.md`` from the project root down, imports inline, two ``<loaded_context>`` blocks.

Its rules are this package's (:mod:`.discovery`: the walk and the sorted order, :mod:`.text`:
imports, :mod:`.doc`: the blocks, :mod:`.skills`: the list). It reads every context file name
in each folder (not the first found), has no doc budget, and offers skills from the user's
``~/.gemini/skills`` and ``~/.agents/skills`` and the work dir's own ``.gemini/skills`` and
``.agents/skills`` only (not the folders between the project root and the work dir). Below
the work dir it reads a folder's files when a tool touches it (not checked against the binary:
``sends_on_read`` stays False); those are listed ``on_demand`` as Codex's are.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from agentcontext.fs.files import EntryKind, Reader
from agentcontext.instructions.chain import Found, InstructionFiles
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout, Markers, Root, chain_layout
from agentcontext.peers.codex.peer import CodexPeer
from agentcontext.peers.gemini import discovery
from agentcontext.peers.gemini.doc import assemble_gemini, gemini_context
from agentcontext.resource import Resource, Scope
from agentcontext.settings.config import Config, ProjectDocSettings


class GeminiPeer(CodexPeer):
    """Gemini CLI: the ``gemini`` profile."""

    name = "gemini"
    agent = "Gemini CLI"
    sends_on_read = False

    def read_folder(
        self, files: InstructionFiles, directory: str, boundary: str, doc: ProjectDocSettings
    ) -> list[Found]:
        out: list[Found] = []
        for name in doc.candidates:  # every name of a folder loads, not the first found
            entry = files.reader.probe(os.path.join(directory, name), boundary)
            if entry.kind is not EntryKind.MISSING:
                out.append(files.read(entry, Scope.PROJECT, None))
        return out

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        layout = chain_layout(work_dir, config, markers_seen, user_skills_first=False)
        names = config.skills.containers
        in_chain = {os.path.join(d, name) for d in layout.chain for name in names}
        at_work_dir = [os.path.join(work_dir, name) for name in names]
        by_path = {c.path: c for c in layout.skill_containers}
        others = tuple(c for c in layout.skill_containers if c.path not in in_chain)
        own = tuple(by_path[p] for p in at_work_dir if p in by_path)
        meta = config.skills.meta_file
        # Gemini CLI globs SKILL.md then */SKILL.md in each folder: a SKILL.md right in it comes first
        containers = [(Root(os.path.join(c.path, meta), c.scope, c.boundary, c.source), c) for c in others + own]
        return dataclasses.replace(layout, skill_containers=tuple(r for pair in containers for r in pair))

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return discovery.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble_gemini(resources)  # sent as written: Gemini CLI sanitizes nothing

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return doc.candidates

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        return gemini_context(doc)
