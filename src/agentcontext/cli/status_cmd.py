"""``agentcontext status``: the control plane on one screen, from ``GET /api/v1/overview``.

Where to ask: ``--server``/``--token-file`` (or ``--token``, which shows in ``ps``), else
``AGENTCONTEXT_SERVER``/``AGENTCONTEXT_TOKEN``, else what ``agentcontext up`` stored (its
server and your user's token). The stored token is only ever sent to the stored server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from agentcontext.cli.common import STATUS_STYLE, fitted, print_json, stdout
from agentcontext.cli.tokens import TokenFileOption, resolve_token
from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.terminal import shown

if TYPE_CHECKING:
    from agentcontext.control.wire import OverviewAgent, OverviewMcp, OverviewResponse, OverviewWorkspace

ServerOption = typer.Option(
    None, "--server", help="Control plane URL (or AGENTCONTEXT_SERVER; default: `up`'s).", show_default=False
)
TokenOption = typer.Option(
    None,
    "--token",
    help="Your API token (or AGENTCONTEXT_TOKEN; default: `up`'s). Shows in `ps`: prefer --token-file.",
    show_default=False,
)


def credentials(server: str | None, token: str | None, environ: Mapping[str, str], state_file: Path) -> tuple[str, str]:
    """The server URL and token to use.

    Raises:
        ConfigError: none given and no usable state of ``agentcontext up``.
    """
    from agentcontext.local import state

    url = server or environ.get("AGENTCONTEXT_SERVER", "")
    secret = token or environ.get("AGENTCONTEXT_TOKEN", "")
    if url and secret:
        return url, secret
    local = state.load(state_file)
    url = url or local.server_url or ""
    if not secret and local.user_token and url == local.server_url:
        secret = local.user_token
    if not url:
        raise ConfigError(
            "no control plane given: pass --server URL, set AGENTCONTEXT_SERVER, or run `agentcontext up`"
        )
    if not secret:
        raise ConfigError(
            "no token given: pass --token-file FILE or set AGENTCONTEXT_TOKEN (`agentcontext tokens create` makes one)"
        )
    return url, secret


def status(
    server: str | None = ServerOption,
    token: str | None = TokenOption,
    token_file: Path | None = TokenFileOption,
    as_json: bool = typer.Option(False, "--json", help="Print the overview's JSON."),
) -> None:
    """Show the control plane on one screen: server, agents, snapshots, chats, problems.

    Without flags it asks the control plane `agentcontext up` runs, as your local user.
    Exits with 2 when the control plane cannot be reached or refuses the token.

    Examples:

        agentcontext status                    # the control plane `up` started
        agentcontext status --server https://ctx.example.com --token-file ~/.ctx-token --json
    """
    from agentcontext.control.client import ControlClient, answered
    from agentcontext.local.state import default_path

    given = resolve_token(token, token_file, "AGENTCONTEXT_TOKEN")
    url, secret = credentials(server, given, os.environ, default_path())
    try:
        with ControlClient(url, secret, timeout=10.0) as client:
            overview = client.overview()
    except UnavailableError as exc:
        if server or os.environ.get("AGENTCONTEXT_SERVER"):
            raise
        raise UnavailableError(f"{exc} (is `agentcontext up` running?)") from None
    if as_json:
        print_json(answered(overview))
    else:
        show(overview, url)


def show(overview: OverviewResponse, url: str) -> None:
    out = stdout()
    info = overview.server
    out.print(f"control plane [bold]{shown(url)}[/] · agentcontext {shown(info.version)} · {shown(info.database)}")
    out.print(
        fitted(_agents(overview.workspaces), out, wide=("workspace", "MCP servers"))
        if overview.workspaces
        else "No workspaces yet."
    )
    chats = overview.chats
    dirty = chats.out_of_date
    out.print(f"chats: {chats.total} ({f'[yellow]{dirty} out of date[/]' if dirty else 'none out of date'})")
    problems = overview.problems
    if not problems:
        out.print("[green]no problems[/]")
        return
    out.print(f"[bold]problems[/] ({len(problems)})")
    for problem in problems:
        out.print(f"  [red]![/] {shown(problem.where)}: {shown(problem.message)}")


def _agents(workspaces: list[OverviewWorkspace]) -> Table:
    table = Table(header_style="bold", box=None, pad_edge=False)
    for column in ("workspace", "agent", "state", "last seen", "snapshot", "resources", "MCP servers"):
        table.add_column(column, overflow="fold", no_wrap=column == "state")
    for workspace in workspaces:
        if not workspace.agents:
            table.add_row(shown(workspace.name), "-", "no agent", "", "", "", "")
        for agent in workspace.agents:
            table.add_row(shown(workspace.name), shown(agent.name), *_agent_cells(agent))
    return table


def _agent_cells(agent: OverviewAgent) -> tuple[str, ...]:
    state = "[green]online[/]" if agent.online else "[red]offline[/]"
    seen = (agent.last_seen_at or "never").replace("T", " ")[:19]
    snapshot = agent.snapshot
    if snapshot is None:
        return state, seen, "none yet", "", _mcp(agent.mcp)
    version = f"v{snapshot.version} {snapshot.aggregate_hash[:12]}"
    counts = ", ".join(
        f"{n} [{STATUS_STYLE.get(name, '')}]{name}[/]" if STATUS_STYLE.get(name) else f"{n} {shown(name)}"
        for name, n in snapshot.by_status.items()
    )
    return state, seen, version, counts or "none", _mcp(agent.mcp)


def _mcp(servers: list[OverviewMcp]) -> str:
    if not servers:
        return "none"
    ok = sum(1 for s in servers if s.status == "ok")
    failed = sum(1 for s in servers if s.status == "unreadable")
    other = len(servers) - ok - failed
    parts = [f"{ok} connected", f"[red]{failed} failed[/]" if failed else "", f"{other} pending" if other else ""]
    return ", ".join(part for part in parts if part)
