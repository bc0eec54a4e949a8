"""One home per agent: what each reads, loads and sends, by its own rules, behind one :class:`~.base.Peer` seam.

:func:`of` picks a config's peer (the one place an agent's name is compared); the scan asks it
once and keeps it on its result (:attr:`agentcontext.scan.ScanResult.peer`).
"""

from __future__ import annotations

from agentcontext.peers.base import Peer
from agentcontext.peers.claude.peer import ClaudePeer
from agentcontext.peers.coder.peer import CoderPeer
from agentcontext.peers.codex.peer import CodexPeer
from agentcontext.peers.copilot.peer import CopilotPeer
from agentcontext.peers.cursor.peer import CursorPeer
from agentcontext.peers.gemini.peer import GeminiPeer
from agentcontext.peers.opencode.peer import OpenCodePeer
from agentcontext.settings.config import Config

PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (CodexPeer(), CoderPeer(), ClaudePeer(), GeminiPeer(), CursorPeer(), OpenCodePeer(), CopilotPeer())
}


def named(discovery: str) -> Peer:
    """The peer a ``project_doc.discovery`` value names (the settings allow no other)."""
    return PEERS[discovery]


def of(config: Config) -> Peer:
    """The peer ``config`` names."""
    return named(config.project_doc.discovery)


__all__ = ["PEERS", "Peer", "named", "of"]
