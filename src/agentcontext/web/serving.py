"""uvicorn as every server of ours runs it: a cap on open connections and a deadline for each request's head.

uvicorn closes a connection left idle after a response (keep-alive), but never one that has not
sent a request yet, nor one that trickles a request's head a byte at a time: thousands of those
exhaust the process's file descriptors. Here a connection's head must arrive whole within
``Edge.header_timeout`` seconds: the first from when the connection opened, whatever it trickles
meanwhile, each next one from its first byte. Between a response and that byte a connection may
stay idle ``Edge.keep_alive`` seconds (uvicorn's keep-alive too), long enough that an agent's
heartbeat (every 15 s) and a chat's turns come on the connection they already have instead of
opening one each time. With ``Edge.max_connections`` open, each new connection closes the one
idle the longest (with none idle, the new one is closed), so a fresh client is served while nobody
can hold the sockets: idle connections are bounded by the cap, not by their age. Both counts are
kept as connections come and go (``_Census``), so an accept costs the same with thousands open. A
request's head (its line and headers) may be at most ``Edge.max_head`` bytes, else 431 and the
connection closes: h11 has such a cap of its own, httptools (uvicorn's default) none. A request in
progress is cut here only when its answer has waited ``Edge.write_timeout`` seconds on a client that
reads none of it (asyncio's buffer past its high-water mark the whole time: a client that never reads
would otherwise hold its connection for good, idle or not); its body has the guard's deadline, and
event streams their cap per token. A close waits for the answer still buffered to be read, socket
held and no longer counted by uvicorn: ours abort a connection with bytes buffered, and one uvicorn
closed (keep-alive's end, ``Connection: close``) is aborted ``Edge.write_timeout`` seconds later.
"""

from __future__ import annotations

import asyncio
import errno
import math
import socket
import sys
from typing import Any, cast

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from agentcontext.errors import UnavailableError
from agentcontext.web.guard import Edge

STARTUP_FAILURE = 3  # uvicorn's exit status when it could not start (the port is taken)


class GuardedConfig(uvicorn.Config):
    """``uvicorn.Config`` with the idle guard in its HTTP protocol (httptools; h11 on request) and the edge's limits."""

    def __init__(self, app: Any, edge: Edge, *, h11: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("h11_max_incomplete_event_size", edge.max_head)
        kwargs.setdefault("timeout_keep_alive", edge.keep_alive)
        super().__init__(app, http=GuardedH11 if h11 else GuardedHttpTools, **kwargs)
        self.max_connections = edge.max_connections
        self.header_timeout = edge.header_timeout
        self.keep_alive = edge.keep_alive
        self.max_head = edge.max_head
        self.write_timeout = edge.write_timeout
        self.census = _Census()


class _Census:
    """A server's guarded connections: how many are open, and which may be idle, the longest idle first.

    ``idle`` is in the order connections last became idle (dicts keep insertion order); one that has
    since taken a request is dropped when ``_make_room`` meets it, and comes back at its next response."""

    def __init__(self) -> None:
        self.open = 0
        self.idle: dict[_IdleGuard, None] = {}


class _IdleGuard(asyncio.Protocol):
    """Mixed into uvicorn's HTTP protocol: the attributes below are uvicorn's own."""

    config: uvicorn.Config
    connections: set[Any]
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    cycle: Any
    idle_since: float = 0.0
    head_since: float | None = None  # when the head being read began to arrive; None: none since the last response
    stalled_since: float | None = None  # when writing paused on a full buffer, or last drained some of it
    _buffered = 0  # the write buffer's size then
    closing_since: float | None = None  # when a close was seen that waits on an unread answer
    _counted = False  # in the census's ``open``
    _idle_timer: asyncio.TimerHandle | None = None

    @property
    def limits(self) -> GuardedConfig:
        return cast(GuardedConfig, self.config)  # uvicorn hands every protocol the config it serves with

    def idle(self) -> bool:
        """No request in progress: none yet, or the last one answered (and none queued behind it)."""
        return (self.cycle is None or self.cycle.response_complete) and not getattr(self, "pipeline", None)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        census = self.limits.census
        census.open += 1
        self._counted = True
        self.idle_since = self.head_since = self.loop.time()  # the first head's deadline runs from here
        self._arm(self.limits.header_timeout)
        if census.open > self.limits.max_connections:
            self._make_room()
        census.idle[self] = None  # after making room: a new connection is not the one to close

    def data_received(self, data: bytes) -> None:
        if self.head_since is None and self.idle():  # the first bytes of the next request's head
            self.head_since = self.loop.time()
            self._bring_forward(self.head_since + self.limits.header_timeout)
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]  # uvicorn's protocols define it
        self.idle_since, self.head_since = self.loop.time(), None
        if self.transport.is_closing():  # ``Connection: close``: its socket goes once the client reads the answer
            self.closing_since = self.idle_since
            self._bring_forward(self.closing_since + self.limits.write_timeout)
        if self._counted:  # to the end of the order: idle the shortest
            idle = self.limits.census.idle
            idle.pop(self, None)
            idle[self] = None

    def pause_writing(self) -> None:
        super().pause_writing()
        self.stalled_since, self._buffered = self.loop.time(), self.transport.get_write_buffer_size()
        self._bring_forward(self.stalled_since + self.limits.write_timeout)

    def resume_writing(self) -> None:
        super().resume_writing()
        self.stalled_since = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        self._leave()
        super().connection_lost(exc)

    def _leave(self) -> None:
        """Out of the census: closed (or closing), or upgraded away from this protocol."""
        if self._counted:
            self._counted = False
            census = self.limits.census
            census.open -= 1
            census.idle.pop(self, None)

    def _close(self) -> None:
        self._leave()
        if self.transport.get_write_buffer_size():
            self.transport.abort()  # a close would wait, descriptor held, for a client that may never read
        else:
            self.transport.close()

    def _make_room(self) -> None:
        """Close the connection idle the longest; this one if every other has a request in progress."""
        idle = self.limits.census.idle
        while idle:
            oldest = next(iter(idle))
            if oldest.idle() and not oldest.transport.is_closing():
                oldest._close()
                return
            del idle[oldest]  # busy: back in the order at its next response
        self._close()

    def _arm(self, delay: float) -> None:
        self._idle_timer = self.loop.call_later(delay, self._check_idle)

    def _bring_forward(self, deadline: float) -> None:
        """Check by ``deadline``: an idle check may have set the next for keep-alive's end, far later."""
        timer = self._idle_timer
        if timer is not None and timer.when() > deadline:
            timer.cancel()
            self._idle_timer = self.loop.call_at(deadline, self._check_idle)

    def _check_idle(self) -> None:
        self._idle_timer = None
        if self not in self.connections:  # closed, or upgraded away
            self._leave()
            return
        now = self.loop.time()
        if self.transport.is_closing():  # closed by uvicorn (keep-alive's end, an error) with an answer still buffered
            self.closing_since = self.closing_since or now
            if now - self.closing_since >= self.limits.write_timeout:
                self.transport.abort()  # its client has not read it: the socket goes now, not when it does
            else:
                self._arm(self.closing_since + self.limits.write_timeout - now)
            return
        if not self.idle():  # a request in progress is cut only when its answer is stalled
            due, recheck = math.inf, self.limits.header_timeout
        elif self.head_since is not None:  # a head is arriving (or the first is awaited): it has its deadline
            due = recheck = self.head_since + self.limits.header_timeout - now
        else:
            due = recheck = self.idle_since + self.limits.keep_alive - now
        if self.stalled_since is not None:  # writing paused: cut only a client that read none of it meanwhile
            buffered = self.transport.get_write_buffer_size()
            if buffered < self._buffered:  # it reads, however slowly: its deadline runs from now
                self.stalled_since, self._buffered = now, buffered
            due = min(due, self.stalled_since + self.limits.write_timeout - now)
        if due <= 0:
            self._close()
        else:
            self._arm(min(due, recheck))


class GuardedHttpTools(_IdleGuard, HttpToolsProtocol):
    """uvicorn's httptools protocol (its default) with the idle guard and a cap on a request's head.

    httptools keeps a header's bytes until the header ends, so the bytes that arrive while a
    head is read are counted as they come, before the parser sees them grow past the cap.
    """

    _reading_head = True
    _head_bytes = 0

    def data_received(self, data: bytes) -> None:
        reading = self._reading_head
        super().data_received(data)
        if reading and self._reading_head:  # still in the same head: all of this chunk belonged to it
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.max_head and not self.transport.is_closing():
                self._refuse_head()

    def on_headers_complete(self) -> None:
        self._reading_head, self._head_bytes = False, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._reading_head = True  # what comes next is the next request's head
        super().on_message_complete()

    def _refuse_head(self) -> None:
        message = f"a request's line and headers may be at most {self.limits.max_head} bytes".encode()
        head = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
        length = f"content-length: {len(message)}\r\nconnection: close\r\n\r\n".encode()
        self.transport.write(head + length + message)
        self.transport.close()


class GuardedH11(_IdleGuard, H11Protocol):
    """uvicorn's h11 protocol with the idle guard."""


def bind(host: str, port: int, option: str = "--listen") -> socket.socket:
    """The socket a server listens on, bound as uvicorn binds one; bound here, so a taken port is one clear line.

    Raises:
        UnavailableError: the address is in use, or not one this machine can listen on.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a port in TIME_WAIT is no obstacle
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise UnavailableError(
                f"{where} is already in use: stop what listens there or pass another {option}"
            ) from None
        raise UnavailableError(f"cannot listen on {where} ({option}): {exc.strerror or exc}") from None
    return sock


def run(config: GuardedConfig, option: str = "--listen") -> None:
    """Serve until SIGINT or SIGTERM (uvicorn's own handlers); exit 3 when the server could not start.

    Raises:
        UnavailableError: the address is taken (:func:`bind`).
    """
    server = uvicorn.Server(config)
    server.run(sockets=[bind(config.host, config.port, option)])
    if not server.started:
        sys.exit(STARTUP_FAILURE)
