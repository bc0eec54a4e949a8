"""``/mcp``: a chat's MCP request routed and authenticated here, then served by the SDK-backed endpoint.

The endpoint runs on the official MCP SDK, which takes 1-1.5 s of CPU to import. The server's start
does not wait for it: a running server loads it in a worker thread just after it starts
(``preload``), because a chat client's first connection must not wait for it either (Claude Code's
``-p`` and Codex's ``exec`` send their first request without a server that has not connected within
a second or two: docs/chat-mcp.md). An app built without its background work loads it on its first
authenticated MCP request. A request that is misrouted or not a user's is answered here and loads
nothing. This module imports no MCP.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from starlette.types import Receive, Scope, Send

from agentcontext.control.error_status import status_of
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import AgentContextError, AuthError

if TYPE_CHECKING:
    from agentcontext.control.chat_mcp.endpoint import ChatMcpEndpoint

_log = logging.getLogger(__name__)
_ROUTE = re.compile(r"^/(chats|workspaces)/([^/]+)/?$")
NOT_RUNNING = "the MCP endpoint is not running"


class ChatMcpMount:
    """The pure ASGI app mounted at ``/mcp``; it serves while it has a task group (``serve_in``)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self._group: anyio.abc.TaskGroup | None = None
        self._endpoint: ChatMcpEndpoint | None = None
        self._loading = anyio.Lock()

    def serve_in(self, group: anyio.abc.TaskGroup | None) -> None:
        """The task group the endpoint starts in when it is loaded (the server's, while it runs; None: stopping)."""
        self._group = group

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        match = _ROUTE.match(_relative_path(scope))
        if match is None:
            await send_error(send, 404, "not found: use /mcp/chats/{chat_id} or /mcp/workspaces/{name}")
            return
        if self._group is None:
            await send_error(send, 503, NOT_RUNNING)
            return
        try:
            user = await user_of(self.plane, scope)
        except AgentContextError as exc:
            await send_error(send, status_of(exc)[0], str(exc))
            return
        endpoint = await self._loaded()
        if endpoint is None:
            await send_error(send, 503, NOT_RUNNING)
            return
        await endpoint.serve(scope, receive, send, user, match.group(1), match.group(2))

    async def preload(self) -> None:
        """Loads and starts the endpoint now, so that the first chat to connect does not wait for the SDK. A
        failure is logged and left to the first request, which tries again and answers with it."""
        try:
            await self._loaded()
        except Exception:  # the server runs on; only /mcp needs the SDK
            _log.warning("the MCP endpoint could not be loaded ahead of its first request", exc_info=True)

    async def _loaded(self) -> ChatMcpEndpoint | None:
        """The endpoint, loaded and started on the first call (None: the server is stopping)."""
        if self._endpoint is not None:
            return self._endpoint
        async with self._loading:
            if self._endpoint is None:
                # the loop keeps serving; a server stopping meanwhile does not wait for the import
                endpoint_class = await anyio.to_thread.run_sync(_endpoint_class, abandon_on_cancel=True)
                group = self._group
                if group is None:
                    return None
                endpoint = endpoint_class(self.plane)
                await group.start(endpoint.run)
                self._endpoint = endpoint
        return self._endpoint


def _endpoint_class() -> type[ChatMcpEndpoint]:
    from agentcontext.control.chat_mcp.endpoint import ChatMcpEndpoint  # the MCP SDK's import: why this is lazy

    return ChatMcpEndpoint


def _relative_path(scope: Scope) -> str:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


async def send_error(send: Send, status: int, message: str) -> None:
    await send_json(send, status, {"message": message, "detail": None})


async def send_json(send: Send, status: int, content: Mapping[str, object]) -> None:
    body = json.dumps(content).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="agentcontext"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def user_of(plane: ControlPlane, scope: Scope) -> UserPrincipal:
    """The user whose API token the request carries (asked again by a standing stream's ``Recheck``).

    Raises:
        AuthError: no token, one that names nobody, or an agent's.
    """
    value = header(scope, b"authorization")
    token = value[7:].strip() if value[:7].lower() == "bearer " else ""
    if not token:
        raise AuthError("a bearer token is required (Authorization: Bearer <token>)")
    principal = await plane.access.authenticate(token)
    if not isinstance(principal, UserPrincipal):
        raise AuthError("this endpoint needs a user's API token, not an agent token")
    return principal
