"""Approved MCP servers that lie: each may cost its own tools, never the agent, the other servers or the chats.

Found by a review (``tests/mcp_servers/liar.py`` breaks the protocol's promises as told): a server
that fills stdout with blank lines held the agent's event loop as long as it liked (a 3 s
``call_timeout`` fired at 8 s, with the API and every other server stopped meanwhile); a listing
whose cursor never ends grew the agent by 651 MiB in 30 s; a result that is no tool result was a
500 and a traceback; tool names made to meet a cut name at every hash length made the control
plane refuse every prompt and tool call of every chat of the workspace; and ``skills_read`` of
a 1 MB path held our MCP server 28 s.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcontext.control.prompt import mcp_tools
from agentcontext.errors import UnsafePathError
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.skills.files import resource_parts
from agentcontext.testing import isolated_environ, test_config
from agentcontext.workspace_mcp.client.connection import MAX_PAGES, MAX_TOOLS
from agentcontext.workspace_mcp.client.status import UpstreamError
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import parse
from agentcontext.workspace_mcp.launch import resolve
from agentcontext.workspace_mcp.tool_names import MAX_NAME, assign
from agentcontext.workspace_mcp.trust import TrustStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
LIAR = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "liar.py")


@asynccontextmanager
async def serving(tmp_path: Path, home: Path, *args: str, **settings: Any) -> AsyncIterator[UpstreamManager]:
    """The agent's manager with one approved server, ``liar.py ARGS``, and ``mcp-server-time`` beside it."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    servers = {"liar": {"command": sys.executable, "args": [LIAR, *args]}, "time": {"command": "mcp-server-time"}}
    environ = {**isolated_environ(home), "PATH": str(Path(sys.executable).parent)}
    parsed = parse(json.dumps({"mcpServers": servers}).encode(), str(work / ".mcp.json"), environ)
    store = TrustStore(tmp_path / "trust.json")
    store.approve([resolve(spec, work_dir=str(work), environ=environ) for spec in parsed.servers])
    values = {"mcp.connect_timeout": 15, **{f"mcp.{key}": value for key, value in settings.items()}}
    config = test_config(work, home=home, settings=values)
    async with UpstreamManager(config.mcp, work_dir=str(work), environ=environ, store=store) as manager:
        with anyio.fail_after(60):
            await manager.reload(parsed.servers)
        yield manager


def states(manager: UpstreamManager) -> dict[str, tuple[str, str | None]]:
    return {s.name: (s.state, s.error) for s in manager.statuses()}


async def test_a_server_filling_stdout_with_blank_lines_holds_neither_the_agent_nor_its_own_timeout(
    tmp_path: Path, home: Path
) -> None:
    async with serving(tmp_path, home, "blank-lines", "6", call_timeout=1) as manager:
        assert states(manager)["liar"][0] == "connected"
        gaps: list[float] = []

        async def tick() -> None:
            last = time.monotonic()
            while True:
                await anyio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            started = time.monotonic()
            with pytest.raises(UpstreamError, match="timed out"):
                await manager.call_tool("liar__t", {})
            took = time.monotonic() - started
            answer = await manager.call_tool("time__get_current_time", {"timezone": "UTC"})  # the others serve
            group.cancel_scope.cancel()
        assert took < 4, took  # 8 s before: the timeout fired only when the flood stopped
        assert max(gaps) < 1.0, max(gaps)
        assert not answer.is_error


async def test_a_result_that_is_no_tool_result_is_that_servers_error(tmp_path: Path, home: Path) -> None:
    async with serving(tmp_path, home, "bad-result") as manager:
        with pytest.raises(UpstreamError, match='MCP server "liar" sent a result that cannot be read: ValidationError'):
            await manager.call_tool("liar__t", {})
        assert states(manager)["liar"] == ("connected", None)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("endless-pages", f"more than {MAX_TOOLS} tools: none are offered"),
        ("same-cursor", "sent the cursor '1' twice: a listing that never ends"),
        ("empty-pages", f"goes on past {MAX_PAGES} pages: none are offered"),
    ],
)
async def test_a_listing_that_never_ends_offers_nothing_and_says_why(
    tmp_path: Path, home: Path, mode: str, said: str
) -> None:
    assert MAX_PAGES * 20 > MAX_TOOLS  # endless pages of 20 tools meet the tool cap first
    async with serving(tmp_path, home, mode) as manager:
        state, error = states(manager)["liar"]
        assert state == "failed" and error is not None and said in error, error
        assert {server for _, server, _ in manager.tools()} == {"time"}  # the other server serves on


def crafted(server: str) -> list[str]:
    """A long tool name, and names equal to its cut form at every hash length the namer tries."""
    long = "x" * 70
    full = f"{server}__{long}"
    digest = hashlib.sha256(full.encode()).hexdigest()
    return [long, *(f"{full[: MAX_NAME - k - 1]}_{digest[:k]}"[len(server) + 2 :] for k in range(10, 47, 4))]


async def test_tool_names_made_to_meet_a_cut_name_cost_only_that_servers_own_tools(tmp_path: Path, home: Path) -> None:
    names = assign([*(("evil", name) for name in crafted("evil")), ("time", "get_current_time")])
    assert ("time", "get_current_time") in names.routes.values()
    assert names.unnamed and all(server == "evil" for server, _ in names.unnamed)
    assert len(set(names.routes)) == len(names.routes) and all(len(name) <= MAX_NAME for name in names.routes)
    # the control plane's names: "." becomes "_", so names distinct on the agent meet there
    dotted = [name if n == 0 else f"{name[:-11]}.{name[-10:]}" for n, name in enumerate(crafted("evil"))]
    servers = [
        Resource(Kind.MCP_SERVER, "evil", Scope.PROJECT, Status.OK, tools=tuple(Tool(n, "d", {}) for n in dotted)),
        Resource(Kind.MCP_SERVER, "time", Scope.PROJECT, Status.OK, tools=(Tool("get_current_time", "d", {}),)),
    ]
    offered = mcp_tools(servers)  # raised before, and with it every prompt and call of the workspace's chats
    assert offered["time__get_current_time"][0] == ("time", "get_current_time")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": n, "inputSchema": {"type": "object"}} for n in crafted("liar")]))
    async with serving(tmp_path, home, "listed", str(tools)) as manager:
        (liar,) = [s for s in manager.statuses() if s.name == "liar"]
        assert liar.state == "connected" and any("tools not offered" in w for w in liar.warnings), liar.warnings
        exposed = [name for name, _, _ in manager.tools()]
        assert "time__get_current_time" in exposed and len(exposed) == len(set(exposed))


def test_a_skill_resource_longer_than_any_path_is_refused_before_it_is_resolved() -> None:
    started = time.monotonic()
    with pytest.raises(UnsafePathError, match="Resource path too long: 1000001 characters, at most 4096"):
        resource_parts("a/" * 500_000 + "x")
    assert time.monotonic() - started < 1  # 28 s on our MCP server's loop before, for this path
    assert resource_parts("a/" * 100 + "x") == ["a"] * 100 + ["x"]
