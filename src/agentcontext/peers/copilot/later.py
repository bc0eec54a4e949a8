"""What Copilot CLI sends after it reads a file (1.0.102, as observed): one user message of reminders.

After a ``view`` of a file, the next request carries one more user message,
``"\\n" + "\\n".join(<system_reminder> per file)``: first the path-scoped instruction files of
startup whose ``applyTo`` (``paths:``) takes the file's path relative to the git root (in startup
order: home, the root's, the work dir's, the custom dirs'), then, for each folder from the file's
up to the work dir (nearest first), its ``.github/copilot-instructions.md``, ``AGENTS.md``,
``CLAUDE.md``, ``GEMINI.md`` (not an empty or whitespace-only one, unlike startup), then its
``.github/instructions`` and ``.claude/rules`` files (at any depth) that apply always or to the
path (relative to the git root), but those whose ``excludeAgent`` names the coding agent. Each is
``Custom instructions from <path>. Apply these to any code you write here:`` and the whole file
(frontmatter kept, BOM and invisible characters removed), XML-escaped; the path relative to the
git root (a startup file: as its table shows it). Nothing loaded at startup is sent again; ``@``
imports of an AGENTS.md or CLAUDE.md are expanded as at startup (before the escaping), a file
loaded at startup included.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from agentcontext.fs.files import Reader, is_within
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found
from agentcontext.instructions.ondemand import Held, Lookup, Startup
from agentcontext.instructions.ondemand_paths import Target
from agentcontext.peers.claude.text import js_trim
from agentcontext.peers.copilot import discovery
from agentcontext.peers.copilot import text as ctext
from agentcontext.peers.copilot.globs import applies
from agentcontext.resource import Load, LoadType, Resource, Scope, Status
from agentcontext.settings.config import ProjectDocSettings

_ON_READ = "sent by Copilot CLI as a reminder once it reads a file in this folder or below"
_EMPTY = "empty or whitespace only: Copilot CLI sends no reminder for it"


@dataclass(frozen=True, slots=True)
class Prepared:
    root: str  # the git root, or the work dir
    scoped: tuple[Resource, ...]  # the path-scoped files of startup, in its order


@dataclass(frozen=True, slots=True)
class Folder:
    """One folder's files as Copilot CLI reads them after a read there."""

    blocks: tuple[Found, ...]
    instructions: tuple[Found, ...]  # always and path-scoped, in order
    others: tuple[Found, ...]


def _on_read(item: Found, root: str, *, block: bool) -> Found:
    resource = item.resource
    text = (item.data or b"").decode("utf-8")
    if block and not js_trim(text):  # sent at startup as an empty block; after a read, no reminder
        return Found(resource._replace(content=None, doc_order=None, load=Load(LoadType.NOT_LOADED, reason=_EMPTY)))
    load = resource.load
    globs = load.globs if load is not None and load.type is LoadType.PATH_SCOPED else ()
    shown = os.path.relpath(resource.path, root)
    on_read = Load(LoadType.ON_DEMAND, globs=globs, reason=_ON_READ)
    return Found(resource._replace(content=text, load=on_read, name=shown, doc_order=None), item.data)


class CopilotLater:
    """Copilot CLI's :class:`~agentcontext.instructions.ondemand.Later`."""

    def names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return (discovery.COPILOT_FILE, *discovery.NAMES, discovery.INSTRUCTIONS, discovery.RULES)

    def prepare(self, startup: Startup, reader: Reader) -> Prepared:
        layout = startup.result.layout
        scoped = [
            r
            for r in startup.result.snapshot.resources
            if r.load is not None and r.load.type is LoadType.PATH_SCOPED and r.load.reason == discovery.SCOPED
        ]
        scoped.sort(key=lambda r: r.doc_order or 0)
        return Prepared(layout.project_root or layout.work_dir, tuple(scoped))

    def folder(self, reader: Reader, directory: str, present: frozenset[str], startup: Startup) -> Folder:
        result = startup.result
        layout = result.layout
        root = layout.project_root or layout.work_dir
        boundary = layout.doc_boundary if is_within(directory, layout.doc_boundary) else layout.work_dir
        walk = discovery.Walk(layout, result.config, reader, root)
        walk.block(f"{directory}/{discovery.COPILOT_FILE}", Scope.PROJECT, boundary)
        for name in discovery.NAMES:
            walk.block(f"{directory}/{name}", Scope.PROJECT, boundary)
        walk.instruction_dir(directory, Scope.PROJECT, boundary)
        walk.rules_dir(directory, Scope.PROJECT, boundary)
        return Folder(
            tuple(_on_read(f, root, block=True) for f in walk.blocks),
            tuple(_on_read(f, root, block=False) for f in walk.instructions),
            tuple(walk.others),
        )

    def collect(self, targets: list[Target], held: dict[str, Held], startup: Startup, lookup: Lookup) -> None:
        prepared: Prepared = startup.state
        for target in targets:
            lookup.check_time()
            relative = os.path.relpath(target.path, prepared.root).replace(os.sep, "/")
            for resource in prepared.scoped:
                if resource.load is not None and applies(resource.load.globs, relative):
                    lookup.add(Found(resource), target.path)
            for directory in reversed(target.dirs):
                value: Folder | None = held[directory].value
                if value is None:
                    continue
                for item in value.blocks:
                    lookup.add(item, target.path)  # an empty one is listed not_loaded
                for item in value.instructions:
                    globs = item.resource.load.globs if item.resource.load is not None else ()
                    if not globs or applies(globs, relative):
                        lookup.add(item, target.path)
                for item in value.others:
                    lookup.add(item, target.path)


def render(files: Sequence[Resource]) -> list[str]:
    """The user message Copilot CLI adds after the read ([] when it adds none)."""
    texts = [
        ctext.reminder(r.name or r.path, r.content)
        for r in files
        if r.status is Status.OK and r.content is not None and not (r.load and r.load.type is LoadType.IMPORT)
    ]
    return ["\n" + "\n".join(texts)] if texts else []


def wrap_later(answer: Applicable) -> list[str]:
    return render([applied.resource for applied in answer.files])
