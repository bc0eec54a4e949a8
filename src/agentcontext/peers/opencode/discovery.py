"""OpenCode's instruction files (the ``opencode`` profile), in the order its binary sends them (1.18.33).

1. Global: ``~/.config/opencode/AGENTS.md``, else ``~/.claude/CLAUDE.md`` (the first that exists).
2. Project: ``AGENTS.md`` in every folder from the work dir UP to the worktree root, nearest
   first; only when no folder of that walk holds one, ``CLAUDE.md`` the same way, then
   ``CONTEXT.md``: one name for the whole walk. A folder named like the file counts as found
   (it hides the next name) but has no text. The worktree root is the nearest folder above
   holding ``.git``; without one OpenCode walks up to ``/`` (each folder above the work dir read
   for these names only, bounded by itself).
3. ``instructions`` of its config files (:mod:`.settings`), each entry in turn: a relative
   pattern is globbed in every folder of the same walk (nearest first, dot files included), an
   absolute one (``~/`` is home) in its folder. A file already listed is not listed again.

Each file's text is sent as it is but for a UTF-8 BOM (invalid bytes become U+FFFD); an empty
file is not sent, a whitespace-only one is. No byte budget, no imports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from agentcontext.fs.files import Entry, EntryKind, Reader, is_within
from agentcontext.instructions.chain import Found, relabelled
from agentcontext.layout import Layout
from agentcontext.peers.file_text import read_text
from agentcontext.peers.opencode import globs
from agentcontext.peers.opencode.settings import Entry as ConfigEntry
from agentcontext.peers.opencode.settings import instructions
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.settings.config import Config

NAMES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")
_STARTUP = Load(LoadType.STARTUP)
_HTTP = ("http://", "https://")


def worktree(layout: Layout) -> str:
    """Where OpenCode's walk stops: the project root (the nearest folder holding ``.git``), else ``/``."""
    return layout.project_root or "/"


def upward(work_dir: str, stop: str) -> tuple[str, ...]:
    """The folders from ``work_dir`` up to ``stop`` (or ``/``), nearest first: OpenCode's ``findUp``."""
    dirs, current = [work_dir], work_dir
    while current != stop:
        parent = os.path.dirname(current)
        if parent == current:
            break
        dirs.append(parent)
        current = parent
    return tuple(dirs)


def _unread(path: str, scope: Scope, status: Status, reason: str) -> Found:
    load = Load(LoadType.NOT_LOADED, reason=reason)
    return Found(Resource(Kind.INSTRUCTION_FILE, path, scope, status, error=reason, load=load), candidate=False)


@dataclass
class Walk:
    """One pass of OpenCode's loading: the reader, the cap, the files already listed."""

    layout: Layout
    config: Config
    reader: Reader
    environ: dict[str, str]
    listed: dict[str, None] = field(default_factory=dict)  # OpenCode's set of paths, in order
    out: list[Found] = field(default_factory=list)
    hidden: dict[str, Found] = field(default_factory=dict)  # hidden by the walk's name (an entry may still add it)

    @property
    def project(self) -> str:
        return self.layout.doc_boundary

    def boundary(self, directory: str) -> str:
        return self.project if is_within(directory, self.project) else directory

    def add(self, entry: Entry, scope: Scope, load: Load = _STARTUP) -> None:
        """One file OpenCode sends (when it has text), at its place in the set."""
        if entry.path in self.listed:
            return
        self.listed[entry.path] = None
        self.out.append(self._read(entry, scope, load))

    def _read(self, entry: Entry, scope: Scope, load: Load) -> Found:
        kind = entry.kind
        if kind is EntryKind.DIRECTORY:
            return _unread(entry.path, scope, Status.INVALID, "a directory, not a file: OpenCode reads no text from it")
        if kind is EntryKind.ESCAPE:
            reason = f"{entry.error}: OpenCode would read it; refused, nothing outside the roots is read"
            return _unread(entry.path, scope, Status.INVALID, reason)
        if kind is not EntryKind.FILE:
            return _unread(entry.path, scope, Status.UNREADABLE, entry.error or f"{entry.special or kind.value}")
        read = read_text(entry, self.reader, self.config.snapshot.max_resource_bytes, "OpenCode", strip_bom=True)
        if read.status is Status.UNREADABLE or read.status is Status.INVALID:
            return _unread(entry.path, scope, read.status, read.error or "cannot be read")
        size, digest, text = read.size, read.content_hash, read.text
        if text is None:  # over the cap
            reason = read.error or "over the per-resource cap"
            resource = Resource(Kind.INSTRUCTION_FILE, entry.path, scope, Status.OVERSIZE, size, digest, error=reason)
            return Found(relabelled(resource, None, Load(LoadType.NOT_LOADED, reason=reason), None))
        resource = Resource(
            Kind.INSTRUCTION_FILE, entry.path, scope, Status.OK, size, digest, warnings=read.warnings, load=load
        )
        if not text:
            reason = "empty: OpenCode sends no section for it"
            return Found(relabelled(resource, None, Load(LoadType.NOT_LOADED, reason=reason), None))
        return Found(resource, text.encode("utf-8"))


def discover(layout: Layout, config: Config, reader: Reader, environ: dict[str, str] | None = None) -> list[Found]:
    """Every instruction file OpenCode looks at, in the order it sends them; the unused ones say why."""
    walk = Walk(layout, config, reader, dict(environ or {}))
    home = config.home
    _global(walk, home)
    dirs = upward(layout.work_dir, worktree(layout))
    _project(walk, dirs)
    _configured(walk, dirs, home)
    walk.out += [item for path, item in walk.hidden.items() if path not in walk.listed]
    return _number(walk.out)


def _global(walk: Walk, home: str) -> None:
    first = (os.path.join(home, ".config", "opencode", "AGENTS.md"), os.path.join(home, ".claude", "CLAUDE.md"))
    chosen: str | None = None
    for path in first:
        entry = walk.reader.probe(path, home)
        if entry.kind in (EntryKind.MISSING, EntryKind.BROKEN):
            continue
        if chosen is None:
            chosen = path
            walk.add(entry, Scope.HOME)
        else:
            reason = f"{chosen} exists: OpenCode reads the first of its two global files only"
            walk.out.append(_unread(path, Scope.HOME, Status.SHADOWED, reason))


def _project(walk: Walk, dirs: tuple[str, ...]) -> None:
    chosen: str | None = None
    for name in NAMES:
        found = []
        for directory in dirs:
            entry = walk.reader.probe(os.path.join(directory, name), walk.boundary(directory))
            if entry.kind not in (EntryKind.MISSING, EntryKind.BROKEN):
                found.append(entry)
        if not found:
            continue
        if chosen is None:
            chosen = name
            for entry in found:
                walk.add(entry, Scope.PROJECT)
            continue
        reason = f"a {chosen} on the walk from the work dir up hides every {name}: OpenCode reads one name"
        for entry in found:
            walk.hidden.setdefault(entry.path, _unread(entry.path, Scope.PROJECT, Status.SHADOWED, reason))


def _configured(walk: Walk, dirs: tuple[str, ...], home: str) -> None:
    layout = walk.layout
    named = instructions(layout.work_dir, dirs, home, walk.project, walk.reader, walk.environ)
    for path, scope, problem in named.problems:
        walk.out.append(_unread(path, scope, Status.INVALID, problem))
    for entry in named.entries:
        _one(walk, entry, dirs, home)


def _one(walk: Walk, entry: ConfigEntry, dirs: tuple[str, ...], home: str) -> None:
    pattern, user = entry.pattern, entry.scope is Scope.USER
    load = Load(LoadType.STARTUP, reason=f"named by instructions in {entry.origin} ({pattern})")
    if pattern.startswith(_HTTP):
        walk.out.append(
            _unread(
                entry.origin,
                Scope.USER if user else Scope.PROJECT,
                Status.INVALID,
                f"{pattern}: OpenCode "
                "fetches this address at startup and sends its text; agentcontext reads no web address",
            )
        )
        return
    target = os.path.join(home, pattern[2:]) if pattern.startswith("~/") else pattern
    matches: list[tuple[str, str]] = []  # (file, boundary)
    refused: list[str] = []
    problems: set[str | None] = set()  # why the pattern was not matched (the same in every folder)
    if os.path.isabs(target):
        folder = os.path.normpath(os.path.dirname(target))
        roots = (walk.project, home) if user else (walk.project,)
        boundary = next((r for r in roots if is_within(folder, r)), None)
        if boundary is None:
            refused.append(os.path.normpath(target))
        else:
            found = globs.glob(walk.reader, folder, os.path.basename(target), boundary, dot=False)
            matches += [(f, boundary) for f in found.files]
            refused += found.refused
            problems.add(found.problem)
    else:
        for directory in dirs:
            inside = is_within(directory, walk.project)
            if not user and not inside:
                continue  # a repository's pattern is matched in its own folders only
            boundary = walk.boundary(directory)
            found = globs.glob(walk.reader, directory, target, boundary, dot=True)
            matches += [(f, boundary) for f in found.files]
            refused += found.refused
            problems.add(found.problem)
    for problem in filter(None, problems):
        walk.out.append(
            _unread(entry.origin, Scope.USER if user else Scope.PROJECT, Status.INVALID, f"{pattern[:80]}: {problem}")
        )
    for path, boundary in matches:
        scope = Scope.PROJECT if is_within(path, walk.project) else Scope.HOME if is_within(path, home) else Scope.USER
        walk.add(walk.reader.probe(path, boundary), scope, load)
    who = "the user's" if user else "a repository's"
    for path in dict.fromkeys(refused):
        if path in walk.listed:
            continue
        walk.listed[path] = None
        reason = (
            f"named by instructions in {entry.origin} ({pattern}): outside what {who} config may select; "
            "OpenCode would read it, agentcontext does not"
        )
        walk.out.append(_unread(path, Scope.PROJECT if not user else Scope.USER, Status.INVALID, reason))


def _number(found: list[Found]) -> list[Found]:
    """Doc positions for the files sent, in order; nothing else joins the doc."""
    out: list[Found] = []
    order = 0
    for item in found:
        resource = item.resource
        if item.data is not None and resource.load is not None and resource.load.type is LoadType.STARTUP:
            item = Found(relabelled(resource, resource.content, resource.load, order), item.data)
            order += 1
        out.append(item)
    return out
