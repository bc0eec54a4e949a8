"""Gemini CLI's context files (the ``gemini`` profile), in the order its binary sends them (0.61.0).

1. Global: ``~/.gemini/<name>`` for each context file name, in name order (scope ``home``).
2. Project: every folder from the project root (the nearest folder above the work dir
   holding a root marker, ``.git``; none: the work dir alone) down to the work dir, every
   name in each; files below the work dir are not read at startup. A file reached twice
   (a link to another) is read once, its first path kept; then the paths are SORTED as
   JavaScript sorts strings (UTF-16 code units): ``/r/A/GEMINI.md`` comes before
   ``/r/GEMINI.md``, a root's ``AGENTS.md`` before its ``GEMINI.md``.
3. Each file's text has its ``@`` imports expanded inline (:mod:`.text`); an imported file is
   listed after its importer with ``load`` ``import``, a failed one ``not_loaded`` with the
   comment Gemini CLI writes in its place.

Reads stay beneath their root: a project file's imports inside the project root (Gemini CLI's own
limit too), a global file's inside ``~/.gemini`` (or the repository holding it, within home).
An import we refuse to follow gets the comment Gemini CLI writes for an import outside its
project root, ``<!-- Import failed: path - Path traversal attempt -->``, and is listed
``not_loaded`` with why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from agentcontext.fs.files import Entry, EntryKind, Reader, is_within
from agentcontext.instructions.chain import Found, relabelled
from agentcontext.layout import Layout, Root
from agentcontext.peers.claude.text import js_trim
from agentcontext.peers.file_text import FileText, read_text
from agentcontext.peers.gemini import text as gtext
from agentcontext.peers.gemini.settings import ContextNames, context_names, joined
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.settings.config import Config

_STARTUP = Load(LoadType.STARTUP)
_EMPTY = "empty or whitespace only once its imports are expanded: Gemini CLI skips it"


def _read_file(entry: Entry, reader: Reader, cap: int) -> FileText:
    return read_text(entry, reader, cap, "Gemini CLI")


def _unread(path: str, scope: Scope, status: Status, reason: str, load: Load) -> Resource:
    return Resource(Kind.INSTRUCTION_FILE, path, scope, status, error=reason, load=load)


def _not_loaded(reason: str, importer: str | None = None, chain: tuple[str, ...] = ()) -> Load:
    return Load(LoadType.NOT_LOADED, importer=importer, chain=chain, reason=reason)


def _entry_problem(entry: Entry) -> tuple[Status, str] | None:
    """Why a probed path is no file Gemini CLI's text can come from (None: a regular file)."""
    kind = entry.kind
    if kind is EntryKind.FILE:
        return None
    if kind is EntryKind.DIRECTORY:
        return Status.INVALID, "a directory, not a file: Gemini CLI skips it"
    if kind is EntryKind.SPECIAL:
        return Status.INVALID, f"{entry.special}, not a regular file; not read"
    if kind is EntryKind.ESCAPE:
        reason = f"{entry.error}: Gemini CLI would read it; refused, nothing outside the roots is read"
        return Status.INVALID, reason
    return Status.UNREADABLE, entry.error or "cannot be read"


@dataclass
class Walk:
    """One pass of Gemini CLI's loading: the reader, the cap, what was read."""

    layout: Layout
    config: Config
    reader: Reader
    names: ContextNames
    _tag: str = field(init=False)

    def __post_init__(self) -> None:
        self._tag = f"gemini:{self.config.snapshot.max_resource_bytes}"

    def read(self, entry: Entry) -> FileText:
        cap = self.config.snapshot.max_resource_bytes
        value: FileText = self.reader.cached(entry, self._tag, lambda: _read_file(entry, self.reader, cap))
        return value

    # --- one file and its imports

    def load(self, entry: Entry, scope: Scope, allowed: str, startup: Load = _STARTUP) -> list[Found]:
        """A context file (its text with imports expanded) and the files it imports, listed after it."""
        problem = _entry_problem(entry)
        if problem is not None:
            status, reason = problem
            return [Found(_unread(entry.path, scope, status, reason, _not_loaded(reason)))]
        read = self.read(entry)
        if read.text is None:
            reason = read.error or "cannot be read"
            resource = Resource(
                Kind.INSTRUCTION_FILE, entry.path, scope, read.status, read.size, read.content_hash, error=reason
            )
            return [Found(relabelled(resource, None, _not_loaded(reason), None))]
        imports = _Imports(self, scope, allowed, entry.path)
        expanded = imports.expand(read.text, os.path.dirname(entry.path), 0, frozenset(), ())
        resource = Resource(
            Kind.INSTRUCTION_FILE,
            entry.path,
            scope,
            Status.OK,
            read.size,
            read.content_hash,
            warnings=read.warnings,
            load=startup,
        )
        if not js_trim(expanded):
            first = Found(relabelled(resource, None, _not_loaded(_EMPTY), None))
        else:
            first = Found(resource, expanded.encode("utf-8"))
        return [first, *imports.listed.values()]


@dataclass
class _Imports:
    """The expansion of one context file: Gemini CLI's ``processImports``, bounded by ``allowed``."""

    walk: Walk
    scope: Scope
    allowed: str  # the importer's project root: nothing outside it is imported
    top: str
    listed: dict[str, Found] = field(default_factory=dict)  # each import target once, first import first

    def expand(self, content: str, base: str, depth: int, processed: frozenset[str], chain: tuple[str, ...]) -> str:
        if depth >= gtext.MAX_IMPORT_DEPTH or "@" not in content:
            return content
        specs = gtext.find_imports(content)
        if not specs:
            return content
        regions = gtext.code_regions(content)
        if not chain:
            chain = (self.top,)
        out: list[str] = []
        last = 0
        for spec in specs:
            out.append(content[last : spec.start])
            last = spec.end
            if gtext.in_code(spec.start, regions):
                out.append(f"@{spec.path}")
                continue
            out.append(self._one(spec.path, base, depth, processed, chain))
        out.append(content[last:])
        return "".join(out)

    def _one(self, spec: str, base: str, depth: int, processed: frozenset[str], chain: tuple[str, ...]) -> str:
        full = os.path.normpath(os.path.join(base, spec))
        importer = chain[-1]
        if gtext.remote(spec) or not is_within(full, self.allowed):
            where = "a file:// or web address" if gtext.remote(spec) else f"outside {self.allowed}"
            reason = f"{where}: Gemini CLI refuses it as a path traversal attempt"
            self._note(full, Status.INVALID, reason, importer, chain)
            return gtext.failed(spec, gtext.TRAVERSAL)
        if full in processed:
            return gtext.already(spec)
        entry = self.walk.reader.probe(full, self.allowed)
        kind = entry.kind
        if kind is EntryKind.MISSING or kind is EntryKind.BROKEN:
            reason = "imported but does not exist: Gemini CLI writes an Import failed comment in its place"
            self._note(full, Status.UNREADABLE, reason, importer, chain)
            return gtext.failed(spec, gtext.missing(full))
        if kind is EntryKind.ESCAPE:
            reason = f"{entry.error}: Gemini CLI refuses it as a path traversal attempt"
            self._note(full, Status.INVALID, reason, importer, chain)
            return gtext.failed(spec, gtext.TRAVERSAL)
        if kind is EntryKind.DIRECTORY:
            self._note(full, Status.INVALID, "a directory: Gemini CLI writes an Import failed comment", importer, chain)
            return gtext.failed(spec, gtext.IS_A_DIRECTORY)
        if kind is not EntryKind.FILE:
            reason = entry.error or f"{entry.special}, not a regular file; not read"
            self._note(full, Status.UNREADABLE, reason, importer, chain)
            return gtext.failed(spec, reason)
        read = self.walk.read(entry)
        if read.text is None:
            reason = read.error or "cannot be read"
            self._note(full, read.status, reason, importer, chain)
            return gtext.failed(spec, reason)
        if full not in self.listed and full != self.top:
            resource = Resource(
                Kind.INSTRUCTION_FILE,
                full,
                self.scope,
                Status.OK,
                read.size,
                read.content_hash,
                warnings=read.warnings,
                load=Load(LoadType.IMPORT, importer=importer, chain=chain),
            )
            self.listed[full] = Found(resource, read.text.encode("utf-8"))
        inner = self.expand(read.text, os.path.dirname(full), depth + 1, processed | {full}, (*chain, full))
        return gtext.imported(spec, inner)

    def _note(self, path: str, status: Status, reason: str, importer: str, chain: tuple[str, ...]) -> None:
        if path not in self.listed:
            self.listed[path] = Found(_unread(path, self.scope, status, reason, _not_loaded(reason, importer, chain)))


def _import_root(walk: Walk, directory: str, boundary: str) -> str:
    """Gemini CLI's project root for a file in ``directory``: the nearest folder holding a root marker, else the
    folder itself; looked for no higher than ``boundary`` (our reads stay beneath it)."""
    markers = walk.config.project_doc.root_markers
    current = directory
    while is_within(current, boundary):
        for marker in markers:
            if marker and walk.reader.probe(os.path.join(current, marker), boundary).kind is not EntryKind.MISSING:
                return current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return directory


def _global_candidates(walk: Walk, out: list[Found]) -> list[tuple[Entry, Root]]:
    found: list[tuple[Entry, Root]] = []
    for root in walk.layout.home_dirs:
        for name in walk.names.home:
            entry = _probe(walk, joined(root.path, name), root.boundary, Scope.HOME, out)
            if entry is not None:
                found.append((entry, root))
    return found


def _probe(walk: Walk, path: str, boundary: str, scope: Scope, out: list[Found]) -> Entry | None:
    """``path`` when it is there to look at; a name leading out of ``boundary`` is listed, never probed."""
    if not is_within(path, boundary):
        if not any(item.resource.path == path for item in out):
            reason = f"outside {boundary}: a context file name leading out of its folder is not followed"
            out.append(Found(_unread(path, scope, Status.INVALID, reason, _not_loaded(reason))))
        return None
    entry = walk.reader.probe(path, boundary)
    return None if entry.kind is EntryKind.MISSING else entry


def _project_dirs(layout: Layout, home_dirs: tuple[Root, ...]) -> tuple[str, ...]:
    """The folders of the walk, root first; the walk up stops below ``~/.gemini``."""
    dirs = layout.chain
    for root in home_dirs:
        if root.path in dirs:
            dirs = dirs[dirs.index(root.path) + 1 :]
    return dirs


def discover(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """Every context file Gemini CLI looks at, in the order it sends them; the unused ones say why."""
    walk = Walk(layout, config, reader, context_names(layout, config, reader))
    out = [
        Found(_unread(path, scope, Status.INVALID, why, _not_loaded(why))) for path, scope, why in walk.names.problems
    ]
    seen: dict[str, str] = {}  # the real file -> the path it was first read by
    for entry, root in _global_candidates(walk, out):
        if _again(entry, seen, Scope.HOME, out):
            continue
        out += walk.load(entry, Scope.HOME, _import_root(walk, root.path, root.boundary))
    boundary = layout.doc_boundary
    project: list[tuple[Entry, str]] = []
    for directory in _project_dirs(layout, layout.home_dirs):
        reader.names(directory, boundary)
        for name in walk.names.project:
            probed = _probe(walk, joined(directory, name), boundary, Scope.PROJECT, out)
            if probed is not None and not _again(probed, seen, Scope.PROJECT, out):
                project.append((probed, name))
    allowed = layout.project_root or layout.work_dir
    for entry, name in sorted(project, key=lambda item: gtext.sort_key(item[0].path)):
        named = walk.names.reason(name)
        out += walk.load(
            entry, Scope.PROJECT, allowed, _STARTUP if named is None else Load(LoadType.STARTUP, reason=named)
        )
    return _number(out)


def _again(entry: Entry, seen: dict[str, str], scope: Scope, out: list[Found]) -> bool:
    """Whether ``entry`` is a file already read by another path (listed here, with why, when it is)."""
    if entry.kind is not EntryKind.FILE:
        return False
    real = entry.real_path or entry.path
    first = seen.setdefault(real, entry.path)
    if first == entry.path:
        return False
    reason = f"the same file as {first}: Gemini CLI reads a file once"
    out.append(Found(_unread(entry.path, scope, Status.SHADOWED, reason, _not_loaded(reason))))
    return True


def _number(found: list[Found]) -> list[Found]:
    """Doc positions for the files sent, in order; nothing else joins the doc."""
    out: list[Found] = []
    order = 0
    for item in found:
        resource = item.resource
        load = resource.load
        if item.data is not None and load is not None and load.type is LoadType.STARTUP:
            item = Found(relabelled(resource, resource.content, load, order), item.data)
            order += 1
        out.append(item)
    return out
