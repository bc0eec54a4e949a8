"""``agentcontext server`` and the administrative commands that work on its database directly.

``users create``, ``tokens create``, ``agents create`` and ``db upgrade`` open the database
named by ``--db`` (default: the server's default SQLite file, or ``AGENTCONTEXT_DB``),
apply migrations if needed, and print the new token once (``--json`` for scripts).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os

import typer
from sqlalchemy.orm import Session

from agentcontext.cli.common import stderr, stdout
from agentcontext.control import identity, migrate
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.db import Database, default_url
from agentcontext.control.plane import ControlSettings
from agentcontext.control.service import DEFAULT_LISTEN, ServerOptions, prepare, run
from agentcontext.errors import ConfigError

DbOption = typer.Option(
    None,
    "--db",
    envvar="AGENTCONTEXT_DB",
    help="Database URL: sqlite:///PATH or postgresql://USER:PASSWORD@HOST/NAME. Default: control.db in the data dir.",
    show_default=False,
)
JsonFlag = typer.Option(False, "--json", help="Print JSON for scripts.")


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--listen wants HOST:PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _open(db_url: str | None) -> Database:
    db = Database(db_url or default_url())
    migrate.upgrade(db)
    return db


def _print_issued(kind: str, issued: identity.Issued, as_json: bool, extra: dict[str, str] | None = None) -> None:
    if as_json:
        typer.echo(json.dumps({"id": issued.id, "name": issued.name, "token": issued.token, **(extra or {})}))
        return
    out = stdout()
    out.print(f"Created {kind} [bold]{issued.name}[/bold] ({issued.id}).")
    out.print("Token (shown once, keep it safe):")
    typer.echo(issued.token)


def server(
    db: str | None = DbOption,
    listen: str = typer.Option(DEFAULT_LISTEN, "--listen", help="HOST:PORT to serve the API on."),
    disable_sync: bool = typer.Option(
        False,
        "--disable-context-sync",
        envvar="AGENTCONTEXT_DISABLE_CONTEXT_SYNC",
        help="Answer agents' pushes with 501 so they stop (the deployment kill switch).",
    ),
    chat_suffix: str = typer.Option(
        DEFAULT_SUFFIX, "--chat-suffix", help="Agents whose name ends with this serve the workspace's chats."
    ),
    offline_after: float = typer.Option(
        45.0, "--offline-after", help="Seconds without a push or heartbeat before an agent counts as offline."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the server does."),
) -> None:
    """Run the control plane: agents push snapshots to it; chats pin them, refresh, and run tools.

    The first start on an empty database creates the user `admin` and prints its API token
    once. Give agents tokens with `agentcontext agents create`, users with `agentcontext
    users create`. Several servers may share one PostgreSQL database.
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")
    host, port = _address(listen)
    url = db or default_url()
    err = stderr()
    with err.status("Opening the database and applying migrations …") if os.isatty(2) else contextlib.nullcontext():
        database, admin = prepare(url)
    if admin is not None:
        err.print("First start: created the administrator [bold]admin[/bold]. Its API token (shown once):")
        typer.echo(admin.token, err=True)
    settings = ControlSettings(chat_suffix=chat_suffix, sync_enabled=not disable_sync, offline_after=offline_after)

    def ready(address: str) -> None:
        err.print(f"agentcontext control plane on {address} (database: {database.display_url})")

    run(database, ServerOptions(host, port, settings), on_ready=ready)


db_app = typer.Typer(help="The control plane's database.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(db: str | None = DbOption) -> None:
    """Apply every migration (the server also does this when it starts)."""
    database = Database(db or default_url())
    before = migrate.current(database)
    migrate.upgrade(database)
    after = migrate.current(database)
    stdout().print(f"{database.display_url}: {before or 'empty'} -> {after}")


@db_app.command("current")
def db_current(db: str | None = DbOption, as_json: bool = JsonFlag) -> None:
    """Show the schema revision of the database, and the newest one this version knows."""
    database = Database(db or default_url())
    current, head = migrate.current(database), migrate.head()
    if as_json:
        typer.echo(json.dumps({"current": current, "head": head, "up_to_date": current == head}))
    else:
        stdout().print(f"current: {current or 'none'}; newest: {head}")


users_app = typer.Typer(help="Users of the control plane.", no_args_is_help=True)


@users_app.command("create")
def users_create(
    name: str = typer.Argument(..., help="The user's name (letters, digits, '.', '_', '-')."),
    admin: bool = typer.Option(False, "--admin", help="May create users and agents over the API."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create a user and print their API token (shown once)."""
    issued = _open(db).write(lambda s: identity.create_user(s, name, admin=admin))
    _print_issued("user", issued, as_json)


tokens_app = typer.Typer(help="API tokens of users.", no_args_is_help=True)


@tokens_app.command("create")
def tokens_create(
    user: str = typer.Argument(..., help="The user the token is for."),
    label: str = typer.Option("", "--name", help="A label to recognise the token by."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create another API token for a user and print it (shown once)."""
    issued = _open(db).write(lambda s: identity.create_token(s, user, label=label))
    _print_issued("token for user", issued, as_json)


agents_app = typer.Typer(help="Workspace agents: the tokens they push with.", no_args_is_help=True)


@agents_app.command("create")
def agents_create(
    workspace: str = typer.Option(..., "--workspace", help="The workspace (created if it does not exist)."),
    name: str = typer.Option(..., "--name", help="The agent's name, unique in its workspace."),
    parent: str | None = typer.Option(None, "--parent", help="Make it a sub-agent of this agent (a devcontainer)."),
    owner: str | None = typer.Option(None, "--owner", help="A new workspace belongs to this user only."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create an agent and print its token: pass it to `agentcontext agent --token`."""

    def work(session: Session) -> identity.Issued:
        owner_id = identity.user_id(session, owner) if owner else None
        return identity.create_agent(session, workspace, name, owner_id=owner_id, parent=parent)

    issued = _open(db).write(work)
    _print_issued("agent", issued, as_json, {"workspace": workspace})


@agents_app.command("rotate")
def agents_rotate(
    workspace: str = typer.Option(..., "--workspace", help="The agent's workspace."),
    name: str = typer.Option(..., "--name", help="The agent's name."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Give an agent a new token; the old one stops working at once."""
    issued = _open(db).write(lambda s: identity.rotate_agent_token(s, workspace, name))
    _print_issued("token for agent", issued, as_json, {"workspace": workspace})
