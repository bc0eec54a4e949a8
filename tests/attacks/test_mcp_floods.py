"""Hostile MCP configs and servers that flood: too many servers, a message too large to hold, endless notices.

A 64 KiB ``.mcp.json`` declaring 1,800 servers starts at most 64 (even under
``mcp.trust = auto``), the rest listed as excluded with the reason. A server answering a
tool call with 100 MB (over stdio, with its id first or last; over streamable HTTP, as a
JSON body or a server-sent event) is cut as the reader reads it: memory stays bounded, the
result carries the visible marker, and the session goes on. A server announcing
``tools/list_changed`` thousands of times a second is re-listed once its notices settle
(and at most every 20 quiet periods while they never do), and the snapshots that follow
are debounced the same way: a handful of listings and versions, the last change kept.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from agentcontext.agent.context import ContextAgent
from agentcontext.resource import Kind
from agentcontext.snapshot import Snapshot
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, test_config
from agentcontext.workspace_mcp.client.results import CallOutcome
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import MAX_SERVERS, ServerSpec, parse
from tests.agent.conftest import AUTO_TRUST, make_agent, ready, running, serving, wait_snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

FLOOD = Path(__file__).resolve().parents[1] / "mcp_servers" / "flood.py"
HUNDRED_MB = 100 * 1024 * 1024
MEMORY_BOUND = 24 * 1024 * 1024  # what the reader may hold at peak: the 1 MiB cap, chunks, the parsed result


def manager(work: Path, home: Path, **settings: Any) -> UpstreamManager:
    config = test_config(work, home=home, settings={"mcp.trust": "auto", "mcp.connect_timeout": 15, **settings})
    return UpstreamManager(config.mcp, work_dir=str(work), environ=isolated_environ(home))


async def test_a_64_kib_config_with_1800_servers_starts_at_most_64(tmp_path: Path, home: Path) -> None:
    started = tmp_path / "work" / "started"
    servers = {f"s{n:04}": {"command": "./m"} for n in range(1800)}
    text = json.dumps({"mcpServers": servers})
    assert 40_000 < len(text) < 64 * 1024
    work = make_workspace(
        tmp_path / "work", {".mcp.json": text, "m": '#!/bin/sh\ntouch "started/$$"\n', "started/": ""}
    )
    os.chmod(work / "m", 0o755)
    result = scan_tree(work, home=home, settings={"mcp.trust": "auto"})
    [config] = [r for r in result.snapshot.resources if r.kind is Kind.MCP_CONFIG]
    assert (len(result.servers), len(config.servers)) == (MAX_SERVERS, MAX_SERVERS)
    assert any(
        w.startswith("1736 servers excluded: at most 64 servers of one MCP config are used") for w in config.warnings
    )
    assert '"s0064", "s0065"' in config.warnings[-1] and "and 1726 more" in config.warnings[-1]
    async with manager(work, home, **{"mcp.connect_timeout": 30}) as upstreams:
        await upstreams.reload(result.servers)
        assert len(upstreams.statuses()) == MAX_SERVERS
    assert len(list(started.iterdir())) == MAX_SERVERS


def test_the_server_cap_counts_entries_in_file_order() -> None:
    entries = {f"z{n:03}" if n % 2 else f"a{n:03}": {"command": "x"} for n in range(100)}
    parsed = parse(json.dumps({"mcpServers": entries}).encode(), "/w/.mcp.json", {})
    assert [s.name for s in parsed.servers] == sorted(list(entries)[:MAX_SERVERS])
    assert parsed.excluded == tuple(list(entries)[MAX_SERVERS:])


async def _flooded(upstreams: UpstreamManager, spec: ServerSpec, tool: str) -> tuple[CallOutcome, int]:
    """The outcome of one flooding call, and the peak of memory allocated while it ran."""
    await upstreams.reload([spec])
    tracemalloc.start()
    try:
        outcome = await upstreams.call_tool(tool, {"bytes": HUNDRED_MB})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, peak


def _assert_cut(outcome: CallOutcome, peak: int, limit: int = 1024 * 1024) -> None:
    [block] = outcome.content
    text = block["text"]
    assert text.startswith("x" * 1000) and len(text.encode()) <= limit
    assert text.endswith(f"is over the {limit + 64 * 1024}-byte message limit; cut as it was read]")
    told = re.search(r"\[output truncated: the server's answer of (\d+) bytes", text)
    assert told is not None and HUNDRED_MB < int(told.group(1)) < HUNDRED_MB + 200
    assert peak < MEMORY_BOUND, f"{peak / 1e6:.1f} MB allocated while reading a 100 MB answer"


@pytest.mark.parametrize("order", ["id-first", "id-last"])
async def test_a_100_mb_stdio_answer_is_cut_at_the_reader_in_bounded_memory(
    tmp_path: Path, home: Path, order: str
) -> None:
    entry = {"command": sys.executable, "args": [str(FLOOD), order]}
    [spec] = parse(json.dumps({"mcpServers": {"flood": entry}}).encode(), str(tmp_path / ".mcp.json"), {}).servers
    async with manager(tmp_path, home) as upstreams:
        outcome, peak = await _flooded(upstreams, spec, "flood__flood")
        after = await upstreams.call_tool("flood__echo", {"text": "still here"})
        notified = await upstreams.call_tool("flood__notify", {"bytes": 10_000_000})  # a huge notification: dropped
    _assert_cut(outcome, peak)
    assert after.content == [{"type": "text", "text": "still here"}]
    assert notified.content == [{"type": "text", "text": "notified"}]


def flood_app(events: bool) -> Any:
    """A minimal streamable-HTTP MCP server whose ``flood`` streams a 100 MB answer (JSON body or one event)."""
    tools = [{"name": "flood", "inputSchema": {"type": "object"}}]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        request = json.loads(body)
        method, request_id = request.get("method"), request.get("id")
        if request_id is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "tools/call":
            await _stream(send, request_id, events)
            return
        result: dict[str, Any] = {"tools": tools} if method == "tools/list" else {}
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "f", "version": "1"},
            }
        answer = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})

    return app


async def _stream(send: Send, request_id: Any, events: bool) -> None:
    kind = b"text/event-stream" if events else b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{{"content":[{{"type":"text","text":"'.encode()
    pieces: AsyncIterator[bytes] = _pieces((b"event: message\ndata: " if events else b"") + head)
    async for piece in pieces:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b'"}]}}' + (b"\n\n" if events else b"")})


async def _pieces(head: bytes) -> AsyncIterator[bytes]:
    yield head
    for _ in range(100):
        yield b"x" * (1024 * 1024)


@pytest.mark.parametrize("events", [False, True], ids=["json-body", "event-stream"])
async def test_a_100_mb_http_answer_is_cut_at_the_reader_in_bounded_memory(
    tmp_path: Path, home: Path, events: bool
) -> None:
    async with serving(flood_app(events)) as url:
        entry = {"type": "http", "url": f"{url}/mcp"}
        [spec] = parse(json.dumps({"mcpServers": {"web": entry}}).encode(), str(tmp_path / ".mcp.json"), {}).servers
        async with manager(tmp_path, home) as upstreams:
            outcome, peak = await _flooded(upstreams, spec, "web__flood")
    _assert_cut(outcome, peak)


async def counted(agent: ContextAgent) -> dict[str, int]:
    """The flooding server's own counts: ``lists`` (``tools/list`` answered) and ``sent`` (notices)."""
    counts: dict[str, int] = json.loads((await agent.mcp.call_tool("noisy__stats", {})).content[0]["text"])
    return counts


def noted_version(snapshot: Snapshot) -> int | None:
    """The version of ``latest`` that the snapshot's ``noisy`` resource reports (its change since approval)."""
    [noisy] = [r for r in snapshot.resources if r.kind is Kind.MCP_SERVER and r.path == "noisy"]
    changes = noisy.approval.changes if noisy.approval else ()
    found = [re.search(r'^\+\s*"description": "version (\d+)"', c.diff, re.MULTILINE) for c in changes]
    return next((int(m.group(1)) for m in found if m), None)


async def test_a_tools_list_changed_flood_costs_a_few_listings_and_snapshots_and_the_last_change_is_kept(
    tmp_path: Path, home: Path
) -> None:
    debounce_ms, seconds, rate = 100, 3.0, 3000  # 9,000 notices; a listing at most every 2 s while they last
    entry = {"command": sys.executable, "args": [str(FLOOD)]}
    work = make_workspace(tmp_path / "work", {".mcp.json": json.dumps({"mcpServers": {"noisy": entry}})})
    agent = make_agent(work, home, settings={**AUTO_TRUST, "agent.debounce_ms": debounce_ms})
    async with running(agent):
        await ready(agent)
        await wait_snapshot(agent, lambda s: any(r.path == "noisy" and r.tools for r in s.resources))
        before, first = await counted(agent), agent.snapshot.version
        with agent.subscription() as events:
            outcome = await agent.mcp.call_tool("noisy__notices", {"seconds": seconds, "rate": rate})
            ended, latest = time.monotonic(), int(outcome.content[0]["text"])
            with anyio.fail_after(10):  # the flood is over: the last change arrives after one quiet period
                while noted_version(agent.snapshot) != latest:
                    await events.receive()
            settled = time.monotonic() - ended
        after = await counted(agent)
        [listed] = [t for t in agent.mcp.listings()["noisy"] if t["name"] == "latest"]
    # two of each: at ~2 s (the notices never settle) and after the flood; the rest is slack for a loaded machine
    assert after["lists"] - before["lists"] <= 5, f"{after['lists'] - before['lists']} tools/list for {latest} notices"
    assert agent.snapshot.version - first <= 5, f"{agent.snapshot.version - first} snapshots (pushes) in the flood"
    assert listed["description"] == f"version {latest}"
    assert latest - before["sent"] > 0.8 * seconds * rate  # the agent kept reading: a flood of thousands a second
    assert settled < 5, f"the last change took {settled:.1f} s after the flood"
