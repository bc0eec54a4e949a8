"""How the control plane's HTTP edges answer an error of ours: one table, for the REST API and the MCP endpoint."""

from __future__ import annotations

from agentcontext.control.services.sync import SyncDisabled
from agentcontext.errors import (
    AgentContextError,
    AuthError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnavailableError,
)
from agentcontext.wire.sync import ContractError

# the first class an error is an instance of decides (subclasses before their bases)
_STATUS: tuple[tuple[type[AgentContextError], int, str], ...] = (
    (SyncDisabled, 501, "Context sync is disabled."),
    (ContractError, 422, "Invalid request."),
    (AuthError, 401, "Unauthorized."),
    (ForbiddenError, 403, "Forbidden."),
    (NotFoundError, 404, "Not found."),
    (ConflictError, 409, "Conflict."),
    (InvalidRequestError, 400, "Invalid request."),
    (UnavailableError, 503, "Unavailable."),
)


def status_of(exc: AgentContextError) -> tuple[int, str]:
    """The HTTP status for ``exc`` and its short message (the detail is ``str(exc)``)."""
    for kind, status, message in _STATUS:
        if isinstance(exc, kind):
            return status, message
    return 400, "Invalid request."
