"""A chat's events as server-sent events: the first event, then each one a subscription delivers.

Between events a comment line (``: ping``) goes out every ``ping`` seconds, so proxies keep
the connection open. The stream ends when the client goes away (watched for alongside), when
the subscription ends (the broker closed: the server is stopping), or when its listener may
no longer listen (``Recheck``: a revoked token, a deleted user or chat), asked at each ping and
before an event goes out. One task beside
the request's own, where a general-purpose SSE response runs four: an event stream is opened
on every page of a chat, so opening one is made cheap.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agentcontext.control.events import Event
from agentcontext.web.recheck import Recheck

HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),  # nginx: do not hold events back
]


def frame(kind: str, data: Any) -> bytes:
    return f"event: {kind}\r\ndata: {json.dumps(data, separators=(',', ':'))}\r\n\r\n".encode()


PING = b": ping\r\n\r\n"
Opened = AbstractAsyncContextManager[tuple[bytes, MemoryObjectReceiveStream[Event]]]


class EventStream(Response):
    """Server-sent events from ``open()``: it subscribes and yields the first frame and the subscription."""

    media_type = "text/event-stream"

    def __init__(self, open_stream: Callable[[], Opened], recheck: Recheck, *, ping: float = 15.0) -> None:
        super().__init__(status_code=200)
        self._open = open_stream
        self._recheck = recheck
        self._ping = ping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
            async with self._open() as (first, events):
                chunk: bytes | None = first
                while chunk is not None:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    chunk = await _next_frame(events, self._ping)
                    if chunk is not None and not await self._recheck.allowed(now=chunk == PING):
                        break
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            group.cancel_scope.cancel()


async def _next_frame(events: MemoryObjectReceiveStream[Event], ping: float) -> bytes | None:
    """The next event's frame, a ping when none came for ``ping`` seconds, None when the subscription ended."""
    with anyio.move_on_after(ping):  # a cancelled receive loses nothing
        try:
            event = await events.receive()
        except anyio.EndOfStream:
            return None
        return frame(event.kind, event.data)
    return PING


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
