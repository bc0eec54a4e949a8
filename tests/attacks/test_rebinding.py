"""A web page that rebinds its own name to 127.0.0.1 reaches our loopback servers as ``Host: attacker.example``.

Before the guard, such a page read every file of the agent's context, read any ``.md`` through
``plan-file``, added ``~/.ssh`` as a source and called the workspace's MCP tools. Now every
surface (the agent, the control plane and its dashboard, the MCP server over HTTP) answers
421 to a name it does not serve, with or without a valid token, before any route runs: no
body is read, nothing changes, no file is opened (tests/containment.py fails a test that
reads the secret plan file placed outside every root).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from agentcontext.testing import make_workspace
from tests.agent.test_api import api_routes
from tests.agent.test_service import agent_process
from tests.attacks.http_surfaces import (
    AGENT_HOST,
    AGENT_TOKEN,
    INITIALIZE,
    MCP_HEADERS,
    REBINDING_HOSTS,
    agent_surface,
    call,
    control_surface,
    every_api_request,
    mcp_process,
)
from tests.control.test_api import state

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def misdirected(answer_status: int, body: dict[str, object], headers: dict[str, str]) -> bool:
    return (
        answer_status == 421
        and body.get("message") == "Misdirected request."
        and "--allow-host" in str(body.get("detail"))
        and headers.get("connection") == "close"
    )


async def test_a_rebinding_page_gets_nothing_from_the_agent_token_or_not(tmp_path: Path, home: Path) -> None:
    async with agent_surface(tmp_path, home) as surface:
        ssh = str(home / ".ssh")
        work = [
            ("GET", "/api/v0/context?payloads=true", b""),  # every file of the context
            ("GET", f"/api/v0/plan-file?path={surface.secret_plan}", b""),  # any .md the user can read
            ("POST", "/api/v0/context/sources", json.dumps({"path": ssh}).encode()),
            ("POST", "/api/v0/mcp/call-tool", json.dumps({"tool_name": "time__now", "arguments": {}}).encode()),
        ]
        every_route = [(method, path, b"") for method, path, _ in api_routes(surface.agent)]
        sources = list(surface.agent.sources)
        for host in REBINDING_HOSTS:
            for token in ("", AGENT_TOKEN):
                headers = {"Host": host, "Content-Type": "application/json"}
                if token:
                    headers["Authorization"] = f"Bearer {token}"
                for method, target, body in work + every_route:
                    answer = await call(surface.app, method, target, headers, [body] if body else [])
                    assert misdirected(answer.status, answer.json(), answer.headers), (host, method, target)
                    assert answer.pulled == 0, (host, method, target)
        assert list(surface.agent.sources) == sources
        # the same request under the agent's own name does reach the route
        own = {"Host": AGENT_HOST, "Authorization": f"Bearer {AGENT_TOKEN}"}
        assert (await call(surface.app, "GET", "/api/v0/context", own)).status == 200


async def test_a_rebinding_page_gets_nothing_from_the_control_plane_or_its_dashboard(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as surface:
        world = surface.world
        before = state(world.db)
        for host in REBINDING_HOSTS:
            requests = every_api_request(world, {"Host": host}) + every_api_request(world, {"Host": host}, token=False)
            for request in requests:
                answer = await call(surface.app, request.method, request.target, request.headers, request.body)
                assert misdirected(answer.status, answer.json(), answer.headers), (host, request)
                assert answer.pulled == 0
            cookie = {"Host": host, "Cookie": f"agentcontext_session={world.tokens['alice']}"}
            for method, target in (("GET", "/"), ("GET", "/ui/chats"), ("GET", "/ui/events"), ("GET", "/healthz")):
                answer = await call(surface.app, method, target, cookie)
                assert misdirected(answer.status, answer.json(), answer.headers), (host, target)
            form = [f"token={world.tokens['alice']}&answer=yes".encode()]
            login = {"Host": host, "Content-Type": "application/x-www-form-urlencoded"}
            for target in ("/login", "/login/confirm"):
                answer = await call(surface.app, "POST", target, login, form)
                assert answer.status == 421 and "set-cookie" not in answer.headers and answer.pulled == 0
        assert state(world.db) == before
        own = await world.call("GET", "/api/v1/users/me", "alice")  # as http://control, a name it serves
        assert own.status_code == 200


def test_a_rebinding_page_gets_nothing_from_the_mcp_server(tmp_path: Path) -> None:
    with mcp_process(tmp_path) as server:
        auth = {"Authorization": f"Bearer {server.token}"}
        for host in REBINDING_HOSTS:
            for headers in ({**MCP_HEADERS, "Host": host}, {**MCP_HEADERS, **auth, "Host": host}):
                response = httpx.post(server.url, json=INITIALIZE, headers=headers, timeout=10)
                assert response.status_code == 421, (host, response.text)
                assert response.json()["error"] == "misdirected_request"
                assert "mcp-session-id" not in response.headers
                stream = httpx.get(server.url, headers={**headers, "Accept": "text/event-stream"}, timeout=10)
                assert stream.status_code == 421
        served = httpx.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **auth}, timeout=10)
        assert served.status_code == 200 and "mcp-session-id" in served.headers


def test_a_name_given_with_allow_host_is_served_and_no_other(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home, "--allow-host", "agent.internal") as agent:
        port = agent.url.rpartition(":")[2]
        named = httpx.get(agent.url + "/api/v0/context", headers={**agent.auth, "Host": f"agent.internal:{port}"})
        other = httpx.get(agent.url + "/api/v0/context", headers={**agent.auth, "Host": f"other.internal:{port}"})
    assert named.status_code == 200
    assert other.status_code == 421
    assert other.json()["detail"] == (
        f"this server does not answer to the host 'other.internal:{port}'; serve another name with --allow-host NAME"
    )
