"""What Claude Code loads when it works below the work dir: what it sends after it reads a file there.

Each folder between the work dir and the path is read as Claude Code's walk reads a folder
(:func:`agentcontext.peers.claude.nested.folder`: its CLAUDE.md family, rules, and the AGENTS.md
fallback when that is on); the rules of startup whose ``paths:`` match the path apply too
(:func:`agentcontext.peers.claude.nested.on_read`). Nothing loaded at startup is sent again.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcontext.fs.files import Reader, is_within
from agentcontext.instructions.ondemand import Held, Lookup, Startup
from agentcontext.instructions.ondemand_paths import Target
from agentcontext.peers.claude import discovery as claude_md
from agentcontext.peers.claude import nested as claude_nested
from agentcontext.settings.config import ProjectDocSettings


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a startup gives every lookup: the path-scoped rules loaded then, and whether the fallback is on."""

    rules: claude_nested.StartupRules
    fallback: bool


class ClaudeLater:
    """Claude Code's :class:`~agentcontext.instructions.ondemand.Later`."""

    def names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return (*claude_md.CLAUDE_NAMES, *doc.fallback_filenames)

    def prepare(self, startup: Startup, reader: Reader) -> Prepared:
        resources = startup.result.snapshot.resources
        rules = claude_nested.startup_rules(_walk(startup, reader), resources)
        return Prepared(rules, claude_md.agents_fallback(resources, startup.result.layout.work_dir))

    def folder(self, reader: Reader, directory: str, present: frozenset[str], startup: Startup) -> claude_nested.Folder:
        prepared: Prepared = startup.state
        return claude_nested.folder(_walk(startup, reader), directory, present, prepared.fallback)

    def collect(self, targets: list[Target], held: dict[str, Held], startup: Startup, lookup: Lookup) -> None:
        prepared: Prepared = startup.state
        work_dir = startup.result.layout.work_dir
        for target in targets:
            lookup.check_time()
            folders = [(d, held[d].value) for d in target.dirs if held[d].present and is_within(d, work_dir)]
            for loaded in claude_nested.on_read(
                target.path, target.is_dir, folders, prepared.rules, fallback=prepared.fallback
            ):
                lookup.add(loaded.found, target.path, hook=loaded.hook)


def _walk(startup: Startup, reader: Reader) -> claude_md.Walk:
    walk = claude_md.Walk(startup.result.layout, startup.result.config, reader)
    walk.processed.update(startup.seen)
    return walk
