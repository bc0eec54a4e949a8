"""Who is looking: the login cookie, and the checks that keep other sites from acting for them.

The cookie holds the user's API token (HttpOnly, SameSite=Strict, Secure over HTTPS): the
token is checked by the control plane on each request, as a bearer token is, so a rotated
or revoked token logs the browser out too. State-changing forms carry a per-session CSRF
token (an HMAC of the API token) and must come from this very origin.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from agentcontext.control.edge import SESSION_COOKIE
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import AuthError

COOKIE = SESSION_COOKIE  # the request guard counts event streams by the token it holds
MAX_AGE = 30 * 24 * 3600


class LoginRequired(Exception):
    """No valid login cookie: the page answers with a redirect to ``/login``."""


class Forbidden(Exception):
    """A state-changing form from another origin or without this session's CSRF token."""


def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


async def user_of(request: Request) -> UserPrincipal | None:
    token = request.cookies.get(COOKIE, "")
    if not token:
        return None
    try:
        principal = await plane_of(request).authenticate(token)
    except AuthError:
        return None
    return principal if isinstance(principal, UserPrincipal) else None


async def require_user(request: Request) -> UserPrincipal:
    """Raises: LoginRequired."""
    user = await user_of(request)
    if user is None:
        raise LoginRequired()
    return user


def csrf_token(request: Request) -> str:
    token = request.cookies.get(COOKIE, "")
    return hmac.new(token.encode(), b"agentcontext-dashboard-csrf", hashlib.sha256).hexdigest()


def same_origin(request: Request) -> bool:
    """The request's Origin (else Referer) names this host; a browser sends one with every form POST."""
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    host = request.headers.get("host", "")
    return bool(source) and source != "null" and urlsplit(source).netloc == host


async def check_form(request: Request) -> None:
    """Raises: Forbidden (another origin, or not this session's CSRF token)."""
    form = await request.form()
    sent = form.get("csrf")
    if not same_origin(request) or not isinstance(sent, str) or not hmac.compare_digest(sent, csrf_token(request)):
        raise Forbidden()


def log_in(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        COOKIE,
        token,
        max_age=MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def log_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
