"""``agentcontext mcp``: serve the project doc and skills to any MCP client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from agentcontext.cli.common import ConfigOption, JsonOption, ProfileOption, configure, print_json
from agentcontext.cli.serving import AllowHostOption, MaxConnectionsOption, edge
from agentcontext.cli.tokens import TokenFileOption, resolve_token
from agentcontext.errors import ConfigError
from agentcontext.terminal import plain
from agentcontext.web.hosts import listen_address
from agentcontext.workspace_mcp.approvals import Standing, bind, launches, standing
from agentcontext.workspace_mcp.trust import TrustStore

app = typer.Typer(
    help="Serve AGENTS.md and skills over MCP; `mcp trust` approves the workspace's own MCP servers.",
    rich_markup_mode="markdown",
    invoke_without_command=True,
)


@app.callback()
def serve(
    ctx: typer.Context,
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="The project to serve (default: here)."),
    http: str | None = typer.Option(None, "--http", help="Serve streamable HTTP at HOST:PORT/mcp instead of stdio."),
    token: str | None = typer.Option(
        None,
        "--token",
        help="Bearer token HTTP clients must send. Shows in `ps`: prefer --token-file or AGENTCONTEXT_MCP_TOKEN.",
        show_default=False,
    ),
    token_file: Path | None = TokenFileOption,
    allow_hosts: list[str] = AllowHostOption,
    max_connections: int | None = MaxConnectionsOption,
    multi_project: Path | None = typer.Option(
        None, "--multi-project", help="Serve every project folder under this access root; each session picks one."
    ),
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Serve the project's AGENTS.md chain and skills to an MCP client.

    stdio by default: add `agentcontext mcp` to your client's MCP config. Tools:
    `get_project_doc`, `skills_list`, `skills_read`, `get_agent_brief`, `get_instructions_for`
    (the nested instructions of the paths the model is about to work on), and `list_projects`,
    `set_project_root` with `--multi-project`. Skills are also resources (`skill://...`),
    prompts, and the `io.modelcontextprotocol/skills` extension.

    `--http 127.0.0.1:8765` serves streamable HTTP at `/mcp`; a non-loopback address needs
    a token (`--token-file FILE` or `AGENTCONTEXT_MCP_TOKEN`), and requests without it get 401.
    It answers only to loopback names, its listen address and `--allow-host` names, and
    refuses requests from other sites' web pages.
    """
    if ctx.invoked_subcommand is not None:
        return
    from agentcontext.mcp.server import ContextServer  # the MCP SDK and the server, only to serve
    from agentcontext.mcp.tools import Limits
    from agentcontext.mcp.transports import run_stdio, serve_http
    from agentcontext.mcp.workspace import Workspace

    root = multi_project or work_dir
    config = None if multi_project else configure(root, profile, config_file)
    workspace = Workspace(os.fspath(root), multi_project=multi_project is not None, config=config)
    settings = config.mcp_server if config else configure(root, profile, config_file).mcp_server
    server = ContextServer(workspace, Limits(settings.catalog_chars, settings.max_file_lines, settings.max_file_bytes))
    if http is None:
        run_stdio(server)
        return
    host, port = listen_address(http, "--http")
    secret = resolve_token(token, token_file, "AGENTCONTEXT_MCP_TOKEN")
    serve_http(server, host, port, secret, edge(host, allow_hosts, max_connections))


@app.command("trust")
def trust(
    names: list[str] = typer.Argument(None, help="Servers to approve (default: every server of the work dir)."),
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="The workspace whose .mcp.json to approve."),
    digests: list[str] = typer.Option(
        None,
        "--digest",
        help="Approve only if the server still runs what this digest names (as `--list`, `up`, `status` and the"
        " agent print it); once per server.",
        show_default=False,
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval instead."),
    show: bool = typer.Option(False, "--list", help="Only show each server, all it runs and where it stands."),
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Approve the work dir's MCP servers, each by exactly what it runs.

    A repository's servers start only once you approve them (unless the operator set
    `[mcp] trust = "auto"`). An approval binds to a digest of everything that decides what
    runs: the entry as written (`args`, `env`, `cwd`, `url`, `headers`), the program as
    resolved on the `PATH` the server gets, and the content of the repository's own programs
    and scripts it runs. A change to any of them needs approval again, and the server shows
    what changed. Approvals live in your data dir, never in the repository.

    On a terminal this shows each server whole and asks. Elsewhere, pass the digest you were
    shown: `agentcontext mcp trust NAME --digest D` approves only if NAME still runs what
    D names (`up`, `status` and the agent print that command). The tools a server lists
    first are pinned with it: when they change, the changed and added tools wait until you
    approve again here or in the dashboard.

    `--list` shows each server's state (`pending`, `approved`, `changed`), all it runs and
    what changed; with `--json`, as `[{"name", "state", "digest", "runs", "config",
    "since", "changes": [{"tool", "change", "diff"}]}]`, `runs` as in a snapshot's approval.
    """
    config = configure(work_dir, profile, config_file)
    found = launches(work_dir, config)
    chosen = [launch for launch in found if not names or launch.name in names]
    unknown = sorted(set(names or []) - {launch.name for launch in found})
    if unknown:
        raise ConfigError(f"no MCP server named {', '.join(unknown)} in the work dir's config")
    store = TrustStore.default()
    if show:
        _show([standing(launch, store) for launch in found], as_json)
        return
    if revoke:
        store.revoke(chosen)
        for launch in chosen:
            typer.echo(f"Revoked {plain(launch.name)} from {plain(launch.config_path)}")
        return
    if digests:
        bind(chosen, digests)
    elif not _ask([standing(launch, store) for launch in chosen]):
        return
    store.approve(chosen)
    for launch in chosen:
        typer.echo(f"Approved {plain(launch.name)} ({launch.digest[:12]}) from {plain(launch.config_path)}")


def _ask(standings: list[Standing]) -> bool:
    """Show what would be approved; on a terminal ask, elsewhere refuse (there is no one to have seen it)."""
    for item in standings:
        typer.echo(f"{plain(item.launch.name)} ({item.state}) from {plain(item.launch.config_path)}:")
        typer.echo("\n".join(f"  {line}" for line in item.lines()))
    if not standings:
        typer.echo("No MCP servers to approve.")
        return False
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ConfigError(
            "not approved: nobody could be asked here. To approve what is shown above, run this on a terminal,"
            " or pass each server's digest: --digest DIGEST"
        )
    noun = "this server" if len(standings) == 1 else f"these {len(standings)} servers"
    if typer.confirm(f"Approve {noun}, to run as shown?", default=False):
        return True
    typer.echo("Not approved.")
    return False


def _row(item: Standing) -> dict[str, Any]:
    launch = item.launch
    return {
        "name": launch.name,
        "state": item.state,
        "digest": launch.digest,
        "runs": launch.runs().to_dict(),
        "config": launch.config_path,
        "since": item.since,
        "changes": [c.to_dict() for c in item.changes],
    }


def _show(standings: list[Standing], as_json: bool) -> None:
    if as_json:
        print_json([_row(item) for item in standings])
        return
    for item in standings:
        typer.echo(f"{plain(item.launch.name)}\t{item.state}\t{plain(item.launch.config_path)}")
        typer.echo("\n".join(f"  {line}" for line in item.lines()))
