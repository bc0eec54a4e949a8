"""Where the control plane calls workspace agents: the hosts and networks an agent may advertise.

An agent says where its API is, and the control plane calls there with a chat's requests and
hands the answers to the chat: a hostile agent could name any service the control plane can
reach. The operator lists where agents live (``agentcontext server --agent-network``); an
advertised URL whose host is elsewhere is refused at push and heartbeat, and a stored one is
not called.

The default is this machine and the workspace network: loopback, the private IPv4 ranges
(RFC 1918) and IPv6 unique local addresses, where agents run beside the control plane, in its
containers or VMs, or on a private network. Left out: link-local addresses (169.254.0.0/16 and
fe80::/10: cloud metadata services answer there), the unspecified address (``0.0.0.0`` reaches
this machine under another name), and every public address. A host name is called only when it
is listed by name (``localhost`` is, by default): DNS may point a name anywhere, at any moment.
An IP literal is compared as an address, an IPv4-mapped IPv6 address as its IPv4 address, and
anything else (``2130706433``, ``127.1``) as a name.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentcontext.errors import ConfigError
from agentcontext.wire.sync import agent_url_problem

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT = ("127.0.0.0/8", "::1/128", "localhost", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-_")


@dataclass(frozen=True, slots=True)
class AgentNetworks:
    """The networks (CIDR) and host names agents may advertise."""

    networks: tuple[Network, ...]
    names: frozenset[str]

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AgentNetworks:
        """Entries are a network (``10.1.0.0/16``), an address, a host name, or ``default`` (the default list).

        Raises:
            ConfigError: an entry that is none of these.
        """
        networks: list[Network] = []
        names: set[str] = set()
        for raw in entries:
            entry = raw.strip().lower()
            if entry == "default":
                default = cls.default()
                networks += default.networks
                names |= default.names
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if not entry or not set(entry) <= _NAME_CHARS or entry.startswith(("-", ".")):
                raise ConfigError(f"--agent-network wants a network (10.1.0.0/16), an address or a host name: {raw!r}")
            names.add(entry)
        return cls(tuple(dict.fromkeys(networks)), frozenset(names))

    @classmethod
    def default(cls) -> AgentNetworks:
        return _DEFAULT

    def refusal(self, url: str) -> str | None:
        """Why the control plane does not call an agent at ``url`` (None: it may)."""
        return _refusal(self, url)

    def describe(self) -> str:
        return ", ".join([*map(str, self.networks), *sorted(self.names)]) or "none"


@functools.lru_cache(maxsize=1024)  # asked on every call to an agent, for the few URLs agents advertise
def _refusal(allowed: AgentNetworks, url: str) -> str | None:
    problem = agent_url_problem(url)
    if problem:
        return f"agent.url {problem}"
    host = (urlsplit(url).hostname or "").lower()
    if _allows(allowed, host):
        return None
    return (
        f"agent.url {url!r}: {host!r} is not among the hosts and networks agents may advertise"
        f" ({allowed.describe()}); the operator lists them with `agentcontext server --agent-network`"
    )


def _allows(allowed: AgentNetworks, host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host in allowed.names
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in allowed.networks)


_DEFAULT = AgentNetworks.parse(DEFAULT)
