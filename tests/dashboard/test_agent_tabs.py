"""The inventory's agent tabs, over a real workspace agent: what each says when the agent is offline."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from agentcontext.dashboard.agent_tabs import NEEDS_AGENT
from tests.control.test_agent_views import linked
from tests.dashboard.conftest import log_in

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TAB = re.compile(r'<a role="tab" href="[^"]*" data-profile="([a-z]+)" aria-selected="(true|false)"')
PANEL = re.compile(r'<div id="agent-view" role="tabpanel" data-profile="([a-z]+)" data-source="([a-z]+)">')
VIEW_ROW = re.compile(r'<tr class="view-row" data-view-path="([^"]+)"')


async def test_an_offline_agent_says_the_views_need_it_online_and_shows_its_own_profile_as_stored(
    tmp_path: Path, home: Path
) -> None:
    async with linked(tmp_path, home, profile="claude") as link:
        await link.push()
        agent_id = await link.agent_id()
        beat = await link.world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"online": False})
        assert beat.status_code == 204
        await log_in(link.world, "alice")
        own = html.unescape((await link.world.client.get(f"/ui/agents/{agent_id}")).text)
        other = html.unescape((await link.world.client.get(f"/ui/agents/{agent_id}?view=codex")).text)
    assert TAB.findall(own) == [
        ("claude", "true"),
        ("codex", "false"),
        ("gemini", "false"),
        ("opencode", "false"),
        ("copilot", "false"),
        ("cursor", "false"),
        ("coder", "false"),
        ("default", "false"),
    ]
    assert (
        'data-profile="claude" aria-selected="true" aria-current="page">Claude Code <span class="badge ok own"' in own
    )
    assert NEEDS_AGENT in own and NEEDS_AGENT in other
    assert PANEL.search(own).groups() == ("claude", "snapshot")  # type: ignore[union-attr]
    assert VIEW_ROW.findall(own.split('id="view-loads"')[1].split("</table>")[0]) == [str(link.work / "CLAUDE.md")]
    assert PANEL.search(other).groups() == ("codex", "none")  # type: ignore[union-attr]
    assert 'id="view-loads"' not in other
