"""The one debounce (file changes, upstream MCP notices, MCP catalog changes): real time, bounded waits."""

from __future__ import annotations

import anyio
import pytest

from agentcontext.debounce import PATIENCE, Debouncer

pytestmark = pytest.mark.anyio

QUIET = 0.05


async def settles_within(debouncer: Debouncer, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await debouncer.settled()
        return True
    return False


async def test_ten_thousand_pokes_settle_once_after_a_quiet_period() -> None:
    debouncer = Debouncer(QUIET)
    for _ in range(10_000):
        debouncer.poke()
    start = anyio.current_time()
    assert await settles_within(debouncer, 5)
    assert anyio.current_time() - start >= QUIET
    assert not await settles_within(debouncer, 10 * QUIET)


async def test_a_poke_while_the_caller_acts_is_owed_one_more_settle() -> None:
    debouncer = Debouncer(QUIET)
    debouncer.poke()
    assert await settles_within(debouncer, 5)
    debouncer.poke()  # the caller is acting on the first settle
    debouncer.poke()
    assert await settles_within(debouncer, 5)
    assert not await settles_within(debouncer, 10 * QUIET)


async def test_pokes_that_never_pause_still_settle_after_patience_quiet_periods() -> None:
    debouncer = Debouncer(QUIET)

    async def poke_forever() -> None:
        while True:
            debouncer.poke()
            await anyio.sleep(QUIET / 5)

    async with anyio.create_task_group() as group:
        group.start_soon(poke_forever)
        await anyio.sleep(0)  # the first poke is in
        start = anyio.current_time()
        assert await settles_within(debouncer, 10 * PATIENCE * QUIET)
        waited = anyio.current_time() - start
        group.cancel_scope.cancel()
    assert PATIENCE * QUIET * 0.9 <= waited < 5 * PATIENCE * QUIET
