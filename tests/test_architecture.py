"""Dependencies point inward: the core imports nothing of the CLI, the web, the database or MCP."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import agentcontext

ADAPTER_PACKAGES = {"cli", "mcp", "agent", "control", "web"}
FORBIDDEN = ["typer", "rich", "click", "starlette", "uvicorn", "mcp", "sqlalchemy", "alembic", "psycopg", "httpx"]


def core_modules() -> list[str]:
    return [
        f"agentcontext.{info.name}"
        for info in pkgutil.iter_modules(agentcontext.__path__)
        if info.name not in ADAPTER_PACKAGES and info.name != "__main__"
    ]


def test_the_core_imports_no_adapter_library() -> None:
    modules = core_modules()
    assert "agentcontext.scan" in modules and "agentcontext.snapshot" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps([m for m in {FORBIDDEN!r} if m in sys.modules]))\n"
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(output) == []


def test_the_front_door_exports_a_sorted_complete_all() -> None:
    names = agentcontext.__all__
    assert names == sorted(names)
    assert all(hasattr(agentcontext, name) for name in names)
    assert {"scan", "Snapshot", "Resource", "AgentContextError"} <= set(names)


def test_the_control_plane_imports_neither_the_agent_nor_the_mcp_server() -> None:
    """The server and the workspace agent run on different machines: they share the core, not code."""
    script = (
        "import importlib, json, pkgutil, sys\n"
        "import agentcontext.control as control\n"
        "for info in pkgutil.walk_packages(control.__path__, 'agentcontext.control.'):\n"
        "    if '.migrations' not in info.name: importlib.import_module(info.name)\n"
        "other = [['agentcontext', 'agent'], ['agentcontext', 'mcp']]\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[:2] in other)))\n"
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(output) == []
