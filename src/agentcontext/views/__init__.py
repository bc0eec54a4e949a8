"""What an agent is given, as text and per agent: the rendered doc and skills, the MCP brief, each agent's view."""
