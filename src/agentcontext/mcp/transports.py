"""Serving the MCP server: over stdio, or streamable HTTP at ``/mcp`` with a bearer token.

HTTP refuses to start on a non-loopback address without a token; with a token, every
request must carry ``Authorization: Bearer <token>`` or gets 401 (compared in constant
time). On loopback the SDK's DNS-rebinding protection stays on. uvicorn handles SIGINT and
SIGTERM: open streams are closed and the process exits cleanly.
"""

from __future__ import annotations

import hmac
import ipaddress
import json

import anyio
import uvicorn
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

from agentcontext.errors import ConfigError
from agentcontext.mcp.server import ContextServer


async def serve_stdio(server: ContextServer) -> None:
    """Serve one session over stdin and stdout until the client closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """Pure ASGI middleware: HTTP requests need ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"error": "unauthorized", "message": "A valid bearer token is required."}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Bearer realm="agentcontext"'),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(server: ContextServer, host: str, token: str | None) -> ASGIApp:
    """The streamable HTTP app at ``/mcp``, behind the bearer check when a token is set.

    Raises:
        ConfigError: a non-loopback address without a token.
    """
    if token is None and not is_loopback(host):
        raise ConfigError(f"refusing to serve on {host} without --token: only loopback addresses may go without one")
    app: ASGIApp = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    return BearerAuth(app, token) if token else app


def serve_http(server: ContextServer, host: str, port: int, token: str | None) -> None:
    """Run uvicorn until SIGINT or SIGTERM: sessions close, then the process ends by that signal.

    Lifecycle lines go to stderr (no access log: requests may carry tokens in their URLs).
    """
    app = http_app(server, host, token)
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False, lifespan="on")


def run_stdio(server: ContextServer) -> None:
    anyio.run(serve_stdio, server)
