"""An event stream ends once its listener may no longer listen (found by a review).

A stream outlives the request that checked its token: a chat's stream kept delivering
``out_of_date`` (with the changed paths) after its token was deleted, and the dashboard's kept
delivering after logout and the user's deletion. Each is now asked again at each ping and
before an event goes out once its last answer is ``RECHECK_EVERY`` seconds old. And only a
page's own script may open the dashboard's stream: frames of a page on another port of this
host (same site: the cookie goes along) held every connection the browser had to the dashboard.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
import sqlalchemy as sa

from agentcontext.control.db import Database
from agentcontext.control.models import ApiToken, DashboardSession, User
from agentcontext.server.app import build_app as control_app
from agentcontext.web.recheck import RECHECK_EVERY
from tests.attacks.http_surfaces import guarded_serving
from tests.attacks.test_chat_mcp_access import ACCEPT, new_user
from tests.control.conftest import CONTROL_EDGE, first_push
from tests.control.test_api import World, sqlite_world
from tests.control.test_chat_mcp import initialize, pinned_chat, stack

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def kinds_until_the_end(response: httpx.Response, timeout: float = 30) -> list[str]:
    with anyio.fail_after(timeout):
        return [line.partition(":")[2].strip() async for line in response.aiter_lines() if line.startswith("event:")]


@contextlib.asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[tuple[World, httpx.AsyncClient]]:
    async with sqlite_world(tmp_path) as world:
        assert (await world.push(first_push())).json()["accepted"]
        app = control_app(world.plane, background=False, edge=CONTROL_EDGE)
        async with (
            guarded_serving(app, CONTROL_EDGE) as serving,
            httpx.AsyncClient(base_url=serving.url, timeout=30, headers={"Host": "control"}) as client,
        ):
            yield world, client


async def test_a_chat_stream_whose_token_was_deleted_ends_before_its_next_event(tmp_path: Path) -> None:
    async with served(tmp_path) as (world, client):
        chat = await world.chat()
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        async with client.stream("GET", f"/api/v1/chats/{chat['id']}/events", headers=headers) as response:
            assert response.status_code == 200
            alice = sa.select(User.id).where(User.name == "alice").scalar_subquery()
            world.db.write(lambda s: s.execute(sa.delete(ApiToken).where(ApiToken.user_id == alice)))
            await anyio.sleep(RECHECK_EVERY + world.plane.settings.auth_ttl + 0.5)
            assert (await world.push(first_push(2, agents_md="Changed.\n"))).json()["accepted"]  # out_of_date
            assert await kinds_until_the_end(response) == ["state"]
        assert (await client.get("/api/v1/chats", headers=headers)).status_code == 401


async def dashboard_cookie(world: World) -> dict[str, str]:
    login = await world.plane.access.begin_login(world.tokens["alice"])
    session = await world.plane.access.confirm_login(login.secret)
    return {"Cookie": f"agentcontext_session={session.secret}"}


async def test_a_dashboard_stream_ends_once_its_session_is_gone(tmp_path: Path) -> None:
    async with served(tmp_path) as (world, client):
        cookie = await dashboard_cookie(world)
        async with client.stream("GET", "/ui/events", headers=cookie) as response:
            assert response.status_code == 200
            world.db.write(lambda s: s.execute(sa.delete(DashboardSession)))  # logged out, or the user deleted
            await anyio.sleep(RECHECK_EVERY + world.plane.settings.auth_ttl + 0.5)
            assert (await world.push(first_push(2, agents_md="Changed.\n"))).json()["accepted"]  # a snapshot event
            assert await kinds_until_the_end(response) == ["ready"]


async def test_the_dashboard_stream_opens_for_a_pages_script_only_and_never_in_a_frame(tmp_path: Path) -> None:
    async with served(tmp_path) as (world, client):
        cookie = await dashboard_cookie(world)
        for dest in ("iframe", "document", "image", "embed"):
            refused = await client.get("/ui/events", headers={**cookie, "Sec-Fetch-Dest": dest})
            assert refused.status_code == 403, dest
        headers = {**cookie, "Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin"}
        async with client.stream("GET", "/ui/events", headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["x-frame-options"] == "DENY"
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


@pytest.mark.slow
async def test_a_chat_mcp_sessions_standing_stream_ends_once_its_token_is_deleted(tmp_path: Path) -> None:
    """The 2025-06-18 session's standing ``GET`` kept delivering the chat's notices (``notifications/message``:
    the pinned context is out of date, with the changed path) after its token was deleted."""
    with stack(tmp_path) as running:
        token = new_user(running, "gina")
        chat_id = pinned_chat(running, token)
        opened = initialize(running, chat_id, token)
        headers = {
            **ACCEPT,
            "Authorization": f"Bearer {token}",
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        url = running.url(f"chats/{chat_id}")
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.post(url, headers=headers, json=initialized)).status_code == 202
            async with http.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as standing:
                assert standing.status_code == 200
                database = Database(f"sqlite:///{tmp_path / 'control.db'}")
                gina = sa.select(User.id).where(User.name == "gina").scalar_subquery()
                database.write(lambda s: s.execute(sa.delete(ApiToken).where(ApiToken.user_id == gina)))
                database.dispose()
                await anyio.sleep(RECHECK_EVERY + 2.5)  # the token cache's 2 s, and the last answer's
                (running.work / "AGENTS.md").write_text("Edited after gina's token went.\n")
                with anyio.fail_after(30):
                    data = [line async for line in standing.aiter_lines() if line.startswith("data:")]
        assert not [line for line in data if "out of date" in line], data
