"""A login link signs nobody in unseen, and the login cookie holds a session, never the API token.

As reported: the login page submitted a link's ``#token=`` at once, so any page that sent a
victim's browser to ``/login#token=<the attacker's token>`` signed it in to the attacker's
account without a word (what the victim then wrote, chats and skills, went to the attacker).
And the cookie held the API token itself, valid wherever the token was and after logging out.
Now a token only starts a login that names the account and asks; the answer must come from
the dashboard's own page with that login's CSRF token; no page may frame the question; and the
cookie holds a session's secret that logging out ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from agentcontext.control.models import DashboardSession
from agentcontext.dashboard import session
from agentcontext.dashboard.session import COOKIE, PENDING_COOKIE
from tests.control.test_api import World
from tests.dashboard.browser import Stack, chromium, chromium_or_skip, up
from tests.dashboard.conftest import ORIGIN, csrf_of, dashboard_world, log_in

ATTACKER = "http://attacker.test"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with dashboard_world(tmp_path) as opened:
        yield opened


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    chromium_or_skip()
    with up(tmp_path) as running:
        yield running


def cookie_set(response: httpx.Response, name: str) -> bool:
    return any(value.startswith(f"{name}=") for value in response.headers.get_list("set-cookie"))


def logged_in_as(page: httpx.Response) -> str | None:
    found = re.search(r"Log out ([\w.-]+)</button>", page.text)
    return found.group(1) if found else None


@pytest.mark.anyio
async def test_a_login_link_names_the_account_and_signs_nobody_in_until_the_user_says_yes(world: World) -> None:
    await log_in(world, "alice")  # the victim
    # what the login page's script posts for a link to bob's account, which a page of bob's sent her to
    asked = await world.client.post("/login", data={"token": world.tokens["bob"]}, headers=ORIGIN)
    assert asked.status_code == 200
    assert not cookie_set(asked, COOKIE) and cookie_set(asked, PENDING_COOKIE)
    assert re.search(r'<span id="login-account">bob</span>', asked.text)
    assert 'id="login-current"' in asked.text and "alice" in asked.text  # who this browser is now
    pending = world.client.cookies[PENDING_COOKIE]
    assert world.tokens["bob"] not in asked.text and pending not in asked.text  # the page reveals neither
    assert logged_in_as(await world.client.get("/")) == "alice"
    answered = await world.client.post("/login/confirm", data={"csrf": csrf_of(asked), "answer": "no"}, headers=ORIGIN)
    assert (answered.status_code, answered.headers["location"]) == (303, "/login")
    assert logged_in_as(await world.client.get("/")) == "alice"


@pytest.mark.anyio
async def test_the_cookie_holds_a_session_that_logging_out_ends_not_the_api_token(world: World) -> None:
    token = world.tokens["alice"]
    answer = await log_in(world, "alice")
    secret = world.client.cookies[COOKIE]
    assert secret != token and token not in secret and token not in answer.headers["set-cookie"]
    page = await world.client.get("/")
    assert logged_in_as(page) == "alice"
    async with httpx.AsyncClient(transport=world.client._transport, base_url="http://control") as other:
        other.cookies.set(COOKIE, token)  # the API token is no login cookie
        assert (await other.get("/")).headers["location"] == "/login"
        other.cookies.set(COOKIE, secret)  # a copy of the cookie works until logout ...
        assert logged_in_as(await other.get("/")) == "alice"
        await world.client.post("/logout", data={"csrf": csrf_of(page)}, headers=ORIGIN)
        assert (await other.get("/")).headers["location"] == "/login"  # ... and not after
    with world.db.read() as read:  # nothing of it is left
        assert read.scalar(sa.select(sa.func.count()).select_from(DashboardSession)) == 0


@pytest.mark.anyio
async def test_only_the_dashboards_own_page_answers_the_question(world: World) -> None:
    asked = await world.client.post("/login", data={"token": world.tokens["bob"]}, headers=ORIGIN)
    assert "frame-ancestors 'none'" in asked.headers["content-security-policy"]
    assert asked.headers["x-frame-options"] == "DENY"
    yes = {"csrf": csrf_of(asked), "answer": "yes"}
    attempts: list[tuple[dict[str, str], dict[str, str]]] = [
        ({"Origin": "http://evil.test"}, yes),  # another site's page submits the form
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, yes),  # with no Origin said
        (ORIGIN, {"answer": "yes"}),  # without the question's CSRF token
        (ORIGIN, {"csrf": "0" * 64, "answer": "yes"}),
    ]
    for headers, data in attempts:
        answer = await world.client.post("/login/confirm", data=data, headers=headers)
        assert answer.status_code == 403 and not cookie_set(answer, COOKIE), (headers, data)
    pending = world.client.cookies[PENDING_COOKIE]
    world.client.cookies.delete(PENDING_COOKIE)  # a form without the login it answers
    empty = {"csrf": session.csrf_of(""), "answer": "yes"}
    assert (await world.client.post("/login/confirm", data=empty, headers=ORIGIN)).status_code == 403
    world.client.cookies.set(PENDING_COOKIE, pending, path="/login")
    answer = await world.client.post("/login/confirm", data=yes, headers=ORIGIN)
    assert (answer.status_code, answer.headers["location"]) == (303, "/") and cookie_set(answer, COOKIE)
    assert logged_in_as(await world.client.get("/")) == "bob"
    again = await world.client.post("/login/confirm", data=yes, headers=ORIGIN)  # a login is answered once
    assert again.status_code in (401, 403) and not cookie_set(again, COOKIE)


def _attacker_pages(stack: Stack, link: str) -> dict[str, str]:
    return {
        "/go": f"<script>location.href = {json.dumps(link)};</script>",
        "/frame": f'<iframe src="{link}" width="800" height="600"></iframe>',
        "/submit": (
            f'<form id="f" method="post" action="{stack.url}/login/confirm">'
            '<input name="answer" value="yes"></form><script>document.getElementById("f").submit();</script>'
        ),
    }


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_page_sending_the_browser_to_a_login_link_framing_or_submitting_it_signs_nobody_in(stack: Stack) -> None:
    from playwright.sync_api import Route, expect

    admin = {"Authorization": f"Bearer {stack.user_token}"}
    created = httpx.post(f"{stack.url}/api/v1/users", json={"name": "mallory"}, headers=admin, timeout=10)
    assert created.status_code == 201, created.text
    mallory = created.json()["token"]
    victim = httpx.get(f"{stack.url}/api/v1/users/me", headers=admin, timeout=10).json()["name"]
    pages = _attacker_pages(stack, f"{stack.url}/login#token={mallory}")

    def attacker(route: Route) -> None:
        path = "/" + route.request.url.removeprefix(ATTACKER).lstrip("/")
        route.fulfill(
            status=200, content_type="text/html", body=f"<!doctype html><html><body>{pages[path]}</body></html>"
        )

    with chromium() as browser:
        context = browser.new_context()
        context.route(f"{ATTACKER}/**", attacker)
        page = context.new_page()
        page.goto(f"{ATTACKER}/go")  # a page sends a browser to a login link for mallory's account
        page.wait_for_url(stack.url + "/login")  # asked, not signed in; the fragment is gone from the address bar
        expect(page.locator("#login-account")).to_have_text("mallory")
        assert mallory not in page.content() and mallory not in page.url
        page.goto(stack.url + "/")
        page.wait_for_url(stack.url + "/login")

        page.goto("about:blank")  # (from /login itself, the link would only move to its fragment)
        page.goto(stack.login_link)  # the victim follows up's own link, and says yes
        expect(page.locator("#login-account")).to_have_text(victim)
        page.click("#login-yes")
        page.wait_for_url(stack.url + "/")

        page.goto(f"{ATTACKER}/go")  # again, now that the victim is logged in: the question says who is
        page.wait_for_url(stack.url + "/login")
        expect(page.locator("#login-account")).to_have_text("mallory")
        expect(page.locator("#login-current")).to_contain_text(victim)

        page.goto(f"{ATTACKER}/frame")  # a page frames the link: no dashboard page shows inside
        page.wait_for_load_state("load")
        framed = [frame for frame in page.frames if frame is not page.main_frame]
        assert framed and all(frame.locator("#login-form, #login-confirm").count() == 0 for frame in framed)

        answer = page.goto(f"{ATTACKER}/submit")  # a page posts the yes itself
        page.wait_for_url(f"{stack.url}/login/confirm")
        assert "Forbidden" in page.content(), answer

        page.goto(stack.url + "/")
        expect(page.locator("header form button")).to_have_text(f"Log out {victim}")
