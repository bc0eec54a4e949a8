"""Another site's page calling our servers from the user's browser: refused with 403 before any work.

A browser names the page behind every request it lets a page make with ``Origin`` (``null``
for sandboxed frames and files); only pages of a name the server serves may call it. A
subresource a page embeds (``<img>``, ``<script>``) carries no Origin but ``Sec-Fetch-Site:
cross-site`` (or ``same-site``: another port on localhost): refused too, except a
navigation (a link the user follows). A program sends no Origin: served.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.agent.test_api import api_routes
from tests.attacks import http_surfaces as web
from tests.control.test_api import state

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
AGENT = {"Host": web.AGENT_HOST, "Authorization": f"Bearer {web.AGENT_TOKEN}", "Content-Type": "application/json"}
CROSS_SITE = ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, {"Sec-Fetch-Site": "same-site"})
PAGES = [{"Origin": origin} for origin in web.FOREIGN_ORIGINS] + list(CROSS_SITE)


def forbidden(answer: web.Answer) -> bool:
    return answer.status == 403 and answer.json()["message"] == "Forbidden." and answer.pulled == 0


async def test_another_sites_page_is_refused_on_every_agent_route(tmp_path: Path, home: Path) -> None:
    async with web.agent_surface(tmp_path, home) as surface:
        body = [json.dumps({"path": str(home / ".ssh")}).encode()]
        sources = list(surface.agent.sources)
        for method, path, _ in api_routes(surface.agent):
            for page in PAGES:
                answer = await web.call(surface.app, method, path, {**AGENT, **page}, body)
                assert forbidden(answer), (method, path, page, answer)
        assert list(surface.agent.sources) == sources
        own_pages = [{"Origin": f"http://{name}:8766"} for name in ("127.0.0.1", "localhost", "[::1]")]
        navigation = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}  # a link the user follows
        for page in [*own_pages, navigation]:
            assert (await web.call(surface.app, "GET", "/api/v0/context", {**AGENT, **page})).status == 200


async def test_another_sites_page_is_refused_on_every_control_plane_route(tmp_path: Path) -> None:
    async with web.control_surface(tmp_path) as surface:
        world = surface.world
        before = state(world.db)
        for page in PAGES:
            for request in web.every_api_request(world, {"Host": "control", **page}):
                answer = await web.call(surface.app, request.method, request.target, request.headers, request.body)
                assert forbidden(answer), request
        assert state(world.db) == before


async def test_another_sites_page_cannot_log_in_or_post_a_dashboard_form(tmp_path: Path) -> None:
    async with web.control_surface(tmp_path) as surface:
        tokens = surface.world.tokens
        form = {"Host": "control", "Content-Type": "application/x-www-form-urlencoded"}
        login = [f"token={tokens['alice']}".encode()]
        for origin in web.FOREIGN_ORIGINS:
            answer = await web.call(surface.app, "POST", "/login", {**form, "Origin": origin}, login)
            assert forbidden(answer) and "set-cookie" not in answer.headers
            cookie = {**form, "Origin": origin, "Cookie": f"agentcontext_session={tokens['alice']}"}
            for path in ("/logout", "/ui/chats/c/refresh", "/login/confirm"):
                assert forbidden(await web.call(surface.app, "POST", path, cookie, [b"csrf=x&answer=yes"])), path
        # the dashboard's own page starts a login from its own origin (which then asks: test_login_link)
        answer = await web.call(surface.app, "POST", "/login", {**form, "Origin": "http://control"}, login)
        assert answer.status == 200 and "agentcontext_login=" in answer.headers["set-cookie"]


def test_another_sites_page_is_refused_by_the_mcp_server(tmp_path: Path) -> None:
    with web.mcp_process(tmp_path) as server:
        auth = {**web.MCP_HEADERS, "Authorization": f"Bearer {server.token}"}
        for page in PAGES:
            response = httpx.post(server.url, json=web.INITIALIZE, headers={**auth, **page}, timeout=10)
            assert response.status_code == 403, (page, response.text)
            assert response.json()["error"] == "forbidden_origin" and "mcp-session-id" not in response.headers
        own = {**auth, "Origin": f"http://127.0.0.1:{server.port}"}
        assert httpx.post(server.url, json=web.INITIALIZE, headers=own, timeout=10).status_code == 200
