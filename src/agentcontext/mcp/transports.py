"""Serving the MCP server: over stdio, or streamable HTTP at ``/mcp``.

HTTP refuses to start on a non-loopback address without a token; with a token, every
request must carry ``Authorization: Bearer <token>`` or gets 401 (compared in constant
time) before its body is read. The request guard (``web.guard``) answers only the names this
server serves (loopback names on its port, the listen address, ``--allow-host``) and refuses
other sites' pages; the SDK's own DNS-rebinding protection is given the same names. uvicorn
runs with the edge's connection limits and handles SIGINT and SIGTERM: open streams are
closed and the process exits cleanly.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import replace

import anyio
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.types import ASGIApp

from agentcontext.errors import ConfigError
from agentcontext.mcp.server import ContextServer
from agentcontext.web import serving
from agentcontext.web.guard import Authenticate, Edge, Refusal, RequestGuard, Verdict, unauthorized
from agentcontext.web.hosts import is_loopback

__all__ = ["http_app", "is_loopback", "mcp_edge", "run_stdio", "serve_http", "serve_stdio"]


async def serve_stdio(server: ContextServer) -> None:
    """Serve one session over stdin and stdout until the client closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def mcp_edge(edge: Edge | None = None) -> Edge:
    """``edge`` (default: loopback only) with the SDK's body cap."""
    return replace(edge or Edge(), max_body=DEFAULT_MAX_REQUEST_BODY_SIZE)


def _bearer(token: str) -> Authenticate:
    expected = f"Bearer {token}".encode()

    async def authenticate(headers: Mapping[str, str], path: str) -> Verdict | Refusal:
        given = headers.get("authorization", "").encode()
        if hmac.compare_digest(given, expected):
            return Verdict.AUTHENTICATED
        return unauthorized("A valid bearer token is required.")

    return authenticate


def _error_shape(refusal: Refusal) -> dict[str, object]:
    """The HTTP transport's errors: ``{"error", "message"}``, as OAuth-style clients expect."""
    return {"error": refusal.code, "message": refusal.detail}


def http_app(server: ContextServer, host: str, port: int, token: str | None, edge: Edge | None = None) -> ASGIApp:
    """The streamable HTTP app at ``/mcp`` behind the request guard (with the bearer check when a token is set).

    Raises:
        ConfigError: a non-loopback address without a token.
    """
    if token is None and not is_loopback(host):
        raise ConfigError(f"refusing to serve on {host} without --token: only loopback addresses may go without one")
    served = mcp_edge(edge)
    hosts, origins = served.hosts.sdk_patterns(port)
    security = TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)
    app = server.streamable_http_app(
        streamable_http_path="/mcp", host=host, transport_security=security, max_request_body_size=served.max_body
    )
    return RequestGuard(
        app,
        served,
        authenticate=_bearer(token) if token else None,
        streams=lambda path: path == "/mcp",
        render=_error_shape,
    )


def serve_http(server: ContextServer, host: str, port: int, token: str | None, edge: Edge | None = None) -> None:
    """Run uvicorn until SIGINT or SIGTERM: sessions close, then the process ends by that signal.

    Lifecycle lines go to stderr (no access log: requests may carry tokens in their URLs).
    """
    app = http_app(server, host, port, token, edge)
    config = serving.GuardedConfig(
        app, mcp_edge(edge), host=host, port=port, log_level="info", access_log=False, lifespan="on"
    )
    serving.run(config, "--http")


def run_stdio(server: ContextServer) -> None:
    anyio.run(serve_stdio, server)
