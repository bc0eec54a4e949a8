"""One workspace MCP server: its session, its tool listing judged against the approval, its calls.

:class:`Upstream` is one server's persistent session (the SDK ``Client`` over
:class:`~agentcontext.workspace_mcp.client.stdio_transport.StdioTransport` or HTTP through
:class:`~agentcontext.workspace_mcp.client.http_cap.CappedTransport`), run in its own task by the manager
(:mod:`agentcontext.workspace_mcp.client.upstream`, which states the rules). Its status, with the entry's
secrets masked, becomes the ``mcp_server`` snapshot resource
(:class:`~agentcontext.workspace_mcp.client.status.ServerStatus`). The manager imports this module, and
with it the SDK, only when a server is to be started.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import Any

import anyio
import httpx2
import mcp.types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from agentcontext import __version__
from agentcontext.debounce import Debouncer
from agentcontext.resource import Tool
from agentcontext.settings.config import McpSettings
from agentcontext.workspace_mcp.approvals import standing
from agentcontext.workspace_mcp.client.http_cap import CappedTransport, sse_client_factory
from agentcontext.workspace_mcp.client.oversize import message_cap
from agentcontext.workspace_mcp.client.pinning import NOTHING, Judged, judge, raw_definition
from agentcontext.workspace_mcp.client.results import CallOutcome, convert_result
from agentcontext.workspace_mcp.client.status import ServerStatus, State, UpstreamError, approval_of
from agentcontext.workspace_mcp.client.stdio_transport import StdioCommand, StdioTransport
from agentcontext.workspace_mcp.config import ServerSpec
from agentcontext.workspace_mcp.launch import Launch
from agentcontext.workspace_mcp.redact import redact, secret_values
from agentcontext.workspace_mcp.secrets import mask_args
from agentcontext.workspace_mcp.tool_pins import Definition
from agentcontext.workspace_mcp.trust import TrustStore

MAX_TOOLS = 1000  # tools one server may list: past it the listing is refused (a model takes ~128 all told)
MAX_PAGES = 100  # pages of one listing
_SSE_EVENT_LIMIT = 1024 * 1024 - 4096  # below the SDK's own 1 MiB SSE limit, so our cut comes first


class Upstream:
    """One workspace MCP server and its persistent session."""

    def __init__(
        self,
        launch: Launch,
        settings: McpSettings,
        *,
        store: TrustStore,
        limiter: anyio.Semaphore,
        on_change: Callable[[], None],
        debounce: float,
        resolve_again: Callable[[ServerSpec], Launch] | None = None,
    ) -> None:
        self.launch = launch
        self._resolve_again = resolve_again
        self.spec = spec = launch.spec
        self.settings = settings
        self.store = store
        self._limiter = limiter
        self._on_change = on_change
        self.state: State = "connecting"
        self.error: str | None = None
        self.listed: tuple[Definition, ...] = ()  # the last listing, as the server sent it
        self.judged: Judged = NOTHING
        self.client: Client | None = None
        self.settled = anyio.Event()
        self._notices = Debouncer(debounce)  # list-changed notices, however many, make one re-list
        self._listing = anyio.Lock()  # one tools/list in flight
        self._closing = False  # closed by us (not lost)
        self._done = anyio.Event()  # closed, or the session ended (the server exited, a call found it gone)
        self.connected_at: float | None = None  # monotonic, when it last connected
        self._scope: anyio.CancelScope | None = None
        self._stdio: StdioTransport | None = None
        self._task_group: TaskGroup | None = None
        masked = [value for m in mask_args(spec.args) for value in m.values]  # a server may echo its arguments
        given = [*masked, *(v for _, v in (*spec.env, *spec.headers)), *spec.from_environment]
        self._secrets = secret_values(given, spec.url)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self.judged.tools

    def status(self) -> ServerStatus:
        """What to report, with the entry's secrets masked (a server may print its token; an error may quote a URL)."""
        tail = redact(self._stdio.stderr_tail, self._secrets) if self._stdio else ""
        error = redact(self.error, self._secrets) if self.error else self.error
        state: State = "changed" if self.state == "connected" and self.judged.changes else self.state
        approval = approval_of(self.launch, self.settings.trust, state, self.judged)
        changes = self.judged.changes if state == "changed" else ()
        return ServerStatus(
            self.spec.name, state, self.spec.transport, self.tools, error, tail, self.judged.warnings, approval, changes
        )

    async def run(self) -> None:
        """The session's task: connect, list, serve calls until closed or lost; failures are recorded.

        A lost session (the server exited, its connection closed) is noticed when it happens, not at the next
        call: the server turns failed at once, saying how it ended once its process is reaped.
        """
        with anyio.CancelScope() as scope:
            self._scope = scope
            try:
                async with AsyncExitStack() as stack:
                    await self._limiter.acquire()
                    try:
                        await self._still_as_approved()
                        client = await stack.enter_async_context(self._client(stack))
                        self._task_group = await stack.enter_async_context(anyio.create_task_group())
                        await self._take(await self._list_tools(client))
                    finally:
                        self._limiter.release()
                    self.client = client
                    self.connected_at = time.monotonic()
                    self._set("connected", None)
                    self._task_group.start_soon(self._follow_notices)
                    await self._done.wait()
                    if not self._closing:
                        self._lost("the connection closed")
                    self._task_group.cancel_scope.cancel()
                if not self._closing and self.state == "failed" and (ended := self._how_it_ended()):
                    self._set("failed", f"connection lost: {ended}")
            except Exception as exc:  # a failing server is reported, never raised
                ended = self._how_it_ended()
                self._set("failed", f"{_describe(exc)}: {ended}" if ended else _describe(exc))
            finally:
                self.client = None
        if not self.settled.is_set():  # cancelled (timed out, closed) before it settled
            self._set("failed", self.error or "connection cancelled")

    def _how_it_ended(self) -> str:
        """How a lost stdio server's process ended, when it did so by itself."""
        code = self._stdio.exit_code if self._stdio is not None else None
        if code is None:
            return ""
        if code < 0:
            try:
                return f"the server was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"the server was killed by signal {-code}"
        return f"the server exited with code {code}"

    async def _still_as_approved(self) -> None:
        """Resolve the server again just before it starts (a reconnect included): a program or script edited since
        the launch was judged is not started under that judgement.

        Raises:
            UpstreamError: what it would run now differs.
        """
        if self._resolve_again is None or self.spec.transport != "stdio":
            return
        now = await anyio.to_thread.run_sync(self._resolve_again, self.spec)
        if now.digest != self.launch.digest:
            raise UpstreamError("what it runs changed since it was approved: not started (it is judged again)")
        if self.settings.trust != "auto":
            now_standing = await anyio.to_thread.run_sync(standing, now, self.store)
            if now_standing.state == "pending":
                raise UpstreamError("it is no longer approved: not started (it is judged again)")

    def _client(self, stack: AsyncExitStack) -> Client:
        spec, settings = self.spec, self.settings
        options: dict[str, Any] = {
            "mode": "legacy",
            # no session-wide read timeout: connect + initialize + the first list are bounded by
            # connect_timeout (UpstreamManager._settle), each call by call_timeout, a re-list by fail_after
            "read_timeout_seconds": None,
            "message_handler": self._on_message,
            "cache": None,  # every listing bypasses the SDK's response cache: without it a notice evicts nothing
            "client_info": types.Implementation(name="agentcontext-agent", version=__version__),
        }
        cap = message_cap(settings.max_output_bytes)
        if spec.transport == "stdio":
            launch = self.launch
            if launch.problem is not None:
                raise UpstreamError(launch.problem)
            # the real path resolved for the approval, not the name: what was approved is what starts
            command = StdioCommand(launch.executable, spec.args, launch.environment, launch.cwd)
            self._stdio = StdioTransport(command, max_message_bytes=cap, output_budget=settings.max_output_bytes)
            return Client(_Watched(self._stdio, self._done.set), **options)
        headers = dict(spec.headers)
        if spec.transport == "sse":
            capped = CappedTransport(min(cap, _SSE_EVENT_LIMIT), settings.max_output_bytes)
            factory: Any = sse_client_factory(capped)
            transport = sse_client(
                spec.url, headers=headers, timeout=settings.connect_timeout, httpx_client_factory=factory
            )
            return Client(_Watched(transport, self._done.set), **options)
        capped = CappedTransport(cap, settings.max_output_bytes)
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(settings.call_timeout), transport=capped)
        stack.push_async_callback(http.aclose)
        transport = streamable_http_client(spec.url, http_client=http, max_sse_event_size=cap + 4096)
        return Client(_Watched(transport, self._done.set), **options)

    async def _list_tools(self, client: Client) -> tuple[Definition, ...]:
        """Every page of the server's listing, within :data:`MAX_PAGES` pages and :data:`MAX_TOOLS` tools.

        Raises:
            UpstreamError: past a bound, or a cursor given twice (a listing that never ends).
        """
        found: list[Definition] = []
        cursor: str | None = None
        cursors: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            found += [raw_definition(t) for t in page.tools]
            if len(found) > MAX_TOOLS:
                raise UpstreamError(f"it lists more than {MAX_TOOLS} tools: none are offered")
            cursor = page.next_cursor
            if not cursor:
                return tuple(sorted(found, key=lambda t: str(t["name"])))
            if cursor in cursors:
                raise UpstreamError(
                    f"its tool listing sent the cursor {cursor[:40]!r} twice: a listing that never ends"
                )
            cursors.add(cursor)
        raise UpstreamError(f"its tool listing goes on past {MAX_PAGES} pages: none are offered")

    async def _take(self, listed: tuple[Definition, ...]) -> None:
        """Judge a listing against the pins (file I/O, in a thread)."""
        self.listed = listed
        self.judged = await anyio.to_thread.run_sync(judge, self.launch, self.store, listed)

    async def recheck(self) -> None:
        """Judge the last listing again (the approvals may have changed)."""
        if self.state == "connected":
            before = self.judged
            await self._take(self.listed)
            if self.judged != before:
                self._on_change()

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        # Only tools are listed from upstream (not resources or prompts), so only their notice matters.
        # A notice just marks the listing stale: a flood costs one event, not a task and a tools/list each.
        if isinstance(message, types.ToolListChangedNotification):
            self._notices.poke()

    async def _follow_notices(self) -> None:
        """Re-list once announced changes settle; one announced during a re-list is owed the next one."""
        while True:
            await self._notices.settled()
            await self.refresh_tools()

    async def refresh_tools(self) -> None:
        """List the tools again; a failure keeps the previous list and records the error."""
        async with self._listing:
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

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call ``tool``; its result in Coder's shape, within ``mcp.max_output_bytes``.

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
            result = await client.call_tool(tool, dict(arguments), read_timeout_seconds=self.settings.call_timeout)
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                self._lost(exc.error.message)
                raise UpstreamError(f'MCP server "{self.spec.name}" connection lost: {exc.error.message}') from None
            raise UpstreamError(f'MCP server "{self.spec.name}": {exc.error.message}') from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
            self._lost(_describe(exc))
            raise UpstreamError(f'MCP server "{self.spec.name}" connection lost: {_describe(exc)}') from None
        except Exception as exc:  # the SDK's: a result that is no CallToolResult (pydantic), rounds of input
            said = redact(_describe(exc), self._secrets)[:300]
            raise UpstreamError(f'MCP server "{self.spec.name}" sent a result that cannot be read: {said}') from None
        return convert_result(result, self.settings.max_output_bytes)

    def _lost(self, reason: str) -> None:
        """The session is gone (the server exited or hung up): report it failed and wind the task down."""
        if self.state == "connected":
            self.client = None
            self._set("failed", f"connection lost: {reason}")
        self._done.set()

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
        self._closing = True
        self._done.set()
        if self._scope is not None and self.state != "connected":
            self._scope.cancel()


class _Watched:
    """A transport whose read stream's end (the server exited or closed its output, the connection dropped) calls
    ``ended``: the SDK's dispatcher, which reads it, tells nobody, and its session is over for good."""

    def __init__(self, inner: AbstractAsyncContextManager[TransportStreams], ended: Callable[[], None]) -> None:
        self._inner = inner
        self._ended = ended

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        return _EndWatch(read, self._ended), write

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(kind, exc, tb)


class _EndWatch:
    """A read stream that calls ``ended`` when it ends or is closed under its reader."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ended: Callable[[], None]) -> None:
        self._inner = inner
        self._ended = ended

    @property
    def last_context(self) -> Any:  # the SDK's dispatcher looks for it (a context-carrying stream's)
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended()
            raise

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._ended()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _EndWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(kind, exc, tb)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return _describe(inner[0])
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
