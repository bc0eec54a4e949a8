"""Instruction files: AGENTS.md and its relatives, found by the rules of the profile.

Chain discovery (:func:`discover`: Codex; ``default`` and ``codex`` profiles):

1. Home instruction dirs (``$CODEX_HOME``): ``AGENTS.override.md`` then ``AGENTS.md``;
   the first whose trimmed text is non-empty is used.
2. In every directory from the project root down to the work dir, the first
   candidate that is a regular file wins: ``AGENTS.override.md``, ``AGENTS.md``, then
   the fallback names. The others present are listed as ``shadowed`` by the winner.
   Directories, FIFOs, escaping and broken symlinks named like a candidate are listed
   as ``invalid``/``unreadable`` and the next candidate is tried, as Codex skips them.

Roots discovery (:func:`discover_roots`: Coder; ``coder`` profile): every instruction name at each root's top
level, case-sensitively; symlinks collapse into one resource named by their target.

This module only finds and reads; the byte budget of the project doc is applied by
:mod:`agentcontext.instructions.project_doc`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from agentcontext.fs import text_links
from agentcontext.fs.files import Entry, EntryKind, Reader
from agentcontext.fs.textdecode import UTF8_BOM, decode, prepare
from agentcontext.layout import Layout, Root
from agentcontext.resource import Kind as ResourceKind
from agentcontext.resource import Load, Resource, Scope, Status
from agentcontext.sanitize import hidden_text_warnings
from agentcontext.settings.config import Config

BOM_WARNING = "starts with a UTF-8 byte order mark"


@dataclass(frozen=True, slots=True)
class Found:
    """An instruction file as read, before the doc budget: ``data`` is budget-ready bytes."""

    resource: Resource
    data: bytes | None = None
    candidate: bool = True  # False: listed with its reason, never a file of the doc (a folder, a blank home file)

    @property
    def usable(self) -> bool:
        return self.data is not None


def relabelled(r: Resource, content: str | None, load: Load | None, doc_order: int | None) -> Resource:
    """``r`` with another content, load and doc position."""
    return r._replace(content=content, load=load, doc_order=doc_order)


def discover(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """Every instruction candidate of the chain, in doc order; non-candidates (shadowed...) follow their winner."""
    files = InstructionFiles(reader, config.snapshot.max_resource_bytes)
    found: list[Found] = []
    doc = config.project_doc
    home_names = tuple(n for n in (doc.override_filename, doc.filename) if n.strip())
    for root in layout.home_dirs:
        found += files.pick(root.path, home_names, root.boundary, Scope.HOME, skip_blank=True)
    for root in layout.source_files:
        if os.path.basename(root.path) in doc.candidates:
            entry = reader.probe(root.path, root.boundary)
            found.append(files.read(entry, Scope.SOURCE, root.source))
    for root in layout.source_roots:
        found += files.pick(root.path, doc.candidates, root.boundary, Scope.SOURCE, source=root.source)
    candidates = doc.candidates  # a property that builds the tuple each time
    for directory in layout.chain:  # project folders: a quiet one listed once answers for the names it lacks
        reader.names(directory, layout.doc_boundary)
        found += files.pick(directory, candidates, layout.doc_boundary, Scope.PROJECT)
    return numbered(found)


def numbered(found: list[Found]) -> list[Found]:
    """Give doc candidates their position in the project doc."""
    out: list[Found] = []
    order = 0
    for item in found:
        r = item.resource
        if r.status is Status.SHADOWED or not item.candidate:
            out.append(Found(relabelled(r, r.content, r.load, None), item.data))
            continue
        out.append(Found(relabelled(r, r.content, r.load, order), item.data))
        order += 1
    return out


@dataclass(frozen=True, slots=True)
class InstructionFiles:
    """Instruction files read through one reader (its cache, its boundaries), each up to ``cap`` bytes."""

    reader: Reader
    cap: int

    def pick(
        self,
        directory: str,
        names: tuple[str, ...],
        boundary: str,
        scope: Scope,
        *,
        skip_blank: bool = False,
        source: str | None = None,
    ) -> list[Found]:
        """One directory of the chain: the first usable candidate wins, the rest are explained."""
        found: list[Found] = []
        winner: str | None = None
        for name in names:
            entry = self.reader.probe(os.path.join(directory, name), boundary)
            if entry.kind is EntryKind.MISSING:
                continue
            if winner is not None:
                if entry.kind is EntryKind.FILE:
                    found.append(_shadowed(entry, scope, winner, source))
                else:
                    found.append(_not_candidate(self.read(entry, scope, source)))
                continue
            item = self.read(entry, scope, source)
            if not _wins_slot(entry):
                found.append(_not_candidate(item))
                continue
            if skip_blank and item.data is not None and not decode(item.data)[0].strip():
                blank = item.resource._replace(warnings=(*item.resource.warnings, "empty or whitespace only; skipped"))
                found.append(Found(blank, candidate=False))
                continue
            found.append(item)
            winner = entry.path
        return found

    def at_root(self, root: Root, names: tuple[str, ...]) -> list[Found]:
        """Every instruction name at one root's top level (Coder), links attributed to their target."""
        top = self.reader.probe(root.path, root.boundary)
        if top.kind is EntryKind.FILE:  # a root that is itself a file is classified by its name
            if os.path.basename(root.path) not in names:
                return []
            return [self.read(top, root.scope, root.source)]
        if top.kind is not EntryKind.DIRECTORY:
            return []
        out: list[Found] = []
        for name in names:
            entry = self.reader.probe(os.path.join(root.path, name), root.boundary)
            if entry.kind is EntryKind.MISSING or entry.kind is EntryKind.DIRECTORY:
                continue  # Coder skips directory entries with these names
            item = self.read(entry, root.scope, root.source)
            if entry.is_link and entry.kind is EntryKind.FILE:  # attribute to the real file
                item = Found(item.resource._replace(path=entry.real_path), item.data)
            out.append(item if entry.kind is EntryKind.FILE else _not_candidate(item))
        return out

    def read(self, entry: Entry, scope: Scope, source: str | None) -> Found:
        """Read a probed candidate into a resource, from the cache when unchanged."""
        base = Resource(ResourceKind.INSTRUCTION_FILE, entry.path, scope, Status.OK, source=source)
        if entry.kind is EntryKind.DIRECTORY:
            return Found(base._replace(status=Status.INVALID, error="a directory, not a file; ignored"))
        if entry.kind is EntryKind.SPECIAL:
            return Found(base._replace(status=Status.INVALID, error=f"{entry.special}, not a regular file; ignored"))
        if entry.kind is EntryKind.ESCAPE:
            return Found(base._replace(status=Status.INVALID, error=entry.error))
        if entry.kind in (EntryKind.BROKEN, EntryKind.ERROR):
            return Found(base._replace(status=Status.UNREADABLE, error=entry.error))
        found: Found = self.reader.cached(entry, f"instruction:{self.cap}", lambda: self._read_file(entry, base))
        resource = found.resource
        if entry.is_link:
            resource = resource._replace(warnings=(f"read through symlink {entry.path}", *resource.warnings))
        if (resource.path, resource.scope, resource.source) != (entry.path, scope, source):
            resource = resource._replace(path=entry.path, scope=scope, source=source)
        return Found(resource, found.data) if resource is not found.resource else found

    def _read_file(self, entry: Entry, base: Resource) -> Found:
        cap = self.cap
        try:
            raw = self.reader.read(entry, cap + 1)
        except OSError as exc:
            return Found(base._replace(status=Status.UNREADABLE, size_bytes=entry.size, error=exc.strerror or str(exc)))
        size = max(entry.size, len(raw))
        digest = hashlib.sha256(raw[:cap]).hexdigest()
        kind, path, scope, source = base.kind, base.path, base.scope, base.source  # ``base`` sets no other field
        prepared = prepare(raw[:cap])
        if prepared.binary:
            error = "binary file (contains NUL bytes); ignored"
            return Found(Resource(kind, path, scope, Status.INVALID, size, digest, error=error, source=source))
        text, decode_warnings = decode(prepared.data, cut=len(raw) > cap)
        bom = (BOM_WARNING,) if raw.startswith(UTF8_BOM) else ()
        warnings = (*bom, *prepared.warnings, *decode_warnings, *hidden_text_warnings(text))
        status, reason = base.status, None
        if len(raw) > cap:
            status, reason = Status.OVERSIZE, f"file size {size} exceeds per-resource cap of {cap} bytes"
        # built once, positionally (this runs per instruction file)
        described = _describe(text)
        resource = Resource(
            kind, path, scope, status, size, digest, None, reason, warnings, None, described, None, source
        )
        return Found(resource, prepared.data)


def _wins_slot(entry: Entry) -> bool:
    # A regular file takes its directory's slot even when unreadable: the user meant it to.
    return entry.kind in (EntryKind.FILE, EntryKind.ERROR)


def _not_candidate(item: Found) -> Found:
    return Found(item.resource, candidate=False)


def _shadowed(entry: Entry, scope: Scope, winner: str, source: str | None) -> Found:
    resource = Resource(
        kind=ResourceKind.INSTRUCTION_FILE,
        path=entry.path,
        scope=scope,
        status=Status.SHADOWED,
        size_bytes=entry.size,
        error=f"shadowed by {winner} (one instruction file per directory)",
        source=source,
    )
    return Found(resource)


def _describe(text: str) -> str | None:
    """Coder's description: the first non-empty line without its leading ``#`` marks."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped.lstrip("#").strip() or None
    return None


def with_link_advice(found: list[Found], layout: Layout, reader: Reader) -> list[Found]:
    """``found`` with a warning on each file that is a symbolic link checked out as a file
    (:mod:`agentcontext.fs.text_links`): the agent reads the link's target as its text. Looked at after every
    cached read, so that a rescan sees the target come and go."""
    out = found
    for at, item in enumerate(found):
        data, resource = item.data, item.resource
        if data is None or b"\n" in data or text_links.target_text(data) is None:  # most files, at C speed
            continue
        boundary = layout.boundary_of(resource.path)
        text = None if boundary is None else text_links.named_target(reader, resource.path, boundary, data)
        if text is not None:
            warning = text_links.advice(text, resource.path, "the agent reads that text, not the file it names")
            out = out if out is not found else list(found)
            out[at] = Found(resource._replace(warnings=(*resource.warnings, warning)), data, item.candidate)
    return out


def discover_roots(layout: Layout, config: Config, reader: Reader) -> list[Found]:
    """Coder's shallow roots: every name at each root's top level; links collapse to targets."""
    files = InstructionFiles(reader, config.snapshot.max_resource_bytes)
    names = config.project_doc.root_names
    by_path: dict[str, Found] = {}
    for root in layout.instruction_roots:
        for item in files.at_root(root, names):
            path = item.resource.path
            earlier = by_path.get(path)
            if earlier is None or (not earlier.resource.status.carries_content and item.usable):
                by_path[path] = item
    return numbered(list(by_path.values()))
