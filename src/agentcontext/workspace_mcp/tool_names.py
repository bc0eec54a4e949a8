"""Tool names for the workspace's MCP servers: ``server__tool``, never longer than 64 characters.

Many model APIs refuse function names over 64 characters, so a longer ``server__tool`` is
cut to a readable prefix plus ``_`` and a short sha256 of the full name; the mapping is
kept, so calls still route. Two different names can never end up the same: a collision
(of a cut name with another name) lengthens the hash until every name is distinct. A server
can name its tools to meet its own cut names at every hash length (the hash is of a name it
chose): then the later of each such pair is not offered (``ToolNames.unnamed``), never an error
that would take every tool of the workspace with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentcontext.errors import AgentContextError, UnavailableError

SEPARATOR = "__"
MAX_NAME = 64
_HASH_CHARS = 10
_MAX_HASH_CHARS = 46


class InvalidToolName(AgentContextError):
    """A name that is not ``server__tool``."""


class UnknownServer(AgentContextError):
    """No connected server has that name."""


class PendingApproval(UnavailableError):
    """The server exists but waits for the user's approval; the message says how to give it."""


def split_tool_name(name: str) -> tuple[str, str]:
    """``server__my_tool`` -> ``("server", "my_tool")``: cut at the first ``__`` (Coder).

    Raises:
        InvalidToolName: no separator, or an empty server or tool part.
    """
    server, sep, tool = name.partition(SEPARATOR)
    if not sep or not server or not tool:
        raise InvalidToolName(f'invalid tool name format: expected format "server__tool", got "{name}"')
    return server, tool


def _short(full: str, hash_chars: int) -> str:
    digest = hashlib.sha256(full.encode()).hexdigest()[:hash_chars]
    return f"{full[: MAX_NAME - hash_chars - 1]}_{digest}"


@dataclass(frozen=True, slots=True)
class ToolNames:
    """Exposed name -> (server, tool as the server knows it); ``unnamed``: pairs no distinct name was found for."""

    routes: dict[str, tuple[str, str]]
    unnamed: tuple[tuple[str, str], ...] = ()
    _names: dict[tuple[str, str], str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_names", {route: name for name, route in self.routes.items()})

    def exposed(self, server: str, tool: str) -> str:
        """The name ``(server, tool)`` is offered under (a ``KeyError`` for a pair not given, or ``unnamed``)."""
        return self._names[(server, tool)]

    def offered(self, server: str, tool: str) -> str | None:
        """The name ``(server, tool)`` is offered under; None when it is left ``unnamed``; ``server__tool`` for a
        pair not named yet (a server back from a failed reconnect before the names are assigned again)."""
        name = self._names.get((server, tool))
        if name is None and (server, tool) not in self.unnamed:
            return f"{server}{SEPARATOR}{tool}"
        return name

    def route(self, name: str, servers: Iterable[str]) -> tuple[str, str]:
        """Where a call to ``name`` goes.

        Raises:
            InvalidToolName: not ``server__tool``.
            UnknownServer: the server part names no known server.
        """
        if name in self.routes:
            return self.routes[name]
        server, tool = split_tool_name(name)
        if server not in set(servers):
            raise UnknownServer(f'unknown MCP server: "{server}"')
        return server, tool


def assign(tools: Iterable[tuple[str, str]]) -> ToolNames:
    """Exposed names for ``(server, tool)`` pairs, unique and at most 64 characters."""
    pairs = sorted(set(tools))
    hash_chars = _HASH_CHARS
    while True:
        routes: dict[str, tuple[str, str]] = {}
        unnamed: list[tuple[str, str]] = []
        for server, tool in pairs:
            full = f"{server}{SEPARATOR}{tool}"
            name = full if len(full) <= MAX_NAME else _short(full, hash_chars)
            if name not in routes:
                routes[name] = (server, tool)
            elif hash_chars < _MAX_HASH_CHARS:
                break
            else:  # names made to meet a cut name at every length: this one is not offered
                unnamed.append((server, tool))
        else:
            return ToolNames(routes, tuple(unnamed))
        hash_chars += 4  # a cut name met another name: longer hashes make them differ
