"""The control plane's hot routes served directly (``web.direct_route``) against FastAPI's own handling of them.

    .venv/bin/python bench/direct_route.py [--count 300] [--rounds 5]

One process: the app ``agentcontext server`` serves (``server.app.build_app``, the request guard
included) over a fresh SQLite file, with one user, one agent that has pushed (``tests/control``'s
``first_push``, its agent answered by the tests' fake) and one chat. Each request is an ASGI call
straight into the app (no HTTP server, no client library: what differs is all in the app). Two
ways, alternated in batches of ``--count`` requests of a kind: ``direct``, the routes as built;
``fastapi``, every direct route's app set back to FastAPI's own for the batch. Reported: each
kind's CPU a request (``process_time``, every thread), the median over ``--rounds``, and the
median of the rounds' ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/control

from tests.control.conftest import AGENT_INFO, fake_agent, first_push

from agentcontext.control import identity, migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.server.app import build_app
from agentcontext.web.direct_route import DirectRoute
from agentcontext.web.guard import Edge
from agentcontext.web.hosts import ServedHosts


class Client:
    """ASGI calls into ``app``, as a server would make them, answers collected in memory."""

    def __init__(self, app: Any, tokens: dict[str, str]) -> None:
        self.app, self.tokens = app, tokens

    async def call(self, method: str, path: str, token: str, body: Any = None) -> tuple[int, bytes]:
        raw = b"" if body is None else json.dumps(body).encode()
        headers = [(b"host", b"control"), (b"authorization", f"Bearer {self.tokens[token]}".encode())]
        if body is not None:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 50000), "server": ("control", 80), "state": {},
        }  # fmt: skip
        sent: list[dict[str, Any]] = []
        given = False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if given:
                await asyncio.sleep(3600)  # the client stays: a route never sees it leave
            given = True
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@contextmanager
def fastapis(app: Any, on: bool) -> Iterator[None]:
    """With ``on``, every direct route answered by FastAPI's own handling while the block runs."""
    swapped = []
    for route in app.router.routes:
        if on and isinstance(route, DirectRoute) and route.plan is not None:
            swapped.append((route, route.app))
            route.app = route.fastapi_app
    try:
        yield
    finally:
        for route, direct in swapped:
            route.app = direct


async def run(count: int, rounds: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="direct-route-"))
    db = Database(f"sqlite:///{tmp / 'control.db'}")
    migrate.upgrade(db)
    tokens = db.write(
        lambda s: {
            "alice": identity.create_user(s, "alice").token,
            "agent": identity.create_agent(s, "shared", "dev-coderd-chat").token,
        }
    )
    plane = ControlPlane(db, LocalBroker(), link=AgentLink(transport=httpx.MockTransport(fake_agent)))
    app = build_app(plane, background=False, edge=Edge(hosts=ServedHosts(frozenset({"control"}))))
    client = Client(app, tokens)
    status, _ = await client.call("POST", "/api/v1/agent/context", "agent", first_push())
    assert status == 200
    status, created = await client.call("POST", "/api/v1/chats", "alice", {"workspace": "shared"})
    assert status == 201, created
    chat = f"/api/v1/chats/{json.loads(created)['id']}"
    kinds: dict[str, tuple[str, str, str, Any]] = {
        "prompt (hit)": ("GET", f"{chat}/prompt", "alice", None),
        "read_skill": ("POST", f"{chat}/tools/read_skill", "alice", {"name": "review"}),
        "heartbeat": ("POST", "/api/v1/agent/heartbeat", "agent", {"agent": AGENT_INFO}),
        "refresh": ("PUT", f"{chat}/context", "alice", None),
    }
    spent: dict[str, dict[str, list[float]]] = {kind: {"direct": [], "fastapi": []} for kind in kinds}
    for _ in range(rounds):
        for kind, (method, path, token, body) in kinds.items():
            for way in ("fastapi", "direct"):
                with fastapis(app, way == "fastapi"):
                    for _ in range(20):  # warm: caches and this way's code
                        await client.call(method, path, token, body)
                    began = time.process_time()
                    for _ in range(count):
                        status, _ = await client.call(method, path, token, body)
                    spent[kind][way].append((time.process_time() - began) / count * 1e6)
                    assert status < 300, (kind, way, status)
    await plane.aclose()
    db.dispose()
    return {
        kind: {
            "direct_us": statistics.median(ways["direct"]),
            "fastapi_us": statistics.median(ways["fastapi"]),
            "ratio": statistics.median(d / f for d, f in zip(ways["direct"], ways["fastapi"], strict=True)),
        }
        for kind, ways in spent.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=300, help="requests of a kind in each batch")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()
    results = asyncio.run(run(args.count, args.rounds))
    print(f"{platform.machine()}, Python {platform.python_version()}; {args.rounds} rounds of {args.count}")
    print(f"{'kind':<14} {'direct us':>10} {'FastAPI us':>11} {'direct / FastAPI':>17}")
    for kind, result in results.items():
        print(f"{kind:<14} {result['direct_us']:>10.1f} {result['fastapi_us']:>11.1f} {result['ratio']:>17.3f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
