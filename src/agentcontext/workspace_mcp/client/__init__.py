"""The connections to the workspace's MCP servers (the MCP SDK's client): an adapter of the core."""
