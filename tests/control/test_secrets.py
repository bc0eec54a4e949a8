"""Secrets in ``.mcp.json`` never leave the agent: not in a snapshot, response, event, page, log or database row.

A workspace declares three MCP servers holding secrets three ways: a literal token in a
stdio server's ``env`` (the server prints it on stderr and crashes, so its stderr tail is
reported), a ``${VAR}`` taken from the agent's environment, and a bearer token in a remote
server's ``headers`` and URL (the server is down, so the connection error is reported). A
real ``agentcontext server`` and ``agentcontext agent`` run over it; then every surface a
user, a program or an operator can see is collected and searched for the three values.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.control.client import ControlClient, answered
from agentcontext.testing import make_workspace
from tests.control.processes import admin_token, agent, create_agent, event_stream, server
from tests.dashboard.conftest import csrf_of
from tests.helpers import free_port, poll

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

LITERAL = "sk-live-literal-5f1c2e9a7b3d4c8e1a2b"
FROM_ENV = "ghp_fromenv_9a8b7c6d5e4f3a2b1c0d9e8f"
HEADER = "hdr-bearer-0e1d2c3b4a59687786954a3b"
SECRETS = {"literal env value": LITERAL, "${VAR} value": FROM_ENV, "header value": HEADER}
PEER = Path(__file__).parent.parent / "mcp_servers" / "misbehaving.py"

LEAKY = """\
import os, sys
print("starting with token=" + os.environ["API_TOKEN"] + " other=" + os.environ["OTHER"], file=sys.stderr, flush=True)
sys.exit(3)
"""


def secret_workspace(tmp_path: Path) -> Path:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    config = {
        "mcpServers": {
            "leaky": {
                "command": sys.executable,
                "args": [str(tmp_path / "leaky.py")],
                "env": {"API_TOKEN": LITERAL, "OTHER": "${MCP_TEST_SECRET}"},
            },
            "fine": {
                "command": sys.executable,
                "args": [str(PEER), "fine"],
                "env": {"API_TOKEN": LITERAL, "OTHER": "${MCP_TEST_SECRET}"},
            },
            "remote": {
                "type": "http",
                "url": dead + "?key=${MCP_TEST_SECRET}",
                "headers": {"Authorization": f"Bearer {HEADER}", "X-Key": "${MCP_TEST_SECRET}"},
            },
        }
    }
    (tmp_path / "leaky.py").write_text(LEAKY)
    files = {"AGENTS.md": "# Rules\n\nUse pytest.\n", ".mcp.json": json.dumps(config, indent=2)}
    return make_workspace(tmp_path / "work", files).resolve()


def leaks(where: str, text: str) -> list[str]:
    return [f"{name} in {where}" for name, value in SECRETS.items() if value in text]


def settled(snapshot: dict[str, Any]) -> bool:
    """The three servers have reported: leaky and remote failed, fine connected."""
    states = {r["path"]: r["status"] for r in snapshot["resources"] if r["kind"] == "mcp_server"}
    return states == {"leaky": "unreadable", "remote": "unreadable", "fine": "ok"}


def test_secrets_of_mcp_json_appear_in_no_snapshot_response_event_page_log_or_database_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_SECRET", FROM_ENV)
    work = secret_workspace(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    db_path = tmp_path / "control.db"
    db_url = f"sqlite:///{db_path}"
    seen: dict[str, str] = {}
    with server(db_url, logs) as control:
        admin = admin_token(control)
        token = create_agent(db_url, "ws", "dev")
        # the servers must run for their stderr and errors to be reported: the operator's flag starts them
        with agent(work, logs, control.url, token, "--mcp-trust", "auto") as workspace_agent:
            auth = {"Authorization": f"Bearer {token}"}

            def snapshot() -> dict[str, Any]:
                found: dict[str, Any] = httpx.get(
                    workspace_agent.url + "/api/v0/context", params={"payloads": "true"}, headers=auth
                ).json()
                return found

            settled_snapshot = poll(snapshot, settled, "the three MCP servers to report")
            failed = {r["path"]: r for r in settled_snapshot["resources"] if r["kind"] == "mcp_server"}
            assert "starting with token=" in json.dumps(failed["leaky"])  # the stderr tail is there, redacted
            seen["agent snapshot"] = json.dumps(settled_snapshot)
            for path in ("/api/v0/context-config", "/api/v0/mcp/tools", "/openapi.json"):
                seen[f"agent {path}"] = httpx.get(workspace_agent.url + path, headers=auth).text
            lines: list[str] = []
            with (
                contextlib.suppress(httpx.ReadTimeout),
                httpx.stream("GET", workspace_agent.url + "/api/v0/events", headers=auth, timeout=2) as events,
            ):
                started = time.monotonic()
                for line in events.iter_lines():  # until a quiet moment: the events sent on connecting
                    lines.append(line)
                    if time.monotonic() - started > 1:
                        break
            seen["agent events"] = "\n".join(lines)

            with ControlClient(control.url, admin) as client:
                chat = poll(
                    lambda: client.create_chat("ws"), lambda c: c.context.pinned_hash is not None, "a pinned chat"
                )
                seen["control chat"] = json.dumps(answered(client.chat(chat.id)))
                seen["control prompt"] = json.dumps(answered(client.prompt(chat.id)))
                seen["control workspaces"] = json.dumps([answered(w) for w in client.workspaces()])
                seen["control overview"] = json.dumps(answered(client.overview()))
                seen["control tool call"] = json.dumps(
                    answered(client.call_tool(chat.id, "fine__echo", {"text": "hi"}))
                )
                with event_stream(control.url, admin, chat.id) as stream:
                    seen["control events"] = json.dumps(stream.wait_for("state").data)
                agent_id = chat.agent_id
            with httpx.Client(base_url=control.url, headers={"Origin": control.url}) as browser:
                asked = browser.post("/login", data={"token": admin})  # names the account and asks
                login = browser.post("/login/confirm", data={"csrf": csrf_of(asked), "answer": "yes"})
                assert login.status_code == 303, login.text
                for page in ("/", f"/ui/agents/{agent_id}", f"/ui/agents/{agent_id}/mcp", f"/ui/chats/{chat.id}"):
                    shown = browser.get(page)
                    assert shown.status_code == 200, (page, shown.status_code)
                    seen[f"dashboard {page}"] = shown.text
                assert "starting with token=" in seen[f"dashboard /ui/agents/{agent_id}/mcp"]
    seen["server and agent logs"] = "\n".join(log.read_text(errors="replace") for log in logs.iterdir())
    seen["database files"] = "\n".join(
        path.read_bytes().decode("latin-1") for path in tmp_path.glob("control.db*") if path.is_file()
    )

    assert set(seen) >= {"agent snapshot", "control prompt", "server and agent logs", "database files"}
    found = [leak for where, text in seen.items() for leak in leaks(where, text)]
    assert found == [], "\n".join(found)
