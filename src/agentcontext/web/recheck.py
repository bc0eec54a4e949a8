"""Whether a stream's listener may still listen: a stream outlives the request that checked its token.

Without asking again, a revoked token, a logged-out session or a deleted user kept receiving a
chat's events, the dashboard's and a chat MCP session's notices for as long as the stream stayed
open. Each asks ``still`` before what it sends once the last answer is ``RECHECK_EVERY`` seconds
old, and at each ping whatever its age, and ends when the answer is no.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

RECHECK_EVERY = 2.0  # seconds an answer holds: as long as a checked token is trusted (``auth_ttl``)


class Recheck:
    """``still`` asked again once its last answer is older than ``RECHECK_EVERY`` seconds (or now, at a ping)."""

    def __init__(self, still: Callable[[], Awaitable[bool]]) -> None:
        self._still = still
        self._checked = anyio.current_time()

    async def allowed(self, *, now: bool = False) -> bool:
        if not now and anyio.current_time() - self._checked < RECHECK_EVERY:
            return True
        self._checked = anyio.current_time()
        return await self._still()
