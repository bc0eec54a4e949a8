"""What Cursor attaches when it works on a file of its workspace, as its documentation says.

* The workspace's rules with ``globs`` that match the file (relative to the workspace).
* In each folder between the workspace and the file: its ``AGENTS.md``, a rule for its subtree
  (an implicit ``**``), and its own ``.cursor/rules``, scoped to that folder: an
  ``alwaysApply`` rule there applies to everything under it, a ``globs`` rule to the files
  its globs match relative to the folder. Its description-only and manual rules are listed,
  not applied (``agent_requested``, ``manual``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agentcontext.fs.files import Reader, is_within
from agentcontext.instructions.chain import Found, InstructionFiles
from agentcontext.instructions.ondemand import Held, Lookup, Startup, folder_boundary
from agentcontext.instructions.ondemand_paths import Target
from agentcontext.instructions.project_doc import whole
from agentcontext.peers.claude.nested import matches
from agentcontext.peers.cursor import files as cursor_files
from agentcontext.resource import Kind, Load, LoadType, Resource
from agentcontext.settings.config import ProjectDocSettings

_SUBTREE = ("**",)


@dataclass(frozen=True, slots=True)
class Scoped:
    """A file of a folder below the workspace, its globs relative to ``base``."""

    found: Found
    base: str


class CursorLater:
    """Cursor's :class:`~agentcontext.instructions.ondemand.Later`."""

    def names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return ("AGENTS.md", ".cursor/rules")

    def prepare(self, startup: Startup, reader: Reader) -> tuple[Resource, ...]:
        """The workspace's own ``globs`` rules, read at startup."""
        return tuple(
            r
            for r in startup.result.snapshot.resources
            if r.kind is Kind.INSTRUCTION_FILE
            and r.load is not None
            and r.load.type is LoadType.PATH_SCOPED
            and r.content is not None
        )

    def folder(self, reader: Reader, directory: str, present: frozenset[str], startup: Startup) -> tuple[Scoped, ...]:
        result = startup.result
        boundary = folder_boundary(directory, result)
        files = InstructionFiles(reader, result.config.snapshot.max_resource_bytes)
        out: list[Scoped] = []
        if "AGENTS.md" in present:
            reason = f"a nested AGENTS.md: Cursor applies it to files under {directory}"
            item = cursor_files.named(
                files,
                reader,
                os.path.join(directory, "AGENTS.md"),
                boundary,
                Load(LoadType.PATH_SCOPED, _SUBTREE, reason=reason),
            )
            if item is not None:
                out.append(Scoped(item, directory))
        if ".cursor" in present:
            for item in cursor_files.rules(reader, files, directory, boundary):
                load = item.resource.load
                if load is not None and load.type is LoadType.STARTUP:  # always, within its folder
                    reason = f"alwaysApply: true in {directory}'s rules: Cursor applies it to files under {directory}"
                    item = Found(
                        item.resource._replace(load=Load(LoadType.PATH_SCOPED, _SUBTREE, reason=reason)), item.data
                    )
                out.append(Scoped(item, directory))
        keep = result.config.project_doc.keep_bytes
        return tuple(Scoped(Found(whole(s.found, keep_bytes=keep), s.found.data), s.base) for s in out)

    def collect(self, targets: list[Target], held: dict[str, Held], startup: Startup, lookup: Lookup) -> None:
        work_dir = startup.result.layout.work_dir
        scoped_rules: tuple[Resource, ...] = startup.state
        for target in targets:
            lookup.check_time()
            for resource in scoped_rules:
                load = resource.load
                if load is not None and matches(load.globs, target.path, work_dir, is_dir=target.is_dir):
                    lookup.add(Found(resource, (resource.content or "").encode("utf-8")), target.path)
            for directory in target.dirs:
                if not held[directory].present or not is_within(directory, work_dir):
                    continue
                for scoped in held[directory].value or ():
                    load = scoped.found.resource.load
                    if load is None or load.type is not LoadType.PATH_SCOPED:
                        lookup.add(scoped.found, target.path)  # listed with its load: not applied
                    elif matches(load.globs, target.path, scoped.base, is_dir=target.is_dir):
                        lookup.add(scoped.found, target.path)
