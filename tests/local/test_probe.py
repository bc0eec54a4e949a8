"""Reading the local stack's status from the control plane's and the agent's answers."""

from __future__ import annotations

from typing import Any

from agentcontext.local.live import plain
from agentcontext.local.probe import McpServer, StackStatus, from_answers

HEALTH = {"ok": True, "version": "0.1.0", "database": "sqlite"}


def _workspaces(online: bool, last_seen: str | None = "2026-01-01T00:00:00+00:00") -> list[dict[str, Any]]:
    agent = {"name": "local", "online": online, "last_seen_at": last_seen}
    return [{"name": "other", "agents": [{"name": "local", "online": True}]}, {"name": "app", "agents": [agent]}]


def _context(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"version": 3, "aggregate_hash": "ab" * 32, "error": None, "resources": list(resources)}


def test_mcp_servers_are_connected_changed_connecting_failed_or_pending() -> None:
    context = _context(
        {"kind": "instruction_file", "path": "/r/AGENTS.md", "status": "ok"},
        {"kind": "mcp_server", "path": "a", "name": "a", "status": "ok"},
        {"kind": "mcp_server", "path": "b", "name": "b", "status": "unreadable", "error": None},
        {"kind": "mcp_server", "path": "c", "name": "c", "status": "unreadable", "error": "exit 3"},
        {"kind": "mcp_server", "path": "d", "name": "d", "status": "disabled", "error": "not approved"},
        {"kind": "mcp_server", "path": "e", "name": "e", "status": "ok", "approval": {"state": "changed"}},
    )
    status = from_answers(HEALTH, _workspaces(True), context, "app", "local")
    assert status.mcp == (
        McpServer("a", "connected"),
        McpServer("b", "connecting"),
        McpServer("c", "failed", "exit 3"),
        McpServer("d", "pending", "not approved"),
        McpServer("e", "changed"),
    )
    assert status.statuses == (("ok", 3), ("pending", 1), ("unreadable", 2))  # every resource, one count


def test_the_agent_is_online_when_the_control_plane_says_so() -> None:
    status = from_answers(HEALTH, _workspaces(True), _context(), "app", "local")
    assert (status.server, status.database, status.agent, status.version) == ("up", "sqlite", "online", 3)


def test_an_agent_that_answers_before_its_first_push_is_connecting() -> None:
    assert from_answers(HEALTH, _workspaces(False, None), _context(), "app", "local").agent == "connecting"


def test_an_agent_that_does_not_answer_is_down_whatever_the_control_plane_remembers() -> None:
    assert from_answers(None, None, None, "app", "local") == StackStatus(server="down", agent="down")
    assert from_answers(HEALTH, _workspaces(False), None, "app", "local").agent == "down"


def test_the_plain_line_names_every_part_and_each_failed_server() -> None:
    context = _context(
        {"kind": "skill", "path": "/r/s/SKILL.md", "status": "invalid"},
        {"kind": "mcp_server", "path": "c", "name": "c", "status": "unreadable", "error": "exit 3"},
    )
    line = plain(from_answers(HEALTH, _workspaces(True), context, "app", "local"))
    assert line == (
        f"server up · agent online · snapshot v3 {'ab' * 6} · resources 1 invalid, 1 unreadable · MCP 1 failed"
        "\n  MCP server c: exit 3"
    )


def test_a_control_plane_whose_database_is_down_is_not_read_as_an_agent_still_connecting() -> None:
    """Its /healthz answers, its workspaces do not (503): nothing says the agent is connecting, only serving."""
    status = from_answers(HEALTH, None, _context(), "app", "local", no_database=True)
    assert (status.server, status.agent) == ("no database", "serving")
    assert from_answers(HEALTH, None, None, "app", "local", no_database=True).agent == "down"
