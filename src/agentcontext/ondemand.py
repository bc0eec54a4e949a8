"""What applies when an agent works on some paths: the instruction files it gets on demand.

:func:`applicable` answers, under the active profile, which instruction files an agent
gets when it works on given paths *beyond* what it loaded at startup (those are listed
apart, as ``startup``), each with its ``load`` type, the reason and the bytes it adds:

* ``default`` and ``codex``: each folder strictly below the work dir (or the declared
  source holding the path) down to the path's folder, outermost first, one file a folder
  as in the startup chain (``AGENTS.override.md`` > ``AGENTS.md`` > fallbacks), the
  others listed ``shadowed``: what Codex would load with its cwd there. A folder holding
  a root marker (a nested checkout) starts the chain afresh, as Codex's would.
* ``coder``: every instruction name at the top of each such folder, as at a scan root.
* ``claude``: what Claude Code sends after it reads the file (:mod:`claude_nested`):
  nested CLAUDE.md files, rules, and the rules whose ``paths:`` match.

A path is a file (its folder's chain applies, and globs match the file) or an existing
folder. Paths are checked before anything is read: relative ones are joined to the work
dir; ``..``, ``~``, NUL, a place outside the work dir and every source, more than
``ondemand.max_depth`` folders deep, or a folder of the chain that is a link leaving the
roots: each is refused with its reason, and nothing under it is read. More than
``ondemand.max_paths`` paths is an error. Files keep the snapshot's rules: the
per-resource cap (``oversize``), links only inside their root, statuses with reasons;
past ``ondemand.max_bytes`` of content (or ``snapshot.max_resources`` files) the rest is
``excluded``. A lookup that runs past its deadline gives up with an error.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agentcontext import claude_md, claude_nested
from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.files import RACY_SECONDS, Reader, StatKey, is_within, stat_key
from agentcontext.instructions import Found, pick_in_dir, root_files
from agentcontext.layout import Root
from agentcontext.project_doc import whole
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status

if TYPE_CHECKING:
    from agentcontext.scan import ScanResult

MAX_MISSES = 100_000  # folders remembered as misses, at most


@dataclass(frozen=True, slots=True)
class Applied:
    """One instruction file of an answer; ``paths``: the asked-about paths it applies to."""

    resource: Resource
    paths: tuple[str, ...] = ()
    hook: bool = False  # claude: sent inside the AGENTS.md hook's context

    @property
    def reason(self) -> str:
        load = self.resource.load
        return self.resource.error or (load.reason if load and load.reason else "") or str(self.resource.status)

    @property
    def bytes(self) -> int:
        return self.resource.payload_bytes

    def to_dict(self) -> dict[str, Any]:
        r = self.resource
        data: dict[str, Any] = {
            "path": r.path,
            "scope": str(r.scope),
            "status": str(r.status),
            "load": r.load.to_dict() if r.load else None,
            "reason": self.reason,
            "bytes": self.bytes,
            "size_bytes": r.size_bytes,
            "content_hash": r.content_hash,
            "warnings": list(r.warnings),
            "for": list(self.paths),
        }
        if r.status.carries_content and r.content is not None:
            data["content"] = r.content
        return data


@dataclass(frozen=True, slots=True)
class Refused:
    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Applicable:
    """The answer: what loads (in the profile's order), what is over the cap, what is not used, what was refused."""

    work_dir: str
    profile: str
    paths: tuple[str, ...]
    files: tuple[Applied, ...] = ()
    excluded: tuple[Applied, ...] = ()
    not_loaded: tuple[Applied, ...] = ()
    refused: tuple[Refused, ...] = ()
    startup: tuple[Resource, ...] = ()

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "work_dir": self.work_dir,
            "profile": self.profile,
            "paths": list(self.paths),
            "bytes": self.bytes,
            "files": [f.to_dict() for f in self.files],
            "excluded": [f.to_dict() for f in self.excluded],
            "not_loaded": [f.to_dict() for f in self.not_loaded],
            "refused": [r.to_dict() for r in self.refused],
            "startup": [r.path for r in self.startup],
        }


@dataclass(frozen=True, slots=True)
class _Target:
    path: str
    base: str  # the work dir or a declared source holding it
    is_dir: bool
    dirs: tuple[str, ...]  # folders strictly below ``base`` down to the path's folder


@dataclass
class _Lookup:
    """One call's state: what each folder holds, in this call, and the answer so far."""

    result: ScanResult
    deadline: float | None
    present: dict[str, frozenset[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    found: dict[str, tuple[Found, bool]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)

    def add(self, item: Found, path: str, *, hook: bool = False) -> None:
        key = item.resource.path
        if key not in self.found:
            self.order.append(key)
            self.found[key] = (item, hook)
            self.paths[key] = []
        if path not in self.paths[key]:
            self.paths[key].append(path)

    def check_time(self, timeout: float) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise UnavailableError(f"gave up: the lookup took longer than {timeout:g} s (ondemand.timeout)")


class Resolver:
    """Answers lookups for one scanner's work dir; thread-safe (one lookup at a time)."""

    def __init__(self) -> None:
        self.reader = Reader()
        self._misses: dict[str, tuple[float, StatKey, frozenset[str]]] = {}
        self._rules: tuple[int, claude_nested.StartupRules] | None = None
        self._lock = threading.Lock()

    def forget(self, directories: Iterable[str]) -> None:
        """Drop remembered misses of these folders (a watcher saw them change)."""
        for directory in directories:
            self._misses.pop(directory, None)

    def resolve(self, result: ScanResult, paths: Sequence[str], *, deadline: float | None = None) -> Applicable:
        """What applies to ``paths`` after the startup of ``result`` (see the module docstring).

        Raises:
            InvalidRequestError: more paths than ``ondemand.max_paths``.
            UnavailableError: the deadline passed before the answer was complete.
        """
        config = result.config
        limit = config.ondemand.max_paths
        if len(paths) > limit:
            raise InvalidRequestError(f"{len(paths)} paths in one lookup: at most {limit} (ondemand.max_paths)")
        with self._lock:
            self.reader.begin()
            lookup = _Lookup(result, deadline)
            targets: list[_Target] = []
            refused: list[Refused] = []
            for raw in paths:
                lookup.check_time(config.ondemand.timeout)
                target = _locate(raw, result)
                if isinstance(target, Refused):
                    refused.append(target)
                    continue
                chain = self._walkable(target, result, lookup)
                if isinstance(chain, Refused):
                    refused.append(chain)
                    continue
                targets.append(replace(target, dirs=chain))
            if config.project_doc.discovery == "claude":
                self._claude(targets, lookup)
            else:
                self._chain(targets, lookup)
            return _answer(lookup, tuple(t.path for t in targets), tuple(refused))

    # --- folders -----------------------------------------------------------------------

    def _walkable(self, target: _Target, result: ScanResult, lookup: _Lookup) -> tuple[str, ...] | Refused:
        """The folders below the base that exist, each checked to stay inside the base's real folder."""
        real_base = self.reader.real_root(target.base)
        out: list[str] = []
        for directory in target.dirs:
            lookup.check_time(result.config.ondemand.timeout)
            if directory in lookup.present:
                out.append(directory)
                continue
            try:
                st = os.lstat(directory)
            except OSError:
                break  # not there (yet): nothing below it either
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(directory)
                if not is_within(real, real_base):
                    return Refused(target.path, f"{directory} is a symlink leaving {target.base}: not followed")
                try:
                    st = os.stat(real)
                except OSError:
                    break
            if not stat.S_ISDIR(st.st_mode):
                break
            ttl = result.config.ondemand.miss_ttl
            lookup.present[directory] = self._present(directory, stat_key(st), _top_names(result), ttl)
            out.append(directory)
        return tuple(out)

    def _present(self, directory: str, key: StatKey, names: frozenset[str], ttl: float) -> frozenset[str]:
        """Which of ``names`` the folder holds; a remembered miss costs no more than the folder's own stat."""
        now = time.monotonic()
        miss = self._misses.get(directory)
        if miss is not None and miss[0] > now and miss[1] == key and miss[2] == names:
            return frozenset()
        present = frozenset(n for n in names if os.path.lexists(os.path.join(directory, n)))
        if not present and ttl > 0 and time.time() - key[0] / 1e9 >= RACY_SECONDS:  # a young folder may yet change
            if len(self._misses) >= MAX_MISSES:
                for old in list(self._misses)[: MAX_MISSES // 2]:  # the oldest half
                    del self._misses[old]
            self._misses[directory] = (now + ttl, key, names)
        elif miss is not None:
            del self._misses[directory]
        return present

    # --- profiles ----------------------------------------------------------------------

    def _chain(self, targets: list[_Target], lookup: _Lookup) -> None:
        config = lookup.result.config
        doc = config.project_doc
        cap = config.snapshot.max_resource_bytes
        markers = set(doc.root_markers) if doc.discovery == "chain" else set()
        per_dir: dict[str, list[Found]] = {}
        for target in targets:
            dirs = list(target.dirs)
            starts = [i for i, d in enumerate(dirs) if markers & lookup.present[d]]
            if starts:  # a nested checkout: its own chain, as Codex's with the cwd inside it
                dirs = dirs[starts[-1] :]
            for directory in dirs:
                lookup.check_time(config.ondemand.timeout)
                if directory not in per_dir:
                    per_dir[directory] = self._chain_files(directory, lookup, cap) if lookup.present[directory] else []
                for item in per_dir[directory]:
                    lookup.add(item, target.path)

    def _chain_files(self, directory: str, lookup: _Lookup, cap: int) -> list[Found]:
        config = lookup.result.config
        doc = config.project_doc
        boundary = _boundary(directory, lookup.result)
        if doc.discovery == "roots":
            found = root_files(Root(directory, Scope.PROJECT, boundary), doc.root_names, self.reader, cap)
            winners = [f for f in found if f.resource.doc_order != -1]
        else:
            found = pick_in_dir(directory, doc.candidates, boundary, Scope.PROJECT, self.reader, cap)
            winners = [f for f in found if f.resource.doc_order != -1 and f.resource.status is not Status.SHADOWED]
        out: list[Found] = []
        for item in found:
            resource = replace(item.resource, doc_order=None)
            if not any(item is w for w in winners) or item.data is None:
                reason = resource.error or "not an instruction file Codex would use here"
                out.append(Found(replace(resource, load=Load(LoadType.NOT_LOADED, reason=reason))))
                continue
            loaded = whole(Found(resource, item.data), keep_bytes=doc.keep_bytes)
            if not (loaded.content or "").strip():
                reason = "empty or whitespace only: nothing to load"
                out.append(Found(replace(loaded, content=None, load=Load(LoadType.NOT_LOADED, reason=reason))))
                continue
            reason = f"the instruction file of {directory}, loaded when the agent works there"
            out.append(Found(replace(loaded, load=Load(LoadType.ON_DEMAND, reason=reason)), item.data))
        return out

    def _claude(self, targets: list[_Target], lookup: _Lookup) -> None:
        result = lookup.result
        walk = claude_md.Walk(result.layout, result.config, self.reader)
        resources = result.snapshot.resources
        walk.processed.update(r.path for r in resources if r.load is not None and r.load.type is LoadType.STARTUP)
        walk.processed.update(r.path for r in resources if r.load is not None and r.load.type is LoadType.IMPORT)
        rules = self._rules[1] if self._rules and self._rules[0] == id(result) else None
        if rules is None:
            rules = claude_nested.startup_rules(walk, resources)
            self._rules = (id(result), rules)
        fallback = claude_md.agents_fallback(resources, result.layout.work_dir)
        reads = claude_nested.OnRead(walk, rules, fallback, set())
        for target in targets:
            lookup.check_time(result.config.ondemand.timeout)
            below_cwd = [(d, lookup.present[d]) for d in target.dirs if is_within(d, result.layout.work_dir)]
            for loaded in reads.read(target.path, target.is_dir, below_cwd):
                lookup.add(_claude_content(loaded.found), target.path, hook=loaded.hook)


def _claude_content(item: Found) -> Found:
    """Claude Code sends the text untrimmed (BOM and CRLF kept)."""
    if item.data is None or item.resource.status is not Status.OK:
        return item
    return Found(replace(item.resource, content=item.data.decode("utf-8")), item.data)


def _top_names(result: ScanResult) -> frozenset[str]:
    doc = result.config.project_doc
    if doc.discovery == "claude":
        names: tuple[str, ...] = (*claude_md.CLAUDE_NAMES, *doc.fallback_filenames)
    elif doc.discovery == "roots":
        names = doc.root_names
    else:
        names = (*doc.candidates, *doc.root_markers)
    return frozenset(n.split("/", 1)[0] for n in names if n)


def _boundary(directory: str, result: ScanResult) -> str:
    layout = result.layout
    for root in (layout.doc_boundary, layout.work_dir, *(r.path for r in layout.source_roots)):
        if is_within(directory, root):
            return root
    return directory


def _locate(raw: object, result: ScanResult) -> _Target | Refused:
    """Where a requested path lies, or why it is refused (checked before anything is read)."""
    layout = result.layout
    shown = raw if isinstance(raw, str) else repr(raw)
    if not isinstance(raw, str) or not raw.strip():
        return Refused(shown, "not a path: a non-empty string is needed")
    if "\0" in raw:
        return Refused(shown, "contains a NUL byte")
    if raw.startswith("~"):
        return Refused(raw, "~ is not expanded: give a path inside the work dir")
    if ".." in raw.replace("\\", "/").split("/"):
        return Refused(raw, "contains parent traversal segments (..)")
    path = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(layout.work_dir, raw))
    bases = (layout.work_dir, *(r.path for r in layout.source_roots))
    base = next((b for b in bases if is_within(path, b)), None)
    if base is None:
        return Refused(raw, f"outside the work dir {layout.work_dir} and every declared source: never read")
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    is_dir = st is not None and stat.S_ISDIR(st.st_mode)
    if st is not None and stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        if not is_within(real, os.path.realpath(base)):
            return Refused(raw, f"a symlink leaving {base}: not followed")
        is_dir = os.path.isdir(real)
    folder = path if is_dir else os.path.dirname(path)
    relative = "" if folder == base else folder[len(base.rstrip(os.sep)) + 1 :]
    parts = relative.split(os.sep) if relative else []
    depth = result.config.ondemand.max_depth
    if len(parts) > depth:
        return Refused(raw, f"{len(parts)} folders below {base}: deeper than {depth} (ondemand.max_depth)")
    dirs = tuple(os.path.join(base, *parts[: i + 1]) for i in range(len(parts)))
    return _Target(path, base, is_dir, dirs)


def _answer(lookup: _Lookup, paths: tuple[str, ...], refused: tuple[Refused, ...]) -> Applicable:
    """Apply the answer's caps in order: bytes of content, then the number of files."""
    config = lookup.result.config
    max_bytes, max_files = config.ondemand.max_bytes, config.snapshot.max_resources
    files: list[Applied] = []
    excluded: list[Applied] = []
    skipped: list[Applied] = []
    used = 0
    for key in lookup.order:
        item, hook = lookup.found[key]
        applied = Applied(item.resource, tuple(lookup.paths[key]), hook)
        load = item.resource.load
        if item.resource.status is not Status.OK or load is None or load.type is LoadType.NOT_LOADED:
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
    startup = tuple(
        r
        for r in lookup.result.snapshot.resources
        if r.kind is Kind.INSTRUCTION_FILE and r.doc_order is not None and r.status.carries_content
    )
    snapshot = lookup.result.snapshot
    return Applicable(
        snapshot.work_dir, snapshot.profile, paths, tuple(files), tuple(excluded), tuple(skipped), refused, startup
    )
