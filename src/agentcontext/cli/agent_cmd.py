"""``agentcontext agent``: the workspace agent, keeping the context snapshot live."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import typer

from agentcontext.agent import token_file as token_file_of_run
from agentcontext.audit.findings import printable
from agentcontext.cli.common import ConfigOption, ProfileOption, TrustOption, configure
from agentcontext.cli.serving import AllowHostOption, MaxConnectionsOption, edge
from agentcontext.cli.tokens import TokenFileOption, resolve_token
from agentcontext.terminal import log_to_stderr
from agentcontext.web.hosts import listen_address

DEFAULT_LISTEN = "127.0.0.1:8766"  # agentcontext.agent.service.DEFAULT_LISTEN (a test keeps them equal)


def agent(
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="The workspace's working directory."),
    listen: str = typer.Option(DEFAULT_LISTEN, "--listen", help="HOST:PORT of the HTTP API (/api/v0/...)."),
    token: str | None = typer.Option(
        None,
        "--token",
        help="The agent's token: its HTTP API requires it, and it authenticates pushes to the control plane"
        " (`agentcontext workspace-agents create` prints one). Shows in `ps`: prefer --token-file or"
        " AGENTCONTEXT_AGENT_TOKEN. None given: one is made and kept in the data dir.",
        show_default=False,
    ),
    token_file: Path | None = TokenFileOption,
    startup: str | None = typer.Option(
        None, "--startup", help="Shell command to run first; the workspace is ready when it ends."
    ),
    wait_ready: bool = typer.Option(False, "--wait-ready", help="Publish nothing until POST /api/v0/ready."),
    control_plane: str | None = typer.Option(
        None,
        "--control-plane",
        envvar="AGENTCONTEXT_CONTROL_PLANE",
        help="Control plane URL (`agentcontext server`) to push snapshots to; needs --token.",
    ),
    advertise_url: str | None = typer.Option(
        None,
        "--advertise-url",
        envvar="AGENTCONTEXT_AGENT_URL",
        help="URL the control plane uses to reach this agent's API (default: the --listen address).",
    ),
    heartbeat: float = typer.Option(
        15.0,
        "--heartbeat",
        min=0.05,
        hidden=True,
        help="Seconds between heartbeats to the control plane (for tests of online and offline).",
    ),
    allow_hosts: list[str] = AllowHostOption,
    max_connections: int | None = MaxConnectionsOption,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the agent does."),
    mcp_trust: str | None = TrustOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Run the workspace agent: watch the work dir, serve its live snapshot, proxy its MCP servers.

    It publishes nothing until the workspace is ready (`--startup` finished, `--wait-ready`
    and `POST /api/v0/ready`, or at once). Edits to AGENTS.md, skills and `.mcp.json` publish
    a new snapshot within the debounce (`[agent] debounce_ms`, 250 ms). The servers of the
    work dir's `.mcp.json` that you approved (`agentcontext mcp trust`, the dashboard) are
    connected and their tools served as `server__tool` at `/api/v0/mcp/tools` and
    `/api/v0/mcp/call-tool`; the others wait, listed as pending with what they would run.
    A server whose tools change after approval keeps only its unchanged tools until you
    approve the new ones. With `--control-plane URL --token TOKEN`,
    every snapshot is pushed there, and the control plane calls back at --advertise-url for
    skill files, plan files and MCP tool calls.

    The API always needs the token. Without one, a new token is made for the run and kept in
    `agent-tokens/PORT` in the data dir (mode 0600); the agent says where. It answers only to
    loopback names, its listen address, the --advertise-url host and --allow-host names.

    Examples:

        agentcontext agent -w ~/src/app        # its API on 127.0.0.1:8766
        AGENTCONTEXT_AGENT_TOKEN=$(cat token) agentcontext agent -w . --control-plane http://ctx:8765
    """
    from agentcontext.agent.service import AgentOptions, check_options, run  # the server, only to run it
    from agentcontext.web.serving import bind

    log_to_stderr(verbose)
    host, port = listen_address(listen, "--listen")
    secret = resolve_token(token, token_file, "AGENTCONTEXT_AGENT_TOKEN")
    served = edge(host, allow_hosts, max_connections, advertised=[advertise_url] if advertise_url else [])
    config = configure(work_dir, profile, config_file, mcp_trust)
    for warning in config.warnings:  # the repository's config asked for something it may not have
        typer.echo(f"agentcontext agent: config: {printable(warning)}", err=True)
    options = AgentOptions(host, port, secret, startup, wait_ready, control_plane, advertise_url, heartbeat, served)
    check_options(options)
    listening = bind(host, port)  # first: a taken port must not overwrite the token file of the agent that has it
    options = replace(options, listening=listening)
    if secret is None:
        secret, path = token_file_of_run.issue(listening.getsockname()[1])
        _say_token_made(secret, path)
        options = replace(options, token=secret)
    run(os.fspath(work_dir), config, options, dict(os.environ))


def _say_token_made(token: str, path: Path) -> None:
    """Where the token made for this run is and how a client uses it; the token itself only on a terminal
    (a log that stderr goes to may be read by others; the file is the user's alone)."""
    typer.echo(f"agentcontext: no token given, so this run made one, kept in {path} (mode 0600)", err=True)
    typer.echo(f"  clients send it as: Authorization: Bearer $(cat {path})", err=True)
    if sys.stderr.isatty():
        typer.echo(f"  token (shown once here): {token}", err=True)
