"""The workspace's own MCP servers: approved, connected once, listed, pinned, called, reloaded, closed.

Each server of the work dir's ``.mcp.json`` gets one persistent session (the SDK
``Client``, 2025 handshake era so ``tools/list_changed`` arrives as a notification), in its
own task (:mod:`agentcontext.workspace_mcp.client.connection`); this module manages all of them. Rules
(coder.md 3.2-3.4, plus approval and pinning):

* a server starts only when the user approved what it runs (``mcp.trust = approve``, the
  default; :mod:`agentcontext.workspace_mcp.trust`): its :class:`~agentcontext.workspace_mcp.launch.Launch`, the
  entry as written, the program as resolved, its cwd and the repository files it runs; or
  when the operator set ``mcp.trust = auto``; until then it is ``pending``, with all it would
  run and, after an earlier approval, what changed since. Launches are resolved again at
  every reload, just before every start (a reconnect too: a launch that changed since it
  was judged is not started) and by :meth:`UpstreamManager.recheck_launches` (each second,
  from the agent): an edited program or script of the repository puts its server back to
  pending and stops it;
* its first listing after approval is pinned; a later listing with changed or added tools
  makes it ``changed``: those tools are neither offered nor callable until the user
  approves again (:meth:`UpstreamManager.approve`, or ``agentcontext mcp trust``), and the
  snapshot shows what changed (:mod:`agentcontext.workspace_mcp.client.pinning`);
* servers connect in parallel, at most ``mcp.max_concurrent_connects`` (8) at a time;
  ``mcp.connect_timeout`` (30 s) bounds connect + initialize + the first tool list, and
  ``mcp.call_timeout`` (60 s) each call;
* a failing server never blocks or breaks the others: it is reported with its error and
  the tail of its stderr; "connected with zero tools" is a different state from "failed";
* stdio servers start by the real path of their program, in the work dir (else the home
  dir), with a clean environment (:func:`agentcontext.workspace_mcp.launch.child_environment`: an
  allowlist and ``mcp.inherit_env``, never ``AGENTCONTEXT_*``) plus what the entry declares,
  in their own process group, which is killed as a whole on reload and shutdown
  (:mod:`agentcontext.workspace_mcp.client.stdio_transport`);
* no message from a server is read whole past ``mcp.max_output_bytes`` + 64 KiB
  (:mod:`agentcontext.workspace_mcp.client.oversize`), and tool output over ``mcp.max_output_bytes`` is
  cut with a visible marker (:mod:`agentcontext.workspace_mcp.client.results`);
* a reload is differential: unchanged servers are kept (their pins checked again),
  changed ones reconnected (a failed reconnect keeps the old connection), removed ones
  closed;
* a server whose session ends (its process exits, its output or connection closes) is failed at once, with
  how it ended, not at the next call; a failed server is started again by itself after a backoff
  (:class:`Backoff`: 1 s after its first failure, twice as long after each that follows, at most 60 s; reset
  once it stayed connected 60 s), its status saying when; only while it is still declared and still approved
  as it would run now (judged again just before; a revoked or edited one is judged again instead, and goes
  back to pending); ``refresh`` reconnects failed servers at once;
* a server's ``tools/list_changed`` notices are debounced like file changes
  (``agent.debounce_ms``, :mod:`agentcontext.debounce`): it is re-listed once they have
  been quiet that long (every 20 such periods while they never are), with at most one
  ``tools/list`` in flight and one more owed, so a flood of thousands a second costs a few
  listings and no memory per notice, and a change announced during a listing is picked up
  by the next. Resources and prompts of upstream servers are not listed, so their
  notices are ignored. The rescans and pushes that follow catalog changes are debounced
  the same way (:mod:`agentcontext.agent.context`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from agentcontext.errors import ConflictError, NotFoundError
from agentcontext.resource import MASKED_NOTE, Resource, Tool
from agentcontext.settings.config import McpSettings
from agentcontext.settings.declared import BY_KEY
from agentcontext.workspace_mcp.approvals import Standing, standing
from agentcontext.workspace_mcp.client.pinning import NOTHING
from agentcontext.workspace_mcp.client.status import SERVING, ServerStatus, UpstreamError, approval_of
from agentcontext.workspace_mcp.config import ServerSpec
from agentcontext.workspace_mcp.launch import FileHashes, Launch, approve_command, resolve
from agentcontext.workspace_mcp.tool_names import PendingApproval, ToolNames, UnknownServer, assign
from agentcontext.workspace_mcp.tool_pins import Definition, as_pins
from agentcontext.workspace_mcp.trust import TrustStore

if TYPE_CHECKING:  # the session, and the MCP SDK with it, is imported when a first server starts (``_session_class``)
    from agentcontext.workspace_mcp.client.connection import Upstream
    from agentcontext.workspace_mcp.client.results import CallOutcome

__all__ = ["RESTARTING", "Backoff", "ServerStatus", "UpstreamError", "UpstreamManager"]

RESTARTING = "it is started again by itself, waiting longer after each failure in a row (at most 60 s)"


@dataclass(frozen=True, slots=True)
class Backoff:
    """When a failed server is started again: ``first`` seconds after its first failure, twice as long after each
    failure in a row, at most ``cap``; one that stayed connected ``stable`` seconds starts over at ``first``."""

    first: float = 1.0
    cap: float = 60.0
    stable: float = 60.0

    def delay(self, failures: int) -> float:
        """The wait after ``failures`` (>= 1) failures in a row."""
        return min(self.cap, self.first * 2.0 ** min(max(failures - 1, 0), 32))


@dataclass(eq=False)
class _Restart:
    """A server's failures in a row (of one launch) and the wait for its next start, when one is due."""

    digest: str
    failures: int = 0
    counted: Upstream | None = None  # the failed session the last failure counted
    delay: float = 0.0
    at: str = ""  # when the next start is due, as the status says it ("" when none waits)
    scope: anyio.CancelScope | None = None  # the wait's and the start's


@dataclass
class _Entry:
    upstream: Upstream
    previous: Upstream | None = None  # kept serving while a changed config reconnects
    extra_error: str | None = None


class UpstreamManager:
    """All the workspace's MCP servers. Use as ``async with UpstreamManager(...) as manager``.

    ``store`` holds the user's approvals and pinned tools (default: the user's own, from
    ``environ``); under ``mcp.trust = approve`` a server starts only once it approves the entry.
    ``debounce_ms`` (the agent's ``agent.debounce_ms``) paces the re-lists that notices ask for. A failed server
    is started again after ``backoff`` unless ``restarts`` is false (a one-off listing: the audit's).
    """

    def __init__(
        self,
        settings: McpSettings,
        *,
        work_dir: str,
        environ: Mapping[str, str] | None = None,
        on_change: Callable[[], None] = lambda: None,
        store: TrustStore | None = None,
        debounce_ms: int = BY_KEY["agent.debounce_ms"].default,
        backoff: Backoff | None = None,
        restarts: bool = True,
    ) -> None:
        self.settings = settings
        self.debounce = debounce_ms / 1000
        self.work_dir = work_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.store = store or TrustStore.default(self.environ)
        self._on_change = on_change
        self._entries: dict[str, _Entry] = {}
        self._pending: dict[str, Standing] = {}  # waiting for approval
        self._wanted: tuple[ServerSpec, ...] = ()
        self._resolved: dict[str, str] = {}  # each wanted server's digest when it was last judged
        self._hashes = FileHashes()
        self._limiter = anyio.Semaphore(settings.max_concurrent_connects)
        self._task_group: TaskGroup | None = None
        self._lock = anyio.Lock()
        self._names = assign(())
        self.generation = 0
        self.backoff = backoff or Backoff()
        self._restarts_on = restarts
        self._restarts: dict[str, _Restart] = {}
        self._restart_scopes: set[anyio.CancelScope] = set()  # at most one a server
        self._closed = False

    async def __aenter__(self) -> UpstreamManager:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closed = True
        for scope in list(self._restart_scopes):
            scope.cancel()
        for entry in list(self._entries.values()):
            await entry.upstream.close()
            if entry.previous is not None:
                await entry.previous.close()
        self._entries.clear()
        if self._task_group is not None:
            await self._task_group.__aexit__(None, None, None)

    def _changed(self) -> None:
        self.generation += 1
        self._schedule_restarts()
        self._names = assign((s.name, t.name) for s in self.statuses() if s.state in SERVING for t in s.tools)
        self._on_change()

    def launch(self, spec: ServerSpec) -> Launch:
        """What ``spec`` would run from this work dir (file I/O: in a worker thread where it matters)."""
        return resolve(
            spec, work_dir=self.work_dir, environ=self.environ, inherit=self.settings.inherit_env, hashes=self._hashes
        )

    def _judge(self, specs: Sequence[ServerSpec]) -> dict[str, tuple[Launch, Standing | None]]:
        """Each server's launch, and its standing when it waits for approval (with what changed since the last)."""
        out: dict[str, tuple[Launch, Standing | None]] = {}
        for spec in specs:
            launch = self.launch(spec)
            waiting = None if self.settings.trust == "auto" else standing(launch, self.store)
            out[spec.name] = (launch, waiting if waiting is not None and waiting.state == "pending" else None)
        return out

    async def reload(self, specs: Sequence[ServerSpec]) -> None:
        """Make the connections match ``specs`` (differential); returns once all have settled."""
        async with self._lock:
            self._wanted = tuple(specs)
            judged = await anyio.to_thread.run_sync(self._judge, self._wanted)
            self._resolved = {name: launch.digest for name, (launch, _) in judged.items()}
            self._pending = {n: pending for n, (_, pending) in judged.items() if pending is not None}
            for name in [n for n in self._restarts if n not in judged or n in self._pending]:
                self._cancel_restart(name)
                del self._restarts[name]
            for name in [n for n in self._entries if n not in judged or n in self._pending]:
                await self._entries.pop(name).upstream.close()
            starting: list[Upstream] = []
            session: type[Upstream] | None = None
            for name, (launch, _) in judged.items():
                if name in self._pending:
                    continue
                entry = self._entries.get(name)
                running = entry.upstream.launch if entry is not None else None
                if entry is not None and running == launch and running.digest == launch.digest:
                    await entry.upstream.recheck()
                    continue
                self._cancel_restart(name)
                session = session or await _session_class()
                upstream = self._start(session, launch)
                starting.append(upstream)
                self._entries[name] = _Entry(upstream, previous=entry.upstream if entry else None)
            await self._settle(starting)
            self._changed()

    async def recheck_launches(self) -> bool:
        """Resolve every server again and reload when what one would run changed (an edited program or script,
        a new program earlier on its ``PATH``); whether it did."""
        wanted = self._wanted
        now = await anyio.to_thread.run_sync(lambda: {s.name: self.launch(s).digest for s in wanted})
        if wanted is not self._wanted or now == self._resolved:
            return False
        await self.reload(wanted)
        return True

    def _start(self, session: type[Upstream], launch: Launch) -> Upstream:
        if self._task_group is None:
            raise RuntimeError("UpstreamManager used outside 'async with'")
        upstream = session(
            launch,
            self.settings,
            store=self.store,
            limiter=self._limiter,
            on_change=self._changed,
            debounce=self.debounce,
            resolve_again=self.launch,
        )
        self._task_group.start_soon(upstream.run)
        return upstream

    def _schedule_restarts(self) -> None:
        """Give each newly failed server its wait before it is started again (:meth:`_restart`)."""
        if not self._restarts_on or self._closed or self._task_group is None:
            return
        for name, entry in self._entries.items():
            upstream = entry.upstream
            if upstream.state != "failed" or entry.previous is not None:  # a previous one: _settle decides
                continue
            restart = self._restarts.get(name)
            if restart is None or restart.digest != upstream.launch.digest:
                restart = self._restarts[name] = _Restart(upstream.launch.digest)
            if restart.scope is not None or restart.counted is upstream:
                continue
            now = time.monotonic()
            if upstream.connected_at is not None and now - upstream.connected_at >= self.backoff.stable:
                restart.failures = 0
            restart.counted = upstream
            restart.failures += 1
            restart.delay = self.backoff.delay(restart.failures)
            restart.at = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() + restart.delay))
            restart.scope = scope = anyio.CancelScope()
            self._restart_scopes.add(scope)
            self._task_group.start_soon(self._restart, name, upstream, restart, scope)

    def _cancel_restart(self, name: str) -> None:
        restart = self._restarts.get(name)
        if restart is not None and restart.scope is not None:
            restart.scope.cancel()
            restart.scope, restart.at = None, ""

    async def _restart(self, name: str, failed: Upstream, restart: _Restart, scope: anyio.CancelScope) -> None:
        """After its wait, start ``failed`` again if it is still the server's session, still failed, and what it
        would run now is still what was approved; when that changed (a revoked approval, an edited script), judge
        every server again instead (it goes back to pending). Cancelled by a reload, a refresh or the end."""
        try:
            with scope:
                await anyio.sleep(restart.delay)
                restart.at = ""
                started: Upstream | None = None
                judge_again = False
                async with self._lock:
                    entry = self._entries.get(name)
                    if self._closed or entry is None or entry.upstream is not failed or failed.state != "failed":
                        return
                    judged = await anyio.to_thread.run_sync(self._judge, [failed.spec])
                    launch, pending = judged[name]
                    if pending is not None or launch.digest != failed.launch.digest:
                        judge_again = True
                    else:
                        session = await _session_class()  # closing meanwhile cancelled this scope
                        started = self._start(session, launch)
                        self._entries[name] = _Entry(started)
                if restart.scope is scope:
                    restart.scope = None  # from here, a failure of the new session gets its own wait
                if judge_again:
                    await self.reload(self._wanted)
                elif started is not None:
                    await self._settle([started])
        finally:
            self._restart_scopes.discard(scope)
            if restart.scope is scope:
                restart.scope, restart.at = None, ""
            if not scope.cancel_called and not self._closed:
                self._changed()  # says how it went, and gives a new failure its wait

    async def _settle(self, starting: Sequence[Upstream]) -> None:
        """Wait for new connections; on failure, a previous connection of the server stays on."""

        async def one(upstream: Upstream) -> None:
            with anyio.move_on_after(self.settings.connect_timeout):
                await upstream.settled.wait()
            if not upstream.settled.is_set():
                upstream.fail(f"timed out after {self.settings.connect_timeout:g}s connecting")
                await upstream.settled.wait()
            entry = self._entries.get(upstream.spec.name)
            if entry is None or entry.upstream is not upstream or entry.previous is None:
                return
            if upstream.state == "connected":
                await entry.previous.close()
                entry.previous = None
            else:  # keep serving with the old configuration
                entry.extra_error = f"reconnect with the new configuration failed: {upstream.status().error}"
                self._entries[upstream.spec.name] = _Entry(entry.previous, None, entry.extra_error)

        async with anyio.create_task_group() as group:
            for upstream in starting:
                group.start_soon(one, upstream)

    def statuses(self) -> list[ServerStatus]:
        """One status per declared server, by name."""
        out: list[ServerStatus] = []
        for name, entry in self._entries.items():
            status = entry.upstream.status()
            restart = self._restarts.get(name)
            if status.state == "failed" and restart is not None and restart.at:
                # the same words at every failure: the error is part of the snapshot, and a crash loop must not
                # make a new snapshot (and every chat out of date) at each try
                status = dataclasses.replace(status, error=f"{status.error or 'failed'}; {RESTARTING}")
            if entry.extra_error and status.state in SERVING:
                status = ServerStatus(
                    status.name,
                    status.state,
                    status.transport,
                    status.tools,
                    entry.extra_error,
                    warnings=status.warnings,
                    approval=status.approval,
                    changes=status.changes,
                )
            unnamed = [tool for server, tool in self._names.unnamed if server == status.name]
            if unnamed:
                said = (
                    f"{len(unnamed)} tools not offered ({', '.join(unnamed)[:200]}): cut to 64 characters, their"
                    " names meet another of its tools' at every hash length"
                )
                status = dataclasses.replace(status, warnings=(*status.warnings, said))
            out.append(status)
        for name, pending in self._pending.items():
            launch = pending.launch
            approval = approval_of(launch, self.settings.trust, "pending", NOTHING, pending.masked_since)
            reason = self._pending_reason(name, pending)
            out.append(ServerStatus(name, "pending", launch.spec.transport, error=reason, approval=approval))
        return sorted(out, key=lambda s: s.name)

    def pending(self) -> list[tuple[str, str]]:
        """``(server, reason)`` for each server waiting for approval: the reason names the command that gives it."""
        return [(name, self._pending_reason(name, pending)) for name, pending in sorted(self._pending.items())]

    def _pending_reason(self, name: str, pending: Standing) -> str:
        changed = "what it runs changed since you approved it; " if pending.since else ""
        command = approve_command(self.work_dir, [pending.launch])
        if pending.launch.runs(masked=True).masked:  # the dashboard shows it masked and offers no approval
            return f'pending approval: {changed}approve "{name}" on this machine, which shows it whole: run `{command}`'
        return f'pending approval: {changed}approve "{name}" in the dashboard or run `{command}`'

    def resources(self) -> list[Resource]:
        return [status.resource() for status in self.statuses()]

    def listings(self) -> dict[str, tuple[Definition, ...]]:
        """Each connected server's last tool listing, as the server sent it (before any cleaning)."""
        return {name: e.upstream.listed for name, e in self._entries.items() if e.upstream.state == "connected"}

    @property
    def names(self) -> ToolNames:
        return self._names

    def tools(self) -> list[tuple[str, str, Tool]]:
        """``(exposed name, server, tool)`` for every offered tool of every serving server."""
        named = (
            (self._names.offered(s.name, t.name), s.name, t)
            for s in self.statuses()
            if s.state in SERVING
            for t in s.tools
        )
        return sorted(
            ((exposed, server, tool) for exposed, server, tool in named if exposed is not None),
            key=lambda item: item[0],
        )

    async def refresh(self) -> None:
        """Re-list every connected server's tools and reconnect failed servers."""
        failed = [e.upstream.launch for e in self._entries.values() if e.upstream.state == "failed"]
        for launch in failed:
            self._cancel_restart(launch.name)
        async with anyio.create_task_group() as group:
            for entry in self._entries.values():
                if entry.upstream.state == "connected":
                    group.start_soon(entry.upstream.refresh_tools)
        if failed:
            session = await _session_class()
            async with self._lock:
                starting = [self._start(session, launch) for launch in failed]
                for upstream in starting:
                    self._entries[upstream.spec.name] = _Entry(upstream)
                await self._settle(starting)
        self._changed()

    async def approve(self, name: str, digest: str, tool_set: str = "") -> str:
        """Approve a pending server (its entry ``digest``) or a changed one's listing (``tool_set``), as shown.

        Raises:
            NotFoundError: no such server.
            ConflictError: the entry or the listing differs from what was shown (``digest``, ``tool_set``),
                or there is nothing to approve.
        """
        pending = self._pending.get(name)
        if pending is not None:
            # resolved again now: a program or script edited since the page was shown is not approved
            launch = await anyio.to_thread.run_sync(self.launch, pending.launch.spec)
            if launch.digest != digest or pending.launch.digest != digest:
                raise ConflictError(f'what "{name}" runs changed since it was shown: look at it again')
            if launch.runs(masked=True).masked:  # what was shown (a snapshot's view) hid part of what would run
                raise ConflictError(f'"{name}" was shown with parts masked: {MASKED_NOTE}')
            await anyio.to_thread.run_sync(self.store.approve, [launch])
            await self.reload(self._wanted)
            return f'approved "{name}" ({digest[:12]}): starting it'
        entry = self._entries.get(name)
        if entry is None:
            raise NotFoundError(f'no MCP server named "{name}" in this workspace')
        upstream = entry.upstream
        if upstream.launch.digest != digest:
            raise ConflictError(f'what "{name}" runs changed since it was shown: look at it again')
        if not upstream.judged.changes:
            raise ConflictError(f'"{name}" has nothing waiting for approval')
        if upstream.judged.tool_set != tool_set:
            raise ConflictError(f'the tools of "{name}" changed again since they were shown: look at them again')
        pins = as_pins(upstream.listed)
        await anyio.to_thread.run_sync(lambda: self.store.approve_tools(upstream.launch, pins, approve=True))
        await upstream.recheck()
        self._changed()
        return f'approved the current tools of "{name}"'

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call a tool by its exposed name.

        Raises:
            InvalidToolName, UnknownServer: the name does not route (400 / 404 over HTTP).
            PendingApproval: its server waits for the user's approval (409 over HTTP).
            UpstreamError: the call itself failed, or the tool is withheld (502 over HTTP).
        """
        server, tool = self._names.route(name, [*self._entries, *self._pending])
        pending = self._pending.get(server)
        if pending is not None:
            raise PendingApproval(f'MCP server "{server}" is {self._pending_reason(server, pending)}')
        entry = self._entries.get(server)
        if entry is None:
            raise UnknownServer(f'unknown MCP server: "{server}"')
        return await entry.upstream.call(tool, arguments)


async def _session_class() -> type[Upstream]:
    """The session's class. Its first import brings in the MCP SDK (about 0.6 s of CPU): in a worker thread, so
    the agent's loop keeps serving meanwhile, and only once a server is to start."""
    return await anyio.to_thread.run_sync(_import_session)


def _import_session() -> type[Upstream]:
    from agentcontext.workspace_mcp.client.connection import Upstream

    return Upstream
