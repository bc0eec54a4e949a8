"""Dependencies point inward: the core imports nothing of the CLI, the web, the database or MCP."""

from __future__ import annotations

import ast
import functools
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import agentcontext

# ``terminal`` is a module, not a package: the text of the CLI and ``up`` for a terminal (Rich markup escaped);
# ``workspace_mcp.client`` is the MCP SDK's client of the workspace's servers, beside the core that judges them
ADAPTERS = {"cli", "mcp", "agent", "control", "dashboard", "server", "local", "web", "terminal", "workspace_mcp.client"}
FORBIDDEN = ["typer", "rich", "click", "starlette", "uvicorn", "mcp", "sqlalchemy", "alembic", "psycopg", "httpx"]


def core_modules() -> list[str]:
    """Every module of the core, its packages' modules included."""
    found = pkgutil.walk_packages(agentcontext.__path__, "agentcontext.")
    return [
        info.name
        for info in found
        if info.name != "agentcontext.__main__"
        and not any(info.name == f"agentcontext.{a}" or info.name.startswith(f"agentcontext.{a}.") for a in ADAPTERS)
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


def imported_by(package: str, *others: str) -> list[str]:
    """The modules of ``agentcontext.<other>`` that importing every module of ``agentcontext.<package>`` loads."""
    imports = (
        "import importlib, pkgutil\n"
        f"import agentcontext.{package} as package\n"
        f"for info in pkgutil.walk_packages(package.__path__, 'agentcontext.{package}.'):\n"
        "    if '.migrations' not in info.name: importlib.import_module(info.name)\n"
    )
    return _loaded(imports, others)


def test_the_control_plane_imports_neither_the_agent_nor_the_mcp_server() -> None:
    """The server and the workspace agent run on different machines: they share the core, not code."""
    assert imported_by("control", "agent", "mcp") == []


def test_the_dashboard_imports_only_the_control_plane_and_the_core() -> None:
    """The dashboard is part of the server: it may not reach the agent, the MCP server or the command line."""
    assert imported_by("dashboard", "agent", "mcp", "cli") == []


def test_up_runs_the_agent_and_the_server_as_processes_and_imports_neither() -> None:
    """``agentcontext up`` supervises them as children: it needs the database to provision, not their code."""
    assert imported_by("local", "agent", "mcp", "cli", "dashboard") == []


def imported_by_module(module: str, *others: str) -> list[str]:
    """The modules of ``agentcontext.<other>`` that importing ``module`` alone loads."""
    return _loaded(f"import importlib\nimportlib.import_module({module!r})\n", others)


def _loaded(imports: str, others: tuple[str, ...]) -> list[str]:
    """The modules of ``agentcontext.<other>`` loaded once ``imports`` has run, in a fresh interpreter."""
    return sorted(m for m in _loaded_modules(imports) if m.split(".")[:2] in [["agentcontext", o] for o in others])


@functools.cache
def _loaded_modules(imports: str) -> frozenset[str]:
    """Every module loaded once ``imports`` has run, in a fresh interpreter: once per worker, since importing a
    whole package costs seconds and several tests ask of the same one."""
    script = f"import json, sys\n{imports}print(json.dumps(sorted(sys.modules)))\n"
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    found: list[str] = json.loads(output)
    return frozenset(found)


def test_the_control_plane_and_the_dashboard_import_neither_the_other_nor_the_server_that_composes_them() -> None:
    """The dashboard is a client of the control plane's services; the API importing the dashboard back would be
    a cycle. ``agentcontext.server`` composes the two."""
    assert imported_by("control", "dashboard", "server") == []
    assert imported_by("dashboard", "server") == []
    assert "agentcontext.dashboard" in imported_by_module("agentcontext.server.app", "dashboard")


# what the dashboard may take from the control plane besides its services, the plane that holds them and the wire
DASHBOARD_MAY_USE = {
    ("identity", "UserPrincipal"),  # who is looking
    ("sessions", "PENDING_TTL"),  # how long its cookies live
    ("sessions", "SESSION_TTL"),
    ("edge", "SESSION_COOKIE"),  # the guard counts a session's event streams by it
    ("agent_link", "AgentReplyError"),  # an approval the agent refused, shown on the page
}


def test_the_dashboard_reaches_the_control_plane_through_its_services_only() -> None:
    """No SQL, no tables or rows, no sealed secrets in the dashboard: it calls services, which return values."""
    found = []
    for path in sorted((Path(agentcontext.__file__).parent / "dashboard").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(path.name, alias.name, "") for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                found += [(path.name, node.module, alias.name) for alias in node.names]
    assert [name for name in found if name[1].split(".")[0] == "sqlalchemy"] == []
    control = [
        (file, module.removeprefix("agentcontext.control."), name)
        for file, module, name in found
        if module.startswith("agentcontext.control.")
    ]
    assert control, "the dashboard shows the control plane's services"
    outside = [
        (file, module, name)
        for file, module, name in control
        if module not in ("plane", "wire")
        and not module.startswith("services.")
        and (module, name) not in DASHBOARD_MAY_USE
    ]
    assert outside == []


def test_the_agent_and_the_control_plane_share_the_sync_contract_and_nothing_else_of_each_other() -> None:
    """The push and heartbeat are one definition (``wire.sync``, in the core): the agent's pusher imports
    it without the control plane's database, and the control plane validates against it."""
    assert imported_by_module("agentcontext.agent.push", "control") == []
    assert "agentcontext.wire.sync" in imported_by_module("agentcontext.agent.push", "wire")
    assert "agentcontext.wire.sync" in imported_by_module("agentcontext.control.ingest", "wire")


def test_only_the_peers_and_the_settings_tell_one_agent_from_another() -> None:
    """Each agent's rules live in its peer: elsewhere no code compares a discovery mode or an agent's name."""
    root = Path(agentcontext.__file__).parent
    comparison = re.compile(
        r"""(discovery\s*(==|!=|\bin\b)|(==|!=)\s*["'](chain|roots|claude|codex|coder|gemini|opencode)["'])"""
    )
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).parts[0] not in ("peers", "settings")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if comparison.search(line)
    ]
    assert found == []
