"""``POST /api/v1/chats/{id}/touched`` through a real control plane and a real workspace agent (issue 12, item 4).

A chat that touches a nested path gets that folder's AGENTS.md pinned (origin "discovered",
with the path that caused it) and carried by its next prompt; an edit of the file on disk
marks the chat out of date (the agent is asked again on its heartbeat), and a refresh picks
the edit up. Bad paths get clear 4xx answers; another user's chat is 404.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.control.settings import ControlSettings
from agentcontext.errors import InvalidRequestError
from agentcontext.server.app import build_app
from tests.control.conftest import CONTROL_EDGE
from tests.control.live import OS_NAME, Control, Workspace, control_plane, workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

FILES = {
    "AGENTS.md": "# Root\n\nRoot rules.\n",
    "services/billing/AGENTS.md": "# Billing\n\nMoney is integer cents.\n",
    "services/billing/api.py": "print('bill')\n",
    "web/app.ts": "export {}\n",
}
NESTED = "services/billing/AGENTS.md"


@contextlib.asynccontextmanager
async def api(control: Control) -> AsyncIterator[httpx.AsyncClient]:
    """The control plane's app (API and dashboard, as served), called in process with alice's token."""
    app = build_app(control.plane, background=False, edge=CONTROL_EDGE)
    headers = {"Authorization": f"Bearer {control.user_token}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://control", headers=headers) as client:
        yield client


@dataclass
class Stack:
    control: Control
    live: Workspace
    client: httpx.AsyncClient

    async def billing_chat(self) -> str:
        """A new chat that touched ``services/billing/api.py`` (its AGENTS.md pinned)."""
        chat = await self.control.chat()
        await touched(self.client, chat, "services/billing/api.py")
        return chat


@contextlib.asynccontextmanager
async def stack(
    tmp_path: Path, home: Path, db_url: str | None = None, settings: ControlSettings | None = None
) -> AsyncIterator[Stack]:
    """A control plane (on ``db_url``, else SQLite), a real agent over ``FILES`` pushing to it, the API client."""
    async with (
        control_plane(tmp_path, db_url=db_url, settings=settings) as control,
        workspace(control, tmp_path / "w", FILES, home=home) as live,
        api(control) as client,
    ):
        yield Stack(control, live, client)


async def touched(client: httpx.AsyncClient, chat: str, *paths: str) -> dict[str, Any]:
    response = await client.post(f"/api/v1/chats/{chat}/touched", json={"paths": list(paths)})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def heartbeat(control: Control, run_id: str | None = None, **discovered: bool) -> None:
    """The agent's heartbeat, as its pusher sends it: the control plane rechecks discovered files on it.
    ``discovered``: what the agent's watch of them says (``watching``, ``changed``)."""
    beat: dict[str, Any] = {"online": True, "agent": {"os": OS_NAME, "run_id": run_id} if run_id else {"os": OS_NAME}}
    if discovered:
        beat["discovered"] = discovered
    await control.plane.sync.heartbeat(control.principal, beat)


async def dirty(control: Control, chat: str) -> bool:
    return (await control.plane.chats.get(control.user, chat)).context.dirty


EVERY_BEAT = ControlSettings(recheck_every=0.001)  # a recheck on each heartbeat that may have one


async def test_an_agent_watching_every_discovered_file_of_its_run_is_rechecked_only_when_it_tells_a_change(
    tmp_path: Path, home: Path
) -> None:
    async with stack(tmp_path, home, settings=EVERY_BEAT) as running:
        control, live = running.control, running.live
        chat = await running.billing_chat()
        await heartbeat(control, "run-1", watching=True)  # the run's first: asked about every file (none changed)
        (live.work / NESTED).write_text("# Billing\n\nChanged.\n", encoding="utf-8")
        await heartbeat(control, "run-1", watching=True)  # its watch would have said: no recheck
        quiet = await dirty(control, chat)
        await heartbeat(control, "run-1", watching=True, changed=True)
        told = await dirty(control, chat)
    assert (quiet, told) == (False, True)


@pytest.mark.parametrize(
    "beat",
    [
        pytest.param({"run_id": "run-2", "watching": True}, id="a new run"),
        pytest.param({"run_id": "run-1", "watching": False}, id="past its cap"),
        pytest.param({"run_id": "run-1"}, id="an agent that does not watch"),
    ],
)
async def test_a_new_run_an_agent_past_its_watch_cap_or_one_not_watching_is_rechecked_on_heartbeats(
    tmp_path: Path, home: Path, beat: dict[str, Any]
) -> None:
    async with stack(tmp_path, home, settings=EVERY_BEAT) as running:
        control, live = running.control, running.live
        chat = await running.billing_chat()
        await heartbeat(control, "run-1", watching=True)
        (live.work / NESTED).write_text("# Billing\n\nChanged.\n", encoding="utf-8")
        await heartbeat(control, **beat)
        marked = await dirty(control, chat)
    assert marked is True


async def test_a_chat_that_touches_a_nested_path_gets_its_agents_md_in_the_next_prompt(
    tmp_path: Path, home: Path, db_url: str
) -> None:
    async with stack(tmp_path, home, db_url) as running:
        control, live, client = running.control, running.live, running.client
        chat = await control.chat()
        before = await client.get(f"/api/v1/chats/{chat}/prompt")
        assert "Money is integer cents." not in before.json()["system"]
        assert (await client.get(f"/api/v1/chats/{chat}/prompt")).headers["X-Prompt-Cache"] == "hit"

        answer = await touched(client, chat, "services/billing/api.py")
        again = await touched(client, chat, str(live.work / "services/billing"), "web/app.ts")
        prompt = await client.get(f"/api/v1/chats/{chat}/prompt")
        listed = (await client.get(f"/api/v1/chats/{chat}")).json()["context"]["resources"]

    nested = str(live.work / NESTED)
    cause = str(live.work / "services/billing/api.py")
    size = len(FILES[NESTED].encode())
    assert answer["added"] == [{"path": nested, "bytes": size, "caused_by": [cause]}]
    assert (answer["bytes_added"], answer["already_pinned"], answer["dirty"]) == (size, [], False)
    assert (again["added"], again["already_pinned"]) == ([], [nested])
    assert prompt.headers["X-Prompt-Cache"] == "miss"  # the touched call that added a file moved the turn key
    system = prompt.json()["system"]
    assert system.index("</workspace-context>") < system.index("<discovered-context>")
    assert f"Source: {nested} (for {cause}, {live.work / 'services/billing'})\n# Billing" in system
    rows = {r["path"]: r for r in listed}
    assert rows[nested]["origin"] == "discovered"
    assert rows[nested]["caused_by"] == [cause, str(live.work / "services/billing")]
    assert rows[str(live.work / "AGENTS.md")]["origin"] == "snapshot"


async def test_an_edit_of_a_discovered_file_marks_the_chat_out_of_date_and_refresh_picks_it_up(
    tmp_path: Path, home: Path, db_url: str
) -> None:
    async with stack(tmp_path, home, db_url) as running:
        control, live, client = running.control, running.live, running.client
        chat = await running.billing_chat()
        await heartbeat(control)  # nothing changed yet: nothing marked
        assert (await control.plane.chats.get(control.user, chat)).context.dirty is False

        (live.work / NESTED).write_text("# Billing\n\nMoney is a Decimal now.\n", encoding="utf-8")
        marked = await control.plane.sync.recheck_discovered(control.principal.agent_id, force=True)  # a later beat
        summary = await control.plane.chats.get(control.user, chat)
        stale = await control.system(chat)
        refreshed = (await client.put(f"/api/v1/chats/{chat}/context")).json()
        fresh = await control.system(chat)

    nested = str(live.work / NESTED)
    assert marked == [chat]
    assert summary.context.dirty is True
    assert "Money is integer cents." in stale and "Decimal" not in stale  # the pin holds until a refresh
    assert refreshed["diff"] == {"added": [], "removed": [], "changed": [nested]}
    assert refreshed["context"]["dirty"] is False and "discovered_error" not in refreshed
    assert "Money is a Decimal now." in fresh and "integer cents" not in fresh


async def test_every_refresh_of_a_chat_with_discovered_files_asks_the_agent_again(
    tmp_path: Path, home: Path, db_url: str
) -> None:
    """The first refresh learns the chat has discovered files (tried without asking, then asked); the next ones
    ask first: each edit of the file shows up in the refresh that follows it."""
    async with stack(tmp_path, home, db_url) as running:
        control, live, client = running.control, running.live, running.client
        chat = await running.billing_chat()
        diffs = []
        for text in ("Money is a Decimal now.", "Money is a Fraction now."):
            (live.work / NESTED).write_text(f"# Billing\n\n{text}\n", encoding="utf-8")
            diffs.append((await client.put(f"/api/v1/chats/{chat}/context")).json()["diff"])
        fresh = await control.system(chat)

    nested = str(live.work / NESTED)
    assert diffs == [{"added": [], "removed": [], "changed": [nested]}] * 2
    assert "Money is a Fraction now." in fresh and "Decimal" not in fresh


async def test_a_heartbeat_rechecks_and_a_touched_call_sees_the_change_too(tmp_path: Path, home: Path) -> None:
    async with stack(tmp_path, home) as running:
        control, live, client = running.control, running.live, running.client
        first, second = await control.chat(), await control.chat()
        await touched(client, first, "services/billing/api.py")
        await touched(client, second, "services/billing")
        (live.work / NESTED).write_text("# Billing\n\nChanged.\n", encoding="utf-8")
        again = await touched(client, first, "services/billing/api.py")
        await heartbeat(control)
        dirty = [(await control.plane.chats.get(control.user, c)).context.dirty for c in (first, second)]

    assert (again["changed"], again["dirty"], again["added"]) == ([str(live.work / NESTED)], True, [])
    assert dirty == [True, True]


async def test_refresh_keeps_discovered_files_and_says_so_when_the_agent_is_unreachable(
    tmp_path: Path, home: Path
) -> None:
    async with control_plane(tmp_path) as control, api(control) as client:
        async with workspace(control, tmp_path / "w", FILES, home=home) as live:
            chat = await control.chat()
            await touched(client, chat, "services/billing/api.py")
        refreshed = await client.put(f"/api/v1/chats/{chat}/context")
        system = await control.system(chat)

    assert refreshed.status_code == 200, refreshed.text
    body = refreshed.json()
    assert "could not be asked" in body["discovered_error"]
    assert body["diff"] == {"added": [], "removed": [], "changed": []}
    assert [r["origin"] for r in body["context"]["resources"] if r["path"] == str(live.work / NESTED)] == ["discovered"]
    assert "Money is integer cents." in system


async def test_bad_paths_get_clear_errors_and_nothing_is_pinned(tmp_path: Path, home: Path) -> None:
    async with stack(tmp_path, home) as running:
        control, client = running.control, running.client
        chat = await control.chat()
        url = f"/api/v1/chats/{chat}/touched"
        outside = await client.post(url, json={"paths": ["/etc/passwd"]})
        dotdot = await client.post(url, json={"paths": ["services/../../secret"]})
        many = await client.post(url, json={"paths": [f"f{i}.py" for i in range(10_000)]})
        empty = await client.post(url, json={"paths": []})
        wrong = await client.post(url, json={"paths": "services"})
        mixed = await client.post(url, json={"paths": ["/etc/passwd", "services/billing/api.py"]})
        nobody = await client.post("/api/v1/chats/no-such-chat/touched", json={"paths": ["web/app.ts"]})
        with pytest.raises(InvalidRequestError, match="at most 256"):
            await control.plane.chats.touched(control.user, chat, [f"f{i}.py" for i in range(257)])

    assert outside.status_code == 400
    assert "/etc/passwd: outside the work dir" in outside.json()["detail"]
    assert dotdot.status_code == 400 and '".." segment' in dotdot.json()["detail"]
    assert many.status_code == 422 and "paths" in many.json()["detail"] and "256" in many.json()["detail"]
    assert (empty.status_code, wrong.status_code, nobody.status_code) == (422, 422, 404)
    assert mixed.status_code == 200
    assert [r["path"] for r in mixed.json()["refused"]] == ["/etc/passwd"]
    assert len(mixed.json()["added"]) == 1


async def test_a_refresh_after_the_discovered_file_is_deleted_drops_it_and_says_removed(
    tmp_path: Path, home: Path, db_url: str
) -> None:
    async with stack(tmp_path, home, db_url) as running:
        control, live, client = running.control, running.live, running.client
        chat = await running.billing_chat()
        (live.work / NESTED).unlink()
        marked = await control.plane.sync.recheck_discovered(control.principal.agent_id, force=True)
        refreshed = (await client.put(f"/api/v1/chats/{chat}/context")).json()
        system = await control.system(chat)
        again = await touched(client, chat, "services/billing/api.py")

    assert marked == [chat]
    assert refreshed["diff"] == {"added": [], "removed": [str(live.work / NESTED)], "changed": []}
    assert all(r["origin"] == "snapshot" for r in refreshed["context"]["resources"])
    assert "<discovered-context>" not in system and "integer cents" not in system
    assert (again["added"], again["already_pinned"]) == ([], [])


CLAUDE_FILES = {
    "CLAUDE.md": "# Root\n\nRoot rules.\n",
    "services/billing/CLAUDE.md": "# Billing\n\nMoney is integer cents.\n",
    "services/billing/api.py": "print('bill')\n",
}


async def test_a_nested_claude_md_waits_out_of_the_prompt_until_the_chat_touches_its_folder(
    tmp_path: Path, home: Path
) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", CLAUDE_FILES, home=home, profile="claude") as live,
        api(control) as client,
    ):
        chat = await control.chat()
        listed = (await client.get(f"/api/v1/chats/{chat}")).json()["context"]["resources"]
        before = (await client.get(f"/api/v1/chats/{chat}/prompt")).json()["system"]
        answer = await touched(client, chat, "services/billing/api.py")
        after = (await client.get(f"/api/v1/chats/{chat}/prompt")).json()["system"]

    nested = str(live.work / "services/billing/CLAUDE.md")
    assert nested in {r["path"] for r in listed}  # in the snapshot, listed on demand as Claude Code loads it
    assert "Root rules." in before and "Money is integer cents." not in before
    assert [a["path"] for a in answer["added"]] == [nested] and answer["already_pinned"] == []
    assert "Money is integer cents." in after[after.index("<discovered-context>") :]


COPILOT_FILES = {
    "AGENTS.md": "# Root\n\nRoot rules.\n",
    ".github/instructions/py.instructions.md": '---\napplyTo: "services/**/*.py"\n---\nUse type hints.\n',
    **{path: text for path, text in FILES.items() if path.startswith("services/")},
}


async def test_a_new_file_where_a_chat_works_marks_it_and_a_snapshot_file_it_took_on_demand_does_not(
    tmp_path: Path, home: Path
) -> None:
    """Copilot's path-scoped file is the snapshot's (a refresh pins it as a snapshot row again) while the
    nested AGENTS.md is discovered: the rechecks take the first for no new file, and a new AGENTS.md for one."""
    async with (
        control_plane(tmp_path, settings=EVERY_BEAT) as control,
        workspace(control, tmp_path / "w", COPILOT_FILES, home=home, profile="copilot") as live,
        api(control) as client,
    ):
        chat = await control.chat()
        added = await touched(client, chat, "services/billing/api.py")
        assert (await client.put(f"/api/v1/chats/{chat}/context")).status_code == 200
        await heartbeat(control)
        after_refresh = await dirty(control, chat)
        (live.work / "services/AGENTS.md").write_text("# Services\n\nNew rules.\n", encoding="utf-8")
        await heartbeat(control)
        after_new_file = await dirty(control, chat)
    assert sorted(a["path"] for a in added["added"]) == [
        str(live.work / ".github/instructions/py.instructions.md"),
        str(live.work / NESTED),
    ]
    assert (after_refresh, after_new_file) == (False, True)
