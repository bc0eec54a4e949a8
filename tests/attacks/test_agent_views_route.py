"""``GET /api/v0/context/agents`` (each agent's view) against a hostile repository and a hostile page.

The repository points every profile's names out of the work dir: AGENTS.md and
``.claude/CLAUDE.md`` linked to a secret, ``@`` imports of it (absolute and by ``..``), and
skill folders of every agent linked out. Scanning under four profiles must read nothing there (the audit hook of
``tests/containment.py`` fails the test on any read in the outside folder), answer no text
of it, and offer none of it. Another site's page and a rebinding name are refused before
any scan, with the token.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcontext.agent.api import create_app
from agentcontext.testing import make_workspace, skill_md
from tests.agent.conftest import make_agent, ready, running
from tests.attacks import http_surfaces as web
from tests.containment import outside_the_roots
from tests.helpers import AGENT_VIEWS

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

ROUTE = "/api/v0/context/agents"
SECRET = "the user's private notes: hunter2"
AUTH = {"Host": web.AGENT_HOST, "Authorization": f"Bearer {web.AGENT_TOKEN}"}


def hostile_workspace(tmp_path: Path) -> Path:
    outside = outside_the_roots(tmp_path)
    (outside / "secret.md").write_text(SECRET + "\n", encoding="utf-8")
    (outside / "leak").mkdir()
    (outside / "leak" / "SKILL.md").write_text(skill_md("leak", SECRET), encoding="utf-8")
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": f"Rules.\n@{outside}/secret.md\n@../outside-the-roots/secret.md\n",
            ".claude/": "",
        },
    )
    (work / "AGENTS.md").symlink_to(outside / "secret.md")
    (work / ".claude" / "CLAUDE.md").symlink_to(outside / "secret.md")
    for container in (".agents/skills", ".codex/skills", ".claude/skills", "skills"):
        (work / container).mkdir(parents=True)
        (work / container / "leak").symlink_to(outside / "leak")
    return work


async def test_no_profile_reads_answers_or_offers_anything_outside_the_work_dir(tmp_path: Path, home: Path) -> None:
    work = hostile_workspace(tmp_path)
    agent = make_agent(work, home, profile="claude")
    async with running(agent):
        await ready(agent)
        answer = await web.call(create_app(agent, token=web.AGENT_TOKEN), "GET", ROUTE, AUTH)
    assert answer.status == 200, answer.body
    assert SECRET.encode() not in answer.body and b"hunter2" not in answer.body
    views = answer.json()["agents"]
    assert [v["profile"] for v in views] == list(AGENT_VIEWS)
    for view in views:
        assert all("outside-the-roots" not in r["path"] for r in view["loads"]), view["profile"]
        assert all(s["name"] != "leak" for s in view["skills"]), view["profile"]
        assert all(str(work) in r["path"] for r in view["loads"]), view["profile"]
    assert "content" not in json.dumps(views)


async def test_another_sites_page_and_a_rebinding_name_are_refused_before_any_scan(tmp_path: Path, home: Path) -> None:
    async with web.agent_surface(tmp_path, home) as surface:
        cache = surface.app.state.views  # type: ignore[attr-defined]
        for origin in web.FOREIGN_ORIGINS:
            answer = await web.call(surface.app, "GET", ROUTE, {**AUTH, "Origin": origin})
            assert (answer.status, answer.json()["message"]) == (403, "Forbidden."), origin
        for host in web.REBINDING_HOSTS:
            answer = await web.call(surface.app, "GET", ROUTE, {**AUTH, "Host": host})
            assert answer.status == 421, host
        assert cache.computed == 0  # nothing was scanned for them
        assert (await web.call(surface.app, "GET", ROUTE, AUTH)).status == 200
        assert cache.computed == 1
