"""The MCP SDK (1-1.5 s of CPU to import) is loaded by a control plane only when a user's chat first connects.

Checked in a fresh interpreter (this one has imported the SDK already): the server's app, its
lifespan running, asked in turn what must not load the SDK and what must.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, sys
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
    app = build_app(plane, background=False, edge=Edge(hosts=ServedHosts(frozenset({"control"}))))
    seen = {}
    async with app.router.lifespan_context(app):
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


def test_the_mcp_sdk_is_loaded_by_the_first_users_mcp_request_and_by_nothing_before_it(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "control.db")], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen == {
        "at start": False,
        "healthz": [200, False],
        "a chat's prompt": [404, False],
        "a path /mcp does not serve": [404, False],
        "no token": [401, False],
        "an agent's token": [401, False],
        "an unknown token": [401, False],
        "a user's token": [404, True],  # authenticated: the endpoint loaded, and the chat is not found
    }
