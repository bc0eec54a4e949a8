"""Gemini CLI (0.61.0): its context files, ``@`` imports, the blocks it sends them in, its skills list."""
