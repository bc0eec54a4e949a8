"""The agent's one debounce: wait for changes to settle, then act once for all of them.

The file watcher (:mod:`agentcontext.agent.watcher`), each upstream MCP server's
list-changed notices (:mod:`agentcontext.workspace_mcp.client.connection`) and the rescans that MCP catalog
changes cause (:mod:`agentcontext.agent.context`) all wait this way, with the one setting
``agent.debounce_ms`` (250 ms): a quiet period that each change restarts. So that a source
that never falls quiet cannot hold its change back forever, a wait also ends
``PATIENCE`` quiet periods after it began (5 s at 250 ms).
"""

from __future__ import annotations

import anyio

PATIENCE = 20  # quiet periods a wait may last while changes keep coming


class Debouncer:
    """``poke()`` for each change; ``await settled()`` returns once they settle, then act.

    A poke while the caller acts starts the next wait: none is lost, however many arrive, and
    they cost one more action. A poke is a clock read, and a wait wakes once a quiet period
    at most, so a flood of pokes costs neither memory nor a wake-up each.
    """

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self._poked = anyio.Event()
        self._last = 0.0

    def poke(self) -> None:
        self._last = anyio.current_time()
        self._poked.set()

    async def settled(self) -> None:
        """Return once ``quiet`` seconds passed since the last poke, or ``PATIENCE`` of them since the wait began."""
        await self._poked.wait()
        deadline = anyio.current_time() + self.quiet * PATIENCE
        while (wake := min(self._last + self.quiet, deadline)) > anyio.current_time():
            await anyio.sleep_until(wake)
        self._poked = anyio.Event()  # pokes from now on are the next wait's
