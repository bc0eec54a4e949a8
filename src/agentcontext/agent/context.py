"""The agent's context manager: the live snapshot of one workspace, published as it changes.

Until the workspace is ready the agent publishes nothing: the snapshot is the version-0
placeholder, empty, and resyncs return it without scanning. Once ready (the startup command
finished, ``POST /api/v0/ready``, or at once), every trigger (a file change, a declared
source added or removed, the MCP catalog changing, an explicit resync) re-scans and, when
anything changed, publishes the next version to every subscriber. Scans run one at a time
in a worker thread, so an overtaken scan can never publish over a newer one; bursts of
triggers coalesce into one scan. Changes of the MCP catalog are debounced as file changes
are (``agent.debounce_ms``, :mod:`agentcontext.debounce`) before the ``mcp`` event and the
rescan: a server that keeps changing its tools cannot make a snapshot (and a push) of each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentcontext.agent.discovered import DiscoveredWatch
from agentcontext.debounce import Debouncer
from agentcontext.errors import AgentContextError, NotFoundError, UnavailableError
from agentcontext.fs.files import is_within
from agentcontext.instructions.applied import Applicable
from agentcontext.resource import Kind
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config
from agentcontext.snapshot import Snapshot, empty
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import ServerSpec
from agentcontext.workspace_mcp.trust import TrustStore


class SourceError(AgentContextError):
    """A declared source was refused (not absolute, traversal, outside the allowed roots)."""


@dataclass(frozen=True, slots=True)
class Event:
    """What subscribers receive: a published snapshot, or a change of the MCP catalog."""

    kind: str  # "snapshot" | "mcp"
    data: dict[str, Any]


def validate_source(path: str, *, home: str, allowed: list[str]) -> str:
    """Coder's source rules: the lexical identity of ``path``, checked against the allowed roots.

    Raises:
        SourceError: with Coder's messages.
    """
    text = path.strip()
    if not text:
        raise SourceError("path is empty")
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    if not os.path.isabs(text):
        raise SourceError(f'path "{path}" is not absolute')
    if ".." in text.split("/"):
        raise SourceError(f'path "{path}" contains parent traversal segments')
    identity = os.path.normpath(text)
    try:
        real = os.path.realpath(identity)
    except ValueError:  # NUL, or a lone surrogate: no file system can name it
        raise SourceError(f'path "{path}" is not a valid file name') from None
    roots = [os.path.realpath(r) for r in allowed if os.path.exists(r)]
    if not any(is_within(real, root) for root in roots):
        raise SourceError(f'path "{path}" is not inside any allowed root')
    return identity


class ContextAgent:
    """The live context of one work dir, with its MCP servers."""

    def __init__(
        self,
        work_dir: str,
        config: Config,
        *,
        environ: Mapping[str, str] | None = None,
        trust: TrustStore | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.config = config
        self._scanner = Scanner(work_dir, config, environ=self.environ)
        self.work_dir = self._scanner.work_dir
        self.sources: list[str] = list(config.sources)
        self.snapshot: Snapshot = empty(self.work_dir, config.profile)
        self._unversioned: Snapshot | None = None
        self.last: ScanResult | None = None
        self._read_files: tuple[ScanResult | None, frozenset[str]] = (None, frozenset())
        self._group: TaskGroup | None = None
        self.ready = anyio.Event()
        self.watch_error: str | None = None
        self._trigger = anyio.Event()
        self._scan_lock = anyio.Lock()
        self._subscribers: set[MemoryObjectSendStream[Event]] = set()
        self._specs: tuple[ServerSpec, ...] | None = None
        self.trust = trust or TrustStore.default(self.environ)
        self._trust_stamp = self.trust.stamp()
        self._mcp_settle = Debouncer(config.agent.debounce_ms / 1000)
        self.discovered = DiscoveredWatch(config.agent.discovered_watch_cap)
        self.mcp = UpstreamManager(
            config.mcp,
            work_dir=self.work_dir,
            environ=self.environ,
            on_change=self._mcp_changed,
            store=self.trust,
            debounce_ms=config.agent.debounce_ms,
        )

    # --- lifecycle -----------------------------------------------------------------------

    async def run(self) -> None:
        """Scan whenever triggered, until cancelled. Use inside ``async with agent.mcp``."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._follow_mcp)
            await self.ready.wait()
            await self.resync()
            while True:
                await self._trigger.wait()
                self._trigger = anyio.Event()
                await self.resync()

    def set_ready(self) -> None:
        """Idempotent: the first call lets the first scan happen."""
        self.ready.set()

    def trigger(self) -> None:
        """Ask for a re-scan; many triggers before it runs make one scan."""
        if self.ready.is_set():
            self._trigger.set()

    async def resync(self) -> Snapshot:
        """Scan now and publish if anything changed; before ready, the placeholder."""
        if not self.ready.is_set():
            return self.snapshot
        async with self._scan_lock:
            servers = tuple(self.mcp.resources())
            # Version 1 always, so an unchanged tree hits the scanner's cache; ours is set below.
            result = await anyio.to_thread.run_sync(
                lambda: self._scanner.run(version=1, mcp_servers=servers, error=self.watch_error)
            )
            self.last = result
            if result.snapshot != self._unversioned:
                self._unversioned = result.snapshot
                self.snapshot = result.snapshot.with_version(self.snapshot.version + 1)
                self._publish(Event("snapshot", _summary(self.snapshot)))
            specs = tuple(result.servers)
            stamp = self.trust.stamp()  # approvals given elsewhere (agentcontext mcp trust) apply at once
            if specs != self._specs or stamp != self._trust_stamp:
                self._specs, self._trust_stamp = specs, stamp
                self._reload_mcp(specs)
        return self.snapshot

    async def disk_snapshot(self) -> Snapshot:
        """The work dir as it is on disk now, scanned but not published (even before ready)."""
        async with self._scan_lock:
            servers = tuple(self.mcp.resources())
            result = await anyio.to_thread.run_sync(
                lambda: self._scanner.run(version=0, mcp_servers=servers, error=self.watch_error)
            )
        return result.snapshot

    def _reload_mcp(self, specs: tuple[ServerSpec, ...]) -> None:
        """Reconnect in the background: a slow server must not hold up the file snapshot."""
        if self._group is not None:
            self._group.start_soon(self.mcp.reload, specs)

    def applicable(self, paths: list[str]) -> Applicable:
        """The instruction files that apply to ``paths`` after the last scan, with where a change would change the
        answer (the discovered watch; run it in a worker thread).

        Raises:
            UnavailableError: no scan yet, or the lookup ran past ``ondemand.timeout``.
            InvalidRequestError: more paths than ``ondemand.max_paths``.
        """
        result = self.last
        if result is None:
            raise UnavailableError("the workspace has not been scanned yet")
        return self._scanner.applicable(paths, result=result, watch=True)

    def discovered_bases(self) -> list[str]:
        """Where on-demand lookups read (the work dir, the declared sources): all a discovered watch may cover."""
        result = self.last
        if result is None:
            return []
        return [result.layout.work_dir, *(root.path for root in result.layout.source_roots)]

    def forget(self, directories: set[str]) -> None:
        """Folders the watcher saw change: their remembered on-demand misses no longer hold."""
        self._scanner.resolver.forget(directories)

    def watch_dirs(self) -> list[str]:
        """The directories the current snapshot depends on (see :meth:`Scanner.watch_dirs`)."""
        return self._scanner.watch_dirs()

    def read_files(self) -> frozenset[str]:
        """The files the last scan read, whatever their names (a rule, an import, a custom command): an edit in
        place to one changes no folder, so it counts only by its path (computed once a scan)."""
        result = self.last
        if result is None:
            return frozenset()
        if self._read_files[0] is not result:
            paths = frozenset(r.path for r in result.snapshot.resources if r.kind is not Kind.MCP_SERVER)
            self._read_files = (result, paths)
        return self._read_files[1]

    def watched_names(self) -> list[str]:
        """File names whose edits matter, besides files appearing and disappearing."""
        doc = self.config.project_doc
        names = [*doc.candidates, *doc.root_names, self.config.skills.meta_file]
        return names + [os.path.basename(f) for f in self.config.mcp.config_files]

    # --- declared sources ----------------------------------------------------------------

    def allowed_roots(self) -> list[str]:
        home = self.config.home
        return [home, os.path.join(home, ".coder"), os.path.join(home, ".claude"), self.work_dir]

    def add_source(self, path: str) -> str:
        """Declare a source (idempotent); returns its identity.

        Raises:
            SourceError: the path is refused.
        """
        identity = validate_source(path, home=self.config.home, allowed=self.allowed_roots())
        if identity not in self.sources:
            self.sources.append(identity)
            self._reconfigure()
        return identity

    def find_source(self, path: str) -> str:
        """The registered source matching ``path`` (as given, or canonical).

        Raises:
            NotFoundError: no such source.
        """
        text = path.strip()
        if text == "~" or text.startswith("~/"):  # as add_source spells it
            text = self.config.home + text[1:]
        try:
            candidates = {text, os.path.normpath(text), os.path.realpath(text)} if text else set()
        except ValueError:  # NUL, or a lone surrogate: no source has such a name
            candidates = set()
        for source in self.sources:
            if source in candidates or os.path.realpath(source) in candidates:
                return source
        raise NotFoundError(f'No source registered for path "{path}".')

    def remove_source(self, path: str) -> None:
        """Raises: NotFoundError when it was not registered."""
        self.sources.remove(self.find_source(path))
        self._reconfigure()

    def _reconfigure(self) -> None:
        self.config = dataclasses.replace(self.config, sources=tuple(self.sources))
        self._scanner.config = self.config
        self.trigger()

    # --- subscribers -----------------------------------------------------------------------

    @contextlib.contextmanager
    def subscription(self) -> Iterator[MemoryObjectReceiveStream[Event]]:
        """Events while the block runs; a slow subscriber misses events rather than blocking the agent."""
        send, receive = anyio.create_memory_object_stream[Event](64)
        self._subscribers.add(send)
        try:
            yield receive
        finally:
            self._subscribers.discard(send)
            send.close()
            receive.close()

    def _publish(self, event: Event) -> None:
        for send in list(self._subscribers):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                continue
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._subscribers.discard(send)

    # --- MCP ------------------------------------------------------------------------------

    async def approve_mcp(self, name: str, digest: str, tool_set: str = "") -> str:
        """Approve a server as shown (see :meth:`UpstreamManager.approve`); the user's trust store records it."""
        message = await self.mcp.approve(name, digest, tool_set)
        self._trust_stamp = self.trust.stamp()
        return message

    async def follow_trust(self, interval: float = 1.0) -> None:
        """Each interval: notice approvals given elsewhere (``agentcontext mcp trust``: the store's stamp), and
        what a server would run changing under its approval (an edited script of the repository: it goes back
        to pending at once, not at its next start)."""
        while True:
            await anyio.sleep(interval)
            if self.trust.stamp() != self._trust_stamp:
                self.trigger()
            elif self._specs is not None:
                await self.mcp.recheck_launches()

    def _mcp_changed(self) -> None:
        self._mcp_settle.poke()

    async def _follow_mcp(self) -> None:
        """Once the catalog's changes settle: one ``mcp`` event and one rescan for all of them."""
        while True:
            await self._mcp_settle.settled()
            self._publish(Event("mcp", {"generation": self.mcp.generation}))
            self.trigger()


def _summary(snapshot: Snapshot) -> dict[str, Any]:
    return {"version": snapshot.version, "aggregate_hash": snapshot.aggregate_hash, "error": snapshot.error}
