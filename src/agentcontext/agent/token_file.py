"""The agent's API token when none is given: made for this run and kept where only its user can read it.

``agentcontext agent`` without a token (``--token``, ``--token-file`` or
``AGENTCONTEXT_AGENT_TOKEN``) makes a random one and writes it to
``<data dir>/agent-tokens/<port>`` (0600, in a 0700 directory): a client on this machine
sends it as ``Authorization: Bearer <token>``. Each start writes a new one, so a token read
once does not outlive the run it was made for.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path

from agentcontext.workspace_mcp.trust import data_dir, write_private


def token_path(port: int, environ: Mapping[str, str] | None = None) -> Path:
    return data_dir(environ) / "agent-tokens" / str(port)


def issue(port: int, environ: Mapping[str, str] | None = None) -> tuple[str, Path]:
    """A new random token for the agent on ``port``, and the file it is kept in (mode 0600, its folder 0700)."""
    token = secrets.token_urlsafe(32)
    path = token_path(port, environ)
    write_private(path, token + "\n")
    path.parent.chmod(0o700)
    return token, path
