"""The request guard every server of ours puts in front of its app: nothing reaches a route it should not.

Before any work, in this order, and before the request body is read:

1. ``Host`` must name this server (``hosts.ServedHosts``), else 421: a DNS-rebinding page
   is refused whatever it sends, a valid token included.
2. A browser's ``Origin`` must be one of this server's own pages, else 403 (no Origin is a
   program, not a browser: fine). A cross-site subresource request without an Origin
   (``Sec-Fetch-Site: cross-site`` or ``same-site`` outside a navigation) is refused the same way.
3. The server's ``authenticate`` hook decides from the headers: refused (401, or 503 when it
   cannot tell), authenticated, or a public route, whose body may be at most
   ``Edge.max_public_body``; at most ``Edge.public_bodies`` such bodies are read at once (503
   beyond), so clients without a token, trickling login forms, cannot hold every connection.
4. A declared ``Content-Length`` over the limit is 413 at once; a body sent without one is
   counted as it streams and refused the moment it passes the limit, or 408 when it takes
   longer than ``Edge.body_timeout``. The app never sees the rest: its reads end and its
   answer is replaced by ours.
5. Event streams are capped per token (429 beyond ``Edge.streams_per_token``): a GET of a
   ``streams`` route, and a POST there whose ``Mcp-Method`` header says ``subscriptions/listen``
   (a 2026-07-28 MCP listen, whose answer is the stream; the MCP SDK refuses a request whose body
   names another method, or that names it twice).

Refusals carry ``Connection: close`` (a body left unread is never read) and the server's own
error shape (``render``). A client that goes away while its body is read is no error of the app's:
there is nobody to answer, and nothing is logged.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import resource
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentcontext.web.hosts import ServedHosts

KiB = 1024
MiB = 1024 * KiB
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def default_max_connections() -> int:
    """Half the file descriptors this process may open (the rest: files, MCP servers, the database), 64 to 16,384."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = os.sysconf("SC_OPEN_MAX")
    return max(64, min(16_384, (soft - 256) // 2))


@dataclass(frozen=True, slots=True)
class Edge:
    """What a server answers to and how much it takes from one request and one client."""

    hosts: ServedHosts = ServedHosts()
    max_body: int = 8 * MiB
    max_public_body: int = 64 * KiB  # a route that needs no token (a login form) buffers at most this
    body_timeout: float = 30.0  # seconds a request body may take to arrive whole
    streams_per_token: int = 16  # open event streams per token
    max_connections: int = field(default_factory=default_max_connections)
    header_timeout: float = 10.0  # seconds a request's head may take to arrive (the first: from the connection)
    # seconds a connection may stay idle between a response and the next request: over the agent's heartbeat
    # (15 s) and a chat's turns, so they reuse their connection; idle ones beyond the cap make room for new ones
    keep_alive: float = 60.0
    max_head: int = 64 * KiB  # a request's line and headers
    write_timeout: float = 10.0  # seconds an answer may wait on a client that reads none of it
    public_bodies: int = 32  # requests that need no token reading their bodies at once (login forms)


class Verdict(Enum):
    AUTHENTICATED = "authenticated"
    PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str  # a machine word: misdirected_request, forbidden_origin, unauthorized, ...
    message: str
    detail: str


# The request's headers (lowercase names, the first of each) and path in; a Verdict, or the refusal to
# answer with (``unauthorized(...)``).
Authenticate = Callable[[Mapping[str, str], str], Awaitable[Verdict | Refusal]]


# A refusal as the body of the answer (JSON).
Render = Callable[[Refusal], dict[str, object]]


def coder_shape(refusal: Refusal) -> dict[str, object]:
    """``{"message", "detail"}``: the workspace agent's and the control plane's error shape."""
    return {"message": refusal.message, "detail": refusal.detail}


def bearer_token(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def unauthorized(detail: str) -> Refusal:
    return Refusal(401, "unauthorized", "Unauthorized.", detail)


def _never(path: str) -> bool:
    return False


def _nothing() -> None:
    return None


class RequestGuard:
    """Pure ASGI middleware: Host, Origin, authentication and size before the app sees the request."""

    def __init__(
        self,
        app: ASGIApp,
        edge: Edge,
        *,
        authenticate: Authenticate | None = None,
        streams: Callable[[str], bool] = _never,
        stream_key: Callable[[Mapping[str, str]], str | Awaitable[str]] = bearer_token,
        render: Render = coder_shape,
    ) -> None:
        self.app, self.edge, self.authenticate = app, edge, authenticate
        self.streams, self.stream_key, self.render = streams, stream_key, render
        self.open_streams: Counter[str] = Counter()
        self.public_bodies = 0  # requests without a token whose bodies are being read

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self.foreign(scope, headers)
        limit, public = self.edge.max_body, False
        if refusal is None and self.authenticate is not None:
            verdict = await self.authenticate(headers, scope["path"])
            if isinstance(verdict, Refusal):
                refusal = verdict
            elif verdict is Verdict.PUBLIC:
                limit, public = self.edge.max_public_body, True
        if refusal is None:
            refusal = _declared_too_large(headers, limit)
        if refusal is not None:
            await self.refuse(scope, send, refusal)
        elif public and _has_body(headers):
            await self._public_body(scope, receive, send)
        elif scope["type"] == "http" and _opens_stream(scope["method"], headers) and self.streams(scope["path"]):
            await self._stream(scope, receive, send, headers)
        else:
            await self._limited(scope, receive, send, limit, _has_body(headers))

    def foreign(self, scope: Scope, headers: Mapping[str, str]) -> Refusal | None:
        """Why a request for another host, or from another site's page, is refused (None: it is ours)."""
        server = scope.get("server")
        port = server[1] if server else None
        host = headers.get("host")
        if host is None or not self.edge.hosts.allows(host, port, _DEFAULT_PORTS.get(scope.get("scheme", ""), 80)):
            detail = f"this server does not answer to the host {host!r}; serve another name with --allow-host NAME"
            return Refusal(421, "misdirected_request", "Misdirected request.", detail)
        origin = headers.get("origin")
        if origin is not None and not self.edge.hosts.allows_origin(origin, port):
            detail = f"requests from the page at {origin!r} are refused: only this server's own pages may call it"
            return Refusal(403, "forbidden_origin", "Forbidden.", detail)
        site, mode = headers.get("sec-fetch-site"), headers.get("sec-fetch-mode")
        if origin is None and site in ("cross-site", "same-site") and mode != "navigate":
            detail = f"a {site} request from a web page is refused: only this server's own pages may call it"
            return Refusal(403, "forbidden_origin", "Forbidden.", detail)
        return None

    async def refuse(self, scope: Scope, send: Send, refusal: Refusal) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refusal.message})
            return
        body = json.dumps(self.render(refusal)).encode()
        response_headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        if refusal.status == 401:
            response_headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": refusal.status, "headers": response_headers})
        await send({"type": "http.response.body", "body": body})

    async def _stream(self, scope: Scope, receive: Receive, send: Send, headers: Mapping[str, str]) -> None:
        given = self.stream_key(headers)
        key = hashlib.sha256((await given if inspect.isawaitable(given) else given).encode()).hexdigest()
        cap = self.edge.streams_per_token
        if self.open_streams[key] >= cap:
            detail = f"at most {cap} event streams may be open at once with one token; close one first"
            await self.refuse(scope, send, Refusal(429, "too_many_streams", "Too many event streams.", detail))
            return
        self.open_streams[key] += 1
        try:
            await self._limited(scope, receive, send, self.edge.max_body, _has_body(headers))
        finally:
            self.open_streams[key] -= 1
            if self.open_streams[key] <= 0:
                del self.open_streams[key]

    async def _public_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        cap = self.edge.public_bodies
        if self.public_bodies >= cap:
            detail = f"{cap} requests without a token are sending their bodies already; try again shortly"
            await self.refuse(scope, send, Refusal(503, "busy", "Service unavailable.", detail))
            return
        self.public_bodies += 1
        held = True

        def release() -> None:  # once the body is in (or refused): the handler's own work holds no place
            nonlocal held
            if held:
                held = False
                self.public_bodies -= 1

        try:
            await self._limited(scope, receive, send, self.edge.max_public_body, True, release)
        finally:
            release()

    async def _limited(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        limit: int,
        has_body: bool,
        read: Callable[[], None] = _nothing,
    ) -> None:
        """The app under the body's limit and deadline; ``read`` is called once the body is in or refused."""
        # a request that declares no body gets no deadline (its one empty message is there at once), but
        # whatever arrives is counted all the same
        body = _Body(limit, self.edge.body_timeout if has_body else None, receive, read)

        async def guarded_send(message: Message) -> None:
            if body.refusal is None:
                body.answered = body.answered or message["type"] == "http.response.start"
                await send(message)
            elif not body.answered and message["type"] == "http.response.start":
                body.answered = True  # the app answered the failed read its own way: the answer is ours
                await self.refuse(scope, send, body.refusal)

        try:
            await self.app(scope, body.receive, guarded_send)
        except Exception as failure:
            if body.refusal is None:
                if isinstance(failure, ClientDisconnect):
                    return  # gone while its body was read: nobody to answer
                raise  # the app's own failure; one that follows a body we cut is ours to answer
        if body.refusal is not None and not body.answered:
            body.answered = True
            await self.refuse(scope, send, body.refusal)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lowercase name; of a repeated one, the first."""
    found: dict[str, str] = {}
    for name, value in scope.get("headers") or ():
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found


def _opens_stream(method: str, headers: Mapping[str, str]) -> bool:
    return method == "GET" or (method == "POST" and headers.get("mcp-method") == "subscriptions/listen")


def _has_body(headers: Mapping[str, str]) -> bool:
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


def _declared_too_large(headers: Mapping[str, str], limit: int) -> Refusal | None:
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return _too_large(limit)
    return None


def _too_large(limit: int) -> Refusal:
    return Refusal(413, "body_too_large", "Request body too large.", f"at most {limit} bytes")


class _BodyRefused(HTTPException):
    """Raised from ``receive``: an HTTPException, so a framework's body parsing lets it through untouched."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.status, refusal.detail)


class _Body:
    """The request body as the app reads it: counted, under a deadline, and cut at the first refusal."""

    def __init__(self, limit: int, timeout: float | None, receive: Receive, read: Callable[[], None]) -> None:
        self.limit, self.timeout, self._receive, self._read = limit, timeout, receive, read
        self.deadline = None if timeout is None else anyio.current_time() + timeout
        self.seen, self.complete, self.answered = 0, False, False
        self.refusal: Refusal | None = None

    async def receive(self) -> Message:
        if self.refusal is not None:
            return {"type": "http.disconnect"}
        if self.complete:
            return await self._receive()  # the body is in: what follows is the client going away
        if self.deadline is None:
            return self._counted(await self._receive())
        with anyio.move_on_after(self.deadline - anyio.current_time()):
            return self._counted(await self._receive())
        detail = f"the request body did not arrive within {self.timeout:g} seconds"
        self.refusal = Refusal(408, "request_timeout", "Request timeout.", detail)
        self._read()
        raise _BodyRefused(self.refusal)

    def _counted(self, message: Message) -> Message:
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            self.complete = not message.get("more_body", False)
            if self.seen > self.limit:
                self.refusal = _too_large(self.limit)
                self._read()
                raise _BodyRefused(self.refusal)
        if self.complete or message["type"] == "http.disconnect":
            self._read()
        return message
