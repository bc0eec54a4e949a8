"""The dashboard's pages: what they show, to whom, and that nothing in a workspace can inject markup."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

import agentcontext.dashboard as dashboard
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.testing import skill_md
from tests.control.conftest import AGENT_INFO, WORK, first_push, mcp_server, push_body, text_resource
from tests.control.test_api import World
from tests.dashboard.conftest import ORIGIN, csrf_of, log_in

pytestmark = [pytest.mark.anyio]

SCRIPT_SKILL = skill_md(
    "sneaky", "Tries <b>markup</b>", body="# Sneaky\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1))\n"
)


def workspace_push(version: int = 1, agents_md: str = "Use pytest.\n") -> dict[str, Any]:
    """AGENTS.md, an ok skill with a script in its body, an invalid skill, a failed MCP server with stderr."""
    invalid = Resource(
        Kind.SKILL, f"{WORK}/.agents/skills/Bad/SKILL.md", Scope.REPO, Status.INVALID, error="name must be lowercase"
    )
    failed = mcp_server("broken")._replace(
        status=Status.UNREADABLE,
        error="connection closed",
        warnings=("stderr (last lines): Traceback: boom <img src=x>",),
    )
    sneaky = text_resource(
        Kind.SKILL, f"{WORK}/.agents/skills/sneaky/SKILL.md", SCRIPT_SKILL, name="sneaky", description="Tries"
    )
    resources = [
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", agents_md),
        sneaky,
        invalid,
        mcp_server("docs", "search"),
        failed,
    ]
    return push_body(resources, version=version, work_dir=WORK, agent=AGENT_INFO)


async def agent_id(world: World, who: str = "alice") -> str:
    found: str = (await world.call("GET", "/api/v1/workspaces", who)).json()[0]["agents"][0]["id"]
    return found


def rows_of(page: str) -> dict[str, str]:
    """path -> status of each inventory row."""
    return dict(re.findall(r'<tr data-path="([^"]+)" data-status="([^"]+)">', page))


async def test_the_home_page_shows_workspaces_agents_snapshots_and_problems(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    page = (await world.client.get("/")).text
    assert "dev-coderd-chat" in page and "online" in page and "v1" in page
    assert "name must be lowercase" in page and "connection closed" in page
    assert "bobs-box" not in page


async def test_a_bidi_override_in_a_file_name_is_shown_in_the_inventory_instead_of_reordering_it(
    world: World,
) -> None:
    name = f"{WORK}/docs/\u202edm.txt.exe"  # would read "exe.txt.md"
    body = push_body([text_resource(Kind.INSTRUCTION_FILE, name, "x\n")], work_dir=WORK, agent=AGENT_INFO)
    assert (await world.push(body)).json()["accepted"] is True
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}")).text
    assert f">{WORK}/docs/\\u202edm.txt.exe</a>" in page
    assert "\u202e" not in page.replace(f'data-path="{name}"', "")  # only the row's attribute keeps the real path


async def test_the_inventory_lists_every_resource_with_its_status_and_reason(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    response = await world.client.get(f"/ui/agents/{await agent_id(world)}")
    assert response.status_code == 200
    assert rows_of(response.text) == {
        f"{WORK}/AGENTS.md": "ok",
        f"{WORK}/.agents/skills/sneaky/SKILL.md": "ok",
        f"{WORK}/.agents/skills/Bad/SKILL.md": "invalid",
        "docs": "ok",
        "broken": "unreadable",
    }
    assert "name must be lowercase" in response.text


async def test_the_inventory_shows_hidden_character_warnings(world: World) -> None:
    hidden = text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Use\u200b pytest.\n")._replace(
        warnings=("hidden characters: 1 zero-width (U+200B) at line 1",),
    )
    assert (await world.push(push_body([hidden], work_dir=WORK, agent=AGENT_INFO))).json()["accepted"] is True
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}")).text
    assert '<div class="warning">hidden characters: 1 zero-width (U+200B) at line 1</div>' in page


async def test_the_inventory_filters_by_status(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}", params={"status": "invalid"})).text
    assert rows_of(page) == {f"{WORK}/.agents/skills/Bad/SKILL.md": "invalid"}
    assert "all (5)" in page and "invalid (1)" in page


async def test_a_skill_body_is_rendered_as_markdown_with_any_script_left_inert(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    source = f"skill:{WORK}/.agents/skills/sneaky/SKILL.md"
    response = await world.client.get(f"/ui/agents/{await agent_id(world)}/resource", params={"id": source})
    assert response.status_code == 200
    assert "<h1>Sneaky</h1>" in response.text
    assert "<script>alert" not in response.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert 'href="javascript:' not in response.text
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert "<code>roles/reviewer.md</code>" in response.text  # supporting files, listed live by the agent


async def test_an_instruction_file_page_shows_its_content_as_text(world: World) -> None:
    assert (await world.push(workspace_push(agents_md="Use <b>pytest</b>.\n"))).json()["accepted"] is True
    await log_in(world, "alice")
    source = f"instruction_file:{WORK}/AGENTS.md"
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}/resource", params={"id": source})).text
    assert "Use &lt;b&gt;pytest&lt;/b&gt;." in page


async def test_an_invalid_skill_page_shows_its_reason(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    source = f"skill:{WORK}/.agents/skills/Bad/SKILL.md"
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}/resource", params={"id": source})).text
    assert '<p class="error" id="reason">name must be lowercase</p>' in page


async def test_the_mcp_page_shows_health_tools_last_error_and_stderr_tail(world: World) -> None:
    assert (await world.push(workspace_push())).json()["accepted"] is True
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/agents/{await agent_id(world)}/mcp")).text
    assert "<code>search</code>" in page and "Last error: connection closed" in page
    assert '<pre class="stderr">Traceback: boom &lt;img src=x&gt;</pre>' in page


async def test_the_chat_page_shows_the_exact_prompt_and_tools_the_api_serves(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat()
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/chats/{chat['id']}")).text
    turn = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()
    shown = re.search(r'<pre class="content" id="system-prompt">(.*?)</pre>', page, re.S)
    assert shown is not None and html.unescape(shown.group(1)) == turn["system"]
    assert [html.unescape(n) for n in re.findall(r"<summary><code>([^<]+)</code>", page)] == [
        t["name"] for t in turn["tools"]
    ]
    assert 'id="context-badge">up to date' in page


async def test_refresh_clears_the_out_of_date_badge_and_shows_the_diff(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat()
    assert (await world.push(first_push(2, agents_md="Use nox.\n"))).json()["accepted"] is True
    await log_in(world, "alice")
    page = await world.client.get(f"/ui/chats/{chat['id']}")
    assert 'id="context-badge">out of date' in page.text
    response = await world.client.post(f"/ui/chats/{chat['id']}/refresh", data={"csrf": csrf_of(page)}, headers=ORIGIN)
    assert response.status_code == 200
    assert 'id="context-badge">up to date' in response.text
    changed = re.search(r'<ul class="changed">(.*?)</ul>', response.text, re.S)
    assert changed is not None and f"<code>{WORK}/AGENTS.md</code>" in changed.group(1)


async def test_refresh_from_another_origin_or_without_the_csrf_token_is_refused(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat()
    await log_in(world, "alice")
    csrf = csrf_of(await world.client.get(f"/ui/chats/{chat['id']}"))
    path = f"/ui/chats/{chat['id']}/refresh"
    assert (
        await world.client.post(path, data={"csrf": csrf}, headers={"Origin": "http://evil.test"})
    ).status_code == 403
    assert (await world.client.post(path, data={}, headers=ORIGIN)).status_code == 403


async def test_another_users_chat_is_not_found_on_every_chat_page(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat(title="alice's secret chat")
    await log_in(world, "bob")
    for path in (f"/ui/chats/{chat['id']}", f"/ui/events?chat={chat['id']}"):
        response = await world.client.get(path)
        assert response.status_code == 404, path
        assert "secret" not in response.text
    assert "secret" not in (await world.client.get("/ui/chats")).text
    csrf = csrf_of(await world.client.get("/"))
    refresh = await world.client.post(f"/ui/chats/{chat['id']}/refresh", data={"csrf": csrf}, headers=ORIGIN)
    assert refresh.status_code == 404


async def test_a_private_workspaces_agent_is_visible_to_its_owner_and_administrators_only(world: World) -> None:
    bobs = (await world.call("GET", "/api/v1/workspaces", "bob")).json()
    box = next(w for w in bobs if w["name"] == "bobs-box")["agents"][0]["id"]
    await log_in(world, "alice")
    for path in (f"/ui/agents/{box}", f"/ui/agents/{box}/mcp", f"/ui/events?agent={box}"):
        assert (await world.client.get(path)).status_code == 404, path
    await log_in(world, "admin")
    assert (await world.client.get(f"/ui/agents/{box}")).status_code == 200


async def test_the_pages_are_not_in_the_openapi_document_but_the_overview_is(world: World) -> None:
    paths = (await world.client.get("/openapi.json")).json()["paths"]
    assert "/api/v1/overview" in paths
    assert [p for p in paths if not p.startswith("/api/")] == ["/healthz"]


def test_the_templates_and_static_files_ship_as_package_data() -> None:
    here = Path(dashboard.__file__).parent
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert '"dashboard/templates/*.html", "dashboard/static/*"' in pyproject
    assert {p.name for p in (here / "static").iterdir()} == {"dashboard.js", "dashboard.css"}
    assert {"base.html", "chat.html", "inventory.html", "login.html"} <= {
        p.name for p in (here / "templates").iterdir()
    }


async def test_the_chat_page_shows_discovered_files_with_their_origin_and_causes(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat()
    touched = await world.call("POST", f"/api/v1/chats/{chat['id']}/touched", "alice", json={"paths": ["svc/a.py"]})
    assert touched.status_code == 200, touched.text
    await log_in(world, "alice")
    page = (await world.client.get(f"/ui/chats/{chat['id']}")).text
    discovered = re.search(r'<tr class="origin-discovered">(.*?)</tr>', page, re.S)
    assert discovered is not None
    assert f"<code>{WORK}/services/AGENTS.md</code>" in discovered.group(1)
    assert re.search(
        r'<td class="origin">discovered<span class="muted"> for <code>svc/a.py</code>', discovered.group(1)
    )
    assert f'<tr class="origin-snapshot"><td>instruction_file</td><td><code>{WORK}/AGENTS.md</code>' in page
    assert "&lt;discovered-context&gt;" in page  # the prompt shown carries it
