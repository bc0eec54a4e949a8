"""Cursor as a peer: its documented rules (``.cursor/rules``, AGENTS.md, CLAUDE.md, ``.cursorrules``).

No Cursor binary can be driven offline (its CLI installs from cursor.com and cannot be
pointed at a local model), so this peer follows Cursor's documentation, not an observed
binary; ``agents`` marks it so, and ``docs/agents.md`` names the sources. Its startup is
:mod:`.discovery`; what it attaches as it works on files, :mod:`.later`. The frame it sends
the rules in is not documented: ``doc --wrap`` prints the doc unframed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from agentcontext.fs.files import Reader
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import ProjectDoc, assemble
from agentcontext.layout import Layout, Markers, chain_layout
from agentcontext.peers.codex.peer import CodexPeer
from agentcontext.peers.cursor import discovery
from agentcontext.peers.cursor.later import CursorLater
from agentcontext.resource import Resource, Scope
from agentcontext.settings.config import Config, ProjectDocSettings


class CursorPeer(CodexPeer):
    """Cursor: the ``cursor`` profile."""

    name = "cursor"
    agent = "Cursor"
    sends_on_read = True  # a rule attaches once a matching file is in the chat's context

    def __init__(self) -> None:
        super().__init__()
        self._cursor_later = CursorLater()

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        layout = chain_layout(work_dir, config, markers_seen, user_skills_first=False)
        in_work_dir = {os.path.join(work_dir, name) for name in config.skills.containers}
        # the workspace's own skills and the user's: not those of the folders above the workspace
        containers = tuple(c for c in layout.skill_containers if c.scope is not Scope.PROJECT or c.path in in_work_dir)
        return dataclasses.replace(layout, chain=(work_dir,), skill_containers=containers)

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return discovery.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble(list(resources), sanitized=sanitized)

    def read_names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return discovery.ROOT_FILES

    def unread_here(self, directory: str, layout: Layout) -> tuple[str, tuple[str, ...]] | None:
        return (
            "is not read at startup: Cursor reads AGENTS.md, CLAUDE.md and .cursorrules at its workspace root only",
            (f"workspace: {layout.work_dir}", "a nested AGENTS.md applies to files under its folder"),
        )

    def child_instructions(self, child: str, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return []  # a nested checkout is a folder like any other to Cursor: its AGENTS.md applies below it

    def later(self) -> CursorLater:  # type: ignore[override]
        return self._cursor_later

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        return doc.content
