"""Which chat, for which user, an MCP request is about: decided by the endpoint, read by the handlers.

The endpoint authenticates every HTTP request and resolves its chat before the SDK sees it,
then leaves a :class:`ChatBinding` in the ASGI scope, where the SDK's request context
(``ctx.request.scope``) hands it to each handler. A session's opening request also sets
:data:`OPENING`, because the SDK builds the ``initialize`` answer (with the chat's
instructions) where no request context is available.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentcontext.control.identity import UserPrincipal

SCOPE_KEY = "agentcontext.chat"


@dataclass(frozen=True, slots=True)
class ChatBinding:
    user: UserPrincipal
    chat_id: str
    instructions: str | None = None  # the pinned prompt, fetched for a session's opening request


OPENING: ContextVar[ChatBinding | None] = ContextVar("agentcontext_chat_mcp_opening", default=None)


def from_request(request: Any) -> ChatBinding | None:
    """The binding the endpoint left on the HTTP request that carried this message."""
    scope = getattr(request, "scope", None)
    binding = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    return binding if isinstance(binding, ChatBinding) else None
