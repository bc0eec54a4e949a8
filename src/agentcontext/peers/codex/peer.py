"""Codex (and the default profile, which keeps Codex's chain with fallback names): the AGENTS.md chain.

Codex reads ``$CODEX_HOME``'s instructions, then every folder from the project root (the
nearest folder holding a root marker) down to its cwd, one file a folder
(``AGENTS.override.md`` > ``AGENTS.md`` > the fallbacks), under one byte budget
(:mod:`agentcontext.instructions.chain`, :mod:`agentcontext.instructions.project_doc`). It
sends them in one ``# AGENTS.md instructions for <cwd>`` block
(:func:`~agentcontext.views.render.codex_instructions`) and loads nothing more in a session:
a folder below its cwd applies only when it is started there, as on-demand lookups answer
(:class:`~agentcontext.instructions.ondemand.FolderChain`, a nested checkout starting its own
chain).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.fs.files import Reader
from agentcontext.instructions import chain, children
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found, InstructionFiles
from agentcontext.instructions.ondemand import FolderChain
from agentcontext.instructions.project_doc import ProjectDoc, assemble
from agentcontext.layout import Layout, Markers, chain_layout
from agentcontext.peers.codex.render import codex_instructions
from agentcontext.resource import Resource, Scope
from agentcontext.settings.config import Config, ProjectDocSettings


class CodexPeer:
    """Codex's chain: the ``default`` and ``codex`` profiles (they differ in settings only)."""

    name = "chain"
    agent = "Codex"
    sends_on_read = False

    def __init__(self) -> None:
        self._later = FolderChain(self.probe_names, self.read_folder, self.checkout_markers)

    # --- one folder, as this agent reads it (its chain's folders, a child's root, a folder below the cwd)

    def read_folder(
        self, files: InstructionFiles, directory: str, boundary: str, doc: ProjectDocSettings
    ) -> list[Found]:
        return files.pick(directory, doc.candidates, boundary, Scope.PROJECT)

    def probe_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return (*doc.candidates, *doc.root_markers)

    def checkout_markers(self, doc: ProjectDocSettings) -> frozenset[str]:
        return frozenset(doc.root_markers)

    # --- the Peer protocol

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        return chain_layout(work_dir, config, markers_seen, user_skills_first=False)

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return chain.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble(list(resources), sanitized=sanitized)

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return doc.candidates

    def unread_here(self, directory: str, layout: Layout) -> tuple[str, tuple[str, ...]] | None:
        return None

    def child_instructions(self, child: str, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        files = InstructionFiles(reader, config.snapshot.max_resource_bytes)
        doc = config.project_doc
        return children.picked(self.read_folder(files, child, child, doc), child, doc)

    def later(self) -> FolderChain:
        return self._later

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        if doc.empty:
            return doc.content
        return codex_instructions(doc.content, work_dir, project=bool(doc.project_text))

    def wrap_later(self, answer: Applicable) -> list[str] | None:
        return None
