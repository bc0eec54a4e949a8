"""A request to the control API finds its route once, and a turn's routes are tried first.

FastAPI (0.16x) matches an included router's routes twice a request (once to choose the router, once inside
it), each through a per-include context: 60-100 us of CPU a prompt or read_skill at a thousand a second. So the
routes are the app's own. And Starlette tries each route's pattern in turn (about 1.4 us each): the busiest go
first (``api.BUSIEST_FIRST``), which is safe because no route is reachable through another's pattern.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match, Mount, Route

from agentcontext.control import migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.api import BUSIEST_FIRST
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.server.app import build_app
from tests.control.test_api import sqlite_world

pytestmark = pytest.mark.anyio


async def test_a_prompt_request_matches_its_route_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: Counter[str] = Counter()
    matches = APIRoute.matches

    def counted(self: APIRoute, scope: Any) -> tuple[Match, Any]:
        found = matches(self, scope)
        if found[0] is Match.FULL:
            tried[self.path] += 1
        return found

    monkeypatch.setattr(APIRoute, "matches", counted)
    async with sqlite_world(tmp_path) as world:
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        response = await world.client.get("/api/v1/chats/no-such-chat/prompt", headers=headers)
        assert response.status_code == 404  # routed, then not found
        assert tried == {"/api/v1/chats/{chat_id}/prompt": 1}


@pytest.fixture
def served_app(tmp_path: Path) -> Iterator[FastAPI]:
    """The app ``agentcontext server`` serves (the API and the dashboard), over a SQLite file."""
    database = Database(f"sqlite:///{tmp_path / 'control.db'}")
    migrate.upgrade(database)
    try:
        yield build_app(ControlPlane(database, LocalBroker(), link=AgentLink()), background=False)
    finally:
        database.dispose()


def _example_path(template: str) -> str:
    """A request path the route's template matches: each parameter given a plain value (a path one, two parts)."""
    return re.sub(r"\{[^}:]+(:path)?[^}]*\}", lambda m: "x1/y1" if m.group(1) else "x1", template)


def _first_full_match(routes: list[BaseRoute], method: str, path: str) -> BaseRoute | None:
    scope = {"type": "http", "method": method, "path": path, "root_path": "", "headers": [], "query_string": b""}
    return next((route for route in routes if route.matches(scope)[0] is Match.FULL), None)


def test_every_route_is_reached_by_its_own_path_whatever_their_order(served_app: FastAPI) -> None:
    routes = served_app.router.routes
    checked = 0
    for route in routes:
        if not isinstance(route, Route):  # a mount (/mcp) has no methods of its own
            continue
        for method in sorted(route.methods or ()):
            path = _example_path(route.path)
            assert _first_full_match(routes, method, path) is route, f"{method} {route.path} is shadowed"
            others = [r for r in routes if r is not route]
            assert _first_full_match(others, method, path) is None, f"{method} {path} reaches two routes"
            checked += 1
    assert checked >= 27  # the app's own routes (the API's and /openapi.json), not a handful; the dashboard's
    # router is added after them (build_app), so its place relative to the moved routes is what it was


def test_the_busiest_routes_are_tried_first(served_app: FastAPI) -> None:
    first = served_app.router.routes[: len(BUSIEST_FIRST)]
    for route, (method, path) in zip(first, BUSIEST_FIRST, strict=True):
        assert isinstance(route, Route) and route.path == path and method in (route.methods or ())


async def test_a_turn_s_prompt_and_tool_call_try_no_other_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried: Counter[str] = Counter()
    for kind in (Route, Mount):  # an APIRoute's matching goes through Route's
        monkeypatch.setattr(kind, "matches", _counting(kind.matches, tried))
    async with sqlite_world(tmp_path) as world:
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        assert (await world.client.get("/api/v1/chats/no-such-chat/prompt", headers=headers)).status_code == 404
        assert tried == {"/api/v1/chats/{chat_id}/prompt": 1}
        tried.clear()
        response = await world.client.post("/api/v1/chats/no-such/tools/read_skill", json={}, headers=headers)
        assert response.status_code == 404
        assert tried == {"/api/v1/chats/{chat_id}/prompt": 1, "/api/v1/chats/{chat_id}/tools/{name:tool}": 1}


def _counting(matches: Any, tried: Counter[str]) -> Any:
    def counted(self: BaseRoute, scope: Any) -> tuple[Match, Any]:
        tried[getattr(self, "path", "")] += 1
        return matches(self, scope)  # type: ignore[no-any-return]

    return counted
