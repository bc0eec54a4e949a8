"""Coder's workspace agent: shallow scan roots, every instruction name at each root's top level.

Coder reads the top level of each scan root (declared sources, ``~/.coder``, the user's skill
dirs, the work dir last), every instruction name it knows, case-sensitively, links collapsed
to their target (:func:`agentcontext.instructions.chain.discover_roots`,
:func:`agentcontext.layout.roots_layout`). A folder below the work dir is read the same way
when a chat works there, with no root markers. The doc and its frame are Codex's
(:class:`~agentcontext.peers.codex.CodexPeer`, whose other rules it keeps).
"""

from __future__ import annotations

from agentcontext.fs.files import Reader
from agentcontext.instructions import chain
from agentcontext.instructions.chain import Found, InstructionFiles
from agentcontext.layout import Layout, Markers, Root, roots_layout
from agentcontext.peers.codex.peer import CodexPeer
from agentcontext.resource import Scope
from agentcontext.settings.config import Config, ProjectDocSettings


class CoderPeer(CodexPeer):
    """Coder's shallow roots: the ``coder`` profile."""

    name = "roots"
    agent = "Coder"

    def read_folder(
        self, files: InstructionFiles, directory: str, boundary: str, doc: ProjectDocSettings
    ) -> list[Found]:
        return files.at_root(Root(directory, Scope.PROJECT, boundary), doc.root_names)

    def probe_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return doc.root_names

    def checkout_markers(self, doc: ProjectDocSettings) -> frozenset[str]:
        return frozenset()

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        return roots_layout(work_dir, config)

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return chain.discover_roots(layout, config, reader)

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return doc.root_names

    def unread_here(self, directory: str, layout: Layout) -> tuple[str, tuple[str, ...]] | None:
        roots = ", ".join(r.path for r in layout.instruction_roots)
        return (
            "is not read: the coder profile reads instruction files only at the top of its scan roots",
            (f"scan roots: {roots}", f"declare {directory} as a source to read it"),
        )
