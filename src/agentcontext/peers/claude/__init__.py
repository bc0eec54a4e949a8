"""Claude Code: the CLAUDE.md family, ``@`` imports, ``.claude/rules``, nested folders and plugins."""
