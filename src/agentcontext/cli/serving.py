"""Options every HTTP server command shares (``agent``, ``server``, ``mcp --http``): the names it serves and
how many connections it keeps open.

A server answers only to loopback names on its own port, its listen address and the names
given here (``--allow-host``, or ``AGENTCONTEXT_ALLOWED_HOSTS`` separated by spaces): behind a
proxy or in a container network, name the host clients use. ``--max-connections`` caps the
open connections (default: half the process's file descriptors, 64 to 16,384).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import typer

from agentcontext.errors import ConfigError

if TYPE_CHECKING:
    from agentcontext.web.guard import Edge

AllowHostOption = typer.Option(
    [],
    "--allow-host",
    envvar="AGENTCONTEXT_ALLOWED_HOSTS",
    help=(
        "Also answer to this host name (NAME or NAME:PORT; repeat for more). Loopback names work on the"
        " server's own port (on another, a local proxy's, give it: localhost:PORT)."
    ),
    show_default=False,
)
MaxConnectionsOption = typer.Option(
    None,
    "--max-connections",
    envvar="AGENTCONTEXT_MAX_CONNECTIONS",
    min=1,
    help="Open connections at most; beyond it the longest idle one is closed. Default: from the file limit.",
    show_default=False,
)


def edge(
    listen_host: str,
    allow_hosts: Iterable[str],
    max_connections: int | None,
    *,
    advertised: Iterable[str] = (),
    max_body: int | None = None,
) -> Edge:
    """The edge of a server listening on ``listen_host``.

    Raises:
        ConfigError: an ``--allow-host`` value that is not NAME or NAME:PORT.
    """
    from dataclasses import replace

    from agentcontext.web.guard import Edge
    from agentcontext.web.hosts import served_hosts

    try:
        hosts = served_hosts(listen_host, allow_hosts, advertised)
    except ValueError as exc:
        raise ConfigError(f"--allow-host: {exc}") from None
    chosen = Edge(hosts=hosts)
    if max_connections is not None:
        chosen = replace(chosen, max_connections=max_connections)
    if max_body is not None:
        chosen = replace(chosen, max_body=max_body)
    return chosen
