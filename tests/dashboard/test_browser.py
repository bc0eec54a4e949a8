"""The dashboard in Debian's Chromium against a real ``agentcontext up`` stack (issue 6's scenario).

Log in through the login link; the inventory lists the fixture's files with their statuses;
the invalid skill shows its reason; the MCP page lists the repository's server as pending with
the command it would run, its Approve button starts it, and the page shows its stderr; then a
chat: AGENTS.md edited on disk marks it "out of date" within 2 s without a reload, and
Refresh clears the badge and names the file in the diff.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.dashboard.browser import Camera, Stack, chromium
from tests.helpers import poll

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def api(stack: Stack, method: str, path: str, **kwargs: Any) -> Any:
    response = httpx.request(
        method, stack.url + path, headers={"Authorization": f"Bearer {stack.user_token}"}, timeout=10, **kwargs
    )
    response.raise_for_status()
    return response.json()


def settled(stack: Stack) -> dict[str, Any]:
    """The agent's overview entry once its snapshot lists the fixture and the MCP server waiting for approval."""

    def agents() -> list[dict[str, Any]]:
        return [a for w in api(stack, "GET", "/api/v1/overview")["workspaces"] for a in w["agents"]]

    def ready(found: list[dict[str, Any]]) -> bool:
        return bool(found and found[0]["snapshot"] and [m["status"] for m in found[0]["mcp"]] == ["disabled"])

    [agent] = poll(agents, ready, "the agent's first snapshot with its MCP server pending")
    return agent


def inventory_rows(page: Any) -> dict[str | None, str | None]:
    rows = page.locator("#resources tbody tr[data-path]")
    return {
        rows.nth(i).get_attribute("data-path"): rows.nth(i).get_attribute("data-status") for i in range(rows.count())
    }


def test_the_dashboard_shows_the_workspace_and_a_chat_goes_out_of_date_and_back_live(
    stack: Stack, camera: Camera
) -> None:
    from playwright.sync_api import expect

    agent = settled(stack)
    work = stack.work
    with chromium() as browser:
        page = browser.new_page()
        page.goto(stack.login_link)  # the fragment is submitted by the page's script; the answer asks
        expect(page.locator("#login-account")).to_have_text(api(stack, "GET", "/api/v1/users/me")["name"])
        page.click("#login-yes")
        page.wait_for_url(stack.url + "/")
        expect(page.locator("h1")).to_have_text("Workspaces")
        expect(page.locator(f"tr[data-agent='{agent['name']}']")).to_contain_text("online")
        camera.shoot(page, "01-workspaces")

        page.click(f"tr[data-agent='{agent['name']}'] a >> text={agent['name']}")
        page.wait_for_url(f"**/ui/agents/{agent['id']}")
        assert inventory_rows(page) == {
            str(work / "AGENTS.md"): "ok",
            str(work / "CLAUDE.md"): "shadowed",
            str(work / ".agents/skills/review/SKILL.md"): "ok",
            str(work / ".agents/skills/broken/SKILL.md"): "invalid",
            str(work / ".mcp.json"): "ok",
            "flaky": "disabled",  # nothing of the repository runs before the user approves it
        }
        expect(page.locator(f"tr[data-path='{work / 'CLAUDE.md'}']")).to_contain_text("shadowed by")
        camera.shoot(page, "02-inventory")

        page.click("p.filters a >> text=invalid")
        assert inventory_rows(page) == {str(work / ".agents/skills/broken/SKILL.md"): "invalid"}
        camera.shoot(page, "03-inventory-invalid")

        page.get_by_role("link", name=str(work / ".agents/skills/broken/SKILL.md"), exact=True).click()
        expect(page.locator("#reason")).to_have_text("missing field `description`")
        camera.shoot(page, "04-skill-invalid")

        page.go_back()
        page.click("p.filters a >> text=all")
        page.get_by_role("link", name=str(work / ".agents/skills/review/SKILL.md"), exact=True).click()
        expect(page.locator("#skill-body strong")).to_have_text("diff")
        expect(page.locator("#skill-files")).to_contain_text("checklist.md")
        camera.shoot(page, "05-skill")

        page.goto(f"{stack.url}/ui/agents/{agent['id']}/resource?id=instruction_file:{work / 'AGENTS.md'}")
        expect(page.locator("#file-content")).to_have_text("Use pytest.\n")
        camera.shoot(page, "06-instruction-file")

        page.goto(f"{stack.url}/ui/agents/{agent['id']}/mcp")
        flaky = page.locator("section[data-server='flaky']")
        expect(flaky).to_have_attribute("data-approval", "pending")
        expect(flaky.locator("code.command")).to_contain_text("sh -c ")
        expect(flaky.locator("code.command")).to_contain_text("missing FLAKY_KEY")
        camera.shoot(page, "07-mcp-pending")
        flaky.get_by_role("button", name="Approve and start").click()
        expect(page.locator("p.notice")).to_contain_text('approved "flaky"')
        expect(flaky.locator("pre.stderr")).to_contain_text("missing FLAKY_KEY", timeout=20_000)  # it ran, and failed
        camera.shoot(page, "07-mcp-approved")

        chat = api(stack, "POST", "/api/v1/chats", json={"workspace": "app", "title": "browser chat"})
        page.goto(f"{stack.url}/ui/chats/{chat['id']}")
        expect(page.locator("#context-badge")).to_have_text("up to date")
        expect(page.locator("#system-prompt")).to_contain_text("Use pytest.")
        expect(page.locator("#live-state")).to_have_text("live")
        camera.shoot(page, "08-chat")
        page.evaluate("window.notReloaded = true")

        edited = time.monotonic()
        (work / "AGENTS.md").write_text("Use nox.\n", encoding="utf-8")
        expect(page.locator("#context-badge")).to_have_text("out of date", timeout=2000)
        took = time.monotonic() - edited
        assert page.evaluate("window.notReloaded") is True, "the page was reloaded"
        print(f"out of date shown {took:.2f} s after the edit")
        assert took < 2.0
        camera.shoot(page, "09-chat-out-of-date")

        page.click("#refresh")
        expect(page.locator("#context-badge")).to_have_text("up to date")
        expect(page.locator("#diff ul.changed")).to_contain_text(str(work / "AGENTS.md"))
        expect(page.locator("#system-prompt")).to_contain_text("Use nox.")
        camera.shoot(page, "10-chat-refreshed")

        page.goto(f"{stack.url}/ui/chats")
        expect(page.locator("table")).to_contain_text("browser chat")
        camera.shoot(page, "11-chats")
