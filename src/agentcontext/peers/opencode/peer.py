"""OpenCode as a peer: AGENTS.md (else CLAUDE.md, else CONTEXT.md) from the work dir up, ``instructions``, skills.

Its rules are this package's (:mod:`.discovery`: the walk and the global file, :mod:`.settings`
and :mod:`.globs`: its ``instructions``, :mod:`.doc`: the sections, :mod:`.skills`: the list).
It has no doc budget and sends files as written. Skills come from ``~/.claude/skills``,
``~/.agents/skills``, then ``.claude/skills`` and ``.agents/skills`` of every folder from the work
dir up to the worktree root, then ``~/.config/opencode/{skill,skills}``, the ``.opencode/{skill,
skills}`` folders of the same walk and ``~/.opencode/{skill,skills}``; OpenCode keeps whichever copy
of a name it finishes reading last (a race between its reads), so the last found wins here.

After the agent reads a file below the work dir, OpenCode adds to that read's result each folder's
first ``AGENTS.md``, ``CLAUDE.md`` or ``CONTEXT.md`` from the file's folder up to (not including) the
work dir, nearest first, inside one ``<system-reminder>`` (checked against the binary).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from agentcontext.fs.files import Reader, is_within
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout, Markers, Root, chain_layout
from agentcontext.peers.codex.peer import CodexPeer
from agentcontext.peers.opencode import discovery
from agentcontext.peers.opencode.doc import assemble_opencode, opencode_instructions, section
from agentcontext.resource import Resource, Scope
from agentcontext.settings.config import Config

_CONFIG_SKILLS = ("skill", "skills")


class OpenCodePeer(CodexPeer):
    """OpenCode: the ``opencode`` profile."""

    name = "opencode"
    agent = "OpenCode"
    sends_on_read = True

    def plan(self, work_dir: str, config: Config, markers_seen: Markers | None) -> Layout:
        layout = chain_layout(work_dir, config, markers_seen, user_skills_first=True)
        if not config.skills.enabled:
            return layout
        project = layout.doc_boundary
        walk = discovery.upward(work_dir, discovery.worktree(layout))
        home = config.home

        def bounded(path: str, scope: Scope) -> Root:
            return Root(path, scope, project if is_within(path, project) else os.path.dirname(path))

        user = tuple(c for c in layout.skill_containers if c.scope is Scope.USER)
        repo = [bounded(os.path.join(d, name), Scope.REPO) for d in walk for name in config.skills.containers]
        own = [Root(os.path.join(home, ".config", "opencode", n), Scope.USER, home) for n in _CONFIG_SKILLS]
        dot = [bounded(os.path.join(d, ".opencode", n), Scope.REPO) for d in walk for n in _CONFIG_SKILLS]
        mine = [Root(os.path.join(home, ".opencode", n), Scope.USER, home) for n in _CONFIG_SKILLS]
        meta = config.skills.meta_file
        containers: list[Root] = []
        for c in (*user, *repo, *own, *dot, *mine):  # a SKILL.md right in a folder: OpenCode's skills/**/SKILL.md
            containers += [Root(os.path.join(c.path, meta), c.scope, c.boundary, c.source), c]
        return dataclasses.replace(layout, skill_containers=tuple(dict.fromkeys(containers)))

    def discover(self, layout: Layout, config: Config, reader: Reader) -> list[Found]:
        return discovery.discover(layout, config, reader)

    def project_doc(self, resources: Sequence[Resource], sanitized: bool) -> ProjectDoc:
        return assemble_opencode(resources)  # sent as written: OpenCode sanitizes nothing

    def wrap(self, doc: ProjectDoc, work_dir: str) -> str:
        return opencode_instructions(doc)

    def wrap_later(self, answer: Applicable) -> list[str] | None:
        """What OpenCode adds to a read's result: the files nearest first, in one ``<system-reminder>``."""
        sections = [section(f.resource.path, f.resource.content or "") for f in reversed(answer.files)]
        if not sections:
            return []
        return ["<system-reminder>\n" + "\n\n".join(sections) + "\n</system-reminder>"]
