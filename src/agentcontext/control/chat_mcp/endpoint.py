"""``/mcp/chats/{chat_id}`` and ``/mcp/workspaces/{name}``: find the chat, hand over to the SDK.

Every request comes authenticated with a user's API token (``Authorization: Bearer``) by
``mount.ChatMcpMount``, which loads this module (and the SDK) on the first such request, and
is served with the rights of the chat's owner: another user's chat is "not found", an agent token is
refused. ``/mcp/workspaces/{name}`` resumes the caller's MCP chat of that workspace (the most
recently updated one this endpoint created, unarchived) or creates one, and names it in the
``X-Agentcontext-Chat`` response header. A handshake-era session belongs to the user and
chat that opened it: the SDK refuses its id from anyone else, or for another chat. Host and
Origin are checked for the whole server by its request guard; the SDK's own DNS-rebinding
check is therefore off here.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import anyio
import anyio.abc
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from agentcontext.control.chat_mcp.binding import OPENING, SCOPE_KEY, ChatBinding
from agentcontext.control.chat_mcp.mount import NOT_RUNNING, header, send_error
from agentcontext.control.chat_mcp.notices import ChatNotices
from agentcontext.control.chat_mcp.server import ChatMcpServer
from agentcontext.control.chats import NewChat
from agentcontext.control.error_status import status_of
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import AgentContextError, NotFoundError

MCP_CHAT_TITLE = "MCP session"
CHAT_HEADER = b"x-agentcontext-chat"
_SESSIONS_REMEMBERED = 10_000


class ChatMcpEndpoint:
    """Serves the requests ``ChatMcpMount`` routed and authenticated; ``run`` must be running for it to serve."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.notices = ChatNotices(plane.broker, plane.pending_changes)
        self.server = ChatMcpServer(plane, self.notices)
        self.manager: StreamableHTTPSessionManager | None = None  # one per run: the SDK's runs only once
        self._running = False
        self._workspace_sessions: OrderedDict[str, str] = OrderedDict()  # session id -> chat id

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with anyio.create_task_group() as group:
            await group.start(self.notices.run)
            self.manager = StreamableHTTPSessionManager(app=self.server, security_settings=None)
            async with self.manager.run():
                self._running = True
                task_status.started()
                try:
                    await anyio.sleep_forever()
                finally:
                    self._running = False
                    group.cancel_scope.cancel()

    async def serve(self, scope: Scope, receive: Receive, send: Send, user: UserPrincipal, kind: str, key: str) -> None:
        """Serve a request of ``user`` (authenticated by the mount) to ``/mcp/{kind}/{key}``."""
        manager = self.manager
        if not self._running or manager is None:
            await send_error(send, 503, NOT_RUNNING)
            return
        try:
            chat_id = await self._chat(user, kind, key, scope)
        except AgentContextError as exc:
            await send_error(send, status_of(exc)[0], str(exc))
            return
        await self._serve(manager, scope, receive, send, user, chat_id, remember=kind == "workspaces")

    async def _chat(self, user: UserPrincipal, kind: str, key: str, scope: Scope) -> str:
        if kind == "chats":
            if not header(scope, b"mcp-session-id"):  # a session's later requests are checked by the SDK
                await self.plane.get_chat(user, key)
            return key
        session = header(scope, b"mcp-session-id")
        known = self._workspace_sessions.get(session) if session else None
        return known or await self._workspace_chat(user, key)

    async def _workspace_chat(self, user: UserPrincipal, name: str) -> str:
        workspaces = await self.plane.list_workspaces(user)
        workspace = next((w for w in workspaces if w["name"] == name or w["id"] == name), None)
        if workspace is None:
            raise NotFoundError(f"workspace {name!r} not found")
        mine = [
            chat
            for chat in await self.plane.list_chats(user)
            if chat["workspace_id"] == workspace["id"] and chat["title"] == MCP_CHAT_TITLE and chat["parent_id"] is None
        ]
        if mine:
            return str(max(mine, key=lambda chat: chat["updated_at"])["id"])
        created = await self.plane.create_chat(user, NewChat(workspace=workspace["id"], title=MCP_CHAT_TITLE))
        return str(created["id"])

    async def _serve(
        self,
        manager: StreamableHTTPSessionManager,
        scope: Scope,
        receive: Receive,
        send: Send,
        user: UserPrincipal,
        chat_id: str,
        *,
        remember: bool,
    ) -> None:
        opening = not header(scope, b"mcp-session-id") and scope["method"] == "POST"
        instructions = None
        if opening and header(scope, b"mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS:
            instructions = (await self.plane.prompt(user, chat_id)).system  # for the initialize answer
        binding = ChatBinding(user, chat_id, instructions)
        owner = AccessToken(token="", client_id=f"{user.user_id}:{chat_id}", scopes=[])
        inner: dict[str, Any] = {**scope, SCOPE_KEY: binding, "user": AuthenticatedUser(owner)}
        OPENING.set(binding)

        async def send_with_chat(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (CHAT_HEADER, chat_id.encode())]
                session = dict(headers).get(b"mcp-session-id")
                if remember and session:
                    self._remember(session.decode("latin-1"), chat_id)
                message = {**message, "headers": headers}
            await send(message)

        await manager.handle_request(inner, receive, send_with_chat)

    def _remember(self, session: str, chat_id: str) -> None:
        self._workspace_sessions[session] = chat_id
        self._workspace_sessions.move_to_end(session)
        while len(self._workspace_sessions) > _SESSIONS_REMEMBERED:
            self._workspace_sessions.popitem(last=False)
