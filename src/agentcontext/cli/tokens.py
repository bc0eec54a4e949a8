"""Where a command's token comes from: ``--token-file``, the environment, or ``--token`` (with a warning).

Every local user can read any process's command line (``ps``, ``/proc/PID/cmdline``), so a
token given as ``--token`` is shown to all of them: it still works, and says so on stderr.
``--token-file FILE`` reads the token from a file (surrounding whitespace dropped; a file
others may read is used, with a warning); the command's environment variable is read
otherwise. Giving both ``--token`` and ``--token-file`` is an error. A ``--db`` URL with a
password on the command line is warned about the same way (``AGENTCONTEXT_DB`` is private).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import typer

from agentcontext.errors import ConfigError

TokenFileOption = typer.Option(
    None,
    "--token-file",
    help="Read the token from this file (keep it mode 0600): unlike --token, it does not show in `ps`.",
    dir_okay=False,
    show_default=False,
)


def warn(message: str) -> None:
    typer.echo(f"agentcontext: warning: {message}", err=True)


def read_token_file(path: Path) -> str:
    """The token in ``path``, whitespace around it dropped.

    Raises:
        ConfigError: the file cannot be read, or holds no token.
    """
    try:
        with path.open("rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            text = fh.read(64 * 1024).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the token file: {exc}", source=str(path)) from None
    if not text:
        raise ConfigError("the token file is empty", source=str(path))
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warn(f"{path} may be read by other users (mode {stat.S_IMODE(mode):o}): `chmod 600 {path}`")
    return text


def resolve_token(
    flag: str | None, token_file: Path | None, envvar: str, environ: Mapping[str, str] | None = None
) -> str | None:
    """The token to use: ``--token`` (warned), else ``--token-file``, else ``$envvar``; None when none is given.

    Raises:
        ConfigError: both ``--token`` and ``--token-file``, an empty ``--token``, or an unusable file.
    """
    env = os.environ if environ is None else environ
    if flag is not None and token_file is not None:
        raise ConfigError("give --token or --token-file, not both")
    if flag is not None:
        if not flag.strip():
            raise ConfigError("--token is empty")
        warn(f"--token shows the token to every local user (`ps`); use --token-file FILE or {envvar} instead")
        return _usable(flag.strip(), "--token")
    if token_file is not None:
        return _usable(read_token_file(token_file), str(token_file))
    given = env.get(envvar, "").strip()
    return _usable(given, envvar) if given else None


def _usable(token: str, source: str) -> str:
    """``token``, when it can go in an HTTP header as it is; never quoted in the error (it is a secret).

    Raises: ConfigError (a line break, a tab or another control character inside it, or a character past ASCII).
    """
    if not (token.isascii() and token.isprintable()):
        raise ConfigError(
            f"the token from {source} holds a line break, a tab, another control character or a character past"
            " ASCII, which no HTTP header may carry (the token is not shown here)"
        )
    return token


def warn_password_in_argv(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    """An option callback: a database URL with a password given on the command line is shown by ``ps``."""
    source = ctx.get_parameter_source(param.name) if param.name else None
    if value and source is not None and source.name == "COMMANDLINE" and _password(value):
        warn("--db shows the database password to every local user (`ps`); set AGENTCONTEXT_DB instead")
    return value


def _password(url: str) -> bool:
    try:
        return bool(urlsplit(url).password)
    except ValueError:
        return False
