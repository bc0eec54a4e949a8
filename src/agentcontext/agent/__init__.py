"""The workspace agent: live snapshots over HTTP, the workspace's MCP servers, pushes upstream."""
