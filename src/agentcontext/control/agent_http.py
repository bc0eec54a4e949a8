"""HTTP/1.1 to workspace agents over plain ``http://``: asyncio transports and httptools' parser.

The control plane calls an agent on most chat tool calls, and a general-purpose client costs
more CPU than the whole request it serves (httpx: about 0.7 ms a call, against 0.03 ms here):
this one writes the request itself and parses the answer with httptools, the C parser uvicorn
serves with. It keeps idle connections a short while per host (less than uvicorn's 5 s
keep-alive, so a connection the agent is closing is not reused), reads at most ``MAX_BODY``
bytes of an answer, and refuses a header value with a line break (a hostile agent's secret
must not add headers). ``https://`` agents go through httpx (``agent_link``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import cast
from urllib.parse import urlsplit

import anyio
import httptools

MAX_BODY = 16 * 1024 * 1024
IDLE_SECONDS = 2.0  # below uvicorn's 5 s keep-alive


class AgentHttpError(Exception):
    """The agent could not be reached, answered nothing usable, or took too long (``timed_out``)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = time.monotonic()
        self._answer: asyncio.Future[None] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._body = bytearray()
        self._keep_alive = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(AgentHttpError(f"the connection closed ({exc or 'by the agent'})"))

    def data_received(self, data: bytes) -> None:
        if self._parser is None:  # bytes nobody asked for: this connection cannot be trusted any more
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(f"the agent's answer is not HTTP ({exc})")

    # httptools callbacks
    def on_body(self, body: bytes) -> None:
        self._body += body
        if len(self._body) > MAX_BODY:
            self._fail(f"the agent's answer is larger than {MAX_BODY} bytes")

    def on_message_complete(self) -> None:
        assert self._parser is not None
        self._keep_alive = self._parser.should_keep_alive()  # asked now: the parser forgets once the message ends
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(None)

    def _fail(self, message: str) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(AgentHttpError(message))
        self.close()

    async def exchange(self, request: bytes) -> tuple[int, bytes, bool]:
        """Send ``request``; the status, the body, and whether the connection may be used again."""
        assert self.transport is not None
        self._answer = asyncio.get_running_loop().create_future()
        self._parser = httptools.HttpResponseParser(self)
        self._body = bytearray()
        self._keep_alive = False
        self.transport.write(request)
        try:
            await self._answer
        finally:
            self._answer = None
        status = self._parser.get_status_code()
        reusable = self._keep_alive and not self.closed
        self._parser = None
        return status, bytes(self._body), reusable

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class AgentHttp:
    """Connections to agents, kept per host for ``IDLE_SECONDS``."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    async def request(
        self,
        method: str,
        url: str,
        headers: Sequence[tuple[str, str]],
        body: bytes | None,
        *,
        connect_timeout: float,
        timeout: float,
    ) -> tuple[int, bytes]:
        """The agent's status and body.

        Raises:
            AgentHttpError: unreachable, an unusable answer, or no answer within ``timeout``.
            ValueError: not an ``http://`` URL, or a header value with a line break.
        """
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not an http:// URL: {url!r}")
        host, port = parts.hostname, parts.port or 80
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        lines = [f"{method} {target} HTTP/1.1", f"Host: {authority}"]
        for name, value in headers:
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise ValueError(f"a line break in the {name} header")
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict") + (body or b"")
        connection = await self._connection(host, port, connect_timeout)
        try:
            with anyio.fail_after(timeout):
                status, content, reusable = await connection.exchange(request)
        except TimeoutError:
            connection.close()
            raise AgentHttpError("timed out", timed_out=True) from None
        except BaseException:
            connection.close()
            raise
        if reusable:
            connection.idle_since = time.monotonic()
            self._idle.setdefault((host, port), []).append(connection)
        else:
            connection.close()
        return status, content

    async def _connection(self, host: str, port: int, connect_timeout: float) -> _Connection:
        idle = self._idle.get((host, port))
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if not connection.closed and now - connection.idle_since < IDLE_SECONDS:
                return connection
            connection.close()
        loop = asyncio.get_running_loop()
        try:
            with anyio.fail_after(connect_timeout):
                _, connection = await loop.create_connection(_Connection, host, port)
        except TimeoutError:
            raise AgentHttpError("timed out", timed_out=True) from None
        except OSError as exc:
            raise AgentHttpError(f"connection refused or unreachable ({host}:{port})") from exc
        return connection

    async def aclose(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()
