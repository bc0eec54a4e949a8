"""Who is looking: the login cookie, the login that asks first, and the checks that keep other sites out.

The cookie holds a session's secret (``control.sessions``), never the API token: HttpOnly,
SameSite=Strict, Secure over HTTPS. A token (pasted, or from a login link's fragment) only
starts a pending login, whose secret sits in a second cookie scoped to ``/login``; the page
names the account and asks, and only the user's yes, posted from this very origin with that
pending login's CSRF token, makes the session. State-changing forms carry a per-session CSRF
token (an HMAC of the cookie's secret) and must come from this very origin.
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
from agentcontext.control.sessions import PENDING_TTL, SESSION_TTL
from agentcontext.errors import AuthError

COOKIE = SESSION_COOKIE  # the request guard counts event streams by the token its session was made with
PENDING_COOKIE = "agentcontext_login"  # a login waiting for the user's yes
PENDING_PATH = "/login"


class LoginRequired(Exception):
    """No valid login cookie: the page answers with a redirect to ``/login``."""


class Forbidden(Exception):
    """A state-changing form from another origin or without this session's CSRF token."""


def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


async def user_of(request: Request) -> UserPrincipal | None:
    secret = request.cookies.get(COOKIE, "")
    if not secret:
        return None
    try:
        return (await plane_of(request).access.session(secret)).user
    except AuthError:
        return None


async def require_user(request: Request) -> UserPrincipal:
    """Raises: LoginRequired."""
    user = await user_of(request)
    if user is None:
        raise LoginRequired()
    return user


def csrf_of(secret: str) -> str:
    return hmac.new(secret.encode(), b"agentcontext-dashboard-csrf", hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> str:
    return csrf_of(request.cookies.get(COOKIE, ""))


def same_origin(request: Request) -> bool:
    """The request's Origin (else Referer) names this host; a browser sends one with every form POST."""
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    host = request.headers.get("host", "")
    return bool(source) and source != "null" and urlsplit(source).netloc == host


async def check_form(request: Request, secret: str | None = None) -> None:
    """Raises: Forbidden (another origin, or not the CSRF token of ``secret``, by default the session's)."""
    form = await request.form()
    sent = form.get("csrf")
    expected = csrf_of(request.cookies.get(COOKIE, "") if secret is None else secret)
    if not same_origin(request) or not isinstance(sent, str) or not hmac.compare_digest(sent, expected):
        raise Forbidden()


def _set(response: Response, request: Request, name: str, value: str, max_age: int, path: str) -> None:
    secure = request.url.scheme == "https"
    response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="strict", secure=secure)


def pend(response: Response, request: Request, secret: str) -> None:
    _set(response, request, PENDING_COOKIE, secret, int(PENDING_TTL.total_seconds()), PENDING_PATH)


def log_in(response: Response, request: Request, secret: str) -> None:
    _set(response, request, COOKIE, secret, int(SESSION_TTL.total_seconds()), "/")
    drop_pending(response)


def drop_pending(response: Response) -> None:
    """The pending login is answered: its cookie goes."""
    response.delete_cookie(PENDING_COOKIE, path=PENDING_PATH, httponly=True, samesite="strict")


def log_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
