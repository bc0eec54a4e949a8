"""What the dashboard's live updates listen to: each accepted push is an event on the agent's snapshot topic."""

from __future__ import annotations

import anyio
import pytest

from agentcontext.control.events import snapshot_topic
from tests.control.conftest import first_push
from tests.control.test_api import World
from tests.dashboard.test_pages import agent_id

pytestmark = [pytest.mark.anyio]


async def test_an_accepted_push_is_announced_on_the_agents_snapshot_topic_and_a_refused_one_is_not(
    world: World,
) -> None:
    agent = await agent_id(world, "alice")
    with world.plane.broker.subscribe([snapshot_topic(agent)]) as receive:
        assert (await world.push(first_push(2))).json()["accepted"] is True
        with anyio.fail_after(5):
            event = await receive.receive()
        assert (event.kind, event.data) == ("snapshot", {"agent_id": agent, "version": 2})
        assert (await world.push(first_push(1))).json()["accepted"] is False
        with pytest.raises(anyio.WouldBlock):
            receive.receive_nowait()
