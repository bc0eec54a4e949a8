"""The server's collector freezes what it tracks, so full collections stay short; a thaw frees frozen cycles.

Freezing is only sound because what an open event stream holds dies by its reference counts when the
stream closes: a frozen object is never collected, so a stream whose objects formed cycles would be kept
until the next thaw. Both are held here with a real server and a real stream.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from agentcontext.control.event_stream import EventStream
from agentcontext.server.app import build_app as control_app
from agentcontext.server.collector import Collector
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
