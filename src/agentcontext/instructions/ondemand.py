"""What applies when an agent works on some paths: the instruction files it gets on demand.

:func:`applicable` answers, under the active profile, which instruction files an agent
gets when it works on given paths *beyond* what it loaded at startup (those are listed
apart, as ``startup``), each with its ``load`` type, the reason and the bytes it adds:

The rules are the agent's (its peer's :class:`Later`, :mod:`agentcontext.peers`):

* ``default`` and ``codex`` (:class:`FolderChain`): each folder strictly below the work dir
  (or the declared source holding the path) down to the path's folder, outermost first, one
  file a folder as in the startup chain (``AGENTS.override.md`` > ``AGENTS.md`` > fallbacks),
  the others listed ``shadowed``: what Codex would load with its cwd there. A folder holding
  a root marker (a nested checkout) starts the chain afresh, as Codex's would.
* ``coder`` (:class:`FolderChain` too): every instruction name at the top of each such
  folder, as at a scan root.
* ``claude``: what Claude Code sends after it reads the file
  (:mod:`agentcontext.peers.claude.later`): nested CLAUDE.md files, rules, and the rules
  whose ``paths:`` match.

A path is a file (its folder's chain applies, and globs match the file) or a folder; where
it lies is checked before anything is read (:mod:`agentcontext.instructions.ondemand_paths`), and a
folder of its chain that is a link leaving the roots refuses it: each refusal carries its
reason. More than ``ondemand.max_paths`` paths is an error. Files keep the snapshot's
rules: the per-resource cap (``oversize``), links only inside their root, statuses with
reasons; past ``ondemand.max_bytes`` of content (or ``snapshot.max_resources`` files) the
rest is ``excluded``. A lookup that runs past its deadline gives up with an error.

A :class:`Resolver` lives as long as its :class:`~agentcontext.scan.Scanner`: files are
re-read only when their ``stat`` changed, and a folder found holding none of the names
is remembered as a miss for ``ondemand.miss_ttl`` seconds, checked against the folder's
own ``stat`` (a name appearing changes it) and forgotten when a watcher reports a change.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.fs.files import RACY_SECONDS, Reader, StatKey, is_within, stat_key
from agentcontext.instructions.applied import Applicable, Applied, Interest, Refused
from agentcontext.instructions.chain import Found, InstructionFiles, with_link_advice
from agentcontext.instructions.ondemand_paths import Place, Target, locate
from agentcontext.instructions.ondemand_paths import place as lookup_place
from agentcontext.instructions.project_doc import whole
from agentcontext.resource import Kind, Load, LoadType, Resource, Status
from agentcontext.settings.config import ProjectDocSettings

if TYPE_CHECKING:
    from agentcontext.scan import ScanResult

Observed = tuple[str, StatKey | None, bool]  # a path, its stat key (None: missing), followed or not
MAX_REMEMBERED = 100_000  # folders remembered (misses, and folders with files), at most


@dataclass(frozen=True, slots=True)
class Held:
    """What one folder holds: the names at its top, its files as the agent reads them (its :class:`Later`'s),
    and what reading them looked at (:func:`watched`)."""

    present: frozenset[str]
    value: Any = None
    watch: tuple[tuple[str, str | None], ...] = ()  # (folder, name; None: any name) the read looked at


_EMPTY = Held(frozenset())


@dataclass(frozen=True)
class Startup:
    """What a lookup needs from the startup scan, computed once per scan result."""

    result: ScanResult
    tops: tuple[str, ...]  # the first component of every name looked for in a folder
    startup: tuple[Resource, ...]
    seen: frozenset[str]  # loaded at startup: never sent again
    state: Any = None  # what the agent's :class:`Later` prepared for this startup


class Later(Protocol):
    """One agent's rules for what loads when it works on paths below the work dir (a peer's ``later()``)."""

    def names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        """The names that make a folder worth reading."""
        ...

    def prepare(self, startup: Startup, reader: Reader) -> Any:
        """Its state for lookups against this startup (None: it needs none)."""
        ...

    def folder(self, reader: Reader, directory: str, present: frozenset[str], startup: Startup) -> Any:
        """One folder's files as it reads them (kept as :attr:`Held.value`)."""
        ...

    def collect(self, targets: list[Target], held: dict[str, Held], startup: Startup, lookup: Lookup) -> None:
        """Add to ``lookup`` what applies to each target, from its folders' values."""
        ...


@dataclass
class Lookup:
    """One call's answer so far, each file once, with the paths that brought it in."""

    deadline: float | None
    timeout: float
    order: list[str] = field(default_factory=list)
    found: dict[str, tuple[Found, bool]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)

    def add(self, item: Found, path: str, *, hook: bool = False) -> None:
        key = item.resource.path
        known = self.paths.get(key)
        if known is None:
            self.order.append(key)
            self.found[key] = (item, hook)
            self.paths[key] = [path]
        elif path not in known:
            known.append(path)

    def check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise UnavailableError(f"gave up: the lookup took longer than {self.timeout:g} s (ondemand.timeout)")


class Resolver:
    """Answers lookups for one scanner's work dir; thread-safe (one lookup at a time)."""

    def __init__(self) -> None:
        self.reader = Reader()
        self._misses: dict[str, tuple[float, StatKey, tuple[str, ...]]] = {}
        self._folders: dict[str, tuple[StatKey, list[Observed], Startup, Held]] = {}
        self._startup: Startup | None = None
        self._places: dict[str, Place | Refused] = {}
        self._lock = threading.Lock()

    def forget(self, directories: Iterable[str]) -> None:
        """Drop what is remembered of these folders (a watcher saw them change)."""
        for directory in directories:
            self._misses.pop(directory, None)
            self._folders.pop(directory, None)

    def resolve(
        self, result: ScanResult, paths: Sequence[str], *, deadline: float | None = None, watch: bool = False
    ) -> Applicable:
        """What applies to ``paths`` after the startup of ``result`` (see the module docstring); ``watch``: with
        where a change would change the answer (:attr:`Applicable.watch`, for a watcher).

        Raises:
            InvalidRequestError: more paths than ``ondemand.max_paths``.
            UnavailableError: the deadline passed before the answer was complete.
        """
        limit = result.config.ondemand.max_paths
        if len(paths) > limit:
            raise InvalidRequestError(f"{len(paths)} paths in one lookup: at most {limit} (ondemand.max_paths)")
        with self._lock:
            self.reader.begin()
            try:
                return self._resolve(result, paths, deadline, watch)
            finally:
                self.reader.release()  # no directory stays open between lookups

    def _resolve(self, result: ScanResult, paths: Sequence[str], deadline: float | None, watch: bool) -> Applicable:
        config = result.config
        lookup = Lookup(deadline, config.ondemand.timeout)
        startup = self._for(result)
        held: dict[str, Held] = {}
        targets: list[Target] = []
        asked: list[tuple[str, ...]] = []  # each target's folders before the walk (it stops at a missing one)
        refused: list[Refused] = []
        places = self._places
        for raw in paths:
            lookup.check_time()
            place = places.get(raw) if isinstance(raw, str) else None
            if place is None:
                place = lookup_place(raw, result)
                if isinstance(raw, str):
                    _bounded(places)
                    places[raw] = place
            if isinstance(place, Refused):
                refused.append(place)
                continue
            target = located = locate(place)
            if not isinstance(target, Refused):
                target = self._walkable(target, startup, held, lookup)
            if isinstance(target, Refused):  # named as asked (a valid name, or _place had refused it)
                refused.append(Refused(str(raw), target.reason))
            else:
                targets.append(target)
                asked.append(located.dirs if isinstance(located, Target) else ())
        result.peer.later().collect(targets, held, startup, lookup)
        _advise_links(lookup, result, self.reader)
        interests = watched(asked, targets, held, startup.tops) if watch else ()
        return _answer(lookup, startup, tuple(t.path for t in targets), tuple(refused), interests)

    def _for(self, result: ScanResult) -> Startup:
        cached = self._startup
        if cached is not None and cached.result is result:
            return cached
        later = result.peer.later()
        resources = result.snapshot.resources
        loaded = [  # a path-scoped file named in the doc (Copilot CLI's table) is not sent at startup
            r
            for r in resources
            if r.kind is Kind.INSTRUCTION_FILE
            and r.doc_order is not None
            and r.status.carries_content
            and not (r.load is not None and r.load.type is LoadType.PATH_SCOPED)
        ]
        startup = tuple(sorted(loaded, key=lambda r: r.doc_order or 0))  # in the order the agent gets them
        seen = frozenset(r.path for r in resources if r.load is not None and r.load.type.at_startup)
        names = later.names(result.config.project_doc)
        tops = tuple(dict.fromkeys(n.split("/", 1)[0] for n in names if n))
        cached = Startup(result, tops, startup, seen)
        cached = replace(cached, state=later.prepare(cached, self.reader))
        self._startup = cached
        self._folders.clear()  # folders are read against this startup
        self._places.clear()
        return cached

    # --- folders -----------------------------------------------------------------------

    def _walkable(self, target: Target, startup: Startup, held: dict[str, Held], lookup: Lookup) -> Target | Refused:
        """The target with the folders below its base that exist, each inside the base's real folder."""
        real_base = self.reader.real_root(target.base)
        dirs: list[str] = []
        for directory in target.dirs:
            if directory not in held:
                try:
                    st = os.lstat(directory)
                except OSError:
                    break  # not there (yet): nothing below it either
                if stat.S_ISLNK(st.st_mode):
                    try:
                        real = os.path.realpath(directory, strict=True)
                        st = os.stat(real)
                    except OSError:
                        break  # a dangling link: nothing below it
                    if not is_within(real, real_base):
                        return Refused(target.path, f"{directory} is a symlink leaving {target.base}: not followed")
                if not stat.S_ISDIR(st.st_mode):
                    break
                held[directory] = self._folder(directory, stat_key(st), startup, lookup)
            dirs.append(directory)
        return Target(target.path, target.base, target.is_dir, tuple(dirs))

    def _folder(self, directory: str, key: StatKey, startup: Startup, lookup: Lookup) -> Held:
        """A folder's files; a remembered miss costs the folder's own stat, a remembered folder its files' stats."""
        now = time.monotonic()
        miss = self._misses.get(directory)
        if miss is not None and miss[0] > now and miss[1] == key and miss[2] == startup.tops:
            return _EMPTY
        memo = self._folders.get(directory)
        if memo is not None and memo[0] == key and memo[2] is startup and self.reader.unchanged(memo[1]):
            return memo[3]
        reader = self.reader
        mark = len(reader.observed)
        prefix = directory + os.sep
        for name in startup.tops:
            reader.observe(prefix + name)
        present = frozenset(path[len(prefix) :] for path, found, _ in reader.observed[mark:] if found is not None)
        config = startup.result.config
        ttl = config.ondemand.miss_ttl
        old = time.time() - key[0] / 1e9 >= RACY_SECONDS  # a young folder may yet change unseen
        if not present:
            if ttl > 0 and old:
                _bounded(self._misses)
                self._misses[directory] = (now + ttl, key, startup.tops)
            return _EMPTY
        self._misses.pop(directory, None)
        lookup.check_time()
        value = startup.result.peer.later().folder(reader, directory, present, startup)
        found = Held(present, value, _watch_of(directory, reader.observed[mark:]))
        checks = _checks(directory, reader.observed[mark:])
        if old and self.reader.unchanged(checks):  # every key old enough to trust (git's racy clean)
            _bounded(self._folders)
            self._folders[directory] = (key, checks, startup, found)
        return found


ReadFolder = Callable[[InstructionFiles, str, str, ProjectDocSettings], list[Found]]


@dataclass(frozen=True, slots=True)
class FolderChain:
    """Each folder's own files, read as the agent reads a folder of its chain; a folder holding one of the
    ``markers`` (a nested checkout) starts the chain afresh. Codex's rules, and Coder's with its own reading."""

    probe: Callable[[ProjectDocSettings], tuple[str, ...]]  # the names that make a folder worth reading
    read: ReadFolder  # one folder's candidates, the winners marked as the chain marks them
    markers: Callable[[ProjectDocSettings], frozenset[str]]

    def names(self, doc: ProjectDocSettings) -> tuple[str, ...]:
        return self.probe(doc)

    def prepare(self, startup: Startup, reader: Reader) -> None:
        return None

    def folder(self, reader: Reader, directory: str, present: frozenset[str], startup: Startup) -> tuple[Found, ...]:
        result = startup.result
        config = result.config
        doc = config.project_doc
        found = self.read(
            InstructionFiles(reader, config.snapshot.max_resource_bytes),
            directory,
            folder_boundary(directory, result),
            doc,
        )
        winners = [f for f in found if f.candidate and f.resource.status is not Status.SHADOWED]
        out: list[Found] = []
        for item in found:
            resource = item.resource._replace(doc_order=None)
            if not any(item is w for w in winners) or item.data is None:
                reason = resource.error or "not an instruction file the profile uses here"
                out.append(Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=reason))))
                continue
            loaded = whole(Found(resource, item.data), keep_bytes=doc.keep_bytes)
            if not (loaded.content or "").strip():
                reason = "empty or whitespace only: nothing to load"
                out.append(Found(loaded._replace(content=None, load=Load(LoadType.NOT_LOADED, reason=reason))))
                continue
            reason = f"the instruction file of {directory}, loaded when the agent works there"
            out.append(Found(loaded._replace(load=Load(LoadType.ON_DEMAND, reason=reason)), item.data))
        return tuple(out)

    def collect(self, targets: list[Target], held: dict[str, Held], startup: Startup, lookup: Lookup) -> None:
        markers = self.markers(startup.result.config.project_doc)
        for target in targets:
            lookup.check_time()
            dirs = target.dirs
            for index in range(len(dirs) - 1, -1, -1):
                if markers & held[dirs[index]].present:  # a nested checkout: its own chain, as Codex's
                    dirs = dirs[index:]
                    break
            for directory in dirs:
                for item in held[directory].value or ():
                    lookup.add(item, target.path)


def _checks(directory: str, observed: list[Observed]) -> list[Observed]:
    """The stats that tell whether a folder's answer still holds, besides the folder's own.

    A name missing from a folder whose own ``stat`` is unchanged is still missing (creating
    it would change the folder's mtime), so only the files found, and misses in folders
    not checked otherwise, need a ``stat`` of their own.
    """
    entries = list(dict.fromkeys(observed))
    folders = {directory} | {path for path, key, _ in entries if key is not None and stat.S_ISDIR(key[4])}
    return [e for e in entries if e[1] is not None or os.path.dirname(e[0]) not in folders]


def _bounded(cache: dict[str, Any]) -> None:
    if len(cache) >= MAX_REMEMBERED:
        for old in list(cache)[: MAX_REMEMBERED // 2]:  # the oldest half
            del cache[old]


def folder_boundary(directory: str, result: ScanResult) -> str:
    """The boundary a folder below the work dir is read beneath: the root that holds it."""
    layout = result.layout
    for root in (layout.doc_boundary, layout.work_dir, *(r.path for r in layout.source_roots)):
        if is_within(directory, root):
            return root
    return directory


def watched(
    asked: list[tuple[str, ...]], targets: list[Target], held: dict[str, Held], tops: tuple[str, ...]
) -> tuple[Interest, ...]:
    """Where a change would change this answer: each folder of a chain watched for its names (the chain's next
    folder, the names looked for, what reading them looked at: :attr:`Held.watch`), a folder read whole for
    every name. A chain folder appearing or going is a name in its parent; where a chain stops at a missing
    folder, that folder's name in the last one there."""
    folders: defaultdict[str, set[str]] = defaultdict(set)
    whole: set[str] = set()
    done: set[str] = set()
    for before, target in zip(asked, targets, strict=True):
        dirs = target.dirs
        for directory in dirs:
            if directory in done:
                continue
            done.add(directory)
            parent, _, name = directory.rpartition(os.sep)
            folders[parent].add(name)
            folders[directory].update(tops)
            for folder, named in held[directory].watch:
                if named is None:
                    whole.add(folder)
                else:
                    folders[folder].add(named)
        if len(dirs) < len(before):
            parent, _, name = before[len(dirs)].rpartition(os.sep)
            folders[parent].add(name)
    some = [Interest(folder, frozenset(names)) for folder, names in folders.items() if folder not in whole]
    return (*some, *(Interest(folder, None) for folder in whole))


def _watch_of(directory: str, observed: list[Observed]) -> tuple[tuple[str, str | None], ...]:
    """What reading a chain folder looked at, as (folder, name) pairs: a folder it listed counts for every name
    (None), but the chain folder itself, whose names are the ones looked for."""
    pairs: dict[tuple[str, str | None], None] = {}
    for path, key, listed in observed:
        if key is not None and listed and stat.S_ISDIR(key[4]):
            if path != directory:
                pairs[path, None] = None
        else:
            parent, _, name = path.rpartition(os.sep)
            pairs[parent, name] = None
    return tuple(pairs)


def _advise_links(lookup: Lookup, result: ScanResult, reader: Reader) -> None:
    """Each file found that is a link checked out as a file, warned about as the scan warns
    (:func:`~agentcontext.instructions.chain.with_link_advice`)."""
    found = lookup.found
    keys = list(found)
    for key, advised in zip(keys, with_link_advice([found[k][0] for k in keys], result.layout, reader), strict=True):
        item, hook = found[key]
        if advised is not item:
            found[key] = (advised, hook)


def _answer(
    lookup: Lookup,
    startup: Startup,
    paths: tuple[str, ...],
    refused: tuple[Refused, ...],
    watch: tuple[Interest, ...],
) -> Applicable:
    """Apply the answer's caps in order: bytes of content, then the number of files."""
    config = startup.result.config
    max_bytes, max_files = config.ondemand.max_bytes, config.snapshot.max_resources
    files: list[Applied] = []
    excluded: list[Applied] = []
    skipped: list[Applied] = []
    used = 0
    for key in lookup.order:
        item, hook = lookup.found[key]
        applied = Applied(item.resource, tuple(lookup.paths[key]), hook)
        load = item.resource.load
        if item.resource.status is not Status.OK or load is None or not load.type.automatic:
            skipped.append(applied)
            continue
        size = applied.bytes
        if used + size > max_bytes or len(files) >= max_files:
            which = f"{max_bytes} bytes (ondemand.max_bytes)" if used + size > max_bytes else f"{max_files} files"
            cut = item.resource.with_status(Status.EXCLUDED, f"left out: the answer is capped at {which}")
            excluded.append(replace(applied, resource=cut))
            continue
        used += size
        files.append(applied)
    snapshot = startup.result.snapshot
    return Applicable(
        snapshot.work_dir,
        snapshot.profile,
        paths,
        tuple(files),
        tuple(excluded),
        tuple(skipped),
        refused,
        startup.startup,
        watch,
    )
