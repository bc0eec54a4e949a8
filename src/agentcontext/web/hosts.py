"""Which Host and Origin a server answers to: loopback names on its own port, plus the names it is given.

A web page that rebinds its own name to 127.0.0.1 reaches a loopback server with
``Host: attacker.example``: answering only the names we serve refuses it before any work. A
page of another site sends its own ``Origin``: only the origins of the names we serve are ours.
Loopback names (``localhost`` and loopback IP literals) are served on the server's own port, and on
another only where given (``--allow-host localhost:8443``, a local proxy's); other names (the listen
address, the advertised URL's host, ``--allow-host``) on any port unless given as ``name:port``.
Names compare case-insensitively; IPv6 literals are bracketed.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentcontext.errors import ConfigError

WILDCARDS = ("0.0.0.0", "::", "")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP literal (``127.x.y.z``, ``::1``, bracketed or not)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen_address(value: str, option: str) -> tuple[str, int]:
    """``(host, port)`` of a ``HOST:PORT`` a server is told to listen on (``[v6]:PORT``; no host: 127.0.0.1).

    Raises: ConfigError (not HOST:PORT, or a port past 65535), naming ``option``.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{option} wants HOST:PORT (a port from 0 to 65535), not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def split_authority(value: str, default_port: int | None = 80) -> tuple[str, int | None] | None:
    """``(name, port)`` of ``host[:port]`` or ``[v6][:port]``, the name lowercased; None when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[: end + 1], value[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text = value.partition(":")
        port_text = port_text if sep else None
    if not name or any(c in name for c in "/@\\ ?#") or (port_text is not None and not port_text.isdigit()):
        return None
    port = int(port_text) if port_text is not None else default_port
    if port is not None and not 0 < port < 65536:
        return None
    return name, port


def bracketed(host: str) -> str:
    """An IPv6 literal in brackets, as it appears in a Host header; any other name unchanged."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def reached_at(host: str, port: int) -> str:
    """The URL a server listening on ``host:port`` is reached at from this machine: a wildcard on loopback."""
    host = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    return f"http://{bracketed(host)}:{port}"


@dataclass(frozen=True, slots=True)
class ServedHosts:
    """The names a server answers to besides loopback: ``name`` (any port) or ``name:port``."""

    names: frozenset[str] = frozenset()

    def allows(self, host: str, server_port: int | None, default_port: int = 80) -> bool:
        """Whether a request's ``Host`` names this server (``server_port``: the port it listens on, if known)."""
        return _allows(self.names, host, server_port, default_port)

    def allows_origin(self, origin: str, server_port: int | None) -> bool:
        """Whether a browser's ``Origin`` is a page of a name this server serves (``null`` never is)."""
        parts = urlsplit(origin.strip())
        if parts.scheme not in _DEFAULT_PORTS or parts.path or parts.query or parts.username is not None:
            return False
        return self.allows(parts.netloc, server_port, _DEFAULT_PORTS[parts.scheme])

    def sdk_patterns(self, port: int) -> tuple[list[str], list[str]]:
        """The same names as the MCP SDK's ``allowed_hosts`` and ``allowed_origins`` patterns, for port ``port``
        (0: any port)."""
        hosts = [f"{name}:{port or '*'}" for name in ("127.0.0.1", "localhost", "[::1]")]
        for name in sorted(self.names):
            hosts += [name] if _has_port(name) else [name, f"{name}:*"]
        origins = [f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
        return hosts, origins


@functools.lru_cache(maxsize=1024)  # a server sees the same few Host values again and again
def _allows(names: frozenset[str], host: str, server_port: int | None, default_port: int) -> bool:
    parsed = split_authority(host, default_port)
    if parsed is None:
        return False
    name, port = parsed
    if is_loopback(name) and (server_port is None or port == server_port):
        return True
    # a loopback name on another port only as given (a local proxy that passes its own Host on)
    return name in names or f"{name}:{port}" in names


def _has_port(name: str) -> bool:
    return ":" in name.rpartition("]")[2]


def served_hosts(listen_host: str, extra: Iterable[str] = (), advertised: Iterable[str] = ()) -> ServedHosts:
    """The names a server listening on ``listen_host`` answers to.

    ``extra`` are names given by the operator (``--allow-host``), ``advertised`` URLs others
    reach it at. A wildcard listen address adds this machine's host name and its FQDN.

    Raises:
        ValueError: an ``extra`` name that is not ``host`` or ``host:port``.
    """
    names: set[str] = set()
    if listen_host in WILDCARDS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    elif not is_loopback(listen_host):
        names.add(bracketed(listen_host.lower()))
    for url in advertised:
        host = urlsplit(url).hostname
        if host and not is_loopback(host):
            names.add(bracketed(host))
    for value in extra:
        parsed = split_authority(bracketed(value) if value.count(":") > 1 else value, None)
        if parsed is None:
            raise ValueError(f"not a host name or host:port: {value!r}")
        name, port = parsed
        names.add(name if port is None else f"{name}:{port}")
    return ServedHosts(frozenset(n for n in names if n))
