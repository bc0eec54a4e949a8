"""Any MCP client as a chat: ``/mcp/chats/{id}`` and ``/mcp/workspaces/{name}`` against real processes.

A real ``agentcontext server`` (SQLite), a real ``agentcontext agent`` over a workspace with an
AGENTS.md, a skill and the real ``mcp-server-time`` from PyPI, and the official SDK client over
streamable HTTP in both protocol eras. What a session sees must be what ``/prompt`` and
``/tools/{name}`` give for the same chat.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp.types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from agentcontext.control.client import ControlClient
from agentcontext.control.wire import PromptResponse
from agentcontext.skills.extension import EXTENSION_ID
from agentcontext.testing import make_workspace, skill_md
from tests.control.processes import Process, admin_token, agent, server, write_atomic
from tests.helpers import poll
from tests.mcp.test_inspector import inspect
from tests.mcp.test_skill_resources import skills_get, skills_list

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(120)]

RULES = "# Rules\n\nUse pytest.\n"
DEPLOY = skill_md("deploy", "Ship a release", body="\nStep one: tag.\n")
BILLING = "# Billing\n\nMoney is integer cents.\n"


@dataclass
class Stack:
    control: Process
    admin: str
    work: Path
    agent: Process

    def url(self, path: str) -> str:
        return f"{self.control.url}/mcp/{path}"

    def client(self, token: str | None = None) -> ControlClient:
        return ControlClient(self.control.url, token or self.admin)


def time_server() -> dict[str, Any]:
    return {"command": str(Path(sys.executable).parent / "mcp-server-time")}


@contextlib.contextmanager
def stack(root: Path, db_url: str | None = None, server_args: tuple[str, ...] = ()) -> Iterator[Stack]:
    work = make_workspace(
        root / "work",
        {
            ".git/": "",
            "AGENTS.md": RULES,
            ".agents/skills/deploy/SKILL.md": DEPLOY,
            ".agents/skills/deploy/checklist.md": "- tag\n- push\n",
            ".mcp.json": json.dumps({"mcpServers": {"time": time_server()}}),
            "services/billing/AGENTS.md": BILLING,
            "services/billing/api.py": "",
        },
    ).resolve()
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    with (
        contextlib.ExitStack() as exits,
        _env(AGENTCONTEXT_MCP_TRUST="auto"),  # the operator runs this workspace's servers without asking
        server(db_url or f"sqlite:///{root / 'control.db'}", logs, extra=server_args) as control,
    ):
        admin = admin_token(control)
        issued = httpx.post(
            f"{control.url}/api/v1/workspaces/ws/agents",
            json={"name": "dev"},
            headers={"Authorization": f"Bearer {admin}"},
        )
        assert issued.status_code == 201, issued.text
        proc = exits.enter_context(agent(work, logs, control.url, issued.json()["token"]))
        yield Stack(control, admin, work, proc)


@contextlib.contextmanager
def _env(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("chat-mcp")) as running:
        yield running


def pinned_chat(running: Stack, token: str | None = None) -> str:
    with running.client(token) as client:
        chat = client.create_chat("ws")
        poll(
            lambda: client.prompt(chat.id),
            lambda p: "Use pytest." in p.system and any(t.name.startswith("time__") for t in p.tools),
            "the chat pinned to the agent's snapshot with its MCP tools",
        )
        return str(chat.id)


@contextlib.asynccontextmanager
async def session(
    url: str, token: str, *, mode: str = "legacy", received: list[Any] | None = None
) -> AsyncIterator[Client]:
    async def on_message(message: Any) -> None:
        if received is not None:
            received.append(message)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if received is not None:
            received.append(params)

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            message_handler=on_message,
            logging_callback=on_log,
            read_timeout_seconds=30,
        ) as client,
    ):
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


# --- what a session gets ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_session_gets_the_chats_pinned_prompt_as_instructions_and_its_tools(shared: Stack, mode: str) -> None:
    chat_id = pinned_chat(shared)
    with shared.client() as client:
        prompt = client.prompt(chat_id)
    async with session(shared.url(f"chats/{chat_id}"), shared.admin, mode=mode) as mcp:
        assert mcp.instructions == prompt.system
        tools = (await mcp.list_tools()).tools
    listed = [(t.name, t.description, t.input_schema) for t in tools]
    expected = [(t.name, t.description, t.input_schema) for t in prompt.tools]
    assert listed[:-1] == expected
    assert listed[-1][0] == "refresh_context"
    assert {"read_skill", "read_skill_file", "propose_plan"} <= {name for name, _, _ in listed}


async def test_a_workspace_tool_call_runs_through_the_agent_to_the_real_time_server(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    with shared.client() as client:
        name = next(t.name for t in client.prompt(chat_id).tools if t.name.endswith("get_current_time"))
        over_rest = client.call_tool(chat_id, name, {"timezone": "UTC"})
    async with session(shared.url(f"chats/{chat_id}"), shared.admin) as mcp:
        result = await mcp.call_tool(name, {"timezone": "UTC"})
    assert result.is_error is False and over_rest.is_error is False
    assert json.loads(text_of(result))["timezone"] == json.loads(over_rest.content)["timezone"] == "UTC"


async def test_read_skill_and_the_skill_prompt_and_resources_come_from_the_pin(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    async with session(shared.url(f"chats/{chat_id}"), shared.admin) as mcp:
        skill = json.loads(text_of(await mcp.call_tool("read_skill", {"name": "deploy"})))
        prompts = (await mcp.list_prompts()).prompts
        prompt = await mcp.get_prompt("deploy")
        resources = {r.uri: r for r in (await mcp.list_resources()).resources}
        meta = await mcp.read_resource("skill://deploy/SKILL.md")
        checklist = await mcp.read_resource("skill://deploy/checklist.md")
        rules = await mcp.read_resource(f"agentcontext://instructions{shared.work / 'AGENTS.md'}")
    assert skill["body"].strip() == "Step one: tag."
    assert "checklist.md" in skill["files"]
    assert [(p.name, p.description) for p in prompts] == [("deploy", "Ship a release")]
    assert isinstance(prompt.messages[0].content, types.TextContent)
    assert prompt.messages[0].content.text.strip() == "Step one: tag."
    assert set(resources) == {"skill://deploy/SKILL.md", f"agentcontext://instructions{shared.work / 'AGENTS.md'}"}
    assert _text(meta) == DEPLOY
    assert _text(checklist) == "- tag\n- push\n"
    assert _text(rules) == RULES


async def test_files_discovered_for_touched_paths_are_in_the_sessions_instructions_and_resources(
    shared: Stack,
) -> None:
    chat_id = pinned_chat(shared)
    nested = shared.work / "services" / "billing" / "AGENTS.md"
    with shared.client() as client:
        added = client.touched(chat_id, ["services/billing/api.py"]).added
        listed = client.chat(chat_id).context.resources
    async with session(shared.url(f"chats/{chat_id}"), shared.admin) as mcp:
        resources = {r.uri: r for r in (await mcp.list_resources()).resources}
        text = await mcp.read_resource(f"agentcontext://instructions{nested}")
        instructions = mcp.instructions or ""
    assert [a.path for a in added] == [str(nested)]
    assert [(r.origin, r.caused_by) for r in listed if r.path == str(nested)] == [
        ("discovered", [str(shared.work / "services" / "billing" / "api.py")])
    ]
    assert f"agentcontext://instructions{nested}" in resources
    assert _text(text) == BILLING
    assert "<discovered-context>" in instructions and "Money is integer cents." in instructions


def _text(result: types.ReadResourceResult) -> str:
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return content.text


async def test_modern_sessions_get_the_skills_extension_from_the_pin(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    async with session(shared.url(f"chats/{chat_id}"), shared.admin, mode="auto") as mcp:
        listed = await skills_list(mcp)
        got = await skills_get(mcp, "skill://deploy/SKILL.md")
    (entry,) = listed.skills
    assert got.skill == entry
    assert entry["uri"] == "skill://deploy/SKILL.md"
    assert entry["frontmatter"] == {"name": "deploy", "description": "Ship a release"}


async def test_a_handshake_era_session_is_told_of_the_skills_extension_it_is_served(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    async with session(shared.url(f"chats/{chat_id}"), shared.admin, mode="legacy") as mcp:
        capabilities = mcp.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        listed = await skills_list(mcp)
    assert capabilities.get("experimental", {}).get(EXTENSION_ID) == {}  # 2025: no ``extensions`` in the schema
    assert [entry["uri"] for entry in listed.skills] == ["skill://deploy/SKILL.md"]


# --- who may connect --------------------------------------------------------------------------


def _init_params() -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


def opening(running: Stack, chat_id: str, token: str) -> dict[str, Any]:
    """A bare ``initialize`` (httpx's ``url``, ``json``, ``headers``): a new handshake-era session, its id in the
    answer's ``mcp-session-id`` header."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()}
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    return {"url": running.url(f"chats/{chat_id}"), "json": body, "headers": headers}


def initialize(running: Stack, chat_id: str, token: str) -> httpx.Response:
    return httpx.post(**opening(running, chat_id, token))


async def test_the_workspace_endpoint_creates_the_callers_chat_once_and_resumes_it(shared: Stack) -> None:
    async with session(shared.url("workspaces/ws"), shared.admin) as first:
        await first.list_tools()
    async with session(shared.url("workspaces/ws"), shared.admin) as second:
        instructions = second.instructions
    with shared.client() as client:
        mine = [c for c in client.chats() if c.title == "MCP session"]
    assert len(mine) == 1
    assert instructions == client_prompt(shared, mine[0].id).system
    missing = httpx.post(
        shared.url("workspaces/nowhere"),
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()},
        headers={"Authorization": f"Bearer {shared.admin}", "Accept": "application/json, text/event-stream"},
    )
    assert missing.status_code == 404


async def test_the_workspace_endpoint_answers_an_error_with_the_status_the_rest_api_gives_it(shared: Stack) -> None:
    """Two agents named as the chat's agent: creating the caller's chat is a conflict (409), as over REST."""
    for name in ("a-coderd-chat", "b-coderd-chat"):
        issued = httpx.post(
            f"{shared.control.url}/api/v1/workspaces/twins/agents",
            json={"name": name},
            headers={"Authorization": f"Bearer {shared.admin}"},
        )
        assert issued.status_code == 201, issued.text
    over_rest = httpx.post(
        f"{shared.control.url}/api/v1/chats",
        json={"workspace": "twins"},
        headers={"Authorization": f"Bearer {shared.admin}"},
    )
    over_mcp = httpx.post(
        shared.url("workspaces/twins"),
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()},
        headers={"Authorization": f"Bearer {shared.admin}", "Accept": "application/json, text/event-stream"},
    )
    assert over_rest.status_code == over_mcp.status_code == 409, (over_rest.text, over_mcp.text)
    assert over_mcp.json()["message"] == over_rest.json()["detail"]


async def test_concurrent_openings_stay_within_the_cap_and_an_idle_session_gives_its_place_back(
    tmp_path: Path,
) -> None:
    limits = ("--mcp-sessions-per-user", "1", "--mcp-session-idle", "3")
    with stack(tmp_path, server_args=limits) as running:
        chat_id = pinned_chat(running)
        opened: list[httpx.Response] = []
        async with httpx.AsyncClient(timeout=30) as http, anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(_initialize, http, running, chat_id, opened)
        assert sorted(answer.status_code for answer in opened) == [200] + [429] * 7  # one session a user
        poll(
            lambda: initialize(running, chat_id, running.admin),
            lambda answer: answer.status_code == 200,
            "the idle session's place given back",
        )
        first = next(answer for answer in opened if answer.status_code == 200)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        headers = {"Authorization": f"Bearer {running.admin}", "mcp-session-id": first.headers["mcp-session-id"]}
        headers |= {"Accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
        assert httpx.post(running.url(f"chats/{chat_id}"), json=listing, headers=headers).status_code == 404


async def _initialize(http: httpx.AsyncClient, running: Stack, chat_id: str, opened: list[httpx.Response]) -> None:
    opened.append(await http.post(**opening(running, chat_id, running.admin)))


def client_prompt(running: Stack, chat_id: str) -> PromptResponse:
    with running.client() as client:
        return client.prompt(chat_id)


# --- out of date, refresh, list_changed ---------------------------------------------------------


async def test_an_edit_is_announced_to_the_session_and_refresh_context_repins_with_the_diff(tmp_path: Path) -> None:
    with stack(tmp_path) as running:
        chat_id = pinned_chat(running)
        watching: list[Any] = []
        other: list[Any] = []
        url = running.url(f"chats/{chat_id}")
        async with session(url, running.admin, received=watching) as mcp, session(url, running.admin, received=other):
            await mcp.list_tools()
            write_atomic(running.work / "AGENTS.md", RULES + "\nAlso run ruff.\n")
            notice = await _wait_for(watching, _log_saying("out of date"))
            assert str(running.work / "AGENTS.md") in str(notice.data)
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            assert "OUT OF DATE" in (tools["refresh_context"].description or "")
            refreshed = text_of(await mcp.call_tool("refresh_context", {}))
            assert f"changed: {running.work / 'AGENTS.md'}" in refreshed
            await _wait_for(other, _notification("notifications/tools/list_changed"))
            await _wait_for(other, _notification("notifications/resources/list_changed"))
            await _wait_for(other, _notification("notifications/prompts/list_changed"))
        with running.client() as client:
            assert "Also run ruff." in client.prompt(chat_id).system
            assert client.chat(chat_id).context.dirty is False


async def test_a_modern_session_hears_list_changed_through_subscriptions_listen(tmp_path: Path) -> None:
    with stack(tmp_path) as running:
        chat_id = pinned_chat(running)
        async with session(running.url(f"chats/{chat_id}"), running.admin, mode="auto") as mcp:
            async with mcp.listen(tools_list_changed=True, resources_list_changed=True) as events:
                with running.client() as client:
                    write_atomic(running.work / "AGENTS.md", RULES + "\nNew rule.\n")
                    poll(lambda: client.chat(chat_id), lambda c: c.context.dirty, "the chat out of date")
                    with anyio.fail_after(10):
                        first = await events.__anext__()
                    client.refresh(chat_id)
                    with anyio.fail_after(10):
                        kinds = {type(first).__name__, type(await events.__anext__()).__name__}
            assert "ToolsListChanged" in kinds


async def _wait_for(received: list[Any], match: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for item in received:
            if match(item):
                return item
        await anyio.sleep(0.05)
    raise AssertionError(f"not received within {timeout} s: {received!r}")


def _log_saying(text: str) -> Any:
    return lambda item: isinstance(item, types.LoggingMessageNotificationParams) and text in str(item.data)


def _notification(method: str) -> Any:
    def match(item: Any) -> bool:
        root = getattr(item, "root", item)
        return getattr(root, "method", None) == method

    return match


# --- a third-party client: the MCP Inspector CLI ---------------------------------------------------


def inspector_target(shared: Stack, chat_id: str) -> list[str]:
    """The Inspector CLI's arguments for the chat's endpoint, with the administrator's token."""
    url = shared.url(f"chats/{chat_id}")
    return [url, "--transport", "http", "--header", f"Authorization: Bearer {shared.admin}"]


def test_the_inspector_lists_the_chats_tools_and_calls_the_time_server_through_it(shared: Stack, home: Path) -> None:
    chat_id = pinned_chat(shared)
    target = inspector_target(shared, chat_id)
    tools = inspect(target, "--method", "tools/list", home=home)["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert names[-1] == "refresh_context" and "read_skill" in names
    name = next(n for n in names if n.endswith("get_current_time"))
    called = inspect(target, "--method", "tools/call", "--tool-name", name, "--tool-arg", "timezone=UTC", home=home)[
        "result"
    ]
    assert called["isError"] is False
    assert json.loads(called["content"][0]["text"])["timezone"] == "UTC"


def test_the_inspector_verifies_the_chats_skills_extension_on_the_modern_era(shared: Stack, home: Path) -> None:
    chat_id = pinned_chat(shared)
    target = inspector_target(shared, chat_id)
    report = inspect(target, "--method", "skills/list", "--verify", home=home, era="modern")
    assert report.get("outcome") == "verified", report
    assert {f["uri"]: f["status"] for f in report["files"]} == {"skill://deploy/SKILL.md": "verified"}


# --- replicas ---------------------------------------------------------------------------------------


async def test_a_refresh_through_one_replica_reaches_a_session_held_on_another(
    tmp_path: Path, pg_database: str
) -> None:
    db_url = pg_database
    with stack(tmp_path, db_url) as running, server(db_url, tmp_path / "logs", name="replica-b") as replica:
        chat_id = pinned_chat(running)
        heard: list[Any] = []
        async with session(f"{replica.url}/mcp/chats/{chat_id}", running.admin, received=heard) as mcp:
            await mcp.list_tools()
            write_atomic(running.work / "AGENTS.md", RULES + "\nReplicated rule.\n")
            await _wait_for(heard, _log_saying("out of date"))
            with running.client() as client:  # the refresh goes through the first replica
                client.refresh(chat_id)
            await _wait_for(heard, _notification("notifications/tools/list_changed"))
            await _wait_for(heard, _notification("notifications/prompts/list_changed"))
