"""``/mcp/chats/{chat_id}`` and ``/mcp/workspaces/{name}``: find the chat, hand over to the SDK.

Every request comes authenticated with a user's API token (``Authorization: Bearer``) by
``mount.ChatMcpMount``, which loads this module (and the SDK) on the first such request, and
is served with the rights of the chat's owner: another user's chat is "not found", an agent token is
refused. The owner is checked here on every request, whatever its protocol version and headers,
before the SDK sees it: a 2026-07-28 request has no session for the SDK to check, and an
``mcp-session-id`` it carries proves nothing. ``/mcp/workspaces/{name}`` resumes the caller's MCP
chat of that workspace (the most recently updated one this endpoint created, unarchived) or
creates one, and names it in the ``X-Agentcontext-Chat`` response header. A handshake-era session
belongs to the user and chat that opened it: the SDK refuses its id from anyone else, or for
another chat; a user holds at most ``ControlSettings.mcp_sessions_per_user`` of them
(``sessions``). Host and Origin are checked for the whole server by its request guard; the SDK's
own DNS-rebinding check is therefore off here.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
import anyio.abc
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from agentcontext.control.chat_mcp.binding import OPENING, SCOPE_KEY, ChatBinding
from agentcontext.control.chat_mcp.mount import NOT_RUNNING, header, send_error, send_json, user_of
from agentcontext.control.chat_mcp.notices import ChatNotices
from agentcontext.control.chat_mcp.server import ChatMcpServer
from agentcontext.control.chat_mcp.sessions import SessionsFull, UserSessions
from agentcontext.control.chats import NewChat
from agentcontext.control.error_status import status_of
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.control.turn_cache import Recent
from agentcontext.errors import AgentContextError, NotFoundError
from agentcontext.web.recheck import Recheck

MCP_CHAT_TITLE = "MCP session"
CHAT_HEADER = b"x-agentcontext-chat"
_SESSIONS_REMEMBERED = 10_000
_OWNERS_REMEMBERED = 10_000


class ChatMcpEndpoint:
    """Serves the requests ``ChatMcpMount`` routed and authenticated; ``run`` must be running for it to serve."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.notices = ChatNotices(plane.broker, plane.chats.pending_changes)
        self.server = ChatMcpServer(plane.chats, self.notices)
        self.manager: UserSessions | None = None  # one per run: the SDK's runs only once
        self._running = False
        # session id -> chat id, tagged with the user who opened it: only that user's requests find it
        self._workspace_sessions: Recent[str] = Recent(_SESSIONS_REMEMBERED)
        # chat id -> itself, tagged with its owner, once read: a chat never changes hands, so a request of its owner
        # costs no query (a chat gone since is a JSON-RPC error from the handler)
        self._owners: Recent[str] = Recent(_OWNERS_REMEMBERED)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        settings = self.plane.settings
        async with anyio.create_task_group() as group:
            await group.start(self.notices.run)
            self.manager = UserSessions(
                self.server, per_user=settings.mcp_sessions_per_user, idle_timeout=settings.mcp_session_idle
            )
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
        try:
            await self._serve(manager, scope, receive, send, user, chat_id, remember=kind == "workspaces")
        except SessionsFull as full:  # raised before the SDK answered anything
            # a JSON-RPC error, as the SDK's own refusals: an MCP client shows its message (of another body it says
            # only "Server returned an error response")
            error = {"code": INVALID_REQUEST, "message": str(full), "data": {"limit": full.limit}}
            await send_json(send, 429, {"jsonrpc": "2.0", "id": None, "error": error})

    async def _chat(self, user: UserPrincipal, kind: str, key: str, scope: Scope) -> str:
        """The chat of the request, checked to be the user's."""
        if kind == "workspaces":
            session = header(scope, b"mcp-session-id")
            known = self._workspace_sessions.get(session, user.user_id) if session else None
            if known is None:
                chat_id = await self._workspace_chat(user, key)  # among the user's own chats
                self._owners.put(chat_id, user.user_id, chat_id)
                return chat_id
            key = known
        if self._owners.get(key, user.user_id) is None:
            await self.plane.chats.get(user, key)  # NotFoundError: not the user's, or no such chat
            self._owners.put(key, user.user_id, key)
        return key

    async def _workspace_chat(self, user: UserPrincipal, name: str) -> str:
        workspaces = await self.plane.views.workspaces(user)
        workspace = next((w for w in workspaces if name in (w.name, w.id)), None)
        if workspace is None:
            raise NotFoundError(f"workspace {name!r} not found")
        mine = [
            chat
            for chat in await self.plane.chats.listing(user)
            if chat.workspace_id == workspace.id and chat.title == MCP_CHAT_TITLE and chat.parent_id is None
        ]
        if mine:
            return max(mine, key=lambda chat: chat.updated_at).id
        created = await self.plane.chats.create(user, NewChat(workspace=workspace.id, title=MCP_CHAT_TITLE))
        return created.id

    async def _serve(
        self,
        manager: UserSessions,
        scope: Scope,
        receive: Receive,
        send: Send,
        user: UserPrincipal,
        chat_id: str,
        *,
        remember: bool,
    ) -> None:
        version = header(scope, b"mcp-protocol-version")
        # what the SDK serves as a handshake-era session: no version header, or a 2025 one
        opening = not header(scope, b"mcp-session-id") and scope["method"] == "POST"
        opening = opening and (not version or version in HANDSHAKE_PROTOCOL_VERSIONS)
        instructions = None
        if opening:
            manager.check_room(user.user_id)  # refused before any work; the SDK's admission checks again
            instructions = (await self.plane.chats.prompt(user, chat_id)).system  # for the initialize answer
        binding = ChatBinding(user, chat_id, instructions)
        owner = AccessToken(token="", client_id=f"{user.user_id}:{chat_id}", scopes=[], subject=user.user_id)
        inner: dict[str, Any] = {**scope, SCOPE_KEY: binding, "user": AuthenticatedUser(owner)}
        OPENING.set(binding)

        # a streamed answer (a session's standing GET, a 2026 listen) outlives the request that checked its token:
        # asked again before what it sends once the last answer is RECHECK_EVERY old, it ends when the token or the
        # chat is gone
        recheck = Recheck(partial(self._still, scope, user, chat_id))
        ended = anyio.CancelScope()
        started = False

        async def send_with_chat(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [*message.get("headers", []), (CHAT_HEADER, chat_id.encode())]
                session = dict(headers).get(b"mcp-session-id")
                if remember and session:
                    self._workspace_sessions.put(session.decode("latin-1"), user.user_id, chat_id)
                message = {**message, "headers": headers}
            elif ended.cancel_called:  # ending: nothing more goes out
                return
            elif message.get("more_body") and not await recheck.allowed():
                ended.cancel()
                return
            await send(message)

        with ended:
            await manager.handle_request(inner, receive, send_with_chat)
        if ended.cancel_called and started:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _still(self, scope: Scope, user: UserPrincipal, chat_id: str) -> bool:
        """The request's token still names ``user``, whose chat it still is (its workspace theirs to see)."""
        try:
            again = await user_of(self.plane, scope)
            await self.plane.chats.get(again, chat_id)
        except AgentContextError:
            return False
        return again.user_id == user.user_id
