"""The MCP SDK (1-1.5 s of CPU to import): loaded by a running control plane just after it starts, and by an app
without its background work only when a user's chat first connects.

Checked in a fresh interpreter (this one has imported the SDK already): the server's app, its
lifespan running, asked in turn what must not load the SDK and what must.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from agentcontext.control import identity
from agentcontext.control.chat_mcp import mount as chat_mcp_mount
from agentcontext.control.chat_mcp.mount import ChatMcpMount
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from tests.migrated import fresh_sqlite

SCRIPT = r"""
import json, sys, time
import anyio, httpx
from agentcontext.control import identity, migrate
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.server.app import build_app
from agentcontext.web.guard import Edge
from agentcontext.web.hosts import ServedHosts

def sdk_loaded():
    return any(name == "mcp" or name.startswith(("mcp.", "mcp_types")) for name in sys.modules)

async def main():
    db = Database(f"sqlite:///{sys.argv[1]}")
    migrate.upgrade(db)
    user = db.write(lambda s: identity.create_user(s, "ada")).token
    agent = db.write(lambda s: identity.create_agent(s, "ws", "main")).token
    plane = ControlPlane(db, LocalBroker())
    running = sys.argv[2] == "running"
    app = build_app(plane, background=running, edge=Edge(hosts=ServedHosts(frozenset({"control"}))))
    seen = {}
    async with app.router.lifespan_context(app):
        if running:  # no request at all
            deadline = time.monotonic() + 60
            while not sdk_loaded() and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            seen["loaded without a request"] = sdk_loaded()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://control") as http:
            seen["at start"] = sdk_loaded()
            asks = {
                "healthz": ("GET", "/healthz", None),
                "a chat's prompt": ("GET", "/api/v1/chats/nope/prompt", user),
                "a path /mcp does not serve": ("POST", "/mcp/elsewhere", user),
                "no token": ("POST", "/mcp/chats/nope", None),
                "an agent's token": ("POST", "/mcp/chats/nope", agent),
                "an unknown token": ("POST", "/mcp/chats/nope", "acu_unknown"),
                "a user's token": ("POST", "/mcp/chats/nope", user),
            }
            for what, (method, path, token) in asks.items():
                headers = {"authorization": f"Bearer {token}"} if token else {}
                answer = await http.request(method, path, headers=headers, json={})
                seen[what] = [answer.status_code, sdk_loaded()]
    await plane.aclose()
    print(json.dumps(seen))

anyio.run(main)
"""


def seen_by(app: str, tmp_path: Path) -> dict[str, object]:
    """What SCRIPT saw of the SDK in a fresh interpreter, the app ``running`` (its background work too) or not."""
    argv = [sys.executable, "-c", SCRIPT, str(tmp_path / "control.db"), app]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    seen: dict[str, object] = json.loads(ran.stdout.splitlines()[-1])
    return seen


def test_an_app_without_its_background_work_loads_the_mcp_sdk_on_a_users_first_mcp_request_and_not_before(
    tmp_path: Path,
) -> None:
    assert seen_by("requests", tmp_path) == {
        "at start": False,
        "healthz": [200, False],
        "a chat's prompt": [404, False],
        "a path /mcp does not serve": [404, False],
        "no token": [401, False],
        "an agent's token": [401, False],
        "an unknown token": [401, False],
        "a user's token": [404, True],  # authenticated: the endpoint loaded, and the chat is not found
    }


def test_a_running_server_loads_the_mcp_sdk_after_it_starts_so_a_first_chat_does_not_wait(tmp_path: Path) -> None:
    assert seen_by("running", tmp_path)["loaded without a request"] is True


@pytest.mark.anyio
async def test_an_endpoint_that_fails_to_load_ahead_is_logged_and_loaded_by_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(fresh_sqlite(tmp_path / "control.db"))
    user = db.write(lambda s: identity.create_user(s, "ada")).token
    plane = ControlPlane(db, LocalBroker())
    mount = ChatMcpMount(plane)
    real = chat_mcp_mount._endpoint_class
    monkeypatch.setattr(chat_mcp_mount, "_endpoint_class", lambda: (_ for _ in ()).throw(OSError("disk gone")))
    async with anyio.create_task_group() as group:
        mount.serve_in(group)
        await mount.preload()
        assert "could not be loaded ahead of its first request" in caplog.text and "disk gone" in caplog.text
        monkeypatch.setattr(chat_mcp_mount, "_endpoint_class", real)
        transport = httpx.ASGITransport(app=mount)
        async with httpx.AsyncClient(transport=transport, base_url="http://control") as http:
            answer = await http.post("/chats/nope", headers={"authorization": f"Bearer {user}"}, json={})
        assert answer.status_code == 404, answer.text
        mount.serve_in(None)
        group.cancel_scope.cancel()
    await plane.aclose()
