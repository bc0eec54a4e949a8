"""A heartbeat's recheck of discovered files that finds none: its CPU, on PostgreSQL.

    .venv/bin/python bench/recheck.py [--agents 200] [--rounds 5]

An agent's first heartbeat after a control plane starts rechecks the instruction files its chats found on
demand (``SyncService.recheck_discovered``); after a restart every agent's comes within a heartbeat's
15 s (2,000 of them in ``bench/load.py --pace realistic`` at the goal's size), and most find nothing to
ask about. Here ``--agents`` agents, each pushed once with one chat and nothing discovered, are each
rechecked once a round on a throwaway PostgreSQL cluster (``TempCluster``); reported: this process's CPU
a recheck (the database's own is another process), median over the rounds.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.control.test_flow import big_snapshot
from tests.pg_cluster import TempCluster

from agentcontext.control import identity, migrate
from agentcontext.control.chats import NewChat
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane


async def measure(url: str, agents: int, rounds: int) -> list[float]:
    db = Database(url)
    migrate.upgrade(db)
    plane = ControlPlane(db, LocalBroker())
    user = db.write(lambda s: identity.create_user(s, "bench"))
    person = await plane.access.authenticate(user.token)
    assert isinstance(person, identity.UserPrincipal)
    ids = []
    for n in range(agents):
        issued = db.write(partial(identity.create_agent, workspace_name=f"ws-{n}", name="main"))
        agent = await plane.access.authenticate(issued.token)
        assert isinstance(agent, identity.AgentPrincipal)
        await plane.sync.push(agent, big_snapshot(1, initial=True, files=3))
        await plane.chats.create(person, NewChat(workspace=f"ws-{n}"))
        ids.append(agent.agent_id)
    per_round = []
    for _ in range(rounds):
        start = time.process_time()
        for agent_id in ids:
            assert await plane.sync.recheck_discovered(agent_id, force=True) == []
        per_round.append((time.process_time() - start) / agents * 1e6)
    await plane.aclose()
    db.dispose()
    return per_round


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with TempCluster.start() as cluster:
        url = cluster.create_database()
        rounds = anyio.run(measure, url, args.agents, args.rounds, backend_options={"use_uvloop": True})
    print(f"{platform.machine()}, Python {platform.python_version()}: {args.agents} agents, {args.rounds} rounds")
    print(
        f"a recheck that finds nothing: {statistics.median(rounds):.0f} us CPU (rounds {min(rounds):.0f} to "
        f"{max(rounds):.0f})"
    )


if __name__ == "__main__":
    main()
