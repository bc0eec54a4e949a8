"""Who is calling the API, as route dependencies: a user's token, an administrator's, or an agent's.

Every route but ``/healthz`` needs ``Authorization: Bearer <token>``: a user's API token
for chats, skills and workspaces, an agent's token for ``/api/v1/agent/*``. The wrong kind
of token is 403 before the body is looked at. Text no database can store (NUL, a lone
surrogate) in the path, the query or anywhere in the body is 400 naming where it is.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agentcontext.control.identity import AgentPrincipal, Principal, UserPrincipal
from agentcontext.control.plane import SYNC_DISABLED, ControlPlane, SyncDisabled
from agentcontext.errors import AuthError, ForbiddenError, InvalidRequestError
from agentcontext.sync_contract import storable


def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="A user's API token (acu_...) for chats, skills and workspaces; an agent's token (aca_...) to push.",
)


async def _principal(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Principal:
    token = credentials.credentials.strip() if credentials is not None else ""
    if not token:
        raise AuthError("a bearer token is required (Authorization: Bearer <token>)")
    return await plane_of(request).authenticate(token)


async def _user(request: Request, principal: Annotated[Principal, Depends(_principal)]) -> UserPrincipal:
    if not isinstance(principal, UserPrincipal):
        raise ForbiddenError("this route needs a user's API token, not an agent token")
    await check_text(request)
    return principal


async def _admin(user: Annotated[UserPrincipal, Depends(_user)]) -> UserPrincipal:
    """An administrator, refused before the body is looked at."""
    if not user.is_admin:
        raise ForbiddenError("only an administrator may do this")
    return user


async def _agent(request: Request, principal: Annotated[Principal, Depends(_principal)]) -> AgentPrincipal:
    """An agent token; with context sync switched off, every agent route answers 501 whatever the body."""
    if not isinstance(principal, AgentPrincipal):
        raise ForbiddenError("this route needs an agent token")
    if not plane_of(request).settings.sync_enabled:
        raise SyncDisabled(SYNC_DISABLED)
    await check_text(request)
    return principal


# A JSON escape of NUL or of a UTF-16 surrogate, or the raw UTF-8 bytes of a surrogate (which
# json.loads decodes with "surrogatepass"): only then is the parsed body walked.
_SUSPECT = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})|\xed[\xa0-\xbf]")


def _bad_text(value: Any, where: str) -> str | None:
    """The first string in ``value`` (keys too) that cannot be stored, as ``where: problem``."""
    if isinstance(value, str):
        try:
            storable(value)
        except ValueError as exc:
            return f"{where or 'body'}: {exc}"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _bad_text(key, where) or _bad_text(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _bad_text(item, f"{where}[{index}]")
            if found:
                return found
    return None


async def check_text(request: Request) -> None:
    """Refuse text no database can store (NUL, lone surrogates) with 400 naming where it is, not a 500."""
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        found = _bad_text(value, name) if isinstance(value, str) else None
        if found:
            raise InvalidRequestError(found)
    if request.method in ("GET", "HEAD", "DELETE"):
        return
    body = await request.body()
    if body and _SUSPECT.search(body):
        try:
            parsed = json.loads(body)
        except ValueError:
            return  # not JSON: the route's own parsing refuses it
        found = _bad_text(parsed, "")
        if found:
            raise InvalidRequestError(found)


User = Annotated[UserPrincipal, Depends(_user)]
Admin = Annotated[UserPrincipal, Depends(_admin)]
AgentToken = Annotated[AgentPrincipal, Depends(_agent)]
