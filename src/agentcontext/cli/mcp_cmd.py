"""``agentcontext mcp``: serve the project doc and skills to any MCP client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from agentcontext.cli.common import ConfigOption, JsonOption, ProfileOption, configure, print_json
from agentcontext.cli.serving import AllowHostOption, MaxConnectionsOption, edge
from agentcontext.cli.tokens import TokenFileOption, resolve_token
from agentcontext.errors import ConfigError
from agentcontext.mcp_config import ServerSpec
from agentcontext.scan import scan_full
from agentcontext.terminal import plain
from agentcontext.tool_pins import compare
from agentcontext.trust import TrustStore

app = typer.Typer(
    help="Serve AGENTS.md and skills over MCP (and, later, manage the workspace's MCP servers).",
    rich_markup_mode="markdown",
    invoke_without_command=True,
)


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--http wants HOST:PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


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
    host, port = _address(http)
    secret = resolve_token(token, token_file, "AGENTCONTEXT_MCP_TOKEN")
    serve_http(server, host, port, secret, edge(host, allow_hosts, max_connections))


@app.command("trust")
def trust(
    names: list[str] = typer.Argument(None, help="Servers to approve (default: every server of the work dir)."),
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="The workspace whose .mcp.json to approve."),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval instead."),
    show: bool = typer.Option(False, "--list", help="Only show each server, what it runs and where it stands."),
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Approve the work dir's MCP servers, each by its exact entry in `.mcp.json`.

    A repository's servers start only once you approve them (unless the operator set
    `[mcp] trust = "auto"`). The approval binds to the sha256 of each entry as written, so
    any change to an entry needs approval again; it is kept in your data dir, never in the
    repository. The tools a server lists first are pinned with it: when they change, the
    changed and added tools wait until you run this command again (it approves the tools
    the agent last reported), or press Approve in the dashboard.

    `--list` shows each server's state (`pending`, `approved`, `changed`), what it runs and
    what changed; with `--json`, as `[{"name", "state", "digest", "runs", "config",
    "changes": [{"tool", "change", "diff"}]}]`.
    """
    config = configure(work_dir, profile, config_file)
    specs = scan_full(work_dir, config).servers
    chosen = [s for s in specs if not names or s.name in names]
    unknown = sorted(set(names or []) - {s.name for s in specs})
    if unknown:
        raise ConfigError(f"no MCP server named {', '.join(unknown)} in the work dir's config")
    store = TrustStore.default()
    if show:
        _show([_standing(spec, store) for spec in specs], as_json)
        return
    (store.revoke if revoke else store.approve)(chosen)
    verb = "Revoked" if revoke else "Approved"
    for spec in chosen:
        typer.echo(
            f"{verb} {plain(spec.name)} ({spec.digest[:12]}) from {plain(spec.config_path)}: {plain(spec.shown)}"
        )


def _standing(spec: ServerSpec, store: TrustStore) -> dict[str, Any]:
    record = store.record(spec)
    changes: list[dict[str, str]] = []
    if record is not None and record.seen is not None and record.tools is not None:
        changes = [c.to_dict() for c in compare(record.tools, list(record.seen.values())).changes]
    state = "changed" if changes else "approved" if record is not None and record.approved else "pending"
    return {
        "name": spec.name,
        "state": state,
        "digest": spec.digest,
        "runs": spec.shown,
        "config": spec.config_path,
        "changes": changes,
    }


def _show(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print_json(rows)
        return
    for row in rows:
        typer.echo(
            f"{plain(row['name'])}\t{row['state']}\t{row['digest'][:12]}\t{plain(row['runs'])}\t{plain(row['config'])}"
        )
        for change in row["changes"]:
            typer.echo(f"  {plain(change['tool'])}: {change['change']}")
            typer.echo("\n".join("    " + plain(line) for line in change["diff"].split("\n")))
