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
from agentcontext.workspace_mcp.approvals import ConfigProblem, Standing, bind, configured, standing
from agentcontext.workspace_mcp.launch import Launch
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
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval instead (not with --list)."),
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
    With `--json`, an approval prints `{"approved": [{"name", "digest", "config"}], "problems"}`
    (what it shows to ask goes to stderr) and `--revoke` prints `{"revoked": [...],
    "not_approved": [...], "problems"}`; revoking a server that was not approved says so.

    A config file that could not be read (`invalid`, `unreadable`, `oversize`) and an entry
    that cannot be used are named on stderr, one line each (and with `--json` in `problems`:
    `[{"config", "status", "message"}]`, `status` the file's as `scan` reports it, or
    `warning`); the command then exits with 1, after doing the rest.

    Examples:

        agentcontext mcp trust --list          # what would run, approved or not
        agentcontext mcp trust time             # shows it whole, then asks
        agentcontext mcp trust time --revoke
    """
    if show and revoke:
        raise ConfigError("--list only shows and --revoke withdraws: give one of them, not both")
    config = configure(work_dir, profile, config_file)
    found = configured(work_dir, config)
    for problem in found.problems:
        typer.echo(_problem_line(problem), err=True)
    chosen = [launch for launch in found.launches if not names or launch.name in names]
    unknown = sorted(set(names or []) - {launch.name for launch in found.launches})
    if unknown:
        raise ConfigError(f"no MCP server named {', '.join(unknown)} in the work dir's config")
    store = TrustStore.default()
    problems = [problem.to_dict() for problem in found.problems]
    if show:
        _show([standing(launch, store) for launch in found.launches], as_json)
    elif revoke:
        withdrawn = store.revoke(chosen)
        _print_revoked(chosen, withdrawn, problems, as_json)
    else:
        if digests:
            bind(chosen, digests)
        elif not _ask([standing(launch, store) for launch in chosen], as_json, unread=bool(found.problems)):
            chosen = []
        if chosen:
            store.approve(chosen)
        _print_approved(chosen, problems, as_json)
    if found.problems:
        raise typer.Exit(1)


def _problem_line(problem: ConfigProblem) -> str:
    if problem.status == "warning":  # the file was read; one of its entries is not used
        return f"agentcontext: {plain(problem.config)}: {plain(problem.message)}"
    said = f"{plain(problem.config)} is {problem.status}: {plain(problem.message)}"
    return f"agentcontext: {said} (none of its servers can be approved)"


def _launch_row(launch: Launch) -> dict[str, str]:
    return {"name": launch.name, "digest": launch.digest, "config": launch.config_path}


def _print_approved(approved: list[Launch], problems: list[dict[str, str]], as_json: bool) -> None:
    if as_json:
        print_json({"approved": [_launch_row(launch) for launch in approved], "problems": problems})
        return
    for launch in approved:
        typer.echo(f"Approved {plain(launch.name)} ({launch.digest[:12]}) from {plain(launch.config_path)}")


def _print_revoked(
    chosen: list[Launch], withdrawn: list[Launch], problems: list[dict[str, str]], as_json: bool
) -> None:
    had = {(launch.config_path, launch.name) for launch in withdrawn}
    idle = [launch for launch in chosen if (launch.config_path, launch.name) not in had]
    if as_json:
        print_json(
            {
                "revoked": [_launch_row(launch) for launch in withdrawn],
                "not_approved": [_launch_row(launch) for launch in idle],
                "problems": problems,
            }
        )
        return
    for launch in chosen:
        name, where = plain(launch.name), plain(launch.config_path)
        if (launch.config_path, launch.name) in had:
            typer.echo(f"Revoked {name} from {where}")
        else:
            typer.echo(f"{name} from {where} was not approved: nothing to revoke")


def _ask(standings: list[Standing], as_json: bool, *, unread: bool) -> bool:
    """Show what would be approved; on a terminal ask, elsewhere refuse (there is no one to have seen it).

    With ``as_json`` all of it goes to stderr, keeping stdout for the JSON of what was approved.
    """
    for item in standings:
        typer.echo(f"{plain(item.launch.name)} ({item.state}) from {plain(item.launch.config_path)}:", err=as_json)
        typer.echo("\n".join(f"  {line}" for line in item.lines()), err=as_json)
    if not standings:
        said = " (and some of the MCP config could not be used: see above)" if unread else ""
        typer.echo(f"No MCP servers to approve{said}.", err=as_json)
        return False
    if not (sys.stdin.isatty() and (sys.stderr if as_json else sys.stdout).isatty()):
        raise ConfigError(
            "not approved: nobody could be asked here. To approve what is shown above, run this on a terminal,"
            " or pass each server's digest: --digest DIGEST"
        )
    noun = "this server" if len(standings) == 1 else f"these {len(standings)} servers"
    if typer.confirm(f"Approve {noun}, to run as shown?", default=False, err=as_json):
        return True
    typer.echo("Not approved.", err=as_json)
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
