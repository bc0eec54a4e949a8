"""The agent's HTTP API under /api/v0 (coder.md 6.1, 6.2; TestLoadSkillFile of 8.6).

Requests go through httpx's ASGI transport to the real app over a running agent; the
event stream, which that transport cannot deliver piecemeal, goes through a real uvicorn.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import platform
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from agentcontext.agent.api import create_app, snapshot_json
from agentcontext.agent.context import ContextAgent
from agentcontext.resource import Kind, Status
from agentcontext.testing import make_workspace, skill_md
from tests.agent.conftest import (
    AUTO_TRUST,
    make_agent,
    of_kind,
    ready,
    running,
    serving,
    time_server_config,
    wait_snapshot,
    write_atomic,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKEN = "api-token-1234"
AGENT_URL = "http://127.0.0.1:8766"  # a name the agent serves: the request guard refuses any other
LINT = skill_md("lint", "Lints the code", body="<!-- maintainers: keep it short -->\n# Lint\n\nRun ruff.\n")


@contextlib.asynccontextmanager
async def api(
    agent: ContextAgent, *, token: str = TOKEN, startup_wait: float = 35.0
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the agent's app, sending the token (the agent runs for the duration of the block)."""
    app = create_app(agent, token=token, startup_wait=startup_wait)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        running(agent),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT_URL, headers=headers) as client,
    ):
        yield client


def error(response: httpx.Response) -> tuple[int, str, str | None]:
    body = response.json()
    return response.status_code, body["message"], body["detail"]


# --- context, resync, ready -------------------------------------------------------------------


async def test_context_before_ready_is_the_empty_placeholder(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    async with api(agent) as client:
        response = await client.get("/api/v0/context")
    assert response.status_code == 200
    body = response.json()
    assert (body["version"], body["resources"], body["error"], body["schema_version"]) == (0, [], None, 1)


@pytest.mark.parametrize(
    ("raised", "status", "message", "detail"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), 503, "Could not write.", "the agent's disk is full"),
        (RuntimeError("a bug"), 500, "Internal error.", None),
    ],
)
async def test_an_error_no_route_expected_is_answered_in_the_apis_shape_not_as_plain_text(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    raised: Exception,
    status: int,
    message: str,
    detail: str | None,
) -> None:
    """A full disk under an approval (the agent writes it) was a plain-text 500 and a traceback in the log."""
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)

    async def fails() -> None:
        raise raised

    monkeypatch.setattr(agent, "resync", fails)
    app = create_app(agent, token=TOKEN)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)  # the server's own re-raise, after answering
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        running(agent),
        httpx.AsyncClient(transport=transport, base_url=AGENT_URL, headers=headers) as client,
    ):
        response = await client.post("/api/v0/context/resync")
    assert response.status_code == status and response.headers["content-type"] == "application/json"
    said = response.json()
    assert said["message"] == message
    assert (said["detail"] is None) if detail is None else said["detail"].startswith(detail)


async def test_context_omits_payloads_unless_asked(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "Use pytest."})
    agent = make_agent(work, home)
    async with api(agent) as client:
        snapshot = await ready(agent)
        plain = (await client.get("/api/v0/context")).json()
        full = (await client.get("/api/v0/context", params={"payloads": "true"})).json()
    assert plain == snapshot_json(snapshot, payloads=False)
    assert plain["version"] == 1
    [resource] = plain["resources"]
    assert resource["path"] == str(work / "AGENTS.md")
    assert "content" not in resource
    assert [r["content"] for r in full["resources"]] == ["Use pytest."]
    assert full == snapshot_json(snapshot, payloads=True)


async def test_resync_scans_and_returns_the_new_snapshot(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "old"})
    agent = make_agent(work, home)
    async with api(agent) as client:
        first = await ready(agent)
        write_atomic(work / "AGENTS.md", "new")
        response = await client.post("/api/v0/context/resync")
    assert response.status_code == 200
    body = response.json()
    assert body == snapshot_json(agent.snapshot, payloads=False)
    assert body["version"] == first.version + 1
    assert body["aggregate_hash"] != first.aggregate_hash
    assert "content" not in body["resources"][0]


async def test_resync_before_ready_returns_the_placeholder(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    async with api(agent) as client:
        response = await client.post("/api/v0/context/resync")
    assert (response.status_code, response.json()["version"], response.json()["resources"]) == (200, 0, [])


async def test_ready_starts_publishing_and_is_idempotent(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    agent = make_agent(work, home)
    async with api(agent) as client:
        for _ in range(2):
            response = await client.post("/api/v0/ready")
            assert (response.status_code, response.json()) == (200, {"ready": True})
        snapshot = await wait_snapshot(agent, lambda s: s.version >= 1)
        body = (await client.get("/api/v0/context")).json()
    assert snapshot.version == 1
    assert [r["path"] for r in body["resources"]] == [str(work / "AGENTS.md")]


# --- declared sources -------------------------------------------------------------------------


async def test_context_sources_crud(tmp_path: Path, home: Path) -> None:
    notes = make_workspace(home / "notes", {"AGENTS.md": "notes"})
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home, profile="coder")
    encoded = quote(str(notes), safe="")
    async with api(agent) as client:
        await ready(agent)
        assert (await client.get("/api/v0/context/sources")).json() == []
        for _ in range(2):  # idempotent
            created = await client.post("/api/v0/context/sources", json={"path": f"{notes}/"})
            assert (created.status_code, created.json()) == (201, {"path": str(notes)})
        assert (await client.get("/api/v0/context/sources")).json() == [{"path": str(notes)}]
        for lookup in (f"/api/v0/context/sources/{encoded}", f"/api/v0/context/sources/{notes}"):
            found = await client.get(lookup)
            assert (found.status_code, found.json()) == (200, {"path": str(notes)}), lookup
        await wait_snapshot(agent, lambda s: s.find(str(notes / "AGENTS.md")) is not None)
        deleted = await client.delete(f"/api/v0/context/sources/{encoded}")
        assert (deleted.status_code, deleted.content) == (204, b"")
        assert (await client.get("/api/v0/context/sources")).json() == []
        await wait_snapshot(agent, lambda s: s.find(str(notes / "AGENTS.md")) is None)
        for method in ("GET", "DELETE"):
            missing = await client.request(method, f"/api/v0/context/sources/{encoded}")
            assert error(missing) == (404, "Context source not found.", f'No source registered for path "{notes}".')


async def test_context_sources_post_refuses_bad_paths(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home)
    cases = {
        "": "path is empty",
        "notes": 'path "notes" is not absolute',
        f"{home}/../etc": f'path "{home}/../etc" contains parent traversal segments',
        "/etc": 'path "/etc" is not inside any allowed root',
    }
    async with api(agent) as client:
        for path, detail in cases.items():
            response = await client.post("/api/v0/context/sources", json={"path": path})
            assert error(response) == (400, "Could not add context source.", detail), path
        invalid = await client.post("/api/v0/context/sources", json={"where": "/etc"})
        assert invalid.status_code == 400
        assert invalid.json()["message"] == "Invalid request."
        assert (await client.get("/api/v0/context/sources")).json() == []


# --- context-config ---------------------------------------------------------------------------


def config_workspace(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "work",
        {
            "AGENTS.md": "# Rules\r\n<!-- hidden note -->\r\nUse\u200b pytest.\r\n\r\n\r\n\r\nAlways.\r\n",
            ".agents/skills/lint/SKILL.md": LINT,
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ships it"),
        },
    )


def expected_parts(work: Path, *, truncated: bool = False, content: str | None = None) -> list[dict[str, Any]]:
    skills = work / ".agents" / "skills"
    return [
        {
            "type": "context-file",
            "context_file_path": str(work / "AGENTS.md"),
            "context_file_content": content if content is not None else "# Rules\n\nUse pytest.\n\nAlways.",
            "context_file_truncated": truncated,
        },
        {
            "type": "skill",
            "skill_name": "deploy",
            "skill_description": "Ships it",
            "skill_dir": str(skills / "deploy"),
            "skill_meta_file": "SKILL.md",
        },
        {
            "type": "skill",
            "skill_name": "lint",
            "skill_description": "Lints the code",
            "skill_dir": str(skills / "lint"),
            "skill_meta_file": "SKILL.md",
        },
    ]


async def test_context_config_returns_sanitized_context_files_then_skills(tmp_path: Path, home: Path) -> None:
    work = config_workspace(tmp_path)
    agent = make_agent(work, home)
    async with api(agent) as client:
        await ready(agent)
        response = await client.get("/api/v0/context-config")
    assert response.status_code == 200
    assert response.json() == {"parts": expected_parts(work), "working_dir": str(work)}


async def test_context_config_marks_a_truncated_context_file(tmp_path: Path, home: Path) -> None:
    work = config_workspace(tmp_path)
    agent = make_agent(work, home, settings={"project_doc.max_bytes": 9})
    async with api(agent) as client:
        await ready(agent)
        parts = (await client.get("/api/v0/context-config")).json()["parts"]
    [resource] = of_kind(agent.snapshot, Kind.INSTRUCTION_FILE)
    assert resource.status is Status.TRUNCATED
    assert parts == expected_parts(work, truncated=True, content="# Rules")


async def test_context_config_waits_for_ready(tmp_path: Path, home: Path) -> None:
    work = config_workspace(tmp_path)
    agent = make_agent(work, home)
    answers: list[httpx.Response] = []

    async def ask(client: httpx.AsyncClient) -> None:
        answers.append(await client.get("/api/v0/context-config"))

    async with api(agent, startup_wait=30) as client, anyio.create_task_group() as group:
        group.start_soon(ask, client)
        await anyio.sleep(0.3)
        assert answers == []  # still waiting for the workspace
        agent.set_ready()
        with anyio.fail_after(20):
            while not answers:
                await anyio.sleep(0.01)
    [response] = answers
    assert (response.status_code, response.json()["parts"]) == (200, expected_parts(work))


async def test_context_config_after_the_startup_wait_answers_with_the_disk_state(tmp_path: Path, home: Path) -> None:
    work = config_workspace(tmp_path)
    agent = make_agent(work, home)
    async with api(agent, startup_wait=0.2) as client:
        with anyio.fail_after(10):
            response = await client.get("/api/v0/context-config")
        assert agent.snapshot.version == 0  # answered, but nothing was published
    assert (response.status_code, response.json()["parts"]) == (200, expected_parts(work))


# --- skills -----------------------------------------------------------------------------------


def skills_workspace(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "work",
        {
            ".agents/skills/lint/SKILL.md": LINT,
            ".agents/skills/lint/reference.md": "Use ruff.\n",
            ".agents/skills/lint/scripts/run.sh": "ruff check .\n",
            ".agents/skills/vault/SKILL.md": skill_md("vault", "Keeps things"),
            ".agents/skills/vault/notes.md": "Plain notes.\n",
            ".agents/skills/vault/.git/config": "[core]\n",
            ".agents/skills/vault/big.txt": "a" * (600 * 1024),
            "secret.txt": "TOKEN=hunter2\n",
        },
    )


async def test_skill_returns_body_dir_and_files(tmp_path: Path, home: Path) -> None:
    work = skills_workspace(tmp_path)
    agent = make_agent(work, home)
    async with api(agent) as client:
        await ready(agent)
        response = await client.get("/api/v0/skills/lint")
        missing = await client.get("/api/v0/skills/nope")
    assert response.status_code == 200
    assert response.json() == {
        "name": "lint",
        "dir": str(work / ".agents" / "skills" / "lint"),
        "body": "# Lint\n\nRun ruff.",
        "files": ["reference.md", "scripts/"],
    }
    assert error(missing) == (404, 'skill "nope" not found', None)


async def test_a_custom_command_is_served_as_one_file_with_nothing_beside_it(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/review.md": "---\ndescription: Reviews\n---\nReview $ARGUMENTS\n",
            ".claude/commands/notes.md": "Another command, not the review's file\n",
        },
    )
    agent = make_agent(work, home, profile="claude")
    async with api(agent) as client:
        await ready(agent)
        response = await client.get("/api/v0/skills/review")
        beside = await client.get("/api/v0/skills/review/files/notes.md")
        context = await client.get("/api/v0/context-config")
    assert response.json() == {
        "name": "review",
        "dir": str(work / ".claude" / "commands"),
        "body": "Review $ARGUMENTS",
        "files": [],
    }
    assert error(beside) == (404, 'read skill file: "review" is a custom command, one file with no other files', None)
    parts = {p["skill_name"]: p for p in context.json()["parts"] if p["type"] == "skill"}
    assert parts["review"]["skill_meta_file"] == "review.md"


async def test_load_skill_file(tmp_path: Path, home: Path) -> None:
    agent = make_agent(skills_workspace(tmp_path), home)
    files = "/api/v0/skills/vault/files/"
    async with api(agent) as client:
        await ready(agent)
        valid = await client.get(files + "notes.md")
        nested = await client.get("/api/v0/skills/lint/files/scripts/run.sh")
        big = await client.get(files + "big.txt")
        refused = {
            "path traversal is not allowed": await client.get(files + "%2E%2E/lint/SKILL.md"),
            "absolute paths are not allowed": await client.get(files + "/etc/passwd"),
            "hidden file components are not allowed": await client.get(files + ".git/config"),
            "path is required": await client.get(files),
        }
        outside = await client.get(files + "%2E%2E/%2E%2E/%2E%2E/secret.txt")
        missing = await client.get(files + "absent.md")
        unknown = await client.get("/api/v0/skills/x/files/notes.md")
    assert (valid.status_code, valid.json()) == (200, {"content": "Plain notes.\n", "truncated": False})
    assert nested.json() == {"content": "ruff check .\n", "truncated": False}
    assert big.status_code == 200
    assert (len(big.json()["content"]), big.json()["truncated"]) == (524_288, True)
    for message, response in refused.items():
        assert error(response) == (400, message, None), message
    assert error(outside) == (400, "path traversal is not allowed", None)
    assert "hunter2" not in outside.text
    assert error(missing) == (404, "read skill file: No such file or directory", None)
    assert error(unknown) == (404, 'skill "x" not found', None)


# --- MCP --------------------------------------------------------------------------------------


async def test_mcp_tools_and_call_tool_through_a_real_server(tmp_path: Path, home: Path) -> None:
    broken = json.dumps({"command": str(tmp_path / "no-such-server")})
    config = time_server_config().replace('"time":', f'"broken": {broken}, "time":')
    agent = make_agent(make_workspace(tmp_path / "work", {".mcp.json": config}), home, settings=AUTO_TRUST)
    async with api(agent) as client:
        agent.set_ready()
        await wait_snapshot(
            agent, lambda s: any(r.path == "time" and r.status is Status.OK for r in s.resources), timeout=30
        )
        tools = (await client.get("/api/v0/mcp/tools")).json()["tools"]
        refreshed = (await client.get("/api/v0/mcp/tools", params={"refresh": "true"})).json()["tools"]
        called = await client.post(
            "/api/v0/mcp/call-tool",
            json={"tool_name": "time__get_current_time", "arguments": {"timezone": "Europe/Paris"}},
        )
        tool_error = await client.post(
            "/api/v0/mcp/call-tool",
            json={"tool_name": "time__get_current_time", "arguments": {"timezone": "Not/AZone"}},
        )
        malformed = await client.post("/api/v0/mcp/call-tool", json={"tool_name": "get_current_time"})
        unknown = await client.post("/api/v0/mcp/call-tool", json={"tool_name": "nosuch__tool"})
        failing = await client.post("/api/v0/mcp/call-tool", json={"tool_name": "time__no_such_tool"})
        not_connected = await client.post("/api/v0/mcp/call-tool", json={"tool_name": "broken__anything"})
        no_body = await client.post("/api/v0/mcp/call-tool", json={"arguments": {}})
    names = [tool["name"] for tool in tools]
    assert names == ["time__convert_time", "time__get_current_time"]
    assert refreshed == tools
    current = tools[1]
    assert current["server_name"] == "time"
    assert "timezone" in current["schema"]
    assert current["required"] == ["timezone"]
    assert current["input_schema"]["properties"] == current["schema"]
    assert called.status_code == 200
    [block] = called.json()["content"]
    assert block["type"] == "text" and '"timezone": "Europe/Paris"' in block["text"]
    assert called.json()["is_error"] is False
    assert (tool_error.status_code, tool_error.json()["is_error"]) == (200, True)
    assert error(malformed) == (
        400,
        "Invalid tool name.",
        'invalid tool name format: expected format "server__tool", got "get_current_time"',
    )
    assert error(unknown) == (404, "Unknown MCP server.", 'unknown MCP server: "nosuch"')
    status, message, detail = error(failing)
    assert (status, message) == (502, "MCP tool call failed.")
    assert detail is not None and "no_such_tool" in detail
    status, message, detail = error(not_connected)
    assert (status, message) == (502, "MCP tool call failed.")
    assert detail is not None and detail.startswith('MCP server "broken" is not connected')
    assert (no_body.status_code, no_body.json()["message"]) == (400, "Invalid request.")


async def test_mcp_tools_is_an_empty_list_without_servers(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    async with api(agent) as client:
        await ready(agent)
        response = await client.get("/api/v0/mcp/tools")
    assert (response.status_code, response.json()) == (200, {"tools": [], "pending": []})


async def test_a_server_waiting_for_approval_says_so_and_how_to_approve_it(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {".mcp.json": time_server_config()}), home)
    async with api(agent) as client:
        agent.set_ready()
        await wait_snapshot(agent, lambda s: any(r.path == "time" for r in s.resources), timeout=30)
        listed = (await client.get("/api/v0/mcp/tools")).json()
        called = await client.post("/api/v0/mcp/call-tool", json={"tool_name": "time__get_current_time"})
    assert listed["tools"] == []
    [pending] = listed["pending"]
    assert pending["server_name"] == "time"
    assert pending["reason"].startswith('pending approval: approve "time" in the dashboard or run ')
    assert "`agentcontext mcp trust " in pending["reason"]
    status, message, detail = error(called)
    assert (status, message) == (409, "MCP server pending approval.")
    assert detail is not None and detail.startswith('MCP server "time" is pending approval: ')
    assert "--digest " in detail  # the command approves exactly what was shown


# --- auth and the OpenAPI document ------------------------------------------------------------


def flat_routes(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """Every API route, including those of included routers (FastAPI may include them lazily)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from flat_routes(included.routes)


def api_routes(agent: ContextAgent) -> list[tuple[str, str, str]]:
    """(method, concrete path, template) of every API route of the app, path parameters filled in."""
    app = create_app(agent, token=TOKEN)
    out = [
        (method, re.sub(r"\{[^}]+\}", "lint", route.path), route.path)
        for route in flat_routes(app.routes)
        for method in sorted(route.methods or ())
    ]
    return sorted(out)


async def test_every_route_requires_the_token(tmp_path: Path, home: Path) -> None:
    agent = make_agent(skills_workspace(tmp_path), home)
    routes = api_routes(agent)
    assert [(method, template) for method, _, template in routes] == [
        ("DELETE", "/api/v0/context/sources/{path:path}"),
        ("GET", "/api/v0/context"),
        ("GET", "/api/v0/context-config"),
        ("GET", "/api/v0/context/agents"),
        ("GET", "/api/v0/context/sources"),
        ("GET", "/api/v0/context/sources/{path:path}"),
        ("GET", "/api/v0/events"),
        ("GET", "/api/v0/mcp/tools"),
        ("GET", "/api/v0/plan-file"),
        ("GET", "/api/v0/skills/{name}"),
        ("GET", "/api/v0/skills/{name}/files/{path:path}"),
        ("GET", "/api/v0/workspace"),
        ("POST", "/api/v0/context/instructions"),
        ("POST", "/api/v0/context/resync"),
        ("POST", "/api/v0/context/sources"),
        ("POST", "/api/v0/mcp/approve"),
        ("POST", "/api/v0/mcp/call-tool"),
        ("POST", "/api/v0/ready"),
    ]
    app = create_app(agent, token=TOKEN)
    async with running(agent), httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT_URL) as client:
        await ready(agent)
        for method, path, _ in routes:
            for headers in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Authorization": TOKEN},
                {"Authorization": "Basic x"},
            ):
                response = await client.request(method, path, headers=headers)
                assert error(response) == (401, "Unauthorized.", "A valid bearer token is required."), (method, path)
                assert response.headers["www-authenticate"] == "Bearer"
                assert TOKEN not in response.text
            if path == "/api/v0/events":
                continue  # a stream: the ASGI transport would wait for its end
            allowed = await client.request(method, path, headers={"Authorization": f"Bearer {TOKEN}"})
            assert allowed.status_code != 401, (method, path)


async def test_the_api_cannot_be_built_without_a_token(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    for peer in (None, PEER_TOKEN):
        with pytest.raises(ValueError, match="needs a token"):
            create_app(agent, token="", peer_token=peer)


async def test_openapi_lists_every_route(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    async with api(agent, token=TOKEN) as client:
        response = await client.get("/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["info"]["title"] == "agentcontext workspace agent"
    listed = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    expected = {(method, template.replace("{path:path}", "{path}")) for method, _, template in api_routes(agent)}
    assert listed == expected
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation.get("summary"), (method, path)
            assert "401" in operation["responses"], (method, path)


# --- events -----------------------------------------------------------------------------------


async def sse_events(response: httpx.Response) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
    """(event, data) pairs of a server-sent event stream."""
    kind, data = "message", list[str]()
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").strip())


async def test_events_start_with_the_current_snapshot_and_follow_changes(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "v1"})
    agent = make_agent(work, home)
    app = create_app(agent, token=TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with running(agent), serving(app) as url, httpx.AsyncClient(base_url=url, headers=headers) as client:
        first = await ready(agent)
        with anyio.fail_after(20):
            async with client.stream("GET", "/api/v0/events") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                stream = sse_events(response)
                kind, data = await anext(stream)
                assert (kind, data) == (
                    "snapshot",
                    {"version": first.version, "aggregate_hash": first.aggregate_hash, "error": None},
                )
                write_atomic(work / "AGENTS.md", "v2")
                resynced = (await client.post("/api/v0/context/resync")).json()
                kind, data = await anext(stream)
                while kind != "snapshot":
                    kind, data = await anext(stream)
                assert data == {
                    "version": first.version + 1,
                    "aggregate_hash": resynced["aggregate_hash"],
                    "error": None,
                }
                assert data["aggregate_hash"] != first.aggregate_hash
                await stream.aclose()


# --- workspace and plan files (propose_plan) --------------------------------------------------

PEER_TOKEN = "peer-token-5678"


async def test_workspace_names_the_os_home_and_working_directory(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    agent = make_agent(work, home)
    async with api(agent) as client:
        response = await client.get("/api/v0/workspace")
    assert (response.status_code, response.json()) == (
        200,
        {"os": platform.system().lower(), "home": str(home), "work_dir": str(work)},
    )


async def test_plan_file_returns_the_content_size_and_resolved_path(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"docs/plan.md": "# Plan\n\nStep one. é\n", "target.md": "# Real\n"})
    (work / "link.md").symlink_to(work / "target.md")
    agent = make_agent(work, home)
    async with api(agent) as client:
        plain = await client.get("/api/v0/plan-file", params={"path": str(work / "docs" / "plan.md")})
        linked = await client.get("/api/v0/plan-file", params={"path": str(work / "link.md")})
    assert (plain.status_code, plain.json()) == (
        200,
        {
            "path": str(work / "docs" / "plan.md"),
            "resolved": str(work / "docs" / "plan.md"),
            "content": "# Plan\n\nStep one. é\n",
            "size_bytes": len("# Plan\n\nStep one. é\n".encode()),
        },
    )
    assert linked.json() == {
        "path": str(work / "link.md"),
        "resolved": str(work / "target.md"),
        "content": "# Real\n",
        "size_bytes": 7,
    }


async def test_plan_file_reads_at_most_32_kib_and_one_byte(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"big.md": "p" * (100 * 1024), "exact.md": "q" * (32 * 1024)})
    agent = make_agent(work, home)
    async with api(agent) as client:
        big = (await client.get("/api/v0/plan-file", params={"path": str(work / "big.md")})).json()
        exact = (await client.get("/api/v0/plan-file", params={"path": str(work / "exact.md")})).json()
    assert (big["size_bytes"], big["content"]) == (32 * 1024 + 1, "p" * (32 * 1024 + 1))
    assert (exact["size_bytes"], len(exact["content"])) == (32 * 1024, 32 * 1024)


async def test_plan_file_refuses_paths_that_are_not_absolute_markdown(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"plan.txt": "x", "plan.md": "x"})
    agent = make_agent(work, home)
    refused = (400, "Invalid plan path.", "plan files are absolute paths ending in .md")
    async with api(agent) as client:
        responses = [
            await client.get("/api/v0/plan-file", params={"path": path})
            for path in (str(work / "plan.txt"), "plan.md", "work/plan.md", str(work / "plan.MD"), "")
        ]
        absent = await client.get("/api/v0/plan-file")
        nul = await client.get("/api/v0/plan-file", params={"path": f"{work}/pl\x00an.md"})
    assert [error(r) for r in responses] == [refused] * 5
    assert absent.status_code == 400
    assert error(nul) == (400, "Could not read the plan file.", f"open {work}/pl\x00an.md: invalid argument")


async def test_plan_file_that_is_missing_is_not_found(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    agent = make_agent(work, home)
    async with api(agent) as client:
        response = await client.get("/api/v0/plan-file", params={"path": str(work / "absent.md")})
    assert error(response) == (404, "Plan file not found.", f"open {work / 'absent.md'}: no such file or directory")


async def test_plan_file_refuses_a_fifo_without_hanging_and_a_directory(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"folder.md/inside.md": "x"})
    os.mkfifo(work / "fifo.md")
    (work / "to-fifo.md").symlink_to(work / "fifo.md")
    agent = make_agent(work, home)
    open_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    async with api(agent) as client:
        with anyio.fail_after(10):  # a blocking open of the FIFO would never return
            responses = {
                name: await client.get("/api/v0/plan-file", params={"path": str(work / name)})
                for name in ("fifo.md", "to-fifo.md", "folder.md")
            }
            for _ in range(20):  # refusals leave no descriptor open
                await client.get("/api/v0/plan-file", params={"path": str(work / "folder.md")})
    for name, response in responses.items():
        assert error(response) == (400, "Could not read the plan file.", f"read {work / name}: not a regular file")
    if open_before is not None:
        assert len(os.listdir("/proc/self/fd")) < open_before + 10


# --- the control plane's per-run peer token ---------------------------------------------------


async def test_the_peer_token_is_accepted_alongside_the_main_token_and_nothing_else(tmp_path: Path, home: Path) -> None:
    agent = make_agent(skills_workspace(tmp_path), home)
    app = create_app(agent, token=TOKEN, peer_token=PEER_TOKEN)
    async with running(agent), httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT_URL) as client:
        await ready(agent)
        for method, path, _ in api_routes(agent):
            if path == "/api/v0/events":
                continue  # a stream: the ASGI transport would wait for its end
            for token in (TOKEN, PEER_TOKEN):
                allowed = await client.request(method, path, headers={"Authorization": f"Bearer {token}"})
                assert allowed.status_code != 401, (method, path, token)
            for value in (
                "",
                "Bearer ",
                "Bearer wrong",
                PEER_TOKEN,
                f"Bearer {TOKEN}{PEER_TOKEN}",
                f"Bearer {PEER_TOKEN} ",
                f"Bearer {TOKEN[:-1]}",
                f"bearer {PEER_TOKEN}",
            ):
                refused = await client.request(method, path, headers={"Authorization": value} if value else {})
                assert error(refused) == (401, "Unauthorized.", "A valid bearer token is required."), (path, value)


async def test_an_empty_peer_token_opens_nothing(tmp_path: Path, home: Path) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "rules"}), home)
    empty_peer = create_app(agent, token=TOKEN, peer_token="")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=empty_peer), base_url=AGENT_URL) as main_client:
        assert (await main_client.get("/api/v0/workspace")).status_code == 401
        assert (await main_client.get("/api/v0/workspace", headers={"Authorization": "Bearer "})).status_code == 401
        ok = await main_client.get("/api/v0/workspace", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200
