"""``GET /api/v0/context/agents``: each agent's own view of the work dir, from a running agent."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.agent import views
from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.testing import make_workspace, skill_md
from agentcontext.wire.views import AgentViewsBody, bounded
from tests.agent.conftest import make_agent, ready, running, write_atomic
from tests.agent.test_api import AGENT_URL
from tests.cli.test_agents_cmd import workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

ROUTE = "/api/v0/context/agents"


@contextlib.asynccontextmanager
async def api(
    agent: ContextAgent, token: str = "views-token-0123456789"
) -> AsyncIterator[tuple[httpx.AsyncClient, views.ViewCache]]:
    """A client of the agent's API, and the app's kept views."""
    app = create_app(agent, token=token)
    headers = {"Authorization": f"Bearer {token}"}
    transport = httpx.ASGITransport(app=app)
    async with running(agent), httpx.AsyncClient(transport=transport, base_url=AGENT_URL, headers=headers) as c:
        yield c, app.state.views


def by_profile(body: Any) -> dict[str, dict[str, Any]]:
    return {view["profile"]: view for view in AgentViewsBody.model_validate(body).model_dump()["agents"]}


async def test_each_agent_profile_loads_its_own_files_and_says_why_not_the_others(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home, profile="codex")
    async with api(agent) as (client, cache):
        await ready(agent)
        response = await client.get(ROUTE)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["work_dir"], body["version"]) == (str(work), agent.snapshot.version)
    found = by_profile(body)
    assert list(found) == ["codex", "claude", "gemini", "opencode", "copilot", "cursor", "coder", "default"]
    codex, claude = found["codex"], found["claude"]
    assert [r["path"] for r in codex["loads"]] == [str(work / "AGENTS.md")]
    assert [r["path"] for r in claude["loads"]] == [str(work / "CLAUDE.md"), str(work / "notes.md")]
    assert claude["loads"][1]["load"] == {
        "type": "import",
        "importer": str(work / "CLAUDE.md"),
        "chain": [str(work / "CLAUDE.md")],
    }
    assert str(work / "AGENTS.md") in [r["path"] for r in claude["not_loaded"]]
    assert all(r["reason"] for r in claude["not_loaded"])
    assert [s["name"] for s in codex["skills"]] == [] and [s["name"] for s in claude["skills"]] == ["deploy"]
    assert (codex["budget_bytes"], claude["budget_bytes"]) == (32 * 1024, None)
    assert codex["doc_bytes"] > 0
    assert "content" not in json.dumps(body)  # paths, statuses and reasons: never a file's text


async def test_the_views_are_kept_per_snapshot_version_and_computed_again_after_a_change(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home, profile="claude")
    async with api(agent) as (client, cache):
        await ready(agent)
        first = await client.get(ROUTE)
        computed = cache.computed
        # a skill only Codex reads: the agent's own (claude) snapshot does not change, so the kept answer stands
        make_workspace(work, {".codex/skills/lint/SKILL.md": skill_md("lint", "Lints")})
        kept = await client.get(ROUTE)
        assert cache.computed == computed  # served as kept, not scanned again
        monkeypatch.setattr(views, "FRESH_FOR", 0.0)  # once the kept answer is old enough, it is computed again
        aged = await client.get(ROUTE)
        write_atomic(work / "CLAUDE.md", "claude rules, edited\n@notes.md\n")  # a change the agent's own profile sees
        await agent.resync()
        again = await client.get(ROUTE)
    assert kept.content == first.content
    assert [s["name"] for s in by_profile(aged.json())["codex"]["skills"]] == ["lint"]
    assert first.json()["version"] == aged.json()["version"] < again.json()["version"]
    assert by_profile(again.json())["claude"]["doc_bytes"] > by_profile(first.json())["claude"]["doc_bytes"]


async def test_before_the_first_scan_the_views_are_not_ready(tmp_path: Path, home: Path) -> None:
    agent = make_agent(workspace(tmp_path), home)
    app = create_app(agent, token="views-token-0123456789")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT_URL) as client:
        response = await client.get(ROUTE, headers={"Authorization": "Bearer views-token-0123456789"})
    assert (response.status_code, response.json()["message"]) == (503, "Not ready.")


async def test_a_declared_source_is_scanned_by_every_profile(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    make_workspace(work / "docs", {"AGENTS.md": "Docs rules.\n"})
    agent = make_agent(work, home, profile="coder")
    async with api(agent) as (client, cache):
        await ready(agent)
        assert (await client.post("/api/v0/context/sources", json={"path": str(work / "docs")})).status_code == 201
        await agent.resync()
        found = by_profile((await client.get(ROUTE)).json())
    assert str(work / "docs/AGENTS.md") in [r["path"] for r in found["coder"]["loads"]]


def test_an_answer_over_the_cap_drops_rows_from_its_longest_list_and_counts_them() -> None:
    row = {"path": "/w/" + "x" * 200, "scope": "project", "status": "shadowed", "bytes": 1, "load": None, "reason": "r"}
    view = {
        "profile": "codex",
        "agent": "Codex",
        "verified_version": None,
        "doc_bytes": 0,
        "budget_bytes": None,
        "loads": [row] * 3,
        "not_loaded": [row] * 400,
        "skills": [],
        "skills_not_offered": [],
    }
    body = bounded({"work_dir": "/w", "version": 1, "agents": [view]}, 20_000)
    assert len(body) <= 20_000
    answer = AgentViewsBody.model_validate_json(body).agents[0]
    assert len(answer.loads) == 3 and answer.omitted == {"not_loaded": 400 - len(answer.not_loaded)}
    assert len(answer.not_loaded) > 50


@pytest.mark.parametrize("home_files", [True, False])
async def test_the_views_name_no_file_of_the_home_while_push_home_files_is_off(
    tmp_path: Path, home: Path, home_files: bool
) -> None:
    make_workspace(
        home, {".codex/AGENTS.md": "My own rules.\n", ".agents/skills/mine/SKILL.md": skill_md("mine", "Mine")}
    )
    work = make_workspace(tmp_path / "work", {".git/": "", "AGENTS.md": "Project rules.\n"})
    agent = make_agent(work, home, settings={"agent.push_home_files": home_files})
    async with api(agent) as (client, _):
        await ready(agent)
        response = await client.get(ROUTE)
    assert response.status_code == 200, response.text
    named = json.dumps(response.json())
    assert (str(home / ".codex" / "AGENTS.md") in named, str(home / ".agents") in named) == (home_files, home_files)
    assert str(work / "AGENTS.md") in named
