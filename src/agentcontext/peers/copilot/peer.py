"""GitHub Copilot CLI as a peer: ``<custom_instruction>`` blocks, always-applying and path-scoped instruction files.

Its rules are this package's (:mod:`.discovery`: the files and their order, :mod:`.text`: their
text and frontmatter, :mod:`.imports`: ``@`` imports, :mod:`.doc`: the custom instructions,
:mod:`.skills`: the list). It reads every name of a folder (``AGENTS.md``, ``CLAUDE.md``,
``GEMINI.md`` side by side), has no doc budget, and offers skills from ``.github/skills``,
``.agents/skills`` and ``.claude/skills`` of the work dir and each folder up to the project root,
then ``~/.copilot/skills``, ``~/.agents/skills`` and ``COPILOT_SKILLS_DIRS``, the first copy of a
name winning. Once it reads a file it sends the path-scoped files that take it and the files of
the folders from there up to the work dir (:mod:`.later`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from agentcontext.fs.files import Reader
from agentcontext.fs.paths import git_repository
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout, Markers, chain_layout
from agentcontext.peers.copilot import discovery, later
from agentcontext.peers.copilot.doc import assemble_copilot, copilot_instructions
from agentcontext.peers.copilot.later import CopilotLater
from agentcontext.peers.gemini.peer import GeminiPeer
from agentcontext.resource import Resource
from agentcontext.settings.config import Config

_LATER = CopilotLater()


class CopilotPeer(GeminiPeer):  # its folders read as Gemini CLI reads them: every name
    """GitHub Copilot CLI: the ``copilot`` profile."""

    name = "copilot"
    agent = "GitHub Copilot CLI"
    sends_on_read = True

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        # its root: the nearest .git that git itself takes for a repository (a .git file, or a folder with
        # objects/, refs/ and a valid HEAD)
        layout = chain_layout(work_dir, config, markers_seen, user_skills_first=False, accept=git_repository)
        by_path = {c.path: c for c in layout.skill_containers}
        # each kind of folder from the work dir up to the root, then the next kind; then the user's
        ordered = [os.path.join(d, name) for name in config.skills.containers for d in reversed(layout.chain)]
        project = tuple(by_path[p] for p in ordered if p in by_path)
        rest = tuple(c for c in layout.skill_containers if c.path not in set(ordered))
        return dataclasses.replace(layout, skill_containers=project + rest)

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return discovery.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble_copilot(resources)  # sent as written, but for a BOM and invisible characters

    def later(self) -> CopilotLater:  # type: ignore[override]
        return _LATER

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        return copilot_instructions(doc)

    def wrap_later(self, answer: Applicable) -> list[str] | None:
        return later.wrap_later(answer)
