"""Claude Code as a peer: its walk, its doc, the files it sends once it reads a file below the work dir.

Its rules are this package's (:mod:`.discovery`: the CLAUDE.md family from ``/`` down, ``@``
imports, ``.claude/rules``, the AGENTS.md fallback; :mod:`.nested` and :mod:`.later`: what it
sends after a read; :mod:`.plugins`: its plugins' skills). It reads the user's skills before
the work dir's, upward (:func:`agentcontext.layout.chain_layout`), has no doc budget, and sends
the doc inside its ``<system-reminder>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcontext.fs.files import Reader
from agentcontext.instructions import children
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout, Markers, chain_layout
from agentcontext.peers.claude import discovery, nested
from agentcontext.peers.claude.doc import assemble_claude, claude_reminder
from agentcontext.peers.claude.later import ClaudeLater
from agentcontext.resource import Resource
from agentcontext.settings.config import Config, ProjectDocSettings

_LATER = ClaudeLater()


class ClaudePeer:
    """Claude Code: the ``claude`` profile."""

    name = "claude"
    agent = "Claude Code"
    sends_on_read = True

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        return chain_layout(work_dir, config, markers_seen, user_skills_first=True)

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return discovery.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble_claude(list(resources))  # sent as written: Claude Code sanitizes nothing

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return doc.root_names

    def unread_here(self, directory: str, layout: Layout) -> tuple[str, tuple[str, ...]] | None:
        return None

    def child_instructions(self, child: str, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        walk = discovery.Walk(layout, config, reader)
        reason = children.reason_of(child)
        return [children.rooted(item, child, reason) for item in discovery.folder_files(walk, child)]

    def later(self) -> ClaudeLater:
        return _LATER

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        return claude_reminder(doc)

    def wrap_later(self, answer: Applicable) -> list[str] | None:
        return nested.render((f.resource, f.hook) for f in answer.files)
