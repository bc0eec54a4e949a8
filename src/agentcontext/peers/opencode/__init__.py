"""OpenCode (1.18.33): AGENTS.md (else CLAUDE.md, CONTEXT.md) from the cwd up, ``instructions``, its skills list."""
