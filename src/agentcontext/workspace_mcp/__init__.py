"""The workspace's own MCP servers, as their client: configs, ``${VAR}``, secrets, approvals, tool pins."""
