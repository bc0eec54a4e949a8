"""Copilot CLI's instruction files (the ``copilot`` profile), in the order its binary sends them (1.0.102).

Three parts of its system message, in this order:

1. ``<custom_instruction>`` blocks: ``~/.copilot/copilot-instructions.md``; the project root's
   ``.github/copilot-instructions.md`` then the work dir's; the root's ``AGENTS.md``, ``CLAUDE.md``,
   ``GEMINI.md`` (every one there is), then the work dir's; then each folder between them, nearest
   the work dir first: its ``.github/copilot-instructions.md`` and the three names. The project
   root is the nearest folder above the work dir holding ``.git``; none: the work dir alone. A
   block whose text (cleaned, its imports expanded) an earlier block already sent is left out
   (``shadowed``): a ``CLAUDE.md`` linked to ``AGENTS.md`` is sent once.
2. The always-applying files, bare: ``~/.copilot/instructions/**/*.instructions.md``, the root's
   ``.github/instructions/**/*.instructions.md`` (the suffix in any case) and ``.claude/rules/**/*.md``,
   the same two of the work dir, then the ``COPILOT_CUSTOM_INSTRUCTIONS_DIRS`` (each folder's
   ``.github/instructions`` and ``.claude/rules`` first, then its other ``*.instructions.md``);
   each group sorted by its path, bytewise.
3. Tables: the custom dirs' ``AGENTS.md`` files (nested table), then the files of 2. whose
   ``applyTo`` (``paths:``) names other files than all: ``path_scoped`` with those globs, sent
   whole after the model reads a matching file.

Files below the work dir are not read at startup. No byte budget.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from agentcontext.fs.files import Entry, EntryKind, Reader, is_within
from agentcontext.instructions.chain import Found
from agentcontext.layout import Layout, Root
from agentcontext.peers.copilot import text as ctext
from agentcontext.peers.copilot.imports import Expansion
from agentcontext.peers.file_text import FileText, read_text
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.settings.config import Config

NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
IMPORTING = frozenset({"AGENTS.md", "CLAUDE.md"})  # the names whose @ imports it expands
COPILOT_FILE = ".github/copilot-instructions.md"
INSTRUCTIONS = ".github/instructions"
RULES = ".claude/rules"
SUFFIX = ".instructions.md"
HOME_DIR = ".copilot"
_STARTUP = Load(LoadType.STARTUP)
_EXCLUDED = "excludeAgent names coding-agent: Copilot CLI leaves the file out"
ALWAYS = "applied to every file (no applyTo, or all files): sent whole after the custom instructions"
SCOPED = "listed in Copilot CLI's table of instruction files; sent whole after it reads a matching file"
NESTED = "listed in Copilot CLI's table of nested AGENTS.md files; the model reads it with its view tool"
_ALWAYS = Load(LoadType.STARTUP, reason=ALWAYS)


def _read_file(entry: Entry, reader: Reader, cap: int) -> FileText:
    read = read_text(entry, reader, cap, "Copilot CLI")
    if read.text is not None and ctext.has_hidden(read.text):
        return read._replace(warnings=(*read.warnings, "invisible characters: Copilot CLI removes them before sending"))
    return read


def _not_loaded(reason: str, importer: str | None = None, chain: tuple[str, ...] = ()) -> Load:
    return Load(LoadType.NOT_LOADED, importer=importer, chain=chain, reason=reason)


def _unread(path: str, scope: Scope, status: Status, reason: str) -> Found:
    return Found(Resource(Kind.INSTRUCTION_FILE, path, scope, status, error=reason, load=_not_loaded(reason)))


@dataclass
class Walk:
    """One pass of Copilot CLI's loading."""

    layout: Layout
    config: Config
    reader: Reader
    root: str  # the project root, or the work dir when there is none
    blocks: list[Found] = field(default_factory=list)
    always: list[Found] = field(default_factory=list)
    nested: list[Found] = field(default_factory=list)
    scoped: list[Found] = field(default_factory=list)
    others: list[Found] = field(default_factory=list)  # looked at, not sent
    instructions: list[Found] = field(default_factory=list)  # always and scoped, in the order read
    _seen: set[str] = field(default_factory=set)
    _block_texts: dict[str, str] = field(default_factory=dict)  # each block's text as sent -> the first file sending it

    def read(self, entry: Entry) -> FileText:
        cap = self.config.snapshot.max_resource_bytes
        value: FileText = self.reader.cached(entry, f"copilot:{cap}", lambda: _read_file(entry, self.reader, cap))
        return value

    def probe(self, path: str, boundary: str) -> Entry | None:
        """``path`` when there is something there; a link out of ``boundary`` is listed, never followed."""
        if path in self._seen:
            return None
        entry = self.reader.probe(path, boundary)
        if entry.kind is EntryKind.MISSING:
            return None
        self._seen.add(path)
        return entry

    def problem(self, entry: Entry, scope: Scope) -> Found | None:
        kind = entry.kind
        if kind is EntryKind.FILE:
            return None
        if kind is EntryKind.DIRECTORY:
            return _unread(entry.path, scope, Status.INVALID, "a directory, not a file: Copilot CLI skips it")
        if kind is EntryKind.ESCAPE:
            why = f"{entry.error}: Copilot CLI would read it; refused, nothing outside the roots is read"
            return _unread(entry.path, scope, Status.INVALID, why)
        if kind is EntryKind.SPECIAL:
            return _unread(entry.path, scope, Status.INVALID, f"{entry.special}, not a regular file; not read")
        return _unread(entry.path, scope, Status.UNREADABLE, entry.error or "cannot be read")

    def text_of(self, entry: Entry, scope: Scope) -> tuple[Resource, str] | Found:
        """The file's resource (no load yet) and its text as sent, or why it is not read."""
        problem = self.problem(entry, scope)
        if problem is not None:
            return problem
        read = self.read(entry)
        resource = Resource(
            Kind.INSTRUCTION_FILE,
            entry.path,
            scope,
            read.status,
            read.size,
            read.content_hash,
            error=read.error,
            warnings=read.warnings,
        )
        if read.text is None:
            reason = read.error or "cannot be read"
            return Found(resource._replace(load=_not_loaded(reason)))
        return resource, ctext.cleaned(read.text)

    # --- the three parts

    def block(self, path: str, scope: Scope, boundary: str, *, imports: bool = True) -> None:
        if path in self._seen:
            return
        entry = self.probe(path, boundary) or self._spelled_otherwise(path, boundary)
        if entry is None:
            return
        path = entry.path
        got = self.text_of(entry, scope)
        if isinstance(got, Found):
            self.others.append(got)
            return
        resource, sent = got
        imported: list[Found] = []
        if imports and os.path.basename(path) in IMPORTING and scope is not Scope.HOME:
            sent, imported = self._imports(path, sent, scope)
        first = self._block_texts.setdefault(sent, path)
        if first != path:  # a link to a file already sent, or a copy of it: Copilot CLI sends a text once
            reason = f"the same text as {first}: Copilot CLI sends it once"
            self.others.append(Found(resource.with_status(Status.SHADOWED, reason)))
            return
        self.blocks.append(Found(resource._replace(load=_STARTUP), sent.encode("utf-8")))
        self.others += imported

    def _spelled_otherwise(self, path: str, boundary: str) -> Entry | None:
        """The file Copilot CLI reads for ``path``'s name when no file has that exact name: the first entry of
        the folder, in the order the folder lists them, whose name is the same but for case (``agents.md``,
        ``Claude.md``); a folder so named is passed over."""
        folder, _, name = path.rpartition("/")
        wanted = name.lower()
        for item in self.reader.list_dir(folder, boundary=boundary, as_listed=True):
            if not item.is_dir and item.name.lower() == wanted and item.name != name:
                return self.probe(f"{folder}/{item.name}", boundary)
        return None

    def _imports(self, path: str, body: str, scope: Scope) -> tuple[str, list[Found]]:
        texts: dict[str, str] = {}

        def fetch(full: str) -> str | None:
            entry = self.reader.probe(full, self.root)
            if entry.kind is not EntryKind.FILE:
                return None
            read = self.read(entry)
            if read.text is None:
                return None
            texts[full] = ctext.cleaned(read.text)
            return texts[full]

        expansion = Expansion(path, self.root, fetch)
        sent = expansion.expand(body, os.path.dirname(path), path)
        out: list[Found] = []
        for importer, full in expansion.loaded:
            entry = self.reader.probe(full, self.root)
            read = self.read(entry)
            load = Load(LoadType.IMPORT, importer=importer, chain=(path,) if importer == path else (path, importer))
            resource = Resource(
                Kind.INSTRUCTION_FILE, full, scope, Status.OK, read.size, read.content_hash, warnings=read.warnings
            )
            out.append(Found(resource._replace(load=load), texts[full].encode("utf-8")))
        return sent, out

    def instruction(self, entry: Entry, scope: Scope, shown: str, key: str) -> None:
        """An ``.instructions.md`` or rules file: always applied, path-scoped, or excluded."""
        got = self.text_of(entry, scope)
        if isinstance(got, Found):
            self.others.append(got)
            return
        resource, sent = got
        front = ctext.front(sent, key)
        if front.excluded:
            self.others.append(Found(resource._replace(load=_not_loaded(_EXCLUDED))))
            return
        data = sent.encode("utf-8")
        if front.always:
            self.always.append(Found(resource._replace(load=_ALWAYS), data))
            self.instructions.append(self.always[-1])
            return
        load = Load(LoadType.PATH_SCOPED, globs=front.patterns, reason=SCOPED)
        self.scoped.append(Found(resource._replace(load=load, name=shown, description=front.description), data))
        self.instructions.append(self.scoped[-1])

    def nested_agents(self, entry: Entry, scope: Scope, directory: str) -> None:
        got = self.text_of(entry, scope)
        if isinstance(got, Found):
            self.others.append(got)
            return
        resource, sent = got
        load = Load(LoadType.PATH_SCOPED, globs=(f"{directory}**/*",), reason=NESTED)
        shown = f"{directory}AGENTS.md"
        self.nested.append(Found(resource._replace(load=load, name=shown, description=directory), sent.encode()))

    def tree(self, folder: str, boundary: str, wanted: str) -> list[tuple[str, Entry]]:
        """Every file under ``folder`` whose name ends with ``wanted`` (any case for ``.instructions.md``), by
        relative path bytewise; a link out of ``boundary`` is listed with why."""
        found: list[tuple[str, Entry]] = []
        top = self.reader.probe(folder, boundary)
        if top.kind is EntryKind.ESCAPE and folder not in self._seen:  # a folder linking out: said, not read
            self._seen.add(folder)
            why = f"{top.error}: Copilot CLI would read it; refused, nothing outside the roots is read"
            self.others.append(_unread(folder, Scope.PROJECT, Status.INVALID, why))
        if top.kind is not EntryKind.DIRECTORY:
            return found
        for relative in self._files(folder, boundary, "", set()):
            name = relative.rsplit("/", 1)[-1]
            matches = name.lower().endswith(SUFFIX) if wanted == SUFFIX else name.endswith(wanted)
            if matches:
                path = f"{folder}/{relative}"
                if path in self._seen:
                    continue
                self._seen.add(path)
                found.append((relative, self.reader.probe(path, boundary)))
        return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))  # bytewise, as listed

    def _files(self, folder: str, boundary: str, prefix: str, seen: set[str]) -> Iterator[str]:
        listing = self.reader.list_dir(folder, boundary=boundary)
        if not listing:
            return
        real = self.reader.real_root(folder)
        if real in seen:
            return
        seen.add(real)
        for item in listing:
            is_dir = item.is_dir
            if item.is_symlink:
                entry = self.reader.probe(f"{folder}/{item.name}", boundary)
                is_dir = entry.kind is EntryKind.DIRECTORY
            if is_dir:
                yield from self._files(f"{folder}/{item.name}", boundary, f"{prefix}{item.name}/", seen)
            else:
                yield f"{prefix}{item.name}"

    def instruction_dir(self, folder: str, scope: Scope, boundary: str, *, relative: bool = True) -> None:
        for _, entry in self.tree(f"{folder}/{INSTRUCTIONS}", boundary, SUFFIX):
            self.instruction(entry, scope, os.path.relpath(entry.path, folder) if relative else entry.path, "applyTo")

    def rules_dir(self, folder: str, scope: Scope, boundary: str, *, relative: bool = True) -> None:
        for _, entry in self.tree(f"{folder}/{RULES}", boundary, ".md"):
            self.instruction(entry, scope, os.path.relpath(entry.path, folder) if relative else entry.path, "paths")


def _homes(layout: Layout, config: Config) -> tuple[Root | None, tuple[Root, ...]]:
    """``~/.copilot`` and the custom instruction dirs, as the settings name them."""
    own = os.path.join(config.home, HOME_DIR)
    home = next((r for r in layout.home_dirs if r.path == own), None)
    return home, tuple(r for r in layout.home_dirs if r.path != own)


def discover(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """Every instruction file Copilot CLI looks at on startup, in the order it sends them."""
    work_dir = layout.work_dir
    root = layout.project_root or work_dir
    walk = Walk(layout, config, reader, root)
    home, custom = _homes(layout, config)
    boundary = layout.doc_boundary
    if home is not None:
        walk.block(os.path.join(home.path, "copilot-instructions.md"), Scope.HOME, home.boundary)
    tops = (root,) if root == work_dir else (root, work_dir)
    for directory in tops:
        walk.block(f"{directory}/{COPILOT_FILE}", Scope.PROJECT, boundary)
    for directory in tops:
        for name in NAMES:
            walk.block(f"{directory}/{name}", Scope.PROJECT, boundary)
    for directory in reversed(layout.chain[1:-1]):
        walk.block(f"{directory}/{COPILOT_FILE}", Scope.PROJECT, boundary)
        for name in NAMES:
            walk.block(f"{directory}/{name}", Scope.PROJECT, boundary)
    if home is not None:
        for _, entry in walk.tree(os.path.join(home.path, "instructions"), home.boundary, SUFFIX):
            walk.instruction(entry, Scope.HOME, entry.path, "applyTo")
    for directory in tops:
        walk.instruction_dir(directory, Scope.PROJECT, boundary)
        walk.rules_dir(directory, Scope.PROJECT, boundary)
    _custom(walk, custom)
    return _number(walk)


def _custom(walk: Walk, custom: tuple[Root, ...]) -> None:
    """The ``COPILOT_CUSTOM_INSTRUCTIONS_DIRS``: their instructions and rules, then their other
    ``*.instructions.md``; each one's ``AGENTS.md`` a row of the nested table."""
    for root in custom:
        scope = Scope.PROJECT if is_within(root.path, walk.root) else Scope.HOME
        walk.instruction_dir(root.path, scope, root.boundary, relative=False)
        walk.rules_dir(root.path, scope, root.boundary, relative=False)
    for root in custom:
        scope = Scope.PROJECT if is_within(root.path, walk.root) else Scope.HOME
        for _, entry in walk.tree(root.path, root.boundary, SUFFIX):
            walk.instruction(entry, scope, entry.path, "applyTo")
    for root in custom:
        scope = Scope.PROJECT if is_within(root.path, walk.root) else Scope.HOME
        agents = walk.probe(os.path.join(root.path, "AGENTS.md"), root.boundary)
        if agents is not None:
            walk.nested_agents(agents, scope, os.path.relpath(root.path, walk.root) + "/")


def _number(walk: Walk) -> list[Found]:
    """Doc positions in the order sent: blocks, always-applying files, then the tables' rows."""
    sent = (*walk.blocks, *walk.always, *walk.nested, *walk.scoped)
    out = [Found(item.resource._replace(doc_order=order), item.data) for order, item in enumerate(sent)]
    return [*out, *walk.others]
