"""``GET /api/v1/overview``: one read of what ``agentcontext status`` and the dashboard show."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentcontext import __version__
from agentcontext.control.db import Database
from agentcontext.resource import Kind, Resource, Scope, Status
from tests.control.conftest import AGENT_INFO, WORK, mcp_server, push_body, text_resource
from tests.control.test_api import World, open_world

pytestmark = [pytest.mark.anyio]


@pytest.fixture
async def world(db: Database) -> AsyncIterator[World]:
    async with open_world(db) as opened:
        yield opened


def troubled_push() -> dict[str, Any]:
    """AGENTS.md, an invalid skill, a working and a failed MCP server."""
    invalid = Resource(
        Kind.SKILL, f"{WORK}/.agents/skills/Bad/SKILL.md", Scope.REPO, Status.INVALID, error="name must be lowercase"
    )
    failed = mcp_server("broken")._replace(status=Status.UNREADABLE, error="connection closed")
    resources = [
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Hi.\n"),
        invalid,
        mcp_server("docs", "a", "b"),
        failed,
    ]
    return push_body(resources, work_dir=WORK, agent=AGENT_INFO)


async def overview(world: World, who: str) -> dict[str, Any]:
    response = await world.call("GET", "/api/v1/overview", who)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_the_overview_shows_agents_snapshots_mcp_servers_and_problems(world: World) -> None:
    assert (await world.push(troubled_push())).json()["accepted"] is True
    await world.chat()
    data = await overview(world, "alice")
    assert data["server"] == {"version": __version__, "database": world.db.dialect}
    [workspace] = data["workspaces"]
    [agent] = workspace["agents"]
    assert (workspace["name"], agent["name"], agent["online"]) == ("shared", "dev-coderd-chat", True)
    snapshot = agent["snapshot"]
    assert (snapshot["version"], snapshot["resources"], snapshot["error"]) == (1, 4, None)
    assert snapshot["by_status"] == {"invalid": 1, "ok": 2, "unreadable": 1}
    assert agent["mcp"] == [
        {"name": "broken", "status": "unreadable", "tools": 0, "error": "connection closed"},
        {"name": "docs", "status": "ok", "tools": 2, "error": None},
    ]
    assert data["chats"] == {"total": 1, "out_of_date": 0}
    assert data["problems"] == [
        {
            "kind": "mcp_server",
            "where": "shared/dev-coderd-chat: broken",
            "message": "mcp_server unreadable: connection closed",
        },
        {
            "kind": "resource",
            "where": f"shared/dev-coderd-chat: {WORK}/.agents/skills/Bad/SKILL.md",
            "message": "skill invalid: name must be lowercase",
        },
    ]


async def test_the_overview_shows_only_the_workspaces_the_user_may_see(world: World) -> None:
    assert [w["name"] for w in (await overview(world, "alice"))["workspaces"]] == ["shared"]
    bobs = await overview(world, "bob")
    assert [w["name"] for w in bobs["workspaces"]] == ["bobs-box", "shared"]
    assert [w["name"] for w in (await overview(world, "admin"))["workspaces"]] == ["bobs-box", "shared"]
    assert {"kind": "agent_offline", "where": "bobs-box/box", "message": "agent is offline (last seen never)"} in bobs[
        "problems"
    ]
    assert bobs["workspaces"][0]["agents"][0]["snapshot"] is None


async def test_the_overview_counts_out_of_date_chats(world: World) -> None:
    assert (await world.push(troubled_push())).json()["accepted"] is True
    await world.chat()
    changed = push_body(
        [text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Changed.\n")],
        version=2,
        work_dir=WORK,
        agent=AGENT_INFO,
    )
    assert (await world.push(changed)).json()["accepted"] is True
    assert (await overview(world, "alice"))["chats"] == {"total": 1, "out_of_date": 1}
    assert (await overview(world, "bob"))["chats"] == {"total": 0, "out_of_date": 0}
