"""The ``agentcontext`` command. One module per command group; errors become exit codes here.

Exit codes: 0 success; 1 the command ran and found problems (a skill failed validation,
``scan --check`` saw a resource that is not ok); 2 the command could not run (bad usage,
unusable configuration, missing work dir); 141 the output's reader went away (``| head``).
"""

from __future__ import annotations

import errno
import sys

import typer

from agentcontext import __version__
from agentcontext.cli import (
    agent_cmd,
    agents_cmd,
    audit_cmd,
    chats_cmd,
    config_cmd,
    mcp_cmd,
    scan_cmd,
    server_cmd,
    skills_cmd,
    status_cmd,
    up_cmd,
)
from agentcontext.cli.common import output_gone
from agentcontext.errors import AgentContextError
from agentcontext.terminal import plain_lines

app = typer.Typer(
    name="agentcontext",
    help=(
        "One context engine for every AI coding agent.\n\n"
        "Finds what a repository tells its agents (AGENTS.md and its relatives, Agent Skills, "
        "MCP server configs), snapshots it within budgets, and explains every file it looked at.\n\n"
        "Start with `agentcontext scan` in a repository, then `agentcontext explain FILE` for any "
        "file that is not used the way you expect."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)
scan_cmd.register(app)
app.command("audit")(audit_cmd.audit)
app.command("agent")(agent_cmd.agent)
app.add_typer(skills_cmd.app, name="skills")
app.add_typer(config_cmd.app, name="config")
app.add_typer(mcp_cmd.app, name="mcp")
app.command("server")(server_cmd.server)
app.add_typer(server_cmd.db_app, name="db")
app.add_typer(server_cmd.users_app, name="users")
app.add_typer(server_cmd.tokens_app, name="tokens")
app.command("agents", cls=agents_cmd.AgentsView)(agents_cmd.show)
app.add_typer(server_cmd.workspace_agents_app, name=agents_cmd.MOVED_TO)
app.add_typer(chats_cmd.app, name="chats")
app.command("up")(up_cmd.up)
app.command("status")(status_cmd.status)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcontext {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """agentcontext: discover, snapshot, explain and serve agent context."""


def main() -> None:
    """Console entry point: our errors become a one-line message and exit code 2; a reader of the output that
    went away (``| head``) exits 141, as a program the pipe's signal ends; a full disk is one line, exit 2."""
    try:
        app()
    except AgentContextError as exc:
        typer.echo(f"agentcontext: error: {plain_lines(exc)}", err=True)  # it may quote a server or a file
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(output_gone())
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        typer.echo(f"agentcontext: error: cannot write: {exc.strerror}", err=True)
        sys.exit(2)
