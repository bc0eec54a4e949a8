"""An agent's liveness with replicas whose clocks disagree: on PostgreSQL an agent's last-seen time is written, and
its silence measured, on the database's clock, so a replica whose own clock is off neither marks a live agent
offline nor keeps a silent one online. (A replica's clock is ``models.now`` as the sync service reads it.)"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from agentcontext.control import identity
from agentcontext.control import tables as t
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.models import now
from agentcontext.control.plane import ControlPlane
from agentcontext.control.services import sync
from agentcontext.control.settings import ControlSettings
from tests.control.conftest import BOX, first_push

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SKEW = dt.timedelta(seconds=90)  # how far the skewed replica's clock is off
SETTINGS = ControlSettings(offline_after=45.0, sweep_every=3600)  # sweeps only when the test asks


@pytest.fixture
def pg(pg_migrated_database: str) -> Iterator[Database]:
    database = Database(pg_migrated_database)
    yield database
    database.dispose()


@contextlib.contextmanager
def clock_off_by(offset: dt.timedelta) -> Iterator[None]:
    """The replica's clock ``offset`` from the true time while the block runs (the sync service's ``now``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sync, "now", lambda: now() + offset)
        yield


@contextlib.asynccontextmanager
async def two_replicas(db: Database) -> AsyncIterator[tuple[ControlPlane, ControlPlane, identity.AgentPrincipal]]:
    """Two replicas of one database, and an agent that has pushed through the first."""
    issued = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    right, skewed = (ControlPlane(db, LocalBroker(), SETTINGS, secrets=BOX) for _ in range(2))  # one server key
    try:
        agent = await right.access.authenticate(issued.token)
        assert isinstance(agent, identity.AgentPrincipal)
        await right.sync.push(agent, first_push(1, initial=True))
        yield right, skewed, agent
    finally:
        await right.aclose()
        await skewed.aclose()


def silent_for(db: Database, agent_id: str, seconds: float) -> None:
    """The agent last heard from ``seconds`` ago by the database's clock (what that much silence leaves)."""
    db.write_rows(
        lambda c: c.execute(
            sa.update(t.agents)
            .where(t.agents.c.id == agent_id)
            .values(last_seen_at=sa.func.now() - dt.timedelta(seconds=seconds))
        )
    )


def seen(db: Database, agent_id: str) -> Any:
    """The agent's row: online, how long ago it was last seen by the database's clock (seconds), its version."""
    return db.read_rows(
        lambda c: c.execute(
            sa.select(
                t.agents.c.online,
                sa.extract("epoch", sa.func.now() - t.agents.c.last_seen_at).label("ago"),
                sa.literal_column("xmin::text").label("version"),
            ).where(t.agents.c.id == agent_id)
        ).one()
    )


async def test_a_replica_whose_clock_runs_ahead_marks_no_agent_offline_that_heartbeats_through_another(
    pg: Database,
) -> None:
    async with two_replicas(pg) as (right, ahead, agent):
        for _ in range(3):  # the reviewer's flapping: offline at each sweep, online at each heartbeat
            await right.sync.heartbeat(agent, {"online": True})
            with clock_off_by(SKEW):
                assert await ahead.sync.sweep() == []
            assert seen(pg, agent.agent_id).online is True

        silent_for(pg, agent.agent_id, 44)  # silent, but not for offline_after yet
        with clock_off_by(SKEW):
            assert await ahead.sync.sweep() == []
        silent_for(pg, agent.agent_id, 46)  # it stopped heartbeating: offline whichever replica sweeps
        with clock_off_by(SKEW):
            assert await ahead.sync.sweep() == [agent.agent_id]
            assert await ahead.sync.sweep() == []  # once
        assert seen(pg, agent.agent_id).online is False


async def test_a_replica_whose_clock_runs_behind_marks_an_agent_that_stopped_heartbeating_offline(
    pg: Database,
) -> None:
    async with two_replicas(pg) as (right, behind, agent):
        await right.sync.heartbeat(agent, {"online": True})
        silent_for(pg, agent.agent_id, 46)
        with clock_off_by(-SKEW):
            assert await behind.sync.sweep() == [agent.agent_id]
        assert await right.sync.sweep() == []  # once, whichever replica asks next


async def test_a_push_renews_the_agents_last_seen_time_by_the_databases_clock_whatever_its_replicas_says(
    pg: Database,
) -> None:
    """A push rewrites the agent's row only when its last-seen time got old (``TOUCH_EVERY``): told by the database's
    clock, a replica behind still renews it (else an agent that pushes through it would be marked offline), and a
    replica ahead does not rewrite a row just written."""
    async with two_replicas(pg) as (right, skewed, agent):
        silent_for(pg, agent.agent_id, 30)
        with clock_off_by(-SKEW):
            await skewed.sync.push(agent, first_push(2, agents_md="Use pytest -x.\n"))
        assert seen(pg, agent.agent_id).ago < 5

        await right.sync.heartbeat(agent, {"online": True})
        before = seen(pg, agent.agent_id)
        with clock_off_by(SKEW):
            await skewed.sync.push(agent, first_push(3, agents_md="Use pytest -q.\n"))
        assert seen(pg, agent.agent_id).version == before.version  # the row was not written again
