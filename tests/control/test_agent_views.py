"""``GET /api/v1/agents/{id}/views``: each agent's view, relayed from a real workspace agent to those who may see it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.control.db import Database
from agentcontext.control.services.views import OFFLINE_VIEWS
from agentcontext.testing import make_workspace
from tests.agent.conftest import make_agent, ready, running
from tests.agent.test_api import AGENT_URL
from tests.control.test_api import World, open_world
from tests.migrated import fresh_sqlite

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "views-agent-secret-0123456789"


@dataclass(frozen=True)
class Linked:
    world: World
    agent: ContextAgent
    work: Path

    async def push(self) -> None:
        info = {"url": AGENT_URL, "api_token": SECRET, "os": "linux", "home": self.agent.config.home}
        body = {**self.agent.snapshot.to_dict(), "initial": True, "agent": info}
        response = await self.world.push(body)
        assert response.json()["accepted"] is True, response.text

    async def agent_id(self, name: str = "dev-coderd-chat", who: str = "admin") -> str:
        found = (await self.world.call("GET", "/api/v1/workspaces", who)).json()
        return str(next(a["id"] for w in found for a in w["agents"] if a["name"] == name))


def workspace(root: Path) -> Path:
    return make_workspace(root / "app", {".git/": "", "AGENTS.md": "Use pytest.\n", "CLAUDE.md": "Claude notes.\n"})


@contextlib.asynccontextmanager
async def linked(tmp_path: Path, home: Path, profile: str = "codex") -> AsyncIterator[Linked]:
    """A control plane on SQLite whose agent ``dev-coderd-chat`` is a real workspace agent over ``app``."""
    work = workspace(tmp_path)
    agent = make_agent(work, home, profile=profile)
    database = Database(fresh_sqlite(tmp_path / "control.db"))
    transport = httpx.ASGITransport(app=create_app(agent, token=SECRET))
    try:
        async with running(agent), open_world(database, agent=transport) as world:
            await ready(agent)
            yield Linked(world, agent, work)
    finally:
        database.dispose()


def by_profile(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {view["profile"]: view for view in body["agents"]}


async def test_the_control_plane_relays_each_agents_view_from_the_workspace_agent(tmp_path: Path, home: Path) -> None:
    async with linked(tmp_path, home) as link:
        await link.push()
        response = await link.world.call("GET", f"/api/v1/agents/{await link.agent_id()}/views", "alice")
    assert response.status_code == 200, response.text
    found = by_profile(response.json())
    assert [r["path"] for r in found["codex"]["loads"]] == [str(link.work / "AGENTS.md")]
    assert [r["path"] for r in found["claude"]["loads"]] == [str(link.work / "CLAUDE.md")]
    assert response.json()["version"] == link.agent.snapshot.version


async def test_another_users_workspace_agent_is_not_found_and_an_offline_one_unavailable(
    tmp_path: Path, home: Path
) -> None:
    async with linked(tmp_path, home) as link:
        box = await link.agent_id("box")  # bob's own workspace; its agent never came online
        hidden = await link.world.call("GET", f"/api/v1/agents/{box}/views", "alice")
        offline = await link.world.call("GET", f"/api/v1/agents/{box}/views", "bob")
        unknown = await link.world.call("GET", "/api/v1/agents/nope/views", "bob")
        anonymous = await link.world.call("GET", f"/api/v1/agents/{box}/views")
    assert (hidden.status_code, unknown.status_code, anonymous.status_code) == (404, 404, 401)
    assert (offline.status_code, offline.json()["detail"]) == (503, OFFLINE_VIEWS)


async def test_an_agent_that_answers_with_an_error_is_unavailable_with_its_reason(tmp_path: Path, home: Path) -> None:
    async with linked(tmp_path, home) as link:
        await link.push()
        agent_id = await link.agent_id()
        link.agent.last = None  # as before its first scan: the agent answers 503 "Not ready."
        response = await link.world.call("GET", f"/api/v1/agents/{agent_id}/views", "alice")
    assert response.status_code == 503
    assert response.json()["detail"].startswith("the workspace agent answered 503: Not ready.")
