"""Real transports: a subprocess over stdio, a real server over streamable HTTP with a token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from agentcontext.mcp.transports import is_loopback
from agentcontext.testing import make_workspace, skill_md
from tests.helpers import free_port
from tests.mcp.conftest import HttpServer, agentcontext_command


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.anyio
async def test_a_stdio_subprocess_serves_the_doc_and_skills(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {".git/": "", "AGENTS.md": "Use pytest.", ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship it")},
    )
    command = agentcontext_command("mcp", "--work-dir", str(work))
    params = StdioServerParameters(command=command[0], args=command[1:], env={"HOME": str(home)})
    async with Client(params, read_timeout_seconds=30) as client:
        assert client.instructions is not None
        assert "--- project-doc ---\n\nUse pytest." in client.instructions
        assert "- deploy (repo) — Ship it" in client.instructions
        doc = await client.call_tool("get_project_doc", {})
        assert doc.structured_content == {
            "files": [{"path": str(work / "AGENTS.md"), "truncated": False}],
            "content": "Use pytest.",
        }
        read = await client.call_tool("skills_read", {"name": "deploy"})
        assert text_of(read).startswith(f"deploy — {work / '.agents' / 'skills' / 'deploy' / 'SKILL.md'}\n")


@pytest.mark.anyio
async def test_streamable_http_accepts_the_token_and_serves_tools(http_server: HttpServer) -> None:
    make_workspace(http_server.work, {"AGENTS.md": "HTTP rules"})
    headers = {"Authorization": f"Bearer {http_server.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(http_server.url, http_client=http)) as client,
    ):
        assert client.instructions is not None and "HTTP rules" in client.instructions
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {"get_project_doc", "skills_list", "skills_read", "get_agent_brief", "get_instructions_for"}
        assert "HTTP rules" in text_of(await client.call_tool("get_project_doc", {}))


def test_streamable_http_refuses_a_missing_or_wrong_token_with_401(http_server: HttpServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": http_server.token}):
        response = httpx.post(http_server.url, json=body, headers=headers, timeout=10)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert http_server.token not in response.text


def test_the_http_server_shuts_down_cleanly_on_sigterm(http_server: HttpServer, tmp_path: Path) -> None:
    http_server.process.send_signal(signal.SIGTERM)
    # uvicorn closes sessions and runs the lifespan shutdown, then ends by the signal it caught
    assert http_server.process.wait(timeout=15) in (0, -signal.SIGTERM)
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert "Application shutdown complete." in log


def test_a_non_loopback_address_without_a_token_is_refused(tmp_path: Path, home: Path) -> None:
    result = subprocess.run(
        agentcontext_command("mcp", "--work-dir", str(tmp_path), "--http", f"0.0.0.0:{free_port()}"),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
    )
    assert result.returncode == 2
    assert "refusing to serve on 0.0.0.0 without --token" in result.stderr


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.3.4.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1") and not is_loopback("example.com")


def test_stdio_exits_when_the_client_closes_stdin(tmp_path: Path, home: Path) -> None:
    process = subprocess.run(
        agentcontext_command("mcp", "--work-dir", str(tmp_path)),
        input=b"",
        capture_output=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
    )
    assert process.returncode == 0, process.stderr
    assert sys.executable
