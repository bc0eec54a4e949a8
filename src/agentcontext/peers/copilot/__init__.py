"""GitHub Copilot CLI (1.0.102) as a peer: the ``copilot`` profile."""
