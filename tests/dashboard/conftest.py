"""The dashboard over the control plane's app in memory (httpx's ASGI transport), on SQLite; and for the browser
tests, a real ``agentcontext up`` stack (``stack``) and screenshots when ``--screenshots DIR`` is given."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from agentcontext.resource import Resource
from tests.control.conftest import AGENT_INFO, push_body
from tests.control.test_api import World, sqlite_world
from tests.dashboard.browser import Camera, Stack, chromium_or_skip, up

ORIGIN = {"Origin": "http://control"}
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


dashboard_world = sqlite_world  # the control plane's app (dashboard included) over a fresh SQLite database


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    chromium_or_skip()
    with up(tmp_path) as running:
        yield running


@pytest.fixture
def camera(request: pytest.FixtureRequest) -> Camera:
    directory = request.config.getoption("--screenshots")
    return Camera(Path(directory) if directory else None)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with dashboard_world(tmp_path) as opened:
        yield opened


async def log_in(world: World, who: str) -> httpx.Response:
    """Log the world's client in as ``who`` (its cookie jar keeps the session): the token, then the user's yes on
    the page that names the account; the answer to the yes."""
    asked = await world.client.post("/login", data={"token": world.tokens[who]}, headers=ORIGIN)
    assert asked.status_code == 200, asked.text
    return await world.client.post("/login/confirm", data={"csrf": csrf_of(asked), "answer": "yes"}, headers=ORIGIN)


def csrf_of(page: httpx.Response) -> str:
    found = _CSRF.search(page.text)
    assert found is not None, page.text
    return found.group(1)


async def bobs_mcp_page(world: World, *servers: Resource) -> str:
    """Push ``servers`` as bob's agent, log in as bob and open that agent's MCP page: its HTML."""
    pushed = await world.push(push_body(list(servers), agent=AGENT_INFO), token="bobs_agent")
    assert pushed.status_code == 200, pushed.text
    box = next(w for w in (await world.call("GET", "/api/v1/workspaces", "bob")).json() if w["name"] == "bobs-box")
    await log_in(world, "bob")
    return (await world.client.get(f"/ui/agents/{box['agents'][0]['id']}/mcp")).text
