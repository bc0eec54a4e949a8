"""Handshake-era MCP sessions, bounded per user, so that no user can take the sessions everyone shares.

A 2025-era session holds a transport, a server task and its streams (about 40 KB) until its client
ends it (``DELETE``) or it idles out. The SDK's manager caps them for the whole server (10,000;
beyond, every user's ``initialize`` gets 503) and idles them out after 30 minutes, so one token
could fill the server in about 70 s and hold it. Here each user may hold at most ``per_user``
sessions, whatever tokens they use; the global cap stays as a last resort, and sessions idle out
sooner (``ControlSettings.mcp_session_idle``). 2026-07-28 requests have no session: their
``subscriptions/listen`` streams count against the per-token stream cap instead (``web.guard``).
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


class SessionsFull(Exception):
    """The user holds ``limit`` sessions already: raised before a new one is made."""

    def __init__(self, limit: int, idle_timeout: float) -> None:
        super().__init__(
            f"at most {limit} MCP sessions may be open at once for one user; end one you no longer use (an HTTP DELETE"
            f" with its mcp-session-id, as clients do when they close) or wait for one to idle out"
            f" ({idle_timeout:g} s without a request or an open stream)"
        )
        self.limit = limit


class UserSessions(StreamableHTTPSessionManager):
    """The SDK's session manager, counting each user's sessions where it opens and ends them.

    Every session the SDK keeps passes through ``_admit_session`` (under its creation lock, so two
    openings cannot both take the last place) and leaves through ``_discard_session``, however it
    ends (``DELETE``, idle, a crash, a refused opening): the count is never stale. The session's
    owner is the ``subject`` of the credential the endpoint hands over (the user's id).
    """

    def __init__(self, app: Any, *, per_user: int, idle_timeout: float) -> None:
        super().__init__(app=app, security_settings=None, session_idle_timeout=idle_timeout)
        self.per_user = per_user
        self._held: dict[str, set[str]] = {}  # user id -> ids of the sessions the user holds
        self._holder: dict[str, str] = {}  # session id -> user id

    def check_room(self, user_id: str) -> None:
        """Raises: SessionsFull: the user may not open another session now."""
        if len(self._held.get(user_id, ())) >= self.per_user:
            raise SessionsFull(self.per_user, self.session_idle_timeout or 0.0)

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        # the endpoint names the user on every request: nothing anonymous reaches the manager
        user_id = (requestor["subject"] if requestor is not None else None) or ""
        self.check_room(user_id)
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            self._held.setdefault(user_id, set()).add(transport.mcp_session_id)
            self._holder[transport.mcp_session_id] = user_id
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        user_id = self._holder.pop(session_id, None)  # None: forgotten already (a DELETE, then its task's end)
        if user_id is not None:
            held = self._held[user_id]
            held.discard(session_id)
            if not held:
                del self._held[user_id]
        await super()._discard_session(session_id, transport)
