"""What ``agentcontext up`` shows while it runs: a live panel on a terminal, one plain line per change otherwise."""

from __future__ import annotations

import datetime as dt

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentcontext import terminal
from agentcontext.local.probe import StackStatus
from agentcontext.snapshot import summary_text

_STYLE = {
    "up": "green",
    "online": "green",
    "connected": "green",
    "ok": "green",
    "starting": "yellow",
    "connecting": "yellow",
    "down": "red",
    "no database": "red",
    "serving": "yellow",
    "offline": "red",
    "failed": "red",
    "changed": "red",
    "pending": "yellow",
    "disabled": "bright_black",
}


def _styled(word: str) -> str:
    style = _STYLE.get(word, "")
    return f"[{style}]{word}[/]" if style else terminal.shown(word)


def clock(iso: str) -> str:
    """A control plane time as a local wall-clock time."""
    try:
        return dt.datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return iso


def snapshot_text(status: StackStatus) -> str:
    if status.version is None:
        return "not yet"
    if status.version == 0:
        return "v0 (waiting for the workspace to be ready)"
    return f"v{status.version} {status.aggregate_hash[:12]}"


def resources_text(status: StackStatus) -> str:
    return summary_text(dict(status.statuses))


def mcp_text(status: StackStatus) -> str:
    if not status.mcp:
        return "none configured"
    states = ("connected", "changed", "connecting", "failed", "pending")
    return ", ".join(f"{status.mcp_count(s)} {s}" for s in states if status.mcp_count(s))


def plain(status: StackStatus) -> str:
    """One line for logs and pipes; printed again only when it changes."""
    parts = [
        f"server {status.server}",
        f"agent {status.agent}",
        f"snapshot {snapshot_text(status)}",
        f"resources {resources_text(status)}",
        f"MCP {mcp_text(status)}",
    ]
    failed = [f"{s.name}: {s.error}" for s in status.mcp if s.state in ("failed", "pending")]
    return " · ".join(parts) + "".join(f"\n  MCP server {terminal.plain(line)}" for line in failed)


def panel(status: StackStatus, dashboard: str, work_dir: str, note: str = "") -> RenderableType:
    """The live view: one row per part of the stack, failed MCP servers with their error."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    database = f" ({status.database})" if status.database else ""
    table.add_row("control plane", f"{_styled(status.server)}{database} · {terminal.shown(dashboard)}")
    seen = f" · last heard from {clock(status.last_seen)}" if status.last_seen else ""
    table.add_row("agent", f"{_styled(status.agent)} · {terminal.shown(work_dir)}{seen}")
    table.add_row("snapshot", snapshot_text(status))
    table.add_row("resources", ", ".join(f"{n} {_styled(name)}" for name, n in status.statuses) or "none")
    table.add_row("MCP servers", _mcp_cells(status))
    if status.snapshot_error:
        table.add_row("[red]error[/]", Text(terminal.plain(status.snapshot_error)))
    footer = Text(note or "Ctrl-C stops everything.", style="bright_black")
    return Group(table, footer)


def _mcp_cells(status: StackStatus) -> str:
    if not status.mcp:
        return "none configured"
    lines = [f"{_styled(server.state)} {terminal.shown(server.name)}" for server in status.mcp]
    lines += [
        f"  [red]{terminal.shown(server.name)}:[/] {terminal.shown(server.error)}"
        for server in status.mcp
        if server.error
    ]
    return "\n".join(lines)
