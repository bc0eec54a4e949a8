"""The snapshot: every resource a scan looked at, capped, ordered and hashed.

Caps (Coder): resources are ordered by kind (instruction files, skills, MCP configs)
then path. Past ``max_resources`` a resource is ``excluded``; a resource whose content
would push the running total past ``max_snapshot_bytes`` is ``excluded`` with its content
dropped. MCP server resources come after the caps, so a runaway server cannot crowd out
instructions; their cap hits become snapshot errors instead.

The aggregate hash is Coder's: for each instruction file and skill, sorted by id,
netstring fields ``<len>:<bytes>`` for id, kind and path, the 32 raw bytes of the
content hash, ``<len>:<status>`` and a NUL. MCP resources are left out, so an MCP-only
change never marks a pinned chat out of date.

What no database stores (a file name that is not UTF-8, a NUL in a skill's description:
:mod:`agentcontext.storable`) makes its resource ``invalid``, said with the text escaped, so a push
is never refused whole for it. A file is one resource: where a scan met it twice (a CLAUDE.md
importing ``@AGENTS.md`` while the AGENTS.md itself is shadowed, or sent on its own as well), the
snapshot keeps the way it is loaded first (at startup, then imported, then the rest) and says the
other in a warning. Ids are the snapshot's keys everywhere it goes: the control plane refuses a
push that repeats one.

Version 0 means "not ready" and is never published; a scan is version 1; a long-running
agent counts up from there.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

from agentcontext import storable
from agentcontext.resource import DRIFTING, Kind, LoadType, Resource, Scope, Status
from agentcontext.settings.config import SnapshotSettings


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An ordered, capped, content-hashed inventory of one work dir."""

    version: int
    aggregate_hash: str
    work_dir: str
    project_root: str | None
    profile: str
    resources: tuple[Resource, ...]
    payload_bytes: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "aggregate_hash": self.aggregate_hash,
            "work_dir": self.work_dir,
            "project_root": self.project_root,
            "profile": self.profile,
            "payload_bytes": self.payload_bytes,
            "error": self.error,
            "resources": [r.to_dict() for r in self.resources],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        return cls(
            version=int(data["version"]),
            aggregate_hash=str(data["aggregate_hash"]),
            work_dir=str(data["work_dir"]),
            project_root=data.get("project_root"),
            profile=str(data.get("profile", "default")),
            resources=tuple(Resource.from_dict(r) for r in data.get("resources", ())),
            payload_bytes=int(data.get("payload_bytes", 0)),
            error=data.get("error"),
        )

    def of_kind(self, kind: Kind) -> tuple[Resource, ...]:
        return tuple(r for r in self.resources if r.kind is kind)

    def find(self, path: str) -> Resource | None:
        return next((r for r in self.resources if r.path == path), None)

    def with_version(self, version: int) -> Snapshot:
        return replace(self, version=version)

    def without(self, scopes: frozenset[Scope]) -> Snapshot:
        """The snapshot without the resources of ``scopes``, its hash and size recomputed (what a push leaves out)."""
        kept = tuple(r for r in self.resources if r.scope not in scopes)
        if len(kept) == len(self.resources):
            return self
        digest, payload = aggregate_hash(kept, sorted_by_id=True), sum(r.payload_bytes for r in kept)
        return replace(self, resources=kept, aggregate_hash=digest, payload_bytes=payload)

    def within(self, count: int) -> Snapshot:
        """The snapshot with at most ``count`` resources (what one push holds): past them, excluded resources first,
        then the last in cap order, are left out and counted in its error; its hash and size recomputed.

        The caps exclude a resource without dropping it (a tree of 3,000 skills lists 2,500 ``excluded``), so a
        snapshot can list more than a push takes; the control plane would refuse it whole."""
        if len(self.resources) <= count:
            return self
        ranked = sorted(self.resources, key=lambda r: (r.status is Status.EXCLUDED, sort_key(r)))
        taken = {r.id for r in ranked[:count]}
        kept = tuple(r for r in self.resources if r.id in taken)
        excluded = sum(r.status is Status.EXCLUDED for r in ranked[count:])
        note = (
            f"{len(self.resources) - count:,} resources past the {count:,} one push holds are left out of it"
            f" ({excluded:,} of them excluded by the caps); agentcontext scan lists them all"
        )
        error = note if self.error is None else storable.said(f"{self.error}; {note}")
        digest, payload = aggregate_hash(kept, sorted_by_id=True), sum(r.payload_bytes for r in kept)
        return replace(self, resources=kept, aggregate_hash=digest, payload_bytes=payload, error=error)


def empty(work_dir: str, profile: str) -> Snapshot:
    """The placeholder published before a workspace is ready: version 0, nothing in it."""
    return Snapshot(0, aggregate_hash([]), work_dir, None, profile, (), 0)


def sort_key(resource: Resource) -> tuple[int, str]:
    return (resource.kind.rank, resource.path)


_BY_PATH = attrgetter("path")
_CAP_ORDER = tuple(sorted(Kind, key=lambda kind: kind.rank))  # Coder's: instruction files first
_ID_ORDER = tuple(sorted(Kind, key=str))  # ids start with the kind and ":", and no kind prefixes another


def _ordered(resources: Iterable[Resource], kinds: tuple[Kind, ...], *, by_path: bool = False) -> list[Resource]:
    """By kind in ``kinds`` order, then by path (``by_path``: each kind's resources already are)."""
    groups: dict[Kind, list[Resource]] = {kind: [] for kind in kinds}
    for resource in resources:
        groups[resource.kind].append(resource)
    if by_path:
        return [resource for kind in kinds for resource in groups[kind]]
    return [resource for kind in kinds for resource in sorted(groups[kind], key=_BY_PATH)]


def one_per_file(resources: Iterable[Resource]) -> list[Resource]:
    """Each (kind, path) once, storable: the way it is loaded first, the others said in its warnings (module
    docs)."""
    out: list[Resource] = []
    at: dict[str, int] = {}  # by path: a path with two kinds (rare) is told apart below
    plain, carried = storable.plain, storable.carried
    for resource in resources:
        if not plain(resource):
            resource = carried(resource)
        path = resource.path
        first = at.setdefault(path, len(out))
        if first == len(out):
            out.append(resource)
            continue
        kept = out[first]
        if kept.kind is not resource.kind:
            _other_kind(out, resource)
            continue
        other = resource
        if _load_rank(other) < _load_rank(kept):
            kept, other = other, kept
        out[first] = kept._replace(warnings=(*kept.warnings, storable.said(_also(other))))
    return out


def _other_kind(out: list[Resource], resource: Resource) -> None:
    """``resource`` into ``out`` where a resource of another kind has its path (a SKILL.md also an instruction file)."""
    for index, kept in enumerate(out):
        if kept.kind is resource.kind and kept.path == resource.path:
            other = resource
            if _load_rank(other) < _load_rank(kept):
                kept, other = other, kept
            out[index] = kept._replace(warnings=(*kept.warnings, storable.said(_also(other))))
            return
    out.append(resource)


_RANKS = {LoadType.STARTUP: 0, LoadType.IMPORT: 1}


def _load_rank(resource: Resource) -> int:
    load = resource.load
    if resource.status is not Status.OK or load is None or load.type is LoadType.NOT_LOADED:
        return 4
    return _RANKS.get(load.type, 2)


def _also(other: Resource) -> str:
    load = other.load
    if load is not None and load.type is LoadType.IMPORT and other.status is Status.OK:
        return f"also imported by {load.importer}"
    if _load_rank(other) == 4:
        why = other.error or (load.reason if load is not None else None)
        return f"also looked at on its own: {other.status}" + (f": {why}" if why else "")
    return f"also loaded {load.type if load is not None else 'as listed'}"


def apply_caps(resources: Iterable[Resource], caps: SnapshotSettings) -> list[Resource]:
    """Exclude what does not fit, in (kind, path) order; see the module docstring."""
    return _apply_caps(resources, caps)[0]


def _apply_caps(resources: Iterable[Resource], caps: SnapshotSettings) -> tuple[list[Resource], int]:
    """The capped resources and the bytes of content they keep."""
    out: list[Resource] = []
    total = 0
    count, budget = caps.max_resources, caps.max_snapshot_bytes
    over_count = f"dropped to fit {count}-resource snapshot count cap"
    over_budget = f"dropped to fit {budget}-byte aggregate cap"  # once, not per resource left out
    excluded = Status.EXCLUDED
    for index, resource in enumerate(_ordered(resources, _CAP_ORDER)):
        if index >= count:
            out.append(resource.with_status(excluded, over_count))
            continue
        content = resource.content
        # a text's UTF-8 is never shorter than its characters: one too long in characters is not encoded to tell
        if content is not None and total + len(content) > budget:
            out.append(resource.with_status(excluded, over_budget))
            continue
        size = resource.payload_bytes
        if size and total + size > budget:
            out.append(resource.with_status(excluded, over_budget))
            continue
        total += size
        out.append(resource)
    return out, total


def apply_mcp_caps(
    resources: Sequence[Resource], servers: Sequence[Resource], caps: SnapshotSettings
) -> tuple[list[Resource], list[str]]:
    """Add MCP server resources after the file caps; over-cap servers become snapshot errors."""
    return _apply_mcp_caps(resources, sum(r.payload_bytes for r in resources), servers, caps)


def _apply_mcp_caps(
    resources: Sequence[Resource], total: int, servers: Sequence[Resource], caps: SnapshotSettings
) -> tuple[list[Resource], list[str]]:
    out = list(resources)
    errors: list[str] = []
    for server in sorted(servers, key=sort_key):
        size = len(json.dumps([t.to_dict() for t in server.tools]).encode())
        if len(out) >= caps.max_resources:
            out.append(_exclude(server, f"dropped to fit {caps.max_resources}-resource snapshot count cap"))
            errors.append(f"snapshot exceeds {caps.max_resources}-resource count cap")
        elif total + size > caps.max_snapshot_bytes:
            out.append(_exclude(server, f"dropped to fit {caps.max_snapshot_bytes}-byte aggregate cap"))
            errors.append(f"snapshot exceeds {caps.max_snapshot_bytes}-byte aggregate cap")
        else:
            total += size
            out.append(server)
    return out, errors


def _exclude(resource: Resource, reason: str) -> Resource:
    return resource.with_status(Status.EXCLUDED, reason)


def aggregate_hash(resources: Iterable[Resource], *, sorted_by_id: bool = False) -> str:
    """Coder's order-independent drift hash over instruction files and skills."""
    drifting = [r for r in resources if r.kind in DRIFTING]
    ordered = drifting if sorted_by_id else _ordered(drifting, _ID_ORDER)
    templates, statuses, fromhex = _TEMPLATES, _NETSTRINGS, bytes.fromhex
    fragments = []
    for resource in ordered:  # once per file of every scan: one formatting of six values each
        encoded = resource.path.encode("utf-8")
        size = len(encoded)
        prefix, template = templates[resource.kind]
        digest = fromhex(resource.content_hash) if resource.content_hash else _NO_HASH
        fragments.append(template % (prefix + size, encoded, size, encoded, digest, statuses[resource.status]))
    return hashlib.sha256(b"".join(fragments)).hexdigest()


def _netstring(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"%d:%s" % (len(data), data)


def _template(kind: Kind) -> tuple[int, bytes]:
    """The length of a kind's id prefix ``kind:`` and its resources' fragment format, the kind's parts written in.

    A fragment: netstrings of the id (``kind:path``), the kind and the path, the 32 raw bytes
    of the content hash, the status's netstring and a NUL.
    """
    prefix = f"{kind}:".encode()
    kind_part = _netstring(kind)
    escaped = prefix.replace(b"%", b"%%"), kind_part.replace(b"%", b"%%")
    return len(prefix), b"%d:" + escaped[0] + b"%s" + escaped[1] + b"%d:%s%s%s\x00"


_NETSTRINGS = {member: _netstring(member) for member in (*Kind, *Status)}
_TEMPLATES = {kind: _template(kind) for kind in Kind}
_NO_HASH = bytes(32)


def build(
    *,
    version: int,
    work_dir: str,
    project_root: str | None,
    profile: str,
    resources: Iterable[Resource],
    caps: SnapshotSettings,
    mcp_servers: Sequence[Resource] = (),
    error: str | None = None,
) -> Snapshot:
    """One per file, cap, order and hash resources into a snapshot."""
    capped, total = _apply_caps(one_per_file(resources), caps)  # by kind in cap order (servers last), then path
    kept = len(capped)
    # the servers after them, by path: each kind stays in path order unless servers were in both
    in_order = not mcp_servers or not kept or capped[-1].kind is not Kind.MCP_SERVER
    capped, mcp_errors = _apply_mcp_caps(capped, total, mcp_servers, caps)
    ordered = tuple(_ordered(capped, _ID_ORDER, by_path=in_order))  # by id
    total += sum(server.payload_bytes for server in capped[kept:])
    first_error = error or (mcp_errors[0] if mcp_errors else None)  # a watcher's may quote any path, at any length
    return Snapshot(
        version=version,
        aggregate_hash=aggregate_hash(ordered, sorted_by_id=True),
        work_dir=work_dir,
        project_root=project_root,
        profile=profile,
        resources=ordered,
        payload_bytes=total,
        error=None if first_error is None else storable.said(first_error),
    )


@dataclass(frozen=True, slots=True)
class Diff:
    """What changed between two snapshots, by path."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, list[str]]:
        return {"added": list(self.added), "removed": list(self.removed), "changed": list(self.changed)}


def diff(old: Iterable[Resource], new: Iterable[Resource]) -> Diff:
    """Resources added, removed, or changed in content or status (by id)."""
    before = {r.id: r for r in old}
    after = {r.id: r for r in new}
    return Diff(
        added=tuple(sorted(after[i].path for i in after.keys() - before.keys())),
        removed=tuple(sorted(before[i].path for i in before.keys() - after.keys())),
        changed=tuple(
            sorted(
                after[i].path
                for i in after.keys() & before.keys()
                if (after[i].content_hash, after[i].status, after[i].tools)
                != (before[i].content_hash, before[i].status, before[i].tools)
            )
        ),
    )


# --- one count of a snapshot's resources, the same on every surface (scan, up, status, the dashboard):
# every kind together by status; an MCP server that waits for the user's approval (``disabled``) counts as
# ``pending``, the word every surface uses for it, so an approval changes only what it approved.

PENDING = "pending"


def shown_status(kind: str, status: str) -> str:
    """The status a summary shows for one resource."""
    return PENDING if kind == Kind.MCP_SERVER and status == Status.DISABLED else str(status)


def count_statuses(resources: Iterable[tuple[str, str]]) -> dict[str, int]:
    """``(kind, status)`` pairs counted by shown status, sorted by name."""
    return dict(sorted(Counter(shown_status(kind, status) for kind, status in resources).items()))


def summary_text(counts: dict[str, int]) -> str:
    """``3 ok, 1 pending, 1 shadowed``; ``none`` when there is nothing."""
    return ", ".join(f"{n} {name}" for name, n in counts.items()) or "none"
