"""A workspace MCP server's standing as the catalog reports it, without the MCP SDK.

:class:`ServerStatus` becomes the server's ``mcp_server`` snapshot resource; :func:`approval_of`
says what it runs and where its approval stands. They live apart from the session
(:mod:`agentcontext.workspace_mcp.client.connection`) so that an agent whose servers wait for
approval, or that has none, never imports the SDK (about 0.6 s of CPU at every start).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentcontext.errors import AgentContextError
from agentcontext.resource import Kind, McpApproval, Resource, Scope, Status, Tool, ToolChange
from agentcontext.workspace_mcp.client.pinning import Judged
from agentcontext.workspace_mcp.launch import Launch

State = Literal["connecting", "connected", "changed", "failed", "pending"]
SERVING: tuple[State, ...] = ("connected", "changed")  # states whose tools are offered
MAX_REPORTED_CHANGES = 32  # tool diffs in one snapshot resource (each at most 4,096 characters)


class UpstreamError(AgentContextError):
    """A call to a workspace MCP server failed (timeout, server error, connection lost, tool withheld)."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the catalog reports for one declared server."""

    name: str
    state: State
    transport: str
    tools: tuple[Tool, ...] = ()
    error: str | None = None
    stderr_tail: str = ""
    warnings: tuple[str, ...] = ()
    approval: McpApproval | None = None
    changes: tuple[ToolChange, ...] = ()  # all of them; the approval reports the first MAX_REPORTED_CHANGES

    def resource(self) -> Resource:
        """The ``mcp_server`` snapshot resource (never drift-hashed)."""
        digest = hashlib.sha256(self.name.encode())
        for tool in self.tools:
            digest.update(json.dumps(tool.to_dict(), sort_keys=True).encode())
        if self.error:
            digest.update(b"unreadable\0" + self.error.encode())
        if self.approval is not None:
            digest.update(json.dumps(self.approval.to_dict(), sort_keys=True).encode())
        serving = self.state in SERVING
        status = Status.OK if serving else Status.DISABLED if self.state == "pending" else Status.UNREADABLE
        warnings = self.warnings
        if serving and not self.tools and not (self.approval and self.approval.changes):
            warnings = ("connected; the server offers no tools", *warnings)
        if self.state == "changed":
            warnings = (_changed_warning(self.name, self.changes), *warnings)
        if serving and self.error:  # a failed reconnect or re-list: still serving
            warnings += (self.error,)
        if self.stderr_tail and self.state == "failed":
            warnings = (f"stderr (last lines): {self.stderr_tail}",)
        return Resource(
            Kind.MCP_SERVER,
            self.name,
            Scope.PROJECT,
            status,
            content_hash=digest.hexdigest(),
            error=self.error if status is not Status.OK else None,
            warnings=warnings,
            name=self.name,
            description=f"{self.transport} MCP server",
            tools=self.tools if status is Status.OK else (),
            approval=self.approval,
        )


def _changed_warning(name: str, changes: Sequence[ToolChange]) -> str:
    listed = ", ".join(f"{c.tool[:64]} ({c.change})" for c in changes[:10])
    more = f" and {len(changes) - 10} more" if len(changes) > 10 else ""
    return (
        f"tools changed since they were approved: {listed}{more}; changed and added tools are not offered until you"
        f" approve them again (the dashboard, or agentcontext mcp trust {name})"
    )


def approval_of(launch: Launch, trust: str, state: State, judged: Judged, since: str = "") -> McpApproval:
    """The approval part of a server's status (a snapshot's: credential-shaped parts masked and said to be), where
    it stands, and what changed ``since``."""
    if state == "pending":
        label = "pending"
    elif state == "changed":
        label = "changed"
    else:
        label = "auto" if trust == "auto" else "approved"
    changes = judged.changes[:MAX_REPORTED_CHANGES] if state == "changed" else ()
    tool_set = judged.tool_set if state == "changed" else ""
    spec = launch.spec
    runs = launch.runs(masked=True)
    return McpApproval(label, spec.config_path, launch.digest, spec.shown, changes, tool_set, runs, since)
