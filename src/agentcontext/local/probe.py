"""How the local stack is doing, read from the control plane's and the agent's APIs.

One reading asks the server's ``/healthz`` and ``/api/v1/workspaces`` (the agent online, its
last push) and the agent's ``/api/v0/context`` (the snapshot it serves, MCP servers
included). A part that does not answer is reported as such; a reading never raises.

An MCP server's resource tells its state: ``ok`` connected (``changed`` when its approval
says its tools changed since), ``disabled`` pending approval, ``unreadable`` with an error
failed, ``unreadable`` without one still connecting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import httpx

from agentcontext.snapshot import count_statuses

TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class McpServer:
    name: str
    state: str  # connected | changed | connecting | failed | pending
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StackStatus:
    server: str = "starting"  # starting | up | down | no database (it answers, its database does not)
    database: str = ""
    agent: str = "starting"  # starting | down | connecting | online | serving (the control plane cannot say more)
    last_seen: str | None = None
    version: int | None = None
    aggregate_hash: str = ""
    snapshot_error: str | None = None
    statuses: tuple[tuple[str, int], ...] = ()  # (status, count) of every resource (:mod:`agentcontext.snapshot`)
    mcp: tuple[McpServer, ...] = ()

    def mcp_count(self, state: str) -> int:
        return sum(1 for server in self.mcp if server.state == state)


def mcp_state(resource: dict[str, Any]) -> McpServer:
    status, error = resource.get("status"), resource.get("error")
    approval = resource.get("approval")
    state = {"ok": "connected", "disabled": "pending"}.get(str(status), "failed" if error else "connecting")
    if isinstance(approval, dict) and approval.get("state") == "changed" and state == "connected":
        state = "changed"
    return McpServer(str(resource.get("name") or resource.get("path")), state, error)


def from_answers(
    health: dict[str, Any] | None,
    workspaces: list[dict[str, Any]] | None,
    context: dict[str, Any] | None,
    workspace: str,
    agent: str,
    *,
    no_database: bool = False,
) -> StackStatus:
    """The status the three answers (None: no answer) tell; ``no_database``: the workspaces were not answered for
    want of the database (503), so the control plane cannot say whether the agent is online."""
    found = [
        a for w in workspaces or [] if w.get("name") == workspace for a in w.get("agents", []) if a.get("name") == agent
    ]
    resources = (context or {}).get("resources", [])
    counts = count_statuses((str(r.get("kind")), str(r.get("status"))) for r in resources)
    agent_state = _agent_state(found[0] if found else None, context is not None)
    return StackStatus(
        server=("no database" if no_database else "up") if health else "down",
        database=str((health or {}).get("database", "")),
        agent="serving" if health and no_database and context is not None else agent_state,
        last_seen=found[0].get("last_seen_at") if found else None,
        version=context.get("version") if context else None,
        aggregate_hash=str((context or {}).get("aggregate_hash", "")),
        snapshot_error=(context or {}).get("error"),
        statuses=tuple(counts.items()),
        mcp=tuple(mcp_state(r) for r in resources if r.get("kind") == "mcp_server"),
    )


def _agent_state(row: dict[str, Any] | None, answers: bool) -> str:
    """online (the control plane says so), connecting (the agent answers, the control plane has not heard from
    it yet), down (the agent does not answer)."""
    if row is not None and row.get("online"):
        return "online"
    return "connecting" if answers else "down"


def accepts(server_url: str, user_token: str) -> bool:
    """Whether a control plane answers at ``server_url`` and knows ``user_token``."""
    with httpx.Client(base_url=server_url, headers={"Authorization": f"Bearer {user_token}"}, timeout=1.0) as client:
        return _get(client, "/api/v1/users/me") is not None


class Probe:
    """Reads the stack's status over HTTP with short timeouts."""

    def __init__(self, server_url: str, user_token: str, agent_url: str, agent_token: str) -> None:
        self._server = httpx.Client(
            base_url=server_url, headers={"Authorization": f"Bearer {user_token}"}, timeout=TIMEOUT
        )
        self._agent = httpx.Client(
            base_url=agent_url, headers={"Authorization": f"Bearer {agent_token}"}, timeout=TIMEOUT
        )
        self._server_seen = False  # each is "starting" until it first answers, "down" after
        self._agent_seen = False

    def close(self) -> None:
        self._server.close()
        self._agent.close()

    def read(self, workspace: str, agent: str) -> StackStatus:
        health = _get(self._server, "/healthz")
        code, workspaces = _answer(self._server, "/api/v1/workspaces") if health else (None, None)
        context = _get(self._agent, "/api/v0/context")
        status = from_answers(health, workspaces, context, workspace, agent, no_database=code == 503)
        self._server_seen = self._server_seen or health is not None
        self._agent_seen = self._agent_seen or context is not None
        if not self._server_seen:
            status = replace(status, server="starting")
        return status if self._agent_seen else replace(status, agent="starting")

    def server_up(self) -> bool:
        self._server_seen = self._server_seen or _get(self._server, "/healthz") is not None
        return self._server_seen


def _get(client: httpx.Client, path: str) -> Any:
    return _answer(client, path)[1]


def _answer(client: httpx.Client, path: str) -> tuple[int | None, Any]:
    """The status (None: no answer) and the JSON of a 200 (else None)."""
    try:
        response = client.get(path)
    except httpx.HTTPError:
        return None, None
    if response.status_code != 200:
        return response.status_code, None
    try:
        return 200, response.json()
    except ValueError:
        return 200, None
