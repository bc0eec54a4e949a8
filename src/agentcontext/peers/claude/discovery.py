"""Claude Code's instruction files (the ``claude`` profile), in the order its binary sends them.

1. The user's files: ``~/.claude/CLAUDE.md`` then ``~/.claude/rules/**/*.md`` (scope ``home``).
2. Every folder from ``/`` (excluded) down to the work dir, outermost first: ``CLAUDE.md``,
   ``.claude/CLAUDE.md``, ``.claude/rules/**/*.md`` (in the folder's own listing order),
   then ``CLAUDE.local.md`` (scope ``local``). Folders above the project root are read
   for these names only, each file bounded by its own folder.
3. Each file is followed by what it imports (``@path``, depth first); an import is loaded
   once, at most ``project_doc.import_depth - 1`` imports deep, and from a project or
   local file only inside the work dir (outside it Claude Code asks the user first; in
   ``-p`` mode it never loads them). A user file may import from home or the project.
4. A rule with ``paths:`` is ``path_scoped``; empty files are not loaded.
5. Only when no folder of the walk has a non-empty CLAUDE.md, ``.claude/CLAUDE.md`` or
   CLAUDE.local.md: ``AGENTS.md`` and ``.claude/AGENTS.md`` of each folder, placed among
   the project files by folder.
6. Below the work dir, up to ``project_doc.nested_max_dirs`` folders: the same names,
   ``on_demand`` (Claude Code reads them when it works there).

Every candidate that is not loaded is listed with its reason: nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from agentcontext.fs.beneath import EscapeError
from agentcontext.fs.files import Entry, EntryKind, ListedEntry, Reader, is_within
from agentcontext.fs.textdecode import sent_as_text
from agentcontext.instructions.chain import Found, relabelled
from agentcontext.layout import Layout
from agentcontext.peers.claude.text import import_paths, js_trim, loads_extension, split_frontmatter, strip_comments
from agentcontext.resource import Kind as ResourceKind
from agentcontext.resource import Load, LoadType, Resource, Scope, Status
from agentcontext.sanitize import hidden_text_warnings
from agentcontext.settings.config import Config

_DOT_CLAUDE = ".claude"
CLAUDE_NAMES = ("CLAUDE.md", os.path.join(_DOT_CLAUDE, "CLAUDE.md"), "CLAUDE.local.md")
RULES = os.path.join(_DOT_CLAUDE, "rules")
_SKIPPED_DIRS = frozenset({"node_modules"})


class _Read(NamedTuple):
    """One file as Claude Code sees it (cached per file version), whatever its path and scope."""

    status: Status
    error: str | None = None
    size: int = 0
    content_hash: str = ""
    warnings: tuple[str, ...] = ()
    text: str | None = None  # what the model gets, before the final trim
    globs: tuple[str, ...] | None = None
    imports: tuple[str, ...] = ()
    frontmatter_error: str | None = None  # a rule with such a frontmatter is not loaded

    def resource(
        self,
        path: str,
        scope: Scope,
        load: Load,
        status: Status | None = None,
        error: str | None = None,
        doc_order: int | None = None,
    ) -> Resource:
        """The file's resource, built once (a scan builds one per file: no ``_replace``)."""
        return Resource(
            _INSTRUCTION_FILE,
            path,
            scope,
            self.status if status is None else status,
            self.size,
            self.content_hash,
            None,
            self.error if error is None else error,
            self.warnings,
            doc_order=doc_order,
            load=load,
        )


_INSTRUCTION_FILE = ResourceKind.INSTRUCTION_FILE
_new_read = tuple.__new__
# Enum members read per file and per probe, bound once (a class attribute of an enum costs ~0.14 us on 3.11).
_FILE, _MISSING, _OK = EntryKind.FILE, EntryKind.MISSING, Status.OK


@dataclass
class Walk:
    """One pass of Claude Code's loading: each file once, imports depth first (also used on read)."""

    layout: Layout
    config: Config
    reader: Reader
    processed: set[str] = field(default_factory=set)
    found: list[Found] = field(default_factory=list)
    bare: set[str] = field(default_factory=set)  # folders of the walk up without a .claude (nothing to probe in it)
    # The next doc position, while files are loaded in doc order (discover's walk); None: none given.
    order: int | None = None
    _cap: int = field(init=False, repr=False)  # the per-file cap, and the cache tag a file's reading is kept under
    _tag: str = field(init=False, repr=False)

    @property
    def cwd(self) -> str:
        return self.layout.work_dir

    @property
    def home(self) -> str:
        return self.config.home

    def boundary(self, directory: str) -> str:
        root = self.layout.project_root or self.cwd
        return root if is_within(directory, root) else directory

    def load(self, path: str, scope: Scope, boundary: str, *, rule: bool = False) -> list[Found]:
        """A file at depth 0 and everything it imports, in Claude Code's order (its load: startup)."""
        if path in self.processed:
            return []
        entry = self.reader.probe(path, boundary)
        if entry.kind is _MISSING:
            return []
        return self._visit(entry, scope, 0, (), rule=rule)

    def _visit(
        self, entry: Entry, scope: Scope, depth: int, chain: tuple[str, ...], *, rule: bool, read: _Read | None = None
    ) -> list[Found]:
        """``entry`` and what it imports; ``read``: the file as already read (else read here)."""
        self.processed.add(entry.path)
        if entry.is_link:
            self.processed.add(entry.real_path)
        if read is None:
            read = self.read(entry)
        importer = chain[-1] if chain else None
        path = entry.path
        if read.text is None:
            return [Found(read.resource(path, scope, _not_loaded(read.error or "not readable", importer, chain)))]
        if rule and read.frontmatter_error:
            reason = f"{read.frontmatter_error}: Claude Code skips the rule"
            return [Found(read.resource(path, scope, _not_loaded(reason, importer, chain), Status.INVALID, reason))]
        if not js_trim(read.text):
            reason = "empty after its frontmatter and HTML comments are removed: Claude Code skips it"
            return [Found(read.resource(path, scope, _not_loaded(reason, importer, chain)))]
        order = None
        if rule and read.globs:
            load = Load(LoadType.PATH_SCOPED, globs=read.globs, reason="loaded when Claude reads a matching file")
        else:
            load = _STARTUP if importer is None else Load(LoadType.IMPORT, importer=importer, chain=chain)
            order = self.order
            if order is not None:
                self.order = order + 1
        out = [Found(read.resource(path, scope, load, doc_order=order), read.text.encode("utf-8"))]
        again: list[str] = []
        for target in read.imports:
            if target in self.processed:  # itself, a cycle, or a file loaded before: once is all Claude Code loads
                again.append(target)
                continue
            out += self._import(target, scope, depth + 1, (*chain, entry.path), out[0])
        if again:
            out[0] = Found(_noting_repeats(out[0].resource, again), out[0].data)
        return out

    def _import(self, target: str, scope: Scope, depth: int, chain: tuple[str, ...], importer: Found) -> list[Found]:
        refused = self._refusal(target, scope, depth)
        if refused is not None:
            status, reason = refused
            self.processed.add(target)
            return [Found(_unread(target, scope, status, reason, _not_loaded(reason, chain[-1], chain)))]
        boundary = self.cwd if scope is not Scope.HOME or not is_within(target, self.home) else self.home
        entry = self.reader.probe(target, boundary)
        if entry.kind is EntryKind.MISSING:
            self.processed.add(target)
            reason = "imported but does not exist (Claude Code skips it silently)"
            return [Found(_unread(target, scope, Status.UNREADABLE, reason, _not_loaded(reason, chain[-1], chain)))]
        if entry.is_link and entry.real_path in self.processed:
            return []
        return self._visit(entry, scope, depth, chain, rule=False)

    def _refusal(self, target: str, scope: Scope, depth: int) -> tuple[Status, str] | None:
        limit = self.config.project_doc.import_depth
        if depth >= limit:
            return (
                Status.DISABLED,
                f"{depth} imports deep: past the import depth limit (project_doc.import_depth = {limit})",
            )
        if not loads_extension(target):
            return Status.INVALID, "not a text file extension Claude Code imports"
        if scope is Scope.HOME:
            if is_within(target, self.home) or is_within(target, self.cwd):
                return None
            return Status.INVALID, (
                "outside the allowed roots (home, work dir): Claude Code would load it from a user file; "
                "refused, nothing outside the roots is read"
            )
        if not is_within(target, self.cwd):
            return Status.DISABLED, (
                "outside the work dir: Claude Code loads it only after the user approves external imports "
                "(never in -p mode); not read"
            )
        return None

    def __post_init__(self) -> None:
        self._cap = self.config.snapshot.max_resource_bytes
        self._tag = f"claude:{self._cap}:{self.home}"  # what a file's reading depends on besides its bytes

    def read(self, entry: Entry) -> _Read:
        """The file as Claude Code sees it, from the reader's cache when unchanged."""
        read: _Read = self.reader.cached(entry, self._tag, lambda: _read_file(entry, self.reader, self._cap, self.home))
        return read

    def _from_bytes(self, entry: Entry, raw: bytes | OSError) -> _Read:
        return _from_bytes(entry, raw, self._cap, self.home)

    def rules(self, directory: str, scope: Scope, boundary: str) -> list[Found]:
        """``.claude/rules/**/*.md`` of one folder, in listing order, each with its imports."""
        out: list[Found] = []
        reader, processed, build = self.reader, self.processed, self._from_bytes
        try:
            entries = list(self._rule_entries(directory, boundary, set(), strict=True))
        except OSError as exc:  # a link out of the boundary, or a folder that cannot be listed: said, not read
            status = Status.INVALID if isinstance(exc, EscapeError) else Status.UNREADABLE
            reason = f"rules folder not read: {exc.strerror or exc}"
            return [Found(_unread(directory, scope, status, reason, _not_loaded(reason, None, ())))]
        for folder, item in entries:
            path = f"{folder}/{item.name}"  # a rules folder is never "/"; a listed name has no "/"
            if item.is_file and path not in processed:  # most rules: read as listed, no probe first
                listed = reader.read_listed(folder, item.name, boundary, self._tag, self._cap + 1, build)
                if listed is not None:
                    out += self._visit(listed[0], scope, 0, (), rule=True, read=listed[1])
                    continue
            out += self.load(path, scope, boundary, rule=True)
        return out

    def rule_files(self, directory: str, boundary: str, seen: set[str]) -> Iterator[str]:
        """The ``.md`` files under a rules folder, in the folder's own order, links kept inside ``boundary``."""
        for folder, item in self._rule_entries(directory, boundary, seen):
            yield f"{folder}/{item.name}"

    def _rule_entries(
        self, directory: str, boundary: str, seen: set[str], *, strict: bool = False
    ) -> Iterator[tuple[str, ListedEntry]]:
        """Each ``.md`` entry under a rules folder with the folder listing it (see :meth:`rule_files`);
        ``strict``: raise OSError when the folder exists but cannot be listed (as ``Reader.list_dir``)."""
        # Claude Code keeps the folder's own order (getdents), not a sorted one
        listing = self.reader.list_dir(directory, boundary=boundary, as_listed=True, strict=strict)
        if not listing:
            return
        real = self.reader.real_root(directory)  # after the listing: most folders have no rules
        if real in seen:
            return
        seen.add(real)
        for item in listing:
            if item.is_symlink:  # a link out or a broken one is listed with its reason, not passed over
                entry = self.reader.probe(f"{directory}/{item.name}", boundary)
                is_dir, is_file = entry.kind is EntryKind.DIRECTORY, entry.kind is not EntryKind.MISSING
            else:
                is_dir, is_file = item.is_dir, not item.is_dir
            if is_dir:
                yield from self._rule_entries(f"{directory}/{item.name}", boundary, seen)
            elif is_file and item.name.endswith(".md"):
                yield directory, item


_STARTUP = Load(LoadType.STARTUP)


def _noting_repeats(resource: Resource, targets: list[str]) -> Resource:
    """``resource`` with a warning naming the imports it repeats (Claude Code loads each file once)."""
    named = ", ".join(dict.fromkeys(targets))
    warning = f"imports {named} again: already loaded, so not again (a file is loaded once; a cycle stops here)"
    return resource._replace(warnings=(*resource.warnings, warning))


def _not_loaded(reason: str, importer: str | None, chain: tuple[str, ...]) -> Load:
    return Load(LoadType.NOT_LOADED, importer=importer, chain=chain, reason=reason)


def _unread(path: str, scope: Scope, status: Status, reason: str, load: Load) -> Resource:
    return Resource(_INSTRUCTION_FILE, path, scope, status, error=reason, load=load)


def _read_file(entry: Entry, reader: Reader, cap: int, home: str) -> _Read:
    kind = entry.kind
    if kind is not _FILE:
        if kind is EntryKind.DIRECTORY:
            return _Read(Status.INVALID, "a directory, not a file; ignored")
        if kind is EntryKind.SPECIAL:
            return _Read(Status.INVALID, f"{entry.special}, not a regular file; ignored")
        return _Read(Status.INVALID if kind is EntryKind.ESCAPE else Status.UNREADABLE, entry.error)
    try:
        raw = reader.read(entry, cap + 1)
    except OSError as exc:
        return _Read(Status.UNREADABLE, exc.strerror or str(exc), entry.size)
    return _from_bytes(entry, raw, cap, home)


def _from_bytes(entry: Entry, raw: bytes | OSError, cap: int, home: str) -> _Read:
    """A regular file's first ``cap + 1`` bytes (or why they could not be read) as Claude Code sees them."""
    if isinstance(raw, OSError):
        return _Read(Status.UNREADABLE, raw.strerror or str(raw), entry.size)
    size = max(entry.size, len(raw))
    digest = hashlib.sha256(raw[:cap]).hexdigest()
    if len(raw) > cap:
        error = f"file size {size} exceeds per-resource cap of {cap} bytes (Claude Code reads files up to 4 MiB)"
        return _Read(Status.OVERSIZE, error, size, digest)
    if (refused := sent_as_text(raw, "Claude Code")) is not None:
        return _Read(Status.INVALID, refused, size, digest)
    text = raw.decode("utf-8", errors="replace")
    warnings = hidden_text_warnings(text)
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        warnings = ("contains invalid UTF-8; invalid sequences were replaced", *warnings)
    body, globs, frontmatter_error = split_frontmatter(text)
    imports = import_paths(body, os.path.dirname(entry.real_path or entry.path), home) if "@" in body else ()
    shown = strip_comments(body)
    fields = (_OK, None, size, digest, warnings, shown, globs, tuple(imports), frontmatter_error)
    return _new_read(_Read, fields)  # every field given: no Python-level __new__


def discover(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """Every candidate in Claude Code's order; doc positions go to what loads at startup."""
    walk = Walk(layout, config, reader, order=0)
    for user in layout.home_dirs:
        walk.found += walk.load(os.path.join(user.path, "CLAUDE.md"), Scope.HOME, user.boundary)
        walk.found += walk.rules(os.path.join(user.path, "rules"), Scope.HOME, user.boundary)
    dirs = upward(layout.work_dir)
    project, local = Scope.PROJECT, Scope.LOCAL
    top = layout.project_root or layout.work_dir
    for directory in dirs:  # absolute, normalised and never "/": f"{directory}/{name}" is os.path.join's path
        boundary = walk.boundary(directory)
        if boundary == top:  # a project folder (never one above it): listed, its missing names need no probe
            walk.reader.names(directory, boundary)
        walk.found += walk.load(f"{directory}/{CLAUDE_NAMES[0]}", project, boundary)
        # Most folders have no .claude: one probe (which a rescan repeats) stands for the three below it.
        if walk.reader.probe_in(directory, _DOT_CLAUDE, boundary).kind is _MISSING:
            walk.bare.add(directory)
        else:
            if boundary == top:
                walk.reader.names(f"{directory}/{_DOT_CLAUDE}", boundary)
            walk.found += walk.load(f"{directory}/{CLAUDE_NAMES[1]}", project, boundary)
            walk.found += walk.rules(f"{directory}/{RULES}", project, _rules_boundary(walk, directory, boundary, top))
        walk.found += walk.load(f"{directory}/{CLAUDE_NAMES[2]}", local, boundary)
    loaded_fallback = _fallback(walk, dirs)
    walk.order = None
    _nested(walk)
    # Files were numbered as loaded, in doc order; the fallback's AGENTS.md files go in among them.
    return _number(walk.found) if loaded_fallback else walk.found


def _rules_boundary(walk: Walk, directory: str, boundary: str, top: str) -> str:
    """What the rules of ``directory`` (a folder of the walk up) must stay inside.

    In the project: the project. Above it: the rules folder itself, so its links may not reach
    the rest of that folder; but when ``.claude`` or ``rules`` is itself a link, the folder of the
    walk (the link must lead inside it), since a boundary resolves through its own links.
    """
    if boundary == top:
        return boundary
    rules = f"{directory}/{RULES}"
    reader = walk.reader
    return rules if reader.real_root(rules) == f"{reader.real_root(directory)}/{RULES}" else directory


def upward(work_dir: str) -> list[str]:
    """The work dir and its ancestors, ``/`` excluded, outermost first."""
    dirs: list[str] = []
    current = work_dir
    while os.path.dirname(current) != current:
        dirs.append(current)
        current = os.path.dirname(current)
    return list(reversed(dirs))


def agents_fallback(resources: Iterable[Resource], work_dir: str) -> bool:
    """Whether Claude Code runs on its AGENTS.md fallback: no CLAUDE.md of its own loaded at startup.

    It then also sends the AGENTS.md files of the folders it reads in (see ``claude_nested``).
    """
    names = _claude_paths(upward(work_dir))
    return not any(_is_claude_file(resource, names) for resource in resources)


def _claude_paths(dirs: list[str]) -> frozenset[str]:
    """The paths of the CLAUDE.md family of ``dirs``."""
    return frozenset([f"{d}/{name}" for d in dirs for name in CLAUDE_NAMES])  # absolute dirs, never "/"


def _is_claude_file(resource: Resource, names: frozenset[str]) -> bool:
    load = resource.load
    return (
        load is not None
        and load.type is LoadType.STARTUP
        and resource.scope in (Scope.PROJECT, Scope.LOCAL)
        and resource.path in names
    )


def _fallback(walk: Walk, dirs: list[str]) -> bool:
    """AGENTS.md when the whole walk has no CLAUDE.md of its own (True); otherwise list why not."""
    names = walk.config.project_doc.fallback_filenames
    family = _claude_paths(dirs)
    claude_files = [f.resource.path for f in walk.found if _is_claude_file(f.resource, family)]
    in_dot = [name.split(os.sep, 1)[0] == _DOT_CLAUDE for name in names]
    if claude_files:
        for directory in dirs:
            for name, below in zip(names, in_dot, strict=True):
                if below and directory in walk.bare:
                    continue
                path = os.path.join(directory, name)
                if _is_file(walk.reader, path, walk.boundary(directory)):
                    reason = f"{name} is read only when no CLAUDE.md is found up to / (found {claude_files[0]})"
                    load = _not_loaded(reason, None, ())
                    walk.found.append(Found(_unread(path, Scope.PROJECT, Status.SHADOWED, reason, load)))
        return False
    seen_text = {js_trim(f.data.decode()) for f in walk.found if f.data and f.resource.scope is not Scope.HOME}
    for directory in dirs:
        group: list[Found] = []
        for name, below in zip(names, in_dot, strict=True):
            if below and directory in walk.bare:
                continue
            for item in walk.load(os.path.join(directory, name), Scope.PROJECT, walk.boundary(directory)):
                if item.data is not None and js_trim(item.data.decode()) in seen_text:
                    reason = "the same text is already loaded from another file"
                    item = Found(relabelled(item.resource, item.resource.content, _not_loaded(reason, None, ()), None))
                group.append(item)
        if group:
            at = _insertion_index(walk.found, directory)
            walk.found[at:at] = group
    return True


def _is_file(reader: Reader, path: str, boundary: str) -> bool:
    """Whether ``path`` is a regular file, from its quiet folder's listing when the pass took one
    (a shadowed file's text is never used: its folder's stat covers what matters, that it is there)."""
    folder, _, name = path.rpartition("/")
    listed = reader.listed(folder)
    if listed is not None:
        return name in listed.files
    return reader.probe(path, boundary).kind is EntryKind.FILE


def _project_dir(path: str) -> str:
    marker = f"{os.sep}.claude{os.sep}"
    cut = path.rfind(marker)
    return path[:cut] if cut != -1 else os.path.dirname(path)


def _insertion_index(found: list[Found], directory: str) -> int:
    """Where Claude Code puts a folder's AGENTS.md files: before the first project file below it."""
    project = [
        i
        for i, f in enumerate(found)
        if f.resource.scope in (Scope.PROJECT, Scope.LOCAL) and f.data is not None and f.resource.load is not None
    ]
    for i in project:
        load = found[i].resource.load
        origin = load.chain[0] if load is not None and load.chain else found[i].resource.path
        if is_within(_project_dir(origin), directory) and _project_dir(origin) != directory:
            return i
    return project[-1] + 1 if project else len(found)


def _nested(walk: Walk) -> None:
    """Instruction files below the work dir: listed ``on_demand``, within a bounded walk."""
    limit = walk.config.project_doc.nested_max_dirs
    if limit <= 0:
        return
    queue: deque[str] = deque([walk.cwd])
    visited = 0
    while queue:
        directory = queue.popleft()
        for item in walk.reader.list_dir(directory):
            if not item.is_dir or item.name.startswith(".") or item.name in _SKIPPED_DIRS:
                continue
            if visited >= limit:
                reason = f"search below the work dir stopped after {limit} folders (project_doc.nested_max_dirs)"
                walk.found.append(Found(_stopped(walk.cwd, reason)))
                return
            visited += 1
            child = os.path.join(directory, item.name)
            queue.append(child)
            for found in folder_files(walk, child):
                walk.found.append(found)


def folder_files(walk: Walk, directory: str) -> list[Found]:
    """A folder's CLAUDE.md family and rules, listed ``on_demand`` (nothing below it)."""
    out: list[Found] = []
    boundary = walk.boundary(directory)
    for name in CLAUDE_NAMES:
        entry = walk.reader.probe(os.path.join(directory, name), boundary)
        if entry.kind is EntryKind.MISSING:
            continue
        scope = Scope.LOCAL if name == CLAUDE_NAMES[2] else Scope.PROJECT
        out.append(_on_demand(walk, entry, scope, None))
    for path in walk.rule_files(os.path.join(directory, RULES), boundary, set()):
        entry = walk.reader.probe(path, boundary)
        out.append(_on_demand(walk, entry, Scope.PROJECT, directory))
    return out


def _on_demand(walk: Walk, entry: Entry, scope: Scope, rules_of: str | None) -> Found:
    read = walk.read(entry)
    folder = os.path.dirname(entry.path) if rules_of is None else rules_of
    if rules_of is not None and read.frontmatter_error:
        reason = f"{read.frontmatter_error}: Claude Code skips the rule"
        return Found(read.resource(entry.path, scope, _not_loaded(reason, None, ()), Status.INVALID, reason))
    reason = f"loaded when Claude Code reads a file under {folder}"
    load = Load(LoadType.ON_DEMAND, globs=read.globs or (), reason=reason)
    data = read.text.encode("utf-8") if read.text is not None else None
    return Found(read.resource(entry.path, scope, load), data)


def _stopped(path: str, reason: str) -> Resource:
    return _unread(path, Scope.PROJECT, Status.EXCLUDED, reason, Load(LoadType.NOT_LOADED, reason=reason))


def _number(found: list[Found]) -> list[Found]:
    """Doc positions for what loads at startup; nothing else joins the doc."""
    out: list[Found] = []
    order = 0
    for item in found:
        resource = item.resource
        load = resource.load
        if load is not None and item.data is not None and load.type.at_startup:
            item = Found(relabelled(resource, resource.content, load, order), item.data)
            order += 1
        elif resource.doc_order is not None:
            item = Found(relabelled(resource, resource.content, load, None), item.data)
        out.append(item)
    return out
