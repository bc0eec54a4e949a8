"""Logging in to the dashboard with an API token, logging out, and the redirects without a session."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from agentcontext.control.models import DashboardSession
from agentcontext.dashboard.session import COOKIE
from tests.control.test_api import World
from tests.dashboard.conftest import ORIGIN, csrf_of, log_in

pytestmark = [pytest.mark.anyio]

PAGES = ["/", "/ui/chats", "/ui/chats/some-chat", "/ui/agents/some-agent", "/ui/agents/a/mcp", "/ui/events"]


@pytest.mark.parametrize("path", PAGES)
async def test_every_page_redirects_to_the_login_form_without_a_valid_session(world: World, path: str) -> None:
    response = await world.client.get(path)
    assert (response.status_code, response.headers["location"]) == (303, "/login")
    world.client.cookies.set(COOKIE, "acu_not-a-token-we-issued")
    assert (await world.client.get(path)).headers["location"] == "/login"
    world.client.cookies.set(COOKIE, world.tokens["agent"])  # an agent's token is no login
    assert (await world.client.get(path)).headers["location"] == "/login"


async def test_the_login_form_submits_a_login_links_token_from_its_fragment(world: World) -> None:
    response = await world.client.get("/login")
    assert response.status_code == 200
    assert 'id="login-form"' in response.text and 'name="token"' in response.text
    script = await world.client.get("/ui/static/dashboard.js")
    assert script.status_code == 200 and "#token=" in script.text


async def test_logging_in_sets_an_http_only_same_site_strict_session_cookie_and_redirects_home(world: World) -> None:
    response = await log_in(world, "alice")
    assert (response.status_code, response.headers["location"]) == (303, "/")
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    home = await world.client.get("/")
    assert home.status_code == 200 and "shared" in home.text and "alice" in home.text


@pytest.mark.parametrize("token", ["", "acu_never-issued", "agent"])
async def test_a_token_that_is_not_a_users_does_not_log_in(world: World, token: str) -> None:
    response = await world.client.post("/login", data={"token": world.tokens.get(token, token)}, headers=ORIGIN)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers
    assert 'id="login-error"' in response.text


async def test_a_login_posted_from_another_origin_is_refused(world: World) -> None:
    response = await world.client.post(
        "/login", data={"token": world.tokens["alice"]}, headers={"Origin": "http://evil.test"}
    )
    assert response.status_code == 403 and "set-cookie" not in response.headers
    assert (await world.client.post("/login", data={"token": world.tokens["alice"]})).status_code == 403


async def test_logging_out_needs_this_sessions_csrf_token_and_this_origin(world: World) -> None:
    await log_in(world, "alice")
    csrf = csrf_of(await world.client.get("/"))
    assert (await world.client.post("/logout", data={}, headers=ORIGIN)).status_code == 403
    assert (await world.client.post("/logout", data={"csrf": "0" * 64}, headers=ORIGIN)).status_code == 403
    other = {"Origin": "http://evil.test"}
    assert (await world.client.post("/logout", data={"csrf": csrf}, headers=other)).status_code == 403
    response = await world.client.post("/logout", data={"csrf": csrf}, headers=ORIGIN)
    assert (response.status_code, response.headers["location"]) == (303, "/login")
    assert f'{COOKIE}=""' in response.headers["set-cookie"]
    assert (await world.client.get("/")).status_code == 303


async def test_a_login_answered_after_it_expired_signs_nobody_in_and_says_why(world: World) -> None:
    asked = await world.client.post("/login", data={"token": world.tokens["alice"]}, headers=ORIGIN)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    world.db.write(lambda s: s.execute(sa.update(DashboardSession).values(expires_at=past)))
    answer = await world.client.post("/login/confirm", data={"csrf": csrf_of(asked), "answer": "yes"}, headers=ORIGIN)
    assert answer.status_code == 401 and f"{COOKIE}=" not in answer.headers.get("set-cookie", "")
    assert 'id="login-form"' in answer.text and "waited too long" in answer.text
    assert (await world.client.get("/")).headers["location"] == "/login"
