"""agentcontext: one context engine for every AI coding agent.

It finds what a repository tells its agents (AGENTS.md and its relatives, Agent Skills,
MCP server configs), snapshots it safely within budgets, and explains every file it
looked at::

    import agentcontext
    snapshot = agentcontext.scan("path/to/repo")
    for resource in snapshot.resources:
        print(resource.status, resource.path, resource.error or "")

    # what applies when the agent works on a file deep in a monorepo
    answer = agentcontext.applicable("path/to/repo", ["services/billing/api.py"])
    for applied in answer.files:
        print(applied.resource.path, applied.resource.load.type, applied.reason)
"""

from agentcontext.errors import (
    AgentContextError,
    ConfigError,
    FrontmatterError,
    McpConfigError,
    NotFoundError,
    ScanError,
    UnsafePathError,
)
from agentcontext.instructions.applied import Applicable
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.scan import Scanner, ScanResult, applicable, scan, scan_full
from agentcontext.settings.config import Config, load_config
from agentcontext.snapshot import Diff, Snapshot, diff

__version__ = "0.1.0"

__all__ = [
    "AgentContextError",
    "Applicable",
    "Config",
    "ConfigError",
    "Diff",
    "FrontmatterError",
    "Kind",
    "McpConfigError",
    "NotFoundError",
    "ProjectDoc",
    "Resource",
    "ScanError",
    "ScanResult",
    "Scanner",
    "Scope",
    "Snapshot",
    "Status",
    "Tool",
    "UnsafePathError",
    "__version__",
    "applicable",
    "diff",
    "load_config",
    "scan",
    "scan_full",
]
