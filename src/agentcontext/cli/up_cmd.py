"""``agentcontext up``: the control plane and an agent for this directory, in one command."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentcontext.cli.common import DirArgument, TrustOption, configure, stderr, stdout
from agentcontext.cli.tokens import warn_password_in_argv
from agentcontext.errors import ConfigError


def up(
    work_dir: Path = DirArgument,
    listen: str | None = typer.Option(
        None,
        "--listen",
        help="HOST:PORT of the control plane and dashboard; it must be free. Not used when the database's control"
        " plane already runs: `up` joins it. Default: 127.0.0.1:8765, else any free port.",
        show_default=False,
    ),
    agent_listen: str | None = typer.Option(
        None, "--agent-listen", help="HOST:PORT of the agent's API. Default: a free loopback port.", show_default=False
    ),
    db: str | None = typer.Option(
        None,
        "--db",
        envvar="AGENTCONTEXT_DB",
        help="Database URL. Default: control.db (SQLite) in the data dir. A password shows in `ps`: prefer"
        " AGENTCONTEXT_DB.",
        show_default=False,
        callback=warn_password_in_argv,
    ),
    mcp_trust: str | None = TrustOption,
) -> None:
    """Run the control plane and a workspace agent for DIR; print the dashboard's login link; Ctrl-C stops both.

    The first run creates your user (named after your OS user), a workspace named after
    DIR's folder and the agent's token, and keeps the tokens in `local.json` in the data dir
    (mode 0600); later runs reuse them, so `agentcontext status` works without flags. The
    status (agent online, snapshot, resources, MCP servers) updates live; the processes'
    logs are in `logs/` in the data dir. While an `up` of DIR runs, another is refused
    (exit 2), naming it.

    The repository's MCP servers (`.mcp.json`) run only once you approve them: `up` lists
    those not approved yet with what they would run and, on a terminal, asks; otherwise it
    prints the `agentcontext mcp trust` command that approves them (the dashboard has an
    Approve button too). `--mcp-trust auto` starts them unasked.

    Examples:

        agentcontext up                     # this folder; SQLite in the data dir
        agentcontext up ~/src/app --listen 127.0.0.1:9000
    """
    from agentcontext.control.db import default_url
    from agentcontext.local import approval, stack, state
    from agentcontext.workspace_mcp.trust import TrustStore, data_dir

    resolved = work_dir.expanduser().resolve()
    if not resolved.is_dir():
        raise ConfigError(f"the work dir {work_dir} is not a directory")
    claimed = stack.claim(resolved, data_dir() / "run")  # first: a folder whose agent runs asks nothing
    store = TrustStore.default()
    waiting = approval.pending(resolved, configure(resolved, None, None, mcp_trust), store)
    if waiting:
        interactive = sys.stdin.isatty() and sys.stderr.isatty()
        approval.ask(waiting, resolved, store, stderr(), _confirm if interactive else None)
    options = stack.UpOptions(
        work_dir=resolved,
        db_url=db or default_url(),
        state_file=state.default_path(),
        logs=data_dir() / "logs",
        listen=listen,
        agent_listen=agent_listen,
        mcp_trust=mcp_trust,
    )
    code = stack.run(options, stdout(), stderr(), claimed)
    sys.stdout.flush()
    raise typer.Exit(code)


def _confirm(question: str) -> bool:
    return typer.confirm(question, default=False, err=True)
