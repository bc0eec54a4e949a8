"""Attacks, each reproduced as a test: a hostile repository, MCP server, web page or local user gets nothing."""
