"""An MCP SDK server that serves the SEP-2640 skills extension and says so on both protocol eras.

Our MCP server (``agentcontext mcp``) and each chat's MCP endpoint are both one; the 2025
handshake's capabilities have no ``extensions`` (the SDK drops them from its answer), so the
extension is declared under ``experimental`` too (:func:`agentcontext.skills.extension.with_skills_declared`).
"""

from __future__ import annotations

from typing import Any

from mcp.server import InitializationOptions, NotificationOptions, Server

from agentcontext.skills.extension import EXTENSION_ID, with_skills_declared


class SkillsServer(Server[Any]):
    """A server whose ``skills/list`` and ``skills/get`` handlers its subclass adds."""

    def declare_skills(self) -> None:
        """Declare the extension under ``extensions`` (``server/discover``, 2026)."""
        self.extensions[EXTENSION_ID] = {}

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The ``initialize`` result's options, the skills extension also under ``experimental`` (2025 sessions)."""
        experimental = with_skills_declared(experimental_capabilities)
        return super().create_initialization_options(notification_options, experimental, extensions)
