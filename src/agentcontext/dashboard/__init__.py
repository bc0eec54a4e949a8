"""The dashboard: server-rendered pages over the control plane, behind a login with an API token.

It reads what the API reads, through the same access rules, and shows it to a person:
workspaces and agents, each snapshot's inventory, skills, instruction files, MCP servers,
and each chat's pin, out-of-date mark, prompt and tools, kept live by the event streams.
It imports the control plane and the core, never the workspace agent or the MCP server.
"""

from agentcontext.dashboard.routes import install

__all__ = ["install"]
