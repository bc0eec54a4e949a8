"""The scan: lay out, discover, budget, cap, hash. The library's front door.

``scan(work_dir)`` is one pass. A :class:`Scanner` keeps a file cache between passes: a
pass that finds every path unchanged (same ``stat`` key, nothing new in any directory)
returns the previous snapshot without building it again, so a rescan of a quiet
workspace costs about one ``stat`` per file it depends on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentcontext import peers
from agentcontext import snapshot as snapshots
from agentcontext.errors import ScanError
from agentcontext.fs.files import Reader, StatKey, is_within, stat_key
from agentcontext.fs.paths import absolute
from agentcontext.instructions import children, project_doc
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.chain import Found, with_link_advice
from agentcontext.instructions.loading import labelled
from agentcontext.instructions.misspelled import misspelled
from agentcontext.instructions.ondemand import Resolver
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.layout import Layout
from agentcontext.peers import Peer
from agentcontext.resource import Resource, Scope
from agentcontext.sanitize import hidden_path_warnings
from agentcontext.settings.config import Config, load_config
from agentcontext.skills import discovery as skills
from agentcontext.skills.files import offered
from agentcontext.snapshot import Snapshot
from agentcontext.workspace_mcp import discovery as mcp_discovery
from agentcontext.workspace_mcp.config import ServerSpec


@dataclass(frozen=True, slots=True)
class ScanResult:
    """A snapshot plus what produced it: the agent's rules (its peer), the layout, the MCP servers to connect."""

    snapshot: Snapshot
    layout: Layout
    servers: tuple[ServerSpec, ...]
    config: Config
    peer: Peer
    skills: tuple[Resource, ...] = ()  # the offered skills (ok, named), by name

    def project_doc(self) -> ProjectDoc:
        """The doc the agent sends, as its peer assembles it."""
        return self.peer.project_doc(self.snapshot.resources, self.config.project_doc.sanitize)


def resolve_work_dir(work_dir: str | os.PathLike[str]) -> str:
    """The absolute work dir; a file stands for its folder.

    Raises:
        ScanError: the path does not exist.
    """
    path = absolute(work_dir)
    if os.path.isdir(path):
        return path
    if os.path.exists(path):
        return os.path.dirname(path)
    raise ScanError(f"work dir does not exist: {path}")


@dataclass(frozen=True, slots=True)
class _Pass:
    """The last full pass: what it looked at (each path, its stat key, whether it was listed), what it was asked
    (version, error, servers, config) and what it answered; a pass that finds both unchanged answers the same."""

    observed: list[tuple[str, StatKey | None, bool]]
    inputs: tuple[object, ...]
    result: ScanResult


class Scanner:
    """Scans one work dir again and again, reusing whatever did not change."""

    def __init__(
        self,
        work_dir: str | os.PathLike[str],
        config: Config | None = None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.work_dir = resolve_work_dir(work_dir)
        self.environ = dict(os.environ if environ is None else environ)
        self.config = config or load_config(self.work_dir, environ=self.environ)
        self.reader = Reader()
        self.full_passes = 0  # passes that walked the tree (the rest found it unchanged)
        self.resolver = Resolver()  # on-demand lookups, with their own cache
        self._last: _Pass | None = None

    def run(self, *, version: int = 1, mcp_servers: Sequence[Resource] = (), error: str | None = None) -> ScanResult:
        """One pass; ``mcp_servers`` are resources of connected servers, added after the caps."""
        servers = tuple(mcp_servers)
        if not os.path.isdir(self.work_dir):  # removed or moved away under a running agent: say so, not "no files"
            gone = f"the work dir {self.work_dir} does not exist (removed or moved?): nothing is found until it is back"
            error = f"{error}; {gone}" if error else gone
        inputs = (version, error, servers, self.config)
        last = self._last
        if last is not None and last.inputs == inputs and self.reader.unchanged(last.observed):
            return last.result
        reader = self.reader
        reader.begin()
        self.full_passes += 1
        markers: list[tuple[str, os.stat_result | None]] = []
        peer = peers.of(self.config)  # the agent's rules, chosen once
        layout = peer.plan(self.work_dir, self.config, markers)
        reader.observed += [(path, None if st is None else stat_key(st), False) for path, st in markers]
        try:
            found = peer.discover(layout, self.config, reader)
            child_found, child_others = children.discover(layout, self.config, reader, peer.child_instructions)
            found = with_link_advice(_merge(found, child_found), layout, reader)
            found += misspelled(found, layout, peer, self.config, reader)
            skill_resources = skills.discover(layout, self.config, reader)
            mcp = mcp_discovery.discover(layout, self.config, reader, self.environ)
            observed = reader.settled()  # what a rescan must state again
        finally:
            reader.release()  # no directory stays open between passes
        doc_resources = project_doc.apply_budget(
            found, self.config.project_doc.max_bytes, keep_bytes=self.config.project_doc.keep_bytes
        )
        snapshot = snapshots.build(
            version=version,
            work_dir=self.work_dir,
            project_root=layout.project_root,
            profile=self.config.profile,
            resources=_paths_checked([*labelled([*doc_resources, *skill_resources]), *mcp.resources, *child_others]),
            caps=self.config.snapshot,
            mcp_servers=servers,
            error=error,
        )
        result = ScanResult(snapshot, layout, mcp.servers, self.config, peer, tuple(offered(snapshot.resources)))
        self._last = _Pass(observed, inputs, result)
        return result

    def applicable(self, paths: Sequence[str], *, result: ScanResult | None = None, watch: bool = False) -> Applicable:
        """The instruction files that apply to ``paths`` beyond the startup of ``result`` (the last scan by default);
        ``watch``: with the folders a watcher would watch to see it change (:attr:`Applicable.watch`).

        Raises:
            InvalidRequestError: more paths than ``ondemand.max_paths``.
            UnavailableError: the lookup ran past ``ondemand.timeout``.
        """
        if result is None:
            result = self._last.result if self._last is not None else self.run()
        deadline = time.monotonic() + result.config.ondemand.timeout
        return self.resolver.resolve(result, paths, deadline=deadline, watch=watch)

    def watch_dirs(self) -> list[str]:
        """Directories whose changes can change the snapshot, inside the allowed roots.

        Every directory the last full pass listed, and the folder of every path it looked
        at; a folder that does not exist yet stands in for its nearest existing ancestor. A work
        dir that is gone is stood in for by its nearest existing ancestor wherever that is (a
        watch reads nothing, and no file there is read): its coming back is a change.
        """
        last = self._last
        if last is None:
            return []
        roots = last.result.layout.allowed_roots
        found: set[str] = set()
        for path, key, listed in last.observed:
            directory = path if listed else os.path.dirname(path)
            if key is None:  # the path is missing: its folder may be missing too
                directory = _nearest_existing(directory)
            found.add(directory)
        watched = {d for d in found if any(is_within(d, root) for root in roots)}
        if not os.path.isdir(self.work_dir):
            watched.add(_nearest_existing(self.work_dir))
        return sorted(watched)


def _nearest_existing(directory: str) -> str:
    while directory and not os.path.isdir(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def _merge(found: list[Found], child: list[Found]) -> list[Found]:
    """Child projects' files replace the same paths found otherwise (Claude Code's nested walk)."""
    if not child:
        return found
    by_path = {item.resource.path: item for item in child}
    merged = [by_path.pop(item.resource.path, item) for item in found]
    return merged + [item for item in child if item.resource.path in by_path]


def skill_roots(result: ScanResult) -> list[tuple[str, Scope]]:
    """The skill containers of a scan, in precedence order, plugins included."""
    return [(c.path, c.scope) for c in skills.containers(result.layout, Reader())]


def scan(work_dir: str | os.PathLike[str] = ".", config: Config | None = None) -> Snapshot:
    """Scan ``work_dir`` once and return its snapshot (version 1).

    With no ``config``, settings are loaded as the CLI loads them: the profile, the
    config file and ``AGENTCONTEXT_*`` variables.

    Raises:
        ScanError: the work dir does not exist.
        ConfigError: the configuration is unusable.
    """
    return Scanner(work_dir, config).run().snapshot


def applicable(work_dir: str | os.PathLike[str], paths: Sequence[str], config: Config | None = None) -> Applicable:
    """The instruction files that apply when an agent works on ``paths`` (files or folders) in ``work_dir``.

    Under the active profile: the nested files between the work dir and each path, and the
    rules whose globs match, each with its ``load``, reason and bytes; what loads at startup
    is listed apart. Relative paths are relative to the work dir. See :mod:`agentcontext.instructions.ondemand`.

    Raises:
        ScanError: the work dir does not exist.
        InvalidRequestError: more paths than ``ondemand.max_paths``.
        UnavailableError: the lookup ran past ``ondemand.timeout``.
    """
    return Scanner(work_dir, config).applicable(paths)


def _paths_checked(resources: list[Resource]) -> list[Resource]:
    """``resources``, each whose path holds hidden characters warned of (its name may reach the model)."""
    out = []
    for resource in resources:
        said = hidden_path_warnings(resource.path)
        out.append(resource._replace(warnings=(*resource.warnings, *said)) if said else resource)
    return out


def scan_full(
    work_dir: str | os.PathLike[str] = ".", config: Config | None = None, *, environ: Mapping[str, str] | None = None
) -> ScanResult:
    """Like :func:`scan`, with the layout, the doc and the MCP servers as well."""
    return Scanner(work_dir, config, environ=environ).run()
