"""``python -m agentcontext``."""

from agentcontext.cli import main

main()
