"""What reaches the control plane's routes at all: the request guard (``web.guard``) with its rules here.

``/api/`` and ``/mcp/`` (each chat over MCP) need a valid bearer token (a user's or an
agent's) before the body is read; the route then decides whether that kind of token may do
it. The dashboard's pages, its login form, ``/healthz`` and the API document are public at
the edge: the dashboard checks its login cookie before it reads a form, and a public body is
at most ``Edge.max_public_body``. Event streams (a chat's, the dashboard's, an MCP session's
standing GET, a 2026-07-28 MCP ``subscriptions/listen``) are capped per token, a dashboard session
counting as the token it was made with.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import cookie_parser

from agentcontext.control.identity import token_hash
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import AuthError, UnavailableError
from agentcontext.web.guard import Authenticate, Refusal, Verdict, bearer_token, unauthorized

_STREAMS = re.compile(r"/api/v1/chats/[^/]+/events|/ui/events|/mcp/(?:chats|workspaces)/[^/]+/?")
SESSION_COOKIE = "agentcontext_session"  # the dashboard's login cookie


def is_stream(path: str) -> bool:
    return _STREAMS.fullmatch(path) is not None


def stream_key(plane: ControlPlane) -> Callable[[Mapping[str, str]], Awaitable[str]]:
    """The token a stream is opened with, as its hash: the bearer token's, else that of the token the dashboard
    session in the login cookie was made with (an unknown session counts as itself)."""

    async def key(headers: Mapping[str, str]) -> str:
        token = bearer_token(headers)
        if token:
            return token_hash(token)
        secret = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE, "")
        try:
            return (await plane.access.session(secret)).token_hash
        except (AuthError, UnavailableError):  # refused by the page itself; counted alone meanwhile
            return token_hash(secret)

    return key


def authenticator(plane: ControlPlane) -> Authenticate:
    async def authenticate(headers: Mapping[str, str], path: str) -> Verdict | Refusal:
        if not path.startswith(("/api/", "/mcp/")):
            return Verdict.PUBLIC
        token = bearer_token(headers)
        if not token:
            return unauthorized("a bearer token is required (Authorization: Bearer <token>)")
        try:
            await plane.access.authenticate(token)
        except AuthError as exc:
            return unauthorized(str(exc))
        except UnavailableError as exc:  # the database cannot be asked: nothing is known of the token
            return Refusal(503, "unavailable", "Unavailable.", str(exc))
        return Verdict.AUTHENTICATED

    return authenticate
