"""The workspace's own MCP servers: connected once, listed, called, reloaded, closed.

Each server of the work dir's ``.mcp.json`` gets one persistent session (the SDK
``Client``, 2025 handshake era so ``tools/list_changed`` arrives as a notification), in its
own task. Rules (coder.md 3.2-3.4):

* servers connect in parallel, at most ``mcp.max_concurrent_connects`` (8) at a time;
  ``mcp.connect_timeout`` (30 s) bounds connect + initialize + the first tool list, and
  ``mcp.call_timeout`` (60 s) each call;
* a failing server never blocks or breaks the others: it is reported with its error and
  the tail of its stderr; "connected with zero tools" is a different state from "failed";
* stdio servers run in the work dir (else the home dir), with the agent's environment
  minus its own secrets plus what the entry declares, in their own process group, which
  is killed as a whole on reload and shutdown (see ``_stdio_transport``);
* a reload is differential: unchanged servers are kept, changed ones reconnected (a failed
  reconnect keeps the old connection), removed ones closed;
* a call that finds the connection gone (the server exited) turns the server failed;
  ``refresh`` reconnects failed servers;
* tool output over ``mcp.max_output_bytes`` is cut, with a visible marker.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
import json
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import anyio
import httpx2
import mcp.types as types
from anyio.abc import TaskGroup
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agentcontext import __version__
from agentcontext.config import McpSettings
from agentcontext.errors import AgentContextError
from agentcontext.mcp_config import ServerSpec
from agentcontext.redact import redact, secret_values
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.tool_names import ToolNames, UnknownServer, assign

State = Literal["connecting", "connected", "failed", "disabled"]
STDERR_TAIL_BYTES = 4096
_SECRET_PREFIXES = ("AGENTCONTEXT_", "CODER_AGENT_EXP_")


class UpstreamError(AgentContextError):
    """A call to a workspace MCP server failed (timeout, server error, connection lost)."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the catalog reports for one declared server."""

    name: str
    state: State
    transport: str
    tools: tuple[Tool, ...] = ()
    error: str | None = None
    stderr_tail: str = ""

    def resource(self) -> Resource:
        """The ``mcp_server`` snapshot resource (never drift-hashed)."""
        digest = hashlib.sha256(self.name.encode())
        for tool in self.tools:
            digest.update(json.dumps(tool.to_dict(), sort_keys=True).encode())
        if self.error:
            digest.update(b"unreadable\0" + self.error.encode())
        status = {"connected": Status.OK, "disabled": Status.DISABLED}.get(self.state, Status.UNREADABLE)
        warnings: tuple[str, ...] = ()
        if self.state == "connected" and not self.tools:
            warnings = ("connected; the server offers no tools",)
        if self.state == "connected" and self.error:  # a failed reconnect or re-list: still serving
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
        )


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """A proxied call in Coder's shape: content blocks and the error flag."""

    content: list[dict[str, Any]]
    is_error: bool

    def to_dict(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error}


class _StderrTail:
    """A pipe whose far end is a child's stderr; a thread keeps the last few KiB."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._read_fd = read_fd
        self._buffer: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, name="mcp-stderr", daemon=True).start()

    def _pump(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self._read_fd, 4096):
                with self._lock:
                    self._buffer.append(chunk)
                    self._size += len(chunk)
                    while self._size - len(self._buffer[0]) >= STDERR_TAIL_BYTES:
                        self._size -= len(self._buffer.popleft())
        with contextlib.suppress(OSError):
            os.close(self._read_fd)

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._buffer)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", errors="replace").strip()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()


def child_environment(environ: Mapping[str, str], declared: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The agent's environment without its own secrets, plus what the entry declares."""
    env = {k: v for k, v in environ.items() if not k.startswith(_SECRET_PREFIXES)}
    env.update(declared)
    return env


def input_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """An input schema passed through, with ``properties`` kept as ``{}`` when empty (Coder)."""
    out = dict(schema or {})
    out.setdefault("type", "object")
    if out.get("properties") is None:
        out["properties"] = {}
    return out


class Upstream:
    """One workspace MCP server and its persistent session."""

    def __init__(
        self,
        spec: ServerSpec,
        settings: McpSettings,
        *,
        work_dir: str,
        environ: Mapping[str, str],
        limiter: anyio.Semaphore,
        on_change: Callable[[], None],
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.work_dir = work_dir
        self.environ = environ
        self._limiter = limiter
        self._on_change = on_change
        self.state: State = "connecting"
        self.error: str | None = None
        self.tools: tuple[Tool, ...] = ()
        self.client: Client | None = None
        self.settled = anyio.Event()
        self._closing = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stderr: _StderrTail | None = None
        self._task_group: TaskGroup | None = None
        self._secrets = secret_values([v for _, v in (*spec.env, *spec.headers)], spec.url)

    def status(self) -> ServerStatus:
        """What to report, with the entry's secrets masked (a server may print its token; an error may quote a URL)."""
        tail = redact(self._stderr.text(), self._secrets) if self._stderr else ""
        error = redact(self.error, self._secrets) if self.error else self.error
        return ServerStatus(self.spec.name, self.state, self.spec.transport, self.tools, error, tail)

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
                        self.tools = await self._list_tools(client)
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
                if self._stderr is not None:
                    self._stderr.close()
        if not self.settled.is_set():  # cancelled (timed out, closed) before it settled
            self._set("failed", self.error or "connection cancelled")

    def _client(self, stack: AsyncExitStack) -> Client:
        spec = self.spec
        options: dict[str, Any] = {
            "mode": "legacy",
            # no session-wide read timeout: connect + initialize + the first list are bounded by
            # connect_timeout (UpstreamManager._settle), each call by call_timeout, a re-list by fail_after
            "read_timeout_seconds": None,
            "message_handler": self._on_message,
            "client_info": types.Implementation(name="agentcontext-agent", version=__version__),
        }
        if spec.transport == "stdio":
            self._stderr = _StderrTail()
            cwd = spec.cwd if spec.cwd and os.path.isabs(spec.cwd) else os.path.join(self.work_dir, spec.cwd or "")
            if not os.path.isdir(cwd):
                cwd = self.environ.get("HOME") or os.path.expanduser("~")
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=child_environment(self.environ, spec.env), cwd=cwd
            )
            return Client(_stdio_transport(params, self._stderr.writer), **options)
        headers = dict(spec.headers)
        if spec.transport == "sse":
            return Client(sse_client(spec.url, headers=headers, timeout=self.settings.connect_timeout), **options)
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(self.settings.call_timeout))
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(spec.url, http_client=http), **options)

    async def _list_tools(self, client: Client) -> tuple[Tool, ...]:
        found: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            found += [Tool(t.name, t.description or "", input_schema(t.input_schema)) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tuple(sorted(found, key=lambda t: t.name))

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
                tools = await self._list_tools(client)
        except Exception as exc:
            self.error = f"tools/list failed: {_describe(exc)}"
            self._on_change()
            return
        if tools != self.tools or self.error:
            self.tools, self.error = tools, None
            self._on_change()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        """Call ``tool``.

        Raises:
            UpstreamError: not connected, timed out, or the call failed at the protocol level.
        """
        client = self.client
        if client is None:
            raise UpstreamError(f'MCP server "{self.spec.name}" is not connected: {self.error or self.state}')
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


@contextlib.asynccontextmanager
async def _stdio_transport(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[Any]:
    """The SDK's stdio transport; when it closes, what is left of the server's process group is killed.

    The SDK spawns the server as a session and group leader and kills the whole group only when
    the server outlives the grace period after its stdin closes, so a server that exits promptly
    would leave its own children (a ``sleep``, a language server) running. The SDK does not
    expose the process: its pid (the group id) is read from the transport's suspended frame.
    """
    transport: Transport = stdio_client(params, errlog=errlog)
    group: int | None = None
    try:
        async with transport as streams:
            frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
            pid = getattr(frame.f_locals.get("process") if frame is not None else None, "pid", None)
            group = pid if isinstance(pid, int) else None
            yield streams
    finally:
        if group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


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
    """All the workspace's MCP servers. Use as ``async with UpstreamManager(...) as manager``."""

    def __init__(
        self,
        settings: McpSettings,
        *,
        work_dir: str,
        environ: Mapping[str, str] | None = None,
        on_change: Callable[[], None] = lambda: None,
        approved: Callable[[ServerSpec], bool] = lambda spec: True,
    ) -> None:
        self.settings = settings
        self.work_dir = work_dir
        self.environ = dict(os.environ if environ is None else environ)
        self._on_change = on_change
        self._approved = approved
        self._entries: dict[str, _Entry] = {}
        self._disabled: dict[str, ServerSpec] = {}
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
        self._names = assign((s.name, t.name) for s in self.statuses() if s.state == "connected" for t in s.tools)
        self._on_change()

    async def reload(self, specs: Sequence[ServerSpec]) -> None:
        """Make the connections match ``specs`` (differential); returns once all have settled."""
        async with self._lock:
            wanted = {spec.name: spec for spec in specs}
            self._disabled = {n: s for n, s in wanted.items() if not self._approved(s)}
            for name in [n for n in self._entries if n not in wanted or n in self._disabled]:
                await self._entries.pop(name).upstream.close()
            starting: list[Upstream] = []
            for name, spec in wanted.items():
                if name in self._disabled:
                    continue
                entry = self._entries.get(name)
                if entry is not None and entry.upstream.spec == spec:
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
            if entry.extra_error and status.state == "connected":
                status = ServerStatus(status.name, status.state, status.transport, status.tools, entry.extra_error)
            out.append(status)
        for name, spec in self._disabled.items():
            reason = (
                f'not approved: run "agentcontext mcp trust" in the work dir to approve "{name}" '
                f"(config {spec.digest[:12]})"
            )
            out.append(ServerStatus(name, "disabled", spec.transport, error=reason))
        return sorted(out, key=lambda s: s.name)

    def resources(self) -> list[Resource]:
        return [status.resource() for status in self.statuses()]

    @property
    def names(self) -> ToolNames:
        return self._names

    def tools(self) -> list[tuple[str, str, Tool]]:
        """``(exposed name, server, tool)`` for every tool of every connected server."""
        out = [
            (self._names.exposed(s.name, t.name), s.name, t)
            for s in self.statuses()
            if s.state == "connected"
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

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call a tool by its exposed name.

        Raises:
            InvalidToolName, UnknownServer: the name does not route (400 / 404 over HTTP).
            UpstreamError: the call itself failed (502 over HTTP).
        """
        server, tool = self._names.route(name, self._entries.keys())
        entry = self._entries.get(server)
        if entry is None:
            raise UnknownServer(f'unknown MCP server: "{server}"')
        result = await entry.upstream.call(tool, arguments)
        return convert_result(result, self.settings.max_output_bytes)


def convert_result(result: types.CallToolResult | None, max_bytes: int) -> CallOutcome:
    """Coder's content mapping; past ``max_bytes`` of text and data the rest is dropped, with a marker."""
    if result is None:
        return CallOutcome([], False)
    content: list[dict[str, Any]] = []
    remaining = max_bytes
    dropped = 0
    for item in map(_convert_block, result.content):
        key = "data" if "data" in item else "text"
        size = len(item[key].encode("utf-8"))
        if size <= remaining:
            remaining -= size
            content.append(item)
            continue
        dropped += size - (remaining if key == "text" else 0)
        if key == "text" and remaining:
            item["text"] = item["text"].encode("utf-8")[:remaining].decode("utf-8", errors="ignore")
            content.append(item)
        remaining = 0
    if dropped:
        content.append({"type": "text", "text": f"[output truncated: {dropped} bytes over the {max_bytes}-byte limit]"})
    return CallOutcome(content, bool(result.is_error))


def _convert_block(block: Any) -> dict[str, Any]:
    if isinstance(block, types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        data = block.data if isinstance(block.data, str) else base64.b64encode(block.data).decode()
        return {"type": kind, "data": data, "media_type": block.mime_type}
    if isinstance(block, types.EmbeddedResource):
        return {"type": "resource", "text": f"[embedded resource: {block.resource.uri}]"}
    if isinstance(block, types.ResourceLink):
        return {"type": "resource", "text": f"[resource link: {block.uri}]"}
    return {"type": "text", "text": f"[unsupported content type: {getattr(block, 'type', type(block).__name__)}]"}
