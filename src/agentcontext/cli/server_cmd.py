"""``agentcontext server`` and the administrative commands that work on its database directly.

``users create``, ``tokens create``, ``workspace-agents create`` and ``db upgrade`` open the database
named by ``--db`` (default: the server's default SQLite file, or ``AGENTCONTEXT_DB``),
apply migrations if needed, and print the new token once (``--json`` for scripts).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from agentcontext.cli.common import stderr, stdout
from agentcontext.cli.serving import AllowHostOption, MaxConnectionsOption, edge
from agentcontext.cli.tokens import warn_password_in_argv
from agentcontext.errors import UnavailableError
from agentcontext.settings.config import load_config
from agentcontext.settings.declared import BY_KEY
from agentcontext.terminal import log_to_stderr, shown
from agentcontext.web.hosts import listen_address, reached_at

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from agentcontext.control import identity
    from agentcontext.control.db import Database
    from agentcontext.control.settings import ControlSettings

# The database, migrations and the server's web stack are imported by the commands that use
# them: every other command of the CLI (``scan``...) would otherwise pay for them at start-up.
DEFAULT_LISTEN = "127.0.0.1:8765"  # agentcontext.server.run.DEFAULT_LISTEN (a test keeps them equal)

DbOption = typer.Option(
    None,
    "--db",
    envvar="AGENTCONTEXT_DB",
    help="Database URL: sqlite:///PATH or postgresql://USER:PASSWORD@HOST/NAME. Default: control.db in the data dir."
    " A password shows in `ps`: prefer AGENTCONTEXT_DB.",
    show_default=False,
    callback=warn_password_in_argv,
)
JsonFlag = typer.Option(False, "--json", help="Print JSON for scripts.")


@contextlib.contextmanager
def _database_errors() -> Iterator[None]:
    """A database that cannot be reached or opened is a one-line error (exit 2), not a traceback."""
    from sqlalchemy.exc import DBAPIError, OperationalError

    try:
        yield
    except (OperationalError, DBAPIError) as exc:
        reason = str(exc.orig or exc).strip().splitlines()
        raise UnavailableError(f"cannot use the database: {reason[0] if reason else type(exc).__name__}") from None
    except OSError as exc:  # a SQLite file whose directory cannot be made or read
        raise UnavailableError(f"cannot open the database: {exc}") from None


def _database(db_url: str | None, *, create: bool = True) -> Database:
    """The database ``db_url`` names. A SQLite file not there yet is made, and said so on stderr (a mistyped
    path would otherwise pass for an empty database); with ``create`` false it is an error and nothing is made.

    Raises: UnavailableError (``create`` false and no such SQLite file), ConfigError (not a database URL).
    """
    from agentcontext.control.db import Database, default_url, sqlite_path

    url = db_url or default_url()
    path = sqlite_path(url)
    new_file = path is not None and not path.exists()
    if new_file and not create:
        raise UnavailableError(f"no database at {path} (nothing was created)")
    database = Database(url)
    if new_file:
        stderr().print(f"A new database: {shown(path)}")
    return database


def _open(db_url: str | None) -> Database:
    from agentcontext.control import migrate

    db = _database(db_url)
    migrate.upgrade(db)
    return db


# how each kind of token is used, said once, where it is shown
_USER_TOKEN_USE = "give it to `chats`/`status` as AGENTCONTEXT_TOKEN or --token-file FILE, or send it as a Bearer token"
_AGENT_TOKEN_USE = "give it to `agentcontext agent` as AGENTCONTEXT_AGENT_TOKEN or --token-file FILE"


def _print_issued(
    kind: str, issued: identity.Issued, as_json: bool, use: str, extra: dict[str, str] | None = None
) -> None:
    if as_json:
        typer.echo(json.dumps({"id": issued.id, "name": issued.name, "token": issued.token, **(extra or {})}))
        return
    out = stdout()
    label = f", labelled {shown(extra['label'])}" if extra and extra.get("label") else ""
    out.print(f"Created {kind} [bold]{shown(issued.name)}[/bold] ({shown(issued.id)}){label}.")
    out.print(f"Token (shown once, keep it safe; {use}):")
    typer.echo(issued.token)


def _help(name: str) -> str:
    setting = BY_KEY[f"server.{name}"]
    return f"{setting.description} Also `server.{name}` in your config file, or {setting.env}."


def _default(name: str) -> Any:
    return BY_KEY[f"server.{name}"].default


# the flags that are settings of the ``server`` section, by their parameter's name (= the setting's)
SETTING_FLAGS = (
    "chat_suffix",
    "disable_context_sync",
    "offline_after",
    "recheck_every",
    "store_in_threads",
    "mcp_sessions_per_user",
    "mcp_session_idle",
    "agent_networks",
)


def server(
    ctx: typer.Context,
    db: str | None = DbOption,
    listen: str = typer.Option(DEFAULT_LISTEN, "--listen", help="HOST:PORT to serve the API on."),
    disable_context_sync: bool = typer.Option(
        _default("disable_context_sync"), "--disable-context-sync", help=_help("disable_context_sync")
    ),
    chat_suffix: str = typer.Option(_default("chat_suffix"), "--chat-suffix", help=_help("chat_suffix")),
    offline_after: float = typer.Option(_default("offline_after"), "--offline-after", help=_help("offline_after")),
    recheck_every: float = typer.Option(_default("recheck_every"), "--recheck-every", help=_help("recheck_every")),
    store_in_threads: bool = typer.Option(
        _default("store_in_threads"), "--store-in-threads", help=_help("store_in_threads")
    ),
    mcp_sessions_per_user: int = typer.Option(
        _default("mcp_sessions_per_user"), "--mcp-sessions-per-user", min=1, help=_help("mcp_sessions_per_user")
    ),
    mcp_session_idle: float = typer.Option(
        _default("mcp_session_idle"), "--mcp-session-idle", min=1.0, help=_help("mcp_session_idle")
    ),
    agent_networks: list[str] = typer.Option(
        [], "--agent-network", help=_help("agent_networks") + " Repeatable.", show_default=False
    ),
    allow_hosts: list[str] = AllowHostOption,
    max_connections: int | None = MaxConnectionsOption,
    key_file: Path | None = typer.Option(
        None,
        "--key-file",
        envvar="AGENTCONTEXT_SERVER_KEY_FILE",
        help="The server key that seals agents' secrets (default: AGENTCONTEXT_SERVER_KEY, else control-plane.key"
        " in the data dir, made on first start). Replicas of one database need the same key.",
        show_default=False,
    ),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="Config file to read the [server] section from instead of the user config.",
        dir_okay=False,
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the server does."),
) -> None:
    """Run the control plane: agents push snapshots to it; chats pin them, refresh, and run tools.

    The first start on an empty database creates the user `admin` and prints its API token
    once. Give agents tokens with `agentcontext workspace-agents create`, users with `agentcontext
    users create`. Several servers may share one PostgreSQL database (and its server key); a
    SQLite file has one server at a time: a second is refused (exit 2), naming the first.

    It answers only to loopback names, its --listen address and --allow-host names: behind a
    proxy or in a container network, name the host its clients and agents use.

    Examples:

        agentcontext server                    # SQLite in the data dir, 127.0.0.1:8765
        AGENTCONTEXT_DB=postgresql://ctx@db/ctx agentcontext server --listen 0.0.0.0:8765 --allow-host ctx.example.com
    """
    given = [name for name in SETTING_FLAGS if _given(ctx, name)]
    settings = _control_settings(config_file, {f"server.{name}": ctx.params[name] for name in given})
    _serve(db, listen, settings, allow_hosts, max_connections, key_file, verbose)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the flag was on the command line (else the file, the variable or the declared default decides)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"  # typer's own click: compared by name


def _control_settings(config_file: Path | None, flags: dict[str, object]) -> ControlSettings:
    """The ``server`` settings from the user's config file, the variables and the flags given (no repository's).

    Raises: ConfigError (a bad value in any of them).
    """
    from agentcontext.control.settings import ControlSettings

    config = load_config(config_file=config_file, overrides=flags, repository=False)
    return ControlSettings.of(config.server)


def _serve(
    db: str | None,
    listen: str,
    settings: ControlSettings,
    allow_hosts: list[str],
    max_connections: int | None,
    key_file: Path | None,
    verbose: bool,
) -> None:
    from agentcontext.control import agent_secret
    from agentcontext.control.api import MAX_BODY
    from agentcontext.control.db import default_url, sqlite_path
    from agentcontext.control.service import prepare
    from agentcontext.control.sqlite_file import hold_for_serving
    from agentcontext.server.run import ServerOptions, run
    from agentcontext.web.serving import bind

    log_to_stderr(verbose)
    host, port = listen_address(listen, "--listen")
    listening = bind(host, port)  # first: a taken port is one line (exit 2), before the database is touched
    served = edge(host, allow_hosts, max_connections, max_body=MAX_BODY)
    secrets = agent_secret.load(os.environ, key_file)
    url = db or default_url()
    sqlite_file = sqlite_path(url)
    # a SQLite file has one server: a second is refused here (exit 2), naming the first; held until we exit
    serving = hold_for_serving(sqlite_file, reached_at(host, listening.getsockname()[1])) if sqlite_file else None
    err = stderr()
    opening = err.status("Opening the database and applying migrations …") if os.isatty(2) else contextlib.nullcontext()
    with opening, _database_errors():
        database, admin = prepare(url)
    if admin is not None:
        err.print("First start: created the administrator [bold]admin[/bold]. Its API token (shown once):")
        typer.echo(admin.token, err=True)

    def ready(address: str) -> None:
        err.print(f"agentcontext control plane on {address} (database: {database.display_url})")

    options = ServerOptions(host, port, settings, edge=served, secrets=secrets, listening=listening)
    try:
        run(database, options, on_ready=ready)
    finally:
        if serving is not None:
            serving.release()


db_app = typer.Typer(help="The control plane's database.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(db: str | None = DbOption) -> None:
    """Apply every migration (the server also does this when it starts)."""
    from agentcontext.control import migrate

    with _database_errors():
        database = _database(db)
        before = migrate.current(database)
        migrate.upgrade(database)
        after = migrate.current(database)
    stdout().print(f"{database.display_url}: {before or 'empty'} -> {after}")


@db_app.command("current")
def db_current(db: str | None = DbOption, as_json: bool = JsonFlag) -> None:
    """Show the schema revision of the database, and the newest one this version knows."""
    from agentcontext.control import migrate

    with _database_errors():
        database = _database(db, create=False)
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
    from agentcontext.control import identity

    with _database_errors():
        issued = _open(db).write(lambda s: identity.create_user(s, name, admin=admin))
    _print_issued("user", issued, as_json, _USER_TOKEN_USE)


tokens_app = typer.Typer(help="API tokens of users.", no_args_is_help=True)


@tokens_app.command("create")
def tokens_create(
    user: str = typer.Argument(..., help="The user the token is for."),
    label: str = typer.Option("", "--name", help="A label to recognise the token by."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create another API token for a user and print it (shown once)."""
    from agentcontext.control import identity

    with _database_errors():
        issued = _open(db).write(lambda s: identity.create_token(s, user, label=label))
    _print_issued("token for user", issued, as_json, _USER_TOKEN_USE, {"user": user, "label": label})


workspace_agents_app = typer.Typer(
    help="Workspace agents (`agentcontext agent`) and the tokens they push with.", no_args_is_help=True
)


@workspace_agents_app.command("create")
def agents_create(
    workspace: str = typer.Option(..., "--workspace", help="The workspace (created if it does not exist)."),
    name: str = typer.Option(..., "--name", help="The agent's name, unique in its workspace."),
    parent: str | None = typer.Option(None, "--parent", help="Make it a sub-agent of this agent (a devcontainer)."),
    owner: str | None = typer.Option(None, "--owner", help="A new workspace belongs to this user only."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Create an agent and print its token (shown once): give it to `agentcontext agent --token-file FILE`."""
    from agentcontext.control import identity

    def work(session: Session) -> identity.Issued:
        owner_id = identity.user_id(session, owner) if owner else None
        return identity.create_agent(session, workspace, name, owner_id=owner_id, parent=parent)

    with _database_errors():
        issued = _open(db).write(work)
    _print_issued("agent", issued, as_json, _AGENT_TOKEN_USE, {"workspace": workspace})


@workspace_agents_app.command("rotate")
def agents_rotate(
    workspace: str = typer.Option(..., "--workspace", help="The agent's workspace."),
    name: str = typer.Option(..., "--name", help="The agent's name."),
    db: str | None = DbOption,
    as_json: bool = JsonFlag,
) -> None:
    """Give an agent a new token; the old one stops working at once."""
    from agentcontext.control import identity

    with _database_errors():
        issued = _open(db).write(lambda s: identity.rotate_agent_token(s, workspace, name))
    _print_issued("token for agent", issued, as_json, _AGENT_TOKEN_USE, {"workspace": workspace})
