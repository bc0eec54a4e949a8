"""agentcontext as an MCP server: the project doc and skills for any MCP client."""
