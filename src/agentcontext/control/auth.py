"""Who is calling the API, as route dependencies: a user's token, an administrator's, or an agent's.

Every route but ``/healthz`` needs ``Authorization: Bearer <token>``: a user's API token
for chats, skills and workspaces, an agent's token for ``/api/v1/agent/*``. The wrong kind
of token is 403 before the body is looked at. Text no database can store (NUL, a lone
surrogate) in the path, the query or anywhere in the body is 400 naming where it is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from agentcontext.control.identity import AgentPrincipal, Principal, UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import AuthError, ForbiddenError, InvalidRequestError
from agentcontext.wire.sync import storable

SCHEME = "token"
SCHEME_DESCRIPTION = (
    "A user's API token (acu_...) for chats, skills and workspaces; an agent's token (aca_...) to push."
)


@dataclass(frozen=True, slots=True)
class UserCall:
    plane: ControlPlane
    user: UserPrincipal
    token: str = field(default="", repr=False)  # what named ``user``: a stream asks again (``still_the_user``)

    async def still_the_user(self) -> bool:
        """Whether the token still names this user (a stream outlives its request's check)."""
        try:
            again = await self.plane.access.authenticate(self.token)
        except AuthError:
            return False
        return isinstance(again, UserPrincipal) and again.user_id == self.user.user_id


@dataclass(frozen=True, slots=True)
class AgentCall:
    plane: ControlPlane
    agent: AgentPrincipal


async def _principal(request: Request) -> tuple[ControlPlane, Principal, str]:
    """The bearer token's owner. One dependency does it all: each one FastAPI solves costs a request time.

    (The OpenAPI document declares the scheme: ``api._openapi``.)
    """
    scheme, _, credentials = (request.headers.get("authorization") or "").partition(" ")
    token = credentials.strip() if scheme.lower() == "bearer" else ""
    if not token:
        raise AuthError("a bearer token is required (Authorization: Bearer <token>)")
    plane: ControlPlane = request.app.state.plane
    return plane, await plane.access.authenticate(token), token


async def _user(request: Request) -> UserCall:
    return await _user_call(request, admin=False)


async def _admin(request: Request) -> UserCall:
    return await _user_call(request, admin=True)


async def _user_call(request: Request, *, admin: bool) -> UserCall:
    plane, principal, token = await _principal(request)
    if not isinstance(principal, UserPrincipal):
        raise ForbiddenError("this route needs a user's API token, not an agent token")
    if admin and not principal.is_admin:  # refused before the body is looked at
        raise ForbiddenError("only an administrator may do this")
    await check_text(request)
    return UserCall(plane, principal, token)


async def _agent(request: Request) -> AgentCall:
    """An agent token; with context sync switched off, every agent route answers 501 whatever the body."""
    plane, principal, _ = await _principal(request)
    if not isinstance(principal, AgentPrincipal):
        raise ForbiddenError("this route needs an agent token")
    plane.sync.check_enabled()
    await check_text(request)
    return AgentCall(plane, principal)


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


def _declares_body(request: Request) -> bool:
    """Whether the request says it has a body (HTTP/1.1: a length or a chunked encoding); one that does not has
    none, and reading it would still cost a trip through every middleware's ``receive`` (a refresh's ``PUT``)."""
    headers = request.headers
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


async def check_text(request: Request) -> None:
    """Refuse text no database can store (NUL, lone surrogates) with 400 naming where it is, not a 500."""
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        found = _bad_text(value, name) if isinstance(value, str) else None
        if found:
            raise InvalidRequestError(found)
    if request.method in ("GET", "HEAD", "DELETE") or not _declares_body(request):
        return
    body = await request.body()
    if body and (b"\\u" in body or b"\xed" in body) and _SUSPECT.search(body):  # the scan only when it may find
        try:
            parsed = json.loads(body)
        except ValueError:
            return  # not JSON: the route's own parsing refuses it
        found = _bad_text(parsed, "")
        if found:
            raise InvalidRequestError(found)


User = Annotated[UserCall, Depends(_user)]
Admin = Annotated[UserCall, Depends(_admin)]
AgentToken = Annotated[AgentCall, Depends(_agent)]
