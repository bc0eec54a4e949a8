"""A lean HTTP/1.1 client for the load generator: one keep-alive connection, one request at a time.

httpx's async client costs several milliseconds of CPU a request; at a thousand requests a second
on the two CPUs the servers use, the load generator would be what saturates. Here a request is
one write of its bytes, and its answer is gathered by an ``asyncio.Protocol`` until its
``Content-Length`` (or its last chunk) has come, then handed over in one wake-up: no stream reader,
no timeout context, one future and one timer a request. Only what the control plane answers is
understood: no redirects, no compression, no TLS. An event stream (``stream``) is read on asyncio's
streams: it opens once a chat and reads a few events, so its cost is small beside the requests'.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

CONNECT_TIMEOUT = 10.0


class TransportError(Exception):
    """No answer: the connection failed, closed, or the answer could not be read."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[bytes, bytes]  # names lowercased; one value a name (the control plane repeats none we read)
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def _head(raw: bytes) -> tuple[int, dict[bytes, bytes]]:
    lines = raw.split(b"\r\n")
    status = int(lines[0][9:12])
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


def _dechunked(data: bytes, at: int) -> tuple[bytes, int] | None:
    """The body of a chunked answer whose chunks begin at ``at``, and where the answer ends; None while
    more is to come. Raises ValueError for a chunk size that is not one."""
    parts: list[bytes] = []
    while True:
        line_end = data.find(b"\r\n", at)
        if line_end < 0:
            return None
        size = int(data[at:line_end].split(b";", 1)[0], 16)
        start = line_end + 2
        if size == 0:  # no trailers are sent: the empty line that ends the body
            return (b"".join(parts), start + 2) if len(data) >= start + 2 else None
        if len(data) < start + size + 2:
            return None
        parts.append(data[start : start + size])
        at = start + size + 2


class _Answers(asyncio.Protocol):
    """One connection's bytes, each answer handed to the request waiting for it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._data = b""
        self._waiting: asyncio.Future[Answer] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def expect(self, waiting: asyncio.Future[Answer]) -> None:
        self._waiting = waiting

    def data_received(self, data: bytes) -> None:
        self._data = self._data + data if self._data else data
        waiting = self._waiting
        if waiting is None or waiting.done():
            return
        try:
            answer = self._answer()
        except ValueError as exc:
            waiting.set_exception(TransportError(f"ValueError {exc}"))
            return
        if answer is not None:
            self._waiting = None
            waiting.set_result(answer)

    def _answer(self) -> Answer | None:
        data = self._data
        head_end = data.find(b"\r\n\r\n")
        if head_end < 0:
            return None
        status, headers = _head(data[:head_end])
        start = head_end + 4
        if headers.get(b"transfer-encoding") == b"chunked":
            found = _dechunked(data, start)
            if found is None:
                return None
            body, end = found
        else:
            end = start + int(headers.get(b"content-length", b"0"))
            if len(data) < end:
                return None
            body = data[start:end]
        self._data = data[end:]
        return Answer(status, headers, body)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_exception(TransportError(f"the connection closed: {exc or 'end of file'}"))

    def eof_received(self) -> bool:
        self.closed = True
        return False  # close the transport: connection_lost fails what waits


class Connection:
    """One keep-alive connection to ``host:port``; opened on the first request and again after the server
    closes it (idle). ``headers``: sent with every request (``Authorization``)."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        self._address = (host, port)
        self._fixed = f"Host: {host}:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._timeout = timeout
        self._answers: _Answers | None = None
        self.opened = 0  # connections opened: one for a client the server kept, more when it closed them

    @classmethod
    def to(cls, base: str, headers: dict[str, str] | None = None, timeout: float = 30.0) -> Connection:
        """A connection to ``http://host:port``."""
        host, _, port = base.removeprefix("http://").rpartition(":")
        return cls(host, int(port), headers, timeout)

    async def _open(self) -> _Answers:
        answers = self._answers
        # a connection the server closed while it was idle: its end of file is already read (or on its way)
        if answers is not None and not answers.closed:
            return answers
        self.close()
        loop = asyncio.get_running_loop()
        try:
            _, opened = await asyncio.wait_for(loop.create_connection(_Answers, *self._address), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise TransportError(f"connect: {type(exc).__name__} {exc}") from None
        self._answers = opened
        self.opened += 1
        return opened

    def _request_bytes(
        self, method: str, path: str, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> bytes:
        head = f"{method} {path} HTTP/1.1\r\n{self._fixed}"
        if headers:
            head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        if body or method in ("POST", "PUT"):
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        return (head + "\r\n").encode("latin-1") + body

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Answer:
        """Raises: TransportError (the connection is closed then: the next request opens another)."""
        if json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode("utf-8")
        answers = await self._open()
        loop = asyncio.get_running_loop()
        waiting: asyncio.Future[Answer] = loop.create_future()
        answers.expect(waiting)
        late = loop.call_later(self._timeout, _expire, waiting, self._timeout)
        try:
            assert answers.transport is not None
            answers.transport.write(self._request_bytes(method, path, body, content_type, headers))
            answer = await waiting
        except BaseException:  # no answer, or the caller cancelled: what comes later answers nothing asked
            self.close()
            raise
        finally:
            late.cancel()
        if answer.headers.get(b"connection") == b"close":
            self.close()
        return answer

    async def stream(self, path: str) -> AsyncIterator[tuple[str, str]]:
        """``GET path`` as an event stream: its events (kind, data) until the server ends it.

        Raises: TransportError; ``StreamRefused`` when the answer is not a 200."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*self._address), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise TransportError(f"connect: {type(exc).__name__} {exc}") from None
        self.opened += 1
        try:
            writer.write(self._request_bytes("GET", path, b"", ""))
            status, headers = _head(await reader.readuntil(b"\r\n\r\n"))
            if status != 200:
                raise StreamRefused(status)
            if headers.get(b"transfer-encoding") != b"chunked":
                raise TransportError("an event stream that is not chunked")
            pending = b""
            async for chunk in _chunks(reader):
                pending += chunk.replace(b"\r\n", b"\n")  # the server ends lines with CRLF
                while b"\n\n" in pending:
                    message, pending = pending.split(b"\n\n", 1)
                    kind, data = "message", []
                    for line in message.decode("utf-8").splitlines():
                        if line.startswith("event:"):
                            kind = line[6:].strip()
                        elif line.startswith("data:"):
                            data.append(line[5:].strip())
                    if data:
                        yield kind, "".join(data)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise TransportError(f"{type(exc).__name__} {exc}") from None
        finally:
            writer.close()

    def close(self) -> None:
        if self._answers is not None and self._answers.transport is not None:
            self._answers.transport.close()
        self._answers = None


def _expire(waiting: asyncio.Future[Answer], seconds: float) -> None:
    if not waiting.done():
        waiting.set_exception(TransportError(f"TimeoutError no answer in {seconds} s"))


class StreamRefused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"the event stream was answered {status}")
        self.status = status


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The chunks of a chunked body, until its last (empty) one."""
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are sent: the empty line that ends the body
            return
        chunk = await reader.readexactly(size + 2)
        yield chunk[:-2]
