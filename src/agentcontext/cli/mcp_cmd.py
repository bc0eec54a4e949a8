"""``agentcontext mcp``: serve the project doc and skills to any MCP client."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from agentcontext.cli.common import ConfigOption, ProfileOption, configure
from agentcontext.errors import ConfigError
from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.tools import Limits
from agentcontext.mcp.transports import run_stdio, serve_http
from agentcontext.mcp.workspace import Workspace
from agentcontext.scan import scan_full
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
        None, "--token", envvar="AGENTCONTEXT_MCP_TOKEN", help="Bearer token HTTP clients must send."
    ),
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
    `--token` (or `AGENTCONTEXT_MCP_TOKEN`), and requests without it get 401.
    """
    if ctx.invoked_subcommand is not None:
        return
    root = multi_project or work_dir
    config = None if multi_project else configure(root, profile, config_file)
    workspace = Workspace(os.fspath(root), multi_project=multi_project is not None, config=config)
    settings = config.mcp_server if config else configure(root, profile, config_file).mcp_server
    server = ContextServer(workspace, Limits(settings.catalog_chars, settings.max_file_lines, settings.max_file_bytes))
    if http is None:
        run_stdio(server)
        return
    host, port = _address(http)
    serve_http(server, host, port, token)


@app.command("trust")
def trust(
    names: list[str] = typer.Argument(None, help="Servers to approve (default: every server of the work dir)."),
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="The workspace whose .mcp.json to approve."),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval instead."),
    show: bool = typer.Option(False, "--list", help="Only show each server and whether it is approved."),
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Approve the exact configuration of the work dir's MCP servers (for `[mcp] trust = "approve"`).

    The approval is bound to the sha256 of each entry as written: any change to an entry
    needs approval again.
    """
    config = configure(work_dir, profile, config_file)
    specs = scan_full(work_dir, config).servers
    chosen = [s for s in specs if not names or s.name in names]
    unknown = sorted(set(names or []) - {s.name for s in specs})
    if unknown:
        raise ConfigError(f"no MCP server named {', '.join(unknown)} in the work dir's config")
    store = TrustStore.default()
    if show:
        for spec in specs:
            state = "approved" if store.approved(spec) else "not approved"
            typer.echo(f"{spec.name}\t{state}\t{spec.digest[:12]}\t{spec.config_path}")
        return
    (store.revoke if revoke else store.approve)(chosen)
    verb = "Revoked" if revoke else "Approved"
    for spec in chosen:
        typer.echo(f"{verb} {spec.name} ({spec.digest[:12]}) from {spec.config_path}")
