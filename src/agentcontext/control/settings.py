"""The control plane's own settings, as its services read them.

Each is declared once, with its default and its rule, in the one settings table
(``agentcontext.settings.declared``, section ``server``; ``docs/configuration.md``): ``agentcontext
server`` takes them from the user's config file, their variables or its flags (``ControlSettings.of``),
and a repository never sets them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.settings.config import ServerSettings
from agentcontext.settings.declared import BY_KEY


def _declared(name: str) -> Any:
    return BY_KEY[f"server.{name}"].default


@dataclass(frozen=True, slots=True)
class ControlSettings:
    chat_suffix: str = _declared("chat_suffix")
    sync_enabled: bool = not _declared("disable_context_sync")
    offline_after: float = _declared("offline_after")  # seconds without a push or heartbeat: offline
    sweep_every: float = _declared("sweep_every")
    auth_ttl: float = _declared("auth_ttl")  # seconds a checked token is trusted before it is checked again
    recheck_every: float = _declared("recheck_every")  # at most one recheck of an agent's discovered files this often
    store_on_loop: bool = not _declared("store_in_threads")  # short store work on the loop (``loop_store``)
    mcp_sessions_per_user: int = _declared("mcp_sessions_per_user")  # handshake-era sessions (``chat_mcp.sessions``)
    mcp_session_idle: float = _declared("mcp_session_idle")  # seconds a session may stay idle
    agent_networks: AgentNetworks = AgentNetworks.default()  # where agents may be called (``agent_networks``)

    @classmethod
    def of(cls, server: ServerSettings) -> ControlSettings:
        """The settings as configured. Raises: ConfigError (an agent network that is not one)."""
        # the variable separates entries by spaces, as it did before it joined the settings table
        entries = [part for entry in server.agent_networks for part in entry.split()]
        return cls(
            chat_suffix=server.chat_suffix,
            sync_enabled=not server.disable_context_sync,
            offline_after=server.offline_after,
            sweep_every=server.sweep_every,
            auth_ttl=server.auth_ttl,
            recheck_every=server.recheck_every,
            store_on_loop=not server.store_in_threads,
            mcp_sessions_per_user=server.mcp_sessions_per_user,
            mcp_session_idle=server.mcp_session_idle,
            agent_networks=AgentNetworks.parse(entries) if entries else AgentNetworks.default(),
        )
