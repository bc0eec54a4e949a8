"""What finding its route costs each of the busiest requests, in the app ``agentcontext server`` serves.

    .venv/bin/python bench/routing.py [--count 20000]

Starlette tries the app's routes in order, each route's pattern against the request, until one matches
in full. For each request ``api.BUSIEST_FIRST`` names (and ``/healthz``, ``bench/percpu.py``'s floor), this
prints the matched route's place in that order and the CPU microseconds of the tries (``process_time`` over
``--count`` lookups, the median of 5 rounds). The app is built over a SQLite file; nothing is served.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from starlette.routing import BaseRoute, Match

from agentcontext.control import migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.server.app import build_app

CHAT = "0b6c1f6e-4d2a-4f7e-9a51-3c2b1d0e9f87"
# the requests themselves (not imported from api.BUSIEST_FIRST: this also runs on code from before it)
REQUESTS = (
    ("GET", f"/api/v1/chats/{CHAT}/prompt"),
    ("POST", f"/api/v1/chats/{CHAT}/tools/read_skill"),
    ("POST", "/api/v1/agent/heartbeat"),
    ("POST", "/api/v1/agent/context"),
    ("PUT", f"/api/v1/chats/{CHAT}/context"),
    ("GET", f"/api/v1/chats/{CHAT}/events"),
    ("GET", "/healthz"),
)


def lookup(routes: list[BaseRoute], scope: dict[str, object]) -> int:
    """The place of the first route that matches ``scope`` in full, trying each in turn as Starlette does."""
    for place, route in enumerate(routes):
        if route.matches(scope)[0] is Match.FULL:
            return place
    raise LookupError(scope["path"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        database = Database(f"sqlite:///{Path(tmp) / 'control.db'}")
        migrate.upgrade(database)
        routes = build_app(ControlPlane(database, LocalBroker(), link=AgentLink()), background=False).router.routes
        database.dispose()
    print(f"{len(routes)} routes")
    for method, path in REQUESTS:
        scope: dict[str, object] = {"type": "http", "method": method, "path": path, "root_path": "", "headers": []}
        place = lookup(routes, scope)
        rounds = []
        for _ in range(5):
            start = time.process_time()
            for _ in range(args.count):
                lookup(routes, scope)
            rounds.append((time.process_time() - start) / args.count * 1e6)
        shown = path.replace(CHAT, "{chat_id}")
        print(f"{method:5} {shown:45} place {place:3}  {statistics.median(rounds):6.1f} us")


if __name__ == "__main__":
    main()
