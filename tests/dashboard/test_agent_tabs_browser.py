"""The inventory's agent tabs in Debian's Chromium, with script turned off, against a real ``agentcontext up``.

The fixture workspace has AGENTS.md and CLAUDE.md side by side: the Claude Code tab loads
CLAUDE.md and says why not AGENTS.md, the Codex tab the other way round. Once the agent is
offline the tabs say the per-agent view needs it, and the snapshot's own profile is still shown.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest

from agentcontext.dashboard.agent_tabs import NEEDS_AGENT
from agentcontext.local import state
from tests.dashboard.browser import Camera, Stack, chromium
from tests.dashboard.test_browser import settled
from tests.helpers import AGENT_VIEWS, poll

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def view_rows(page: Any, table: str) -> list[str | None]:
    rows = page.locator(f"#agent-view #{table} tr.view-row")
    return [rows.nth(i).get_attribute("data-view-path") for i in range(rows.count())]


def go_offline(stack: Stack) -> None:
    """The agent's last heartbeat, as it sends one when it stops (its token is in ``up``'s state file)."""
    [binding] = state.load(state.default_path(os.environ)).bindings.values()
    answer = httpx.post(
        f"{stack.url}/api/v1/agent/heartbeat",
        json={"online": False},
        headers={"Authorization": f"Bearer {binding.token}"},
        timeout=10,
    )
    assert answer.status_code == 204, answer.text


def test_each_agents_tab_lists_its_own_files_without_script_and_says_when_the_agent_is_offline(
    stack: Stack, camera: Camera
) -> None:
    from playwright.sync_api import expect

    agent = settled(stack)
    work = stack.work
    with chromium() as browser:
        page = browser.new_context(java_script_enabled=False).new_page()
        page.goto(f"{stack.url}/login")
        page.fill("input[name=token]", stack.user_token)
        page.click("#login-form button")
        page.click("#login-yes")  # the page that names the account asks first
        page.wait_for_url(stack.url + "/")

        page.goto(f"{stack.url}/ui/agents/{agent['id']}")
        tabs = page.locator("nav.tabs a[role=tab]")
        assert [tabs.nth(i).get_attribute("data-profile") for i in range(tabs.count())] == [
            "default",  # this snapshot's tab first, then every agent's
            *(profile for profile in AGENT_VIEWS if profile != "default"),
        ]
        expect(tabs.first).to_contain_text("this snapshot")
        expect(page.locator("#agent-view")).to_have_attribute("data-source", "agent")

        page.click("nav.tabs a[data-profile=claude]")
        expect(page.locator("#agent-view")).to_have_attribute("data-profile", "claude")
        assert view_rows(page, "view-loads") == [str(work / "CLAUDE.md")]
        assert str(work / "AGENTS.md") in view_rows(page, "view-not-loaded")
        expect(page.locator("#agent-view .budget")).to_contain_text("no budget")
        camera.shoot(page, "tabs-01-claude")

        page.click("nav.tabs a[data-profile=codex]")
        expect(page.locator("#agent-view")).to_have_attribute("data-profile", "codex")
        assert view_rows(page, "view-loads") == [str(work / "AGENTS.md")]
        assert str(work / "CLAUDE.md") not in view_rows(page, "view-loads")
        expect(page.locator("#agent-view .budget")).to_contain_text("32.0 KiB budget")
        expect(page.locator("#view-skills")).to_contain_text("review")
        camera.shoot(page, "tabs-02-codex")

        def offline_page() -> str:  # the agent's next heartbeat may bring it back: say goodbye again
            go_offline(stack)
            page.goto(f"{stack.url}/ui/agents/{agent['id']}?view=claude")
            return page.locator("h1 .badge").inner_text()

        poll(offline_page, lambda badge: badge == "offline", "the agent shown offline")
        expect(page.locator("#agent-view .needs-agent")).to_have_text(NEEDS_AGENT)
        expect(page.locator("#agent-view")).to_have_attribute("data-source", "none")
        page.click("nav.tabs a[data-profile=default]")
        expect(page.locator("#agent-view .needs-agent")).to_have_text(NEEDS_AGENT)
        expect(page.locator("#agent-view")).to_have_attribute("data-source", "snapshot")
        assert view_rows(page, "view-loads") == [str(work / "AGENTS.md")]
        camera.shoot(page, "tabs-03-offline")
