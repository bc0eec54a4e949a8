"""``POST /api/v0/context/instructions``: the instruction files that apply in some folders, from a running agent."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.testing import make_workspace, skill_md
from tests import monorepo
from tests.agent.conftest import make_agent, ready, running
from tests.agent.test_api import AGENT_URL

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

ROUTE = "/api/v0/context/instructions"
FILE_KEYS = {
    "path",
    "scope",
    "status",
    "load",
    "reason",
    "bytes",
    "size_bytes",
    "content_hash",
    "warnings",
    "for",
    "hook",
}


@contextlib.asynccontextmanager
async def api(agent: ContextAgent, token: str = "instructions-token-0123") -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(agent, token=token)
    headers = {"Authorization": f"Bearer {token}"}
    transport = httpx.ASGITransport(app=app)
    async with running(agent), httpx.AsyncClient(transport=transport, base_url=AGENT_URL, headers=headers) as c:
        yield c


async def post(client: httpx.AsyncClient, dirs: Any) -> httpx.Response:
    return await client.post(ROUTE, json={"dirs": dirs})


async def test_the_agent_answers_the_files_that_apply_in_nested_folders(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    agent = make_agent(work, home, profile="codex")
    async with api(agent) as client:
        await ready(agent)
        response = await post(client, ["services/billing/api", str(work / "services/search"), "/etc"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert [f["path"] for f in body["files"]] == [
        str(work / "services/AGENTS.md"),
        str(work / "services/billing/AGENTS.md"),
        str(work / "services/search/AGENTS.override.md"),
    ]
    billing = body["files"][1]
    assert set(billing) == FILE_KEYS | {"content"}
    assert billing["content"] == "Billing: amounts are integers in cents.\n"
    assert (billing["status"], billing["scope"], billing["load"]["type"]) == ("ok", "project", "on_demand")
    assert billing["bytes"] == len(billing["content"]) and len(billing["content_hash"]) == 64
    assert billing["for"] == [str(work / "services/billing/api")]
    assert [f["status"] for f in body["not_loaded"]] == ["shadowed"]
    assert [r["path"] for r in body["refused"]] == ["/etc"]
    assert body["startup"] == [str(work / "AGENTS.md")] and body["excluded"] == []


async def test_the_agent_never_answers_skills_or_mcp_configs_of_a_nested_folder(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "pkg/AGENTS.md": "pkg rules",
            "pkg/.agents/skills/x/SKILL.md": skill_md("x", "A nested skill"),
            "pkg/.mcp.json": '{"mcpServers": {"run": {"command": "sh"}}}',
        },
    )
    agent = make_agent(work, home)
    async with api(agent) as client:
        await ready(agent)
        body = (await post(client, ["pkg", "pkg/.agents/skills/x"])).json()
    listed = [f["path"] for group in ("files", "excluded", "not_loaded") for f in body[group]]
    assert listed == [str(work / "pkg/AGENTS.md")]


async def test_the_answer_stays_under_one_mib_and_lists_the_rest_as_excluded(tmp_path: Path, home: Path) -> None:
    big = "x" * 60_000 + "\n"
    files = {f"d{i:02d}/AGENTS.md": big for i in range(20)}
    work = make_workspace(tmp_path / "repo", {".git/": "", **files})
    agent = make_agent(work, home)
    async with api(agent) as client:
        await ready(agent)
        response = await post(client, [f"d{i:02d}" for i in range(20)])
    assert response.status_code == 200
    assert len(response.content) <= 1024 * 1024
    body = response.json()
    assert len(body["files"]) == 17 and len(body["excluded"]) == 3
    assert all("content" not in f and "ondemand.max_bytes" in f["reason"] for f in body["excluded"])
    assert [f["path"] for f in body["excluded"]] == [str(work / f"d{i}/AGENTS.md") for i in (17, 18, 19)]


async def test_bad_requests_get_clear_errors(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    agent = make_agent(work, home)
    async with api(agent) as client:
        not_ready = await post(client, ["services"])
        await ready(agent)
        many = await post(client, [f"d{i}" for i in range(33)])
        wrong = await post(client, "services")
        long = await post(client, ["a" * 5000])
    assert (not_ready.status_code, not_ready.json()["message"]) == (503, "Not ready.")
    assert many.status_code == 400
    assert many.json() == {
        "message": "Too many folders.",
        "detail": "33 folders in one request: at most 32 (ondemand.max_paths)",
    }
    assert wrong.status_code == 400 and "dirs" in wrong.json()["detail"]
    assert long.status_code == 400 and "4096" in long.json()["detail"]


async def test_a_lookup_that_runs_out_of_time_says_it_gave_up(tmp_path: Path, home: Path) -> None:
    deep = "/".join(["d"] * 60)
    work = make_workspace(tmp_path / "repo", {".git/": "", f"{deep}/AGENTS.md": "deep"})
    agent = make_agent(work, home, settings={"ondemand.timeout": 0.001})
    async with api(agent) as client:
        await ready(agent)
        response = await post(client, [f"{deep}/{i}" for i in range(32)])
    assert response.status_code == 504
    assert response.json()["message"] == "Gave up."
    assert "ondemand.timeout" in response.json()["detail"]


async def test_the_route_needs_the_agent_token(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    agent = make_agent(work, home)
    async with api(agent, token="t0ken-1234") as client:
        await ready(agent)
        refused = await client.post(ROUTE, json={"dirs": ["services"]}, headers={"Authorization": "Bearer nope"})
        allowed = await post(client, ["services"])
    assert refused.status_code == 401
    assert allowed.status_code == 200
