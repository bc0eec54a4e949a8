"""Each chat over MCP: its pinned prompt as instructions, its tools, its skills, its out-of-date notices.

``/mcp/chats/{chat_id}`` and ``/mcp/workspaces/{name}`` on the control plane speak streamable
HTTP through the official SDK, so any MCP client (Claude Code, Codex, Cursor, VS Code, the
Inspector) works in a chat with Coder's guarantees: one consistent pin, a visible "out of
date", an explicit ``refresh_context``.
"""
