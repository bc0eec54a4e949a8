"""The server's collector freezes what it tracks, so full collections stay short; a thaw frees frozen cycles.

Freezing is only sound because what an open event stream holds dies by its reference counts when the
stream closes: a frozen object is never collected, so a stream whose objects formed cycles would be kept
until the next thaw. Both are held here with a real server and a real stream.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx
import pytest

from agentcontext.control.event_stream import EventStream
from agentcontext.server.app import build_app as control_app
from agentcontext.server.collector import Collector, Thaw
from tests.attacks.http_surfaces import control_surface, guarded_serving
from tests.control.conftest import CONTROL_EDGE

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class Node:
    me: Node | None = None


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """The test process's collector as it was: nothing left frozen, the default thresholds."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def frozen(target: object) -> bool:
    return not any(o is target for o in gc.get_objects())  # the frozen are not listed


@pytest.mark.usefixtures("collector_restored")
async def test_what_the_collector_tracks_is_frozen_and_a_thaw_frees_a_cycle_kept_frozen() -> None:
    cycle = Node()
    cycle.me = cycle
    ref = weakref.ref(cycle)
    async with anyio.create_task_group() as group:
        group.start_soon(Collector(freeze_every=0.05, thaw_every=1.0).run)
        with anyio.fail_after(5):
            while not frozen(cycle):
                await anyio.sleep(0.02)
        assert gc.get_threshold()[2] == 100  # automatic full collections rarer: the freezer keeps gen 2 small
        del cycle
        gc.collect()
        assert ref() is not None  # garbage, but frozen: no collection frees it
        with anyio.fail_after(10):  # the thaw does
            while ref() is not None:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()


def test_a_thaw_that_finds_next_to_no_garbage_doubles_the_gap_up_to_the_longest() -> None:
    collector = Collector(thaw_every=600.0, thaw_at_least_every=3600.0)
    clean = Thaw(walked=800_000, freed=12, seconds=0.9)
    gaps = [600.0]
    for _ in range(4):
        gaps.append(collector.next_gap(gaps[-1], clean))
    assert gaps == [600.0, 1200.0, 2400.0, 3600.0, 3600.0]


def test_a_thaw_that_finds_garbage_halves_the_gap_down_to_the_shortest() -> None:
    collector = Collector(thaw_every=600.0, thaw_at_least_every=3600.0)
    dirty = Thaw(walked=800_000, freed=20_000, seconds=0.9)  # 2.5% of what it walked
    assert collector.next_gap(3600.0, dirty) == 1800.0
    assert collector.next_gap(900.0, dirty) == 600.0
    assert collector.next_gap(600.0, dirty) == 600.0


@dataclass(frozen=True, slots=True)
class CountingCollector(Collector):
    thaws: list[float] = field(default_factory=list)

    def thaw(self) -> Thaw:
        self.thaws.append(anyio.current_time())
        return Collector.thaw(self)  # zero-argument super() fails in a slots dataclass


@pytest.mark.usefixtures("collector_restored")
async def test_thaws_come_further_apart_while_they_find_nothing_to_free() -> None:
    collector = CountingCollector(freeze_every=0.01, thaw_every=0.1, thaw_at_least_every=0.4)
    async with anyio.create_task_group() as group:
        group.start_soon(collector.run)
        started = anyio.current_time()
        with anyio.fail_after(20):
            while len(collector.thaws) < 4:
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    times = [started, *collector.thaws]
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    # a gap is never shorter than the collector's (each thaw waits for it), whatever else the machine runs
    assert gaps[1] >= 0.2 - 0.001
    assert gaps[2] >= 0.4 - 0.001
    assert gaps[3] >= 0.4 - 0.001


@pytest.mark.usefixtures("collector_restored")
async def test_an_event_streams_objects_die_by_their_reference_counts_when_it_closes(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as control:
        world = control.world
        chat = await world.chat()
        app = control_app(world.plane, background=False, edge=CONTROL_EDGE)
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        async with guarded_serving(app, CONTROL_EDGE) as served, httpx.AsyncClient(base_url=served.url) as client:
            async with client.stream("GET", f"/api/v1/chats/{chat['id']}/events", headers=headers) as response:
                lines = response.aiter_lines()
                with anyio.fail_after(10):
                    assert (await anext(lines)).startswith("event: state")
                streams = [weakref.ref(o) for o in gc.get_objects() if isinstance(o, EventStream)]
                assert len(streams) == 1
                gc.freeze()  # everything the open stream holds, set aside as the server's collector does
            with anyio.fail_after(10):  # the server sees the close; no collection runs meanwhile
                while streams[0]() is not None:
                    await anyio.sleep(0.05)
