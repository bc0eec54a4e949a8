"""HTTP upstreams read through a cap: a JSON body or one server-sent event at most the message cap.

:class:`CappedTransport` wraps the HTTP transport the SDK's client uses. It remembers the
JSON-RPC requests it posts, and wraps each response body:

* ``application/json``: one message; kept up to the cap, past it only counted;
* ``text/event-stream``: each event (up to its blank line) is one message, passed on
  whole once complete; an event past the cap is counted and dropped as it arrives.

A cut message is replaced as :func:`agentcontext.workspace_mcp.client.oversize.replacement` says (a
``tools/call`` answer with the visible marker, an error for other answers), so nothing of
an oversized answer is ever held whole in memory.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx2
import mcp.types as types

from agentcontext.workspace_mcp.client.oversize import Overflow, Requests, replacement

_EVENT_END = re.compile(rb"\r\r|\n\n|\r\n\r\n|\n\r\n|\r\n\n")
_DATA = re.compile(rb"^data: ?(.*?)\r?$", re.MULTILINE)


class CappedTransport(httpx2.AsyncBaseTransport):
    """An HTTP transport whose response bodies are read through the message cap."""

    def __init__(self, cap: int, output_budget: int, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.cap = cap
        self.output_budget = output_budget
        self.requests = Requests()
        self.cut_messages = 0
        self._inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            self._note(request)
        response = await self._inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        if not kind.startswith(("application/json", "text/event-stream")) or not isinstance(
            response.stream, httpx2.AsyncByteStream
        ):
            return response
        body = _CappedBody(response.stream, self, events=kind.startswith("text/event-stream"))
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=body, extensions=response.extensions
        )

    def _note(self, request: httpx2.Request) -> None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(request.content, by_name=False)
        except (ValueError, httpx2.RequestNotRead):
            return
        self.requests.sent(message)

    def cut(self, overflow: Overflow) -> bytes:
        """The JSON that stands in for a cut message (empty when it answers nothing we asked)."""
        self.cut_messages += 1
        message = replacement(overflow, self.cap, self.requests, self.output_budget)
        return b"" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, owner: CappedTransport, *, events: bool) -> None:
        self._inner = inner
        self._owner = owner
        self._events = events
        self._pending = bytearray()  # the current message, at most the cap
        self._overflow: Overflow | None = None
        self._carry = b""  # the last bytes of a dropped event: its end may span two chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            out = self._feed_event(chunk) if self._events else self._feed_whole(chunk)
            if out:
                yield out
        if self._overflow is not None and not self._events:
            yield self._finish()
        elif self._pending and self._overflow is None:
            yield bytes(self._pending)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _grow(self, data: bytes) -> None:
        """Add to the current message; past the cap, keep only its head, tail and size."""
        if self._overflow is not None:
            self._overflow.add(data)
            return
        room = self._owner.cap - len(self._pending)
        if len(data) <= room:
            self._pending += data
            return
        self._pending += data[:room]
        self._overflow = Overflow(bytes(self._pending))
        self._overflow.add(data[room:])
        self._pending.clear()

    def _finish(self) -> bytes:
        overflow, self._overflow = self._overflow, None
        return self._owner.cut(overflow) if overflow is not None else b""

    def _feed_whole(self, chunk: bytes) -> bytes:
        self._grow(chunk)
        return b""

    def _feed_event(self, chunk: bytes) -> bytes:
        """Complete events pass on; an event past the cap is replaced once its end arrives.

        At most the cap plus one chunk is held: the current event, or of a dropped one its
        head, tail and size.
        """
        out = bytearray()
        data = chunk
        while data:
            if self._overflow is not None:  # dropping an event: look for its end
                joined = self._carry + data
                end = _EVENT_END.search(joined)
                if end is None:
                    self._overflow.add(data)
                    self._carry = joined[-3:]
                    break
                used = end.end() - len(self._carry)
                self._overflow.add(data[:used])
                out += self._replace(self._overflow)
                self._overflow, self._carry, data = None, b"", data[used:]
                continue
            searched = max(0, len(self._pending) - 3)
            self._pending += data
            data = b""
            while end := _EVENT_END.search(self._pending, searched):
                event = bytes(self._pending[: end.end()])
                del self._pending[: end.end()]
                searched = 0
                if len(event) <= self._owner.cap:
                    out += event
                else:
                    overflow = Overflow(event[: self._owner.cap])
                    overflow.add(event[self._owner.cap :])
                    out += self._replace(overflow)
            if len(self._pending) > self._owner.cap:  # an unfinished event past the cap
                self._overflow = Overflow(bytes(self._pending[: self._owner.cap]))
                self._overflow.add(bytes(self._pending[self._owner.cap :]))
                self._carry = bytes(self._pending[-3:])
                self._pending.clear()
        return bytes(out)

    def _replace(self, event: Overflow) -> bytes:
        """The event that stands in for a cut one: its ``data:`` lines' message, replaced."""
        lines = [m.group(1) for m in _DATA.finditer(event.head)]
        data = Overflow(b"\n".join(lines) if lines else event.head, event.total)
        data.tail = bytearray(re.sub(rb"[\r\n]+$", b"", bytes(event.tail)))
        text = self._owner.cut(data)
        return b"event: message\ndata: " + text + b"\n\n" if text else b""


def sse_client_factory(transport: CappedTransport) -> object:
    """An ``httpx_client_factory`` for the SDK's legacy SSE client that reads through ``transport``."""

    def factory(
        headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, transport=transport)

    return factory
