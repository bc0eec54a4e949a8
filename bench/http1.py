"""A lean HTTP/1.1 client for the load generator: one keep-alive connection, one request at a time.

httpx's async client costs several milliseconds of CPU a request; at a thousand requests a second
on the two CPUs the servers use, the load generator would be what saturates. Here a request is
one write of its bytes and its answer is read by ``Content-Length`` (or chunked, for an event
stream) on asyncio's streams: a few hundred microseconds. Only what the control plane answers is
understood: no redirects, no compression, no TLS.
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


class Connection:
    """One keep-alive connection to ``host:port``; opened on the first request and again after the server
    closes it (idle). ``headers``: sent with every request (``Authorization``)."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        self._address = (host, port)
        self._fixed = f"Host: {host}:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.opened = 0  # connections opened: one for a client the server kept, more when it closed them

    @classmethod
    def to(cls, base: str, headers: dict[str, str] | None = None, timeout: float = 30.0) -> Connection:
        """A connection to ``http://host:port``."""
        host, _, port = base.removeprefix("http://").rpartition(":")
        return cls(host, int(port), headers, timeout)

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = self._reader, self._writer
        # a connection the server closed while it was idle: its end of file is already read (or on its way)
        if reader is not None and writer is not None and not reader.at_eof() and not writer.is_closing():
            return reader, writer
        self.close()
        try:
            opened = await asyncio.wait_for(asyncio.open_connection(*self._address), CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise TransportError(f"connect: {type(exc).__name__} {exc}") from None
        self._reader, self._writer = opened
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
        reader, writer = await self._open()
        try:
            writer.write(self._request_bytes(method, path, body, content_type, headers))
            async with asyncio.timeout(self._timeout):
                status, said = _head(await reader.readuntil(b"\r\n\r\n"))
                if said.get(b"transfer-encoding") == b"chunked":
                    data = b"".join([chunk async for chunk in _chunks(reader)])
                else:
                    data = await reader.readexactly(int(said.get(b"content-length", b"0")))
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError) as exc:
            self.close()
            raise TransportError(f"{type(exc).__name__} {exc}") from None
        if said.get(b"connection") == b"close":
            self.close()
        return Answer(status, said, data)

    async def stream(self, path: str) -> AsyncIterator[tuple[str, str]]:
        """``GET path`` as an event stream: its events (kind, data) until the server ends it.

        Raises: TransportError; ``StreamRefused`` when the answer is not a 200."""
        reader, writer = await self._open()
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
            self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


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
