"""``get_instructions_for``: nested instructions for any MCP client, via the SDK client and the Inspector CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import mcp.types as types
import pytest
from mcp.client import Client
from mcp.types import RequestParamsMeta

from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.workspace import Workspace
from agentcontext.testing import isolated_environ, test_config
from tests import monorepo
from tests.mcp.test_inspector import inspect, stdio

pytestmark = pytest.mark.anyio

TOOL = "get_instructions_for"
HANDLER = "services/billing/api/handler.py"


def serve(work: Path, home: Path, profile: str = "codex") -> ContextServer:
    config = test_config(work, home=home, profile=profile)
    return ContextServer(Workspace(str(work), config=config, environ=isolated_environ(home)))


async def ask(client: Client, paths: Any, **meta: Any) -> types.CallToolResult:
    return await client.call_tool(TOOL, {"paths": paths}, meta=cast(RequestParamsMeta, meta) if meta else None)


def files(result: types.CallToolResult) -> list[str]:
    assert result.structured_content is not None, result.content
    return [Path(f["path"]).name + "@" + Path(f["path"]).parent.name for f in result.structured_content["files"]]


def text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_the_tool_tells_the_model_when_to_call_it(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    async with Client(serve(work, home), mode="legacy") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.instructions
    tool = tools[TOOL]
    assert "before you edit, create or run files in a directory you have not worked in yet" in (tool.description or "")
    assert tool.input_schema["properties"]["paths"]["maxItems"] == 32
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert instructions is not None and "call get_instructions_for with their paths" in instructions


async def test_a_session_gets_the_nested_rules_once_and_only_what_is_new_after(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    async with Client(serve(work, home), mode="legacy") as client:
        first = await ask(client, [HANDLER])
        again = await ask(client, [HANDLER])
        search = await ask(client, ["services/search/index.py"])
        (work / "services/billing/AGENTS.md").write_text("Billing: amounts are Decimal now.\n")
        edited = await ask(client, [HANDLER, "services/search"])
    assert first.is_error is False
    assert files(first) == ["AGENTS.md@services", "AGENTS.md@billing"]
    assert text(first).startswith(f"Instructions for {work / HANDLER} (follow them for files there):\n\n")
    assert f"Contents of {work / 'services/billing/AGENTS.md'} (" in text(first)
    assert text(first).endswith("Billing: amounts are integers in cents.")
    assert files(again) == [] and again.structured_content is not None
    assert again.structured_content["already_given"] == [
        str(work / "services/AGENTS.md"),
        str(work / "services/billing/AGENTS.md"),
    ]
    assert text(again).startswith("Already given in this conversation, and still applying: ")
    assert files(search) == ["AGENTS.override.md@search"]  # services/AGENTS.md was given already
    assert files(edited) == ["AGENTS.md@billing"]  # changed since it was given
    assert "amounts are Decimal now." in text(edited)


async def test_each_session_has_its_own_memory(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    server = serve(work, home)
    async with Client(server, mode="legacy") as first, Client(server, mode="legacy") as second:
        assert files(await ask(first, [HANDLER])) == ["AGENTS.md@services", "AGENTS.md@billing"]
        assert files(await ask(second, [HANDLER])) == ["AGENTS.md@services", "AGENTS.md@billing"]


async def test_on_the_modern_era_a_conversation_id_keeps_its_own_memory(tmp_path: Path, home: Path) -> None:
    """Over stdio and in memory the process is the session; a conversation id (ChatGPT) is a session of its own."""
    work = monorepo.build(tmp_path / "repo")
    async with Client(serve(work, home), mode="auto") as client:
        one = await ask(client, [HANDLER])
        two = await ask(client, [HANDLER])
        conversation = {"openai/session": "chat-1"}
        three = await ask(client, [HANDLER], **conversation)
        four = await ask(client, [HANDLER], **conversation)
    assert files(one) == files(three) == ["AGENTS.md@services", "AGENTS.md@billing"]
    assert files(two) == files(four) == []


async def test_the_claude_profile_server_returns_the_matching_path_scoped_rules(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    async with Client(serve(work, home, "claude"), mode="legacy") as client:
        result = await ask(client, ["services/billing/db/schema.sql"])
    assert result.structured_content is not None
    assert [(Path(f["path"]).name, f["load"]) for f in result.structured_content["files"]] == [
        ("CLAUDE.md", "on_demand"),
        ("style.md", "on_demand"),
        ("sql.md", "path_scoped"),
    ]
    assert "SQL: no SELECT *." in text(result)


async def test_bad_paths_are_error_results_or_refusals_never_reads(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    async with Client(serve(work, home), mode="legacy") as client:
        many = await ask(client, [f"p{i}" for i in range(10_000)])
        wrong = await ask(client, {"not": "a list"})
        empty = await ask(client, [])
        outside = await ask(client, ["/etc", "../x", HANDLER])
    assert (many.is_error, text(many)) == (True, "10000 paths in one lookup: at most 32 (ondemand.max_paths)")
    assert wrong.is_error and "paths must be a non-empty list" in text(wrong)
    assert empty.is_error
    assert outside.is_error is False and outside.structured_content is not None
    refused = {r["path"]: r["reason"] for r in outside.structured_content["refused"]}
    assert set(refused) == {"/etc", "../x"}
    assert f"Not looked up: /etc: {refused['/etc']}" in text(outside)


def test_the_inspector_calls_get_instructions_for_over_stdio(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    result = inspect(
        stdio(work),
        "--method",
        "tools/call",
        "--tool-name",
        TOOL,
        "--tool-arg",
        f"paths={json.dumps([HANDLER])}",
        home=home,
    )["result"]
    assert result["isError"] is False
    assert [f["path"] for f in result["structuredContent"]["files"]] == [
        str(work / "services/AGENTS.md"),
        str(work / "services/billing/AGENTS.md"),
    ]


async def test_in_multi_project_mode_the_tool_answers_for_the_bound_project_only(tmp_path: Path, home: Path) -> None:
    access = tmp_path / "src"
    monorepo.build(access / "shop")
    server = ContextServer(Workspace(str(access), multi_project=True, environ=isolated_environ(home)))
    async with Client(server, mode="legacy") as client:
        unbound = await ask(client, [HANDLER])
        await client.call_tool("set_project_root", {"path": "shop"})
        bound = await ask(client, [HANDLER, "../other"])
    assert unbound.is_error and "No project is selected" in text(unbound)
    assert files(bound) == ["AGENTS.md@services", "AGENTS.md@billing"]
    assert bound.structured_content is not None and bound.structured_content["refused"][0]["path"] == "../other"
