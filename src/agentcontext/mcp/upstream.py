"""The workspace's own MCP servers: approved, connected once, listed, pinned, called, reloaded, closed.

Each server of the work dir's ``.mcp.json`` gets one persistent session (the SDK
``Client``, 2025 handshake era so ``tools/list_changed`` arrives as a notification), in its
own task. Rules (coder.md 3.2-3.4, plus approval and pinning):

* a server starts only when the user approved its exact entry (``mcp.trust = approve``,
  the default; :mod:`agentcontext.trust`) or the operator set ``mcp.trust = auto``; until
  then it is ``pending``, with the command it would run;
* its first listing after approval is pinned; a later listing with changed or added tools
  makes it ``changed``: those tools are neither offered nor callable until the user
  approves again (:meth:`UpstreamManager.approve`, or ``agentcontext mcp trust``), and the
  snapshot shows what changed (:mod:`agentcontext.mcp.pinning`);
* servers connect in parallel, at most ``mcp.max_concurrent_connects`` (8) at a time;
  ``mcp.connect_timeout`` (30 s) bounds connect + initialize + the first tool list, and
  ``mcp.call_timeout`` (60 s) each call;
* a failing server never blocks or breaks the others: it is reported with its error and
  the tail of its stderr; "connected with zero tools" is a different state from "failed";
* stdio servers run in the work dir (else the home dir), with the agent's environment
  minus its own secrets plus what the entry declares, in their own process group, which
  is killed as a whole on reload and shutdown (:mod:`agentcontext.mcp.stdio_transport`);
* no message from a server is read whole past ``mcp.max_output_bytes`` + 64 KiB
  (:mod:`agentcontext.mcp.oversize`), and tool output over ``mcp.max_output_bytes`` is
  cut with a visible marker (:mod:`agentcontext.mcp.results`);
* a reload is differential: unchanged servers are kept (their pins checked again),
  changed ones reconnected (a failed reconnect keeps the old connection), removed ones
  closed;
* a call that finds the connection gone (the server exited) turns the server failed;
  ``refresh`` reconnects failed servers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx2
import mcp.types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agentcontext import __version__
from agentcontext.config import McpSettings
from agentcontext.errors import AgentContextError, ConflictError, NotFoundError
from agentcontext.mcp.http_cap import CappedTransport, sse_client_factory
from agentcontext.mcp.oversize import message_cap
from agentcontext.mcp.pinning import NOTHING, Judged, judge, raw_definition
from agentcontext.mcp.results import CallOutcome, convert_result, input_schema
from agentcontext.mcp.stdio_transport import StdioCommand, StdioTransport
from agentcontext.mcp_config import ServerSpec
from agentcontext.redact import redact, secret_values
from agentcontext.resource import Kind, McpApproval, Resource, Scope, Status, Tool, ToolChange
from agentcontext.tool_names import ToolNames, UnknownServer, assign
from agentcontext.tool_pins import Definition, as_pins
from agentcontext.trust import TrustStore

__all__ = [
    "CallOutcome",
    "ServerStatus",
    "UpstreamError",
    "UpstreamManager",
    "child_environment",
    "convert_result",
    "input_schema",
]

State = Literal["connecting", "connected", "changed", "failed", "pending"]
_SECRET_PREFIXES = ("AGENTCONTEXT_", "CODER_AGENT_EXP_")
_SSE_EVENT_LIMIT = 1024 * 1024 - 4096  # below the SDK's own 1 MiB SSE limit, so our cut comes first
MAX_REPORTED_CHANGES = 32  # tool diffs in one snapshot resource (each at most 4,096 characters)


class UpstreamError(AgentContextError):
    """A call to a workspace MCP server failed (timeout, server error, connection lost, tool withheld)."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the catalog reports for one declared server."""

    name: str
    state: State
    transport: str
    tools: tuple[Tool, ...] = ()
    error: str | None = None
    stderr_tail: str = ""
    warnings: tuple[str, ...] = ()
    approval: McpApproval | None = None
    changes: tuple[ToolChange, ...] = ()  # all of them; the approval reports the first MAX_REPORTED_CHANGES

    def resource(self) -> Resource:
        """The ``mcp_server`` snapshot resource (never drift-hashed)."""
        digest = hashlib.sha256(self.name.encode())
        for tool in self.tools:
            digest.update(json.dumps(tool.to_dict(), sort_keys=True).encode())
        if self.error:
            digest.update(b"unreadable\0" + self.error.encode())
        if self.approval is not None:
            digest.update(json.dumps(self.approval.to_dict(), sort_keys=True).encode())
        serving = self.state in ("connected", "changed")
        status = Status.OK if serving else Status.DISABLED if self.state == "pending" else Status.UNREADABLE
        warnings = self.warnings
        if serving and not self.tools and not (self.approval and self.approval.changes):
            warnings = ("connected; the server offers no tools", *warnings)
        if self.state == "changed":
            warnings = (_changed_warning(self.name, self.changes), *warnings)
        if serving and self.error:  # a failed reconnect or re-list: still serving
            warnings += (self.error,)
        if self.stderr_tail and self.state == "failed":
            warnings = (f"stderr (last lines): {self.stderr_tail}",)
        return Resource(
            Kind.MCP_SERVER,
            self.name,
            Scope.PROJECT,
            status,
            content_hash=digest.hexdigest(),
            error=self.error if status is not Status.OK else None,
            warnings=warnings,
            name=self.name,
            description=f"{self.transport} MCP server",
            tools=self.tools if status is Status.OK else (),
            approval=self.approval,
        )


def _changed_warning(name: str, changes: Sequence[ToolChange]) -> str:
    listed = ", ".join(f"{c.tool[:64]} ({c.change})" for c in changes[:10])
    more = f" and {len(changes) - 10} more" if len(changes) > 10 else ""
    return (
        f"tools changed since they were approved: {listed}{more}; changed and added tools are not offered until you"
        f" approve them again (the dashboard, or agentcontext mcp trust {name})"
    )


def child_environment(environ: Mapping[str, str], declared: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The agent's environment without its own secrets, plus what the entry declares."""
    env = {k: v for k, v in environ.items() if not k.startswith(_SECRET_PREFIXES)}
    env.update(declared)
    return env


class Upstream:
    """One workspace MCP server and its persistent session."""

    def __init__(
        self,
        spec: ServerSpec,
        settings: McpSettings,
        *,
        work_dir: str,
        environ: Mapping[str, str],
        store: TrustStore,
        limiter: anyio.Semaphore,
        on_change: Callable[[], None],
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.work_dir = work_dir
        self.environ = environ
        self.store = store
        self._limiter = limiter
        self._on_change = on_change
        self.state: State = "connecting"
        self.error: str | None = None
        self.listed: tuple[Definition, ...] = ()  # the last listing, as the server sent it
        self.judged: Judged = NOTHING
        self.client: Client | None = None
        self.settled = anyio.Event()
        self._closing = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stdio: StdioTransport | None = None
        self._task_group: TaskGroup | None = None
        self._secrets = secret_values([v for _, v in (*spec.env, *spec.headers)], spec.url)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self.judged.tools

    def status(self) -> ServerStatus:
        """What to report, with the entry's secrets masked (a server may print its token; an error may quote a URL)."""
        tail = redact(self._stdio.stderr_tail, self._secrets) if self._stdio else ""
        error = redact(self.error, self._secrets) if self.error else self.error
        state: State = "changed" if self.state == "connected" and self.judged.changes else self.state
        approval = approval_of(self.spec, self.settings.trust, state, self.judged)
        changes = self.judged.changes if state == "changed" else ()
        return ServerStatus(
            self.spec.name, state, self.spec.transport, self.tools, error, tail, self.judged.warnings, approval, changes
        )

    async def run(self) -> None:
        """The session's task: connect, list, serve calls until closed; failures are recorded."""
        with anyio.CancelScope() as scope:
            self._scope = scope
            try:
                async with AsyncExitStack() as stack:
                    await self._limiter.acquire()
                    try:
                        client = await stack.enter_async_context(self._client(stack))
                        self._task_group = await stack.enter_async_context(anyio.create_task_group())
                        await self._take(await self._list_tools(client))
                    finally:
                        self._limiter.release()
                    self.client = client
                    self._set("connected", None)
                    await self._closing.wait()
                    self._task_group.cancel_scope.cancel()
            except Exception as exc:  # a failing server is reported, never raised
                self._set("failed", _describe(exc))
            finally:
                self.client = None
        if not self.settled.is_set():  # cancelled (timed out, closed) before it settled
            self._set("failed", self.error or "connection cancelled")

    def _client(self, stack: AsyncExitStack) -> Client:
        spec, settings = self.spec, self.settings
        options: dict[str, Any] = {
            "mode": "legacy",
            # no session-wide read timeout: connect + initialize + the first list are bounded by
            # connect_timeout (UpstreamManager._settle), each call by call_timeout, a re-list by fail_after
            "read_timeout_seconds": None,
            "message_handler": self._on_message,
            "client_info": types.Implementation(name="agentcontext-agent", version=__version__),
        }
        cap = message_cap(settings.max_output_bytes)
        if spec.transport == "stdio":
            cwd = spec.cwd if spec.cwd and os.path.isabs(spec.cwd) else os.path.join(self.work_dir, spec.cwd or "")
            if not os.path.isdir(cwd):
                cwd = self.environ.get("HOME") or os.path.expanduser("~")
            command = StdioCommand(spec.command, spec.args, child_environment(self.environ, spec.env), cwd)
            self._stdio = StdioTransport(command, max_message_bytes=cap, output_budget=settings.max_output_bytes)
            return Client(self._stdio, **options)
        headers = dict(spec.headers)
        if spec.transport == "sse":
            capped = CappedTransport(min(cap, _SSE_EVENT_LIMIT), settings.max_output_bytes)
            factory: Any = sse_client_factory(capped)
            transport = sse_client(
                spec.url, headers=headers, timeout=settings.connect_timeout, httpx_client_factory=factory
            )
            return Client(transport, **options)
        capped = CappedTransport(cap, settings.max_output_bytes)
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(settings.call_timeout), transport=capped)
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(spec.url, http_client=http, max_sse_event_size=cap + 4096), **options)

    async def _list_tools(self, client: Client) -> tuple[Definition, ...]:
        found: list[Definition] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            found += [raw_definition(t) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tuple(sorted(found, key=lambda t: str(t["name"])))

    async def _take(self, listed: tuple[Definition, ...]) -> None:
        """Judge a listing against the pins (file I/O, in a thread)."""
        self.listed = listed
        self.judged = await anyio.to_thread.run_sync(judge, self.spec, self.store, listed)

    async def recheck(self) -> None:
        """Judge the last listing again (the approvals may have changed)."""
        if self.state == "connected":
            before = self.judged
            await self._take(self.listed)
            if self.judged != before:
                self._on_change()

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._task_group is not None:
            self._task_group.start_soon(self.refresh_tools)

    async def refresh_tools(self) -> None:
        """List the tools again; a failure keeps the previous list and records the error."""
        client = self.client
        if client is None:
            return
        try:
            with anyio.fail_after(self.settings.connect_timeout):
                listed = await self._list_tools(client)
        except Exception as exc:
            self.error = f"tools/list failed: {_describe(exc)}"
            self._on_change()
            return
        before = self.judged
        await self._take(listed)
        if self.judged != before or self.error:
            self.error = None
            self._on_change()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        """Call ``tool``.

        Raises:
            UpstreamError: not connected, withheld since its definition changed, timed out, or the call failed
                at the protocol level.
        """
        client = self.client
        if client is None:
            raise UpstreamError(f'MCP server "{self.spec.name}" is not connected: {self.error or self.state}')
        if tool in self.judged.withheld:
            raise UpstreamError(
                f'tool "{tool}" of MCP server "{self.spec.name}" changed since it was approved: it cannot be called'
                " until you approve the server's tools again (the dashboard, or agentcontext mcp trust)"
            )
        if tool not in {t.name for t in self.judged.tools}:  # never listed (or not offered): not passed on
            raise UpstreamError(f'MCP server "{self.spec.name}" offers no tool "{tool}"')
        try:
            return await client.call_tool(tool, dict(arguments), read_timeout_seconds=self.settings.call_timeout)
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                self._lost(exc.error.message)
                raise UpstreamError(f'MCP server "{self.spec.name}" connection lost: {exc.error.message}') from None
            raise UpstreamError(f'MCP server "{self.spec.name}": {exc.error.message}') from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
            self._lost(_describe(exc))
            raise UpstreamError(f'MCP server "{self.spec.name}" connection lost: {_describe(exc)}') from None

    def _lost(self, reason: str) -> None:
        """The session is gone (the server exited or hung up): report it failed and wind the task down."""
        if self.state == "connected":
            self.client = None
            self._set("failed", f"connection lost: {reason}")
        self._closing.set()

    def _set(self, state: State, error: str | None) -> None:
        self.state, self.error = state, error
        self.settled.set()
        self._on_change()

    def fail(self, error: str) -> None:
        """Give up on a server that did not settle in time."""
        self.error = error
        if self._scope is not None:
            self._scope.cancel()

    async def close(self) -> None:
        self._closing.set()
        if self._scope is not None and self.state != "connected":
            self._scope.cancel()


def approval_of(spec: ServerSpec, trust: str, state: State, judged: Judged) -> McpApproval:
    """The approval part of a server's status: what it runs, and where it stands."""
    if state == "pending":
        label = "pending"
    elif state == "changed":
        label = "changed"
    else:
        label = "auto" if trust == "auto" else "approved"
    changes = judged.changes[:MAX_REPORTED_CHANGES] if state == "changed" else ()
    tool_set = judged.tool_set if state == "changed" else ""
    return McpApproval(label, spec.config_path, spec.digest, spec.shown, changes, tool_set)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return _describe(inner[0])
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class _Entry:
    upstream: Upstream
    previous: Upstream | None = None  # kept serving while a changed config reconnects
    extra_error: str | None = None


class UpstreamManager:
    """All the workspace's MCP servers. Use as ``async with UpstreamManager(...) as manager``.

    ``store`` holds the user's approvals and pinned tools (default: the user's own, from
    ``environ``); under ``mcp.trust = approve`` a server starts only once it approves the entry.
    """

    def __init__(
        self,
        settings: McpSettings,
        *,
        work_dir: str,
        environ: Mapping[str, str] | None = None,
        on_change: Callable[[], None] = lambda: None,
        store: TrustStore | None = None,
    ) -> None:
        self.settings = settings
        self.work_dir = work_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.store = store or TrustStore.default(self.environ)
        self._on_change = on_change
        self._entries: dict[str, _Entry] = {}
        self._pending: dict[str, ServerSpec] = {}
        self._wanted: tuple[ServerSpec, ...] = ()
        self._limiter = anyio.Semaphore(settings.max_concurrent_connects)
        self._task_group: TaskGroup | None = None
        self._lock = anyio.Lock()
        self._names = assign(())
        self.generation = 0

    async def __aenter__(self) -> UpstreamManager:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for entry in list(self._entries.values()):
            await entry.upstream.close()
            if entry.previous is not None:
                await entry.previous.close()
        self._entries.clear()
        if self._task_group is not None:
            await self._task_group.__aexit__(None, None, None)

    def _changed(self) -> None:
        self.generation += 1
        self._names = assign((s.name, t.name) for s in self.statuses() if s.state in _SERVING for t in s.tools)
        self._on_change()

    def _allowed(self, spec: ServerSpec) -> bool:
        return self.settings.trust == "auto" or self.store.approved(spec)

    async def reload(self, specs: Sequence[ServerSpec]) -> None:
        """Make the connections match ``specs`` (differential); returns once all have settled."""
        async with self._lock:
            self._wanted = tuple(specs)
            wanted = {spec.name: spec for spec in specs}
            allowed = await anyio.to_thread.run_sync(lambda: {n: self._allowed(s) for n, s in wanted.items()})
            self._pending = {n: s for n, s in wanted.items() if not allowed[n]}
            for name in [n for n in self._entries if n not in wanted or n in self._pending]:
                await self._entries.pop(name).upstream.close()
            starting: list[Upstream] = []
            for name, spec in wanted.items():
                if name in self._pending:
                    continue
                entry = self._entries.get(name)
                if entry is not None and entry.upstream.spec == spec and entry.upstream.spec.digest == spec.digest:
                    await entry.upstream.recheck()
                    continue
                upstream = self._start(spec)
                starting.append(upstream)
                self._entries[name] = _Entry(upstream, previous=entry.upstream if entry else None)
            await self._settle(starting)
            self._changed()

    def _start(self, spec: ServerSpec) -> Upstream:
        if self._task_group is None:
            raise RuntimeError("UpstreamManager used outside 'async with'")
        upstream = Upstream(
            spec,
            self.settings,
            work_dir=self.work_dir,
            environ=self.environ,
            store=self.store,
            limiter=self._limiter,
            on_change=self._changed,
        )
        self._task_group.start_soon(upstream.run)
        return upstream

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
        for entry in self._entries.values():
            status = entry.upstream.status()
            if entry.extra_error and status.state in _SERVING:
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
            out.append(status)
        for name, spec in self._pending.items():
            reason = (
                f'not approved: approve "{name}" in the dashboard or run'
                f" `agentcontext mcp trust --work-dir {self.work_dir} {name}` (entry {spec.digest[:12]})"
            )
            approval = approval_of(spec, self.settings.trust, "pending", NOTHING)
            out.append(ServerStatus(name, "pending", spec.transport, error=reason, approval=approval))
        return sorted(out, key=lambda s: s.name)

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
        out = [
            (self._names.exposed(s.name, t.name), s.name, t)
            for s in self.statuses()
            if s.state in _SERVING
            for t in s.tools
        ]
        return sorted(out, key=lambda item: item[0])

    async def refresh(self) -> None:
        """Re-list every connected server's tools and reconnect failed servers."""
        failed = [e.upstream.spec for e in self._entries.values() if e.upstream.state == "failed"]
        async with anyio.create_task_group() as group:
            for entry in self._entries.values():
                if entry.upstream.state == "connected":
                    group.start_soon(entry.upstream.refresh_tools)
        if failed:
            async with self._lock:
                starting = [self._start(spec) for spec in failed]
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
        spec = self._pending.get(name)
        if spec is not None:
            if spec.digest != digest:
                raise ConflictError(f'the entry of "{name}" changed since it was shown: look at it again')
            await anyio.to_thread.run_sync(self.store.approve, [spec])
            await self.reload(self._wanted)
            return f'approved "{name}" ({digest[:12]}): starting it'
        entry = self._entries.get(name)
        if entry is None:
            raise NotFoundError(f'no MCP server named "{name}" in this workspace')
        upstream = entry.upstream
        if upstream.spec.digest != digest:
            raise ConflictError(f'the entry of "{name}" changed since it was shown: look at it again')
        if not upstream.judged.changes:
            raise ConflictError(f'"{name}" has nothing waiting for approval')
        if upstream.judged.tool_set != tool_set:
            raise ConflictError(f'the tools of "{name}" changed again since they were shown: look at them again')
        pins = as_pins(upstream.listed)
        await anyio.to_thread.run_sync(lambda: self.store.approve_tools(upstream.spec, pins, approve=True))
        await upstream.recheck()
        self._changed()
        return f'approved the current tools of "{name}"'

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call a tool by its exposed name.

        Raises:
            InvalidToolName, UnknownServer: the name does not route (400 / 404 over HTTP).
            UpstreamError: the call itself failed, or the tool is withheld (502 over HTTP).
        """
        server, tool = self._names.route(name, self._entries.keys())
        entry = self._entries.get(server)
        if entry is None:
            raise UnknownServer(f'unknown MCP server: "{server}"')
        result = await entry.upstream.call(tool, arguments)
        return convert_result(result, self.settings.max_output_bytes)


_SERVING = ("connected", "changed")
