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
from tests.attacks.http_surfaces import (
    AGENT_HOST,
    AGENT_TOKEN,
    FOREIGN_ORIGINS,
    INITIALIZE,
    MCP_HEADERS,
    Answer,
    agent_surface,
    call,
    control_surface,
    mcp_process,
)
from tests.control.test_api import ROUTES, fill, state

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
AGENT = {"Host": AGENT_HOST, "Authorization": f"Bearer {AGENT_TOKEN}", "Content-Type": "application/json"}
CROSS_SITE = ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, {"Sec-Fetch-Site": "same-site"})


def forbidden(answer: Answer) -> bool:
    return answer.status == 403 and answer.json()["message"] == "Forbidden." and answer.pulled == 0


async def test_another_sites_page_is_refused_on_every_agent_route(tmp_path: Path, home: Path) -> None:
    async with agent_surface(tmp_path, home) as surface:
        body = [json.dumps({"path": str(home / ".ssh")}).encode()]
        sources = list(surface.agent.sources)
        for method, path, _ in api_routes(surface.agent):
            for origin in FOREIGN_ORIGINS:
                answer = await call(surface.app, method, path, {**AGENT, "Origin": origin}, body)
                assert forbidden(answer), (method, path, origin, answer)
            for fetch in CROSS_SITE:
                assert forbidden(await call(surface.app, method, path, {**AGENT, **fetch}, body)), (path, fetch)
        assert list(surface.agent.sources) == sources
        for origin in ("http://127.0.0.1:8766", "http://localhost:8766", "http://[::1]:8766"):
            assert (await call(surface.app, "GET", "/api/v0/context", {**AGENT, "Origin": origin})).status == 200
        navigation = {**AGENT, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
        assert (await call(surface.app, "GET", "/api/v0/context", navigation)).status == 200


async def test_another_sites_page_is_refused_on_every_control_plane_route(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as surface:
        world = surface.world
        before = state(world.db)
        ids = {"chat_id": "c", "file_id": "f", "name": "notes", "workspace": "shared"}
        for method, template, body in ROUTES:
            token = world.tokens["agent" if "/agent/" in template else "alice"]
            headers = {"Host": "control", "Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            content = [json.dumps(body).encode()] if body is not None else []
            for extra in ({"Origin": origin} for origin in FOREIGN_ORIGINS):
                answer = await call(surface.app, method, fill(template, ids), {**headers, **extra}, content)
                assert forbidden(answer), (method, template, extra)
            for fetch in CROSS_SITE:
                assert forbidden(await call(surface.app, method, fill(template, ids), {**headers, **fetch}, content))
        assert state(world.db) == before


async def test_another_sites_page_cannot_log_in_or_post_a_dashboard_form(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as surface:
        world = surface.world
        form = {"Host": "control", "Content-Type": "application/x-www-form-urlencoded"}
        login = [f"token={world.tokens['alice']}".encode()]
        for origin in FOREIGN_ORIGINS:
            answer = await call(surface.app, "POST", "/login", {**form, "Origin": origin}, login)
            assert forbidden(answer) and "set-cookie" not in answer.headers
            cookie = {**form, "Origin": origin, "Cookie": f"agentcontext_session={world.tokens['alice']}"}
            assert forbidden(await call(surface.app, "POST", "/logout", cookie, [b"csrf=x"]))
            assert forbidden(await call(surface.app, "POST", "/ui/chats/c/refresh", cookie, [b"csrf=x"]))
        # the dashboard's own page logs in from its own origin
        answer = await call(surface.app, "POST", "/login", {**form, "Origin": "http://control"}, login)
        assert answer.status == 303 and "agentcontext_session=" in answer.headers["set-cookie"]


def test_another_sites_page_is_refused_by_the_mcp_server(tmp_path: Path) -> None:
    with mcp_process(tmp_path) as server:
        auth = {**MCP_HEADERS, "Authorization": f"Bearer {server.token}"}
        for origin in FOREIGN_ORIGINS:
            response = httpx.post(server.url, json=INITIALIZE, headers={**auth, "Origin": origin}, timeout=10)
            assert response.status_code == 403, (origin, response.text)
            assert response.json()["error"] == "forbidden_origin" and "mcp-session-id" not in response.headers
        for fetch in CROSS_SITE:
            response = httpx.post(server.url, json=INITIALIZE, headers={**auth, **fetch}, timeout=10)
            assert response.status_code == 403
        own = {**auth, "Origin": f"http://127.0.0.1:{server.port}"}
        assert httpx.post(server.url, json=INITIALIZE, headers=own, timeout=10).status_code == 200
