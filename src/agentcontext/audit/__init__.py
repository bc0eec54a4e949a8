"""What deserves a reviewer's look in an agent context: coded findings over files, skills and MCP servers."""
