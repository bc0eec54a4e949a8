"""MCP servers of our own for tests: real processes speaking MCP over stdio."""
