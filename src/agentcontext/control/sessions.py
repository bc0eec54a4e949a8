"""Dashboard sessions: what the login cookie holds instead of the user's API token.

Logging in takes two steps, so that a login link cannot sign a browser in unseen: a user's API
token (pasted, or from a link's fragment) starts a *pending* login of ``PENDING_TTL``, and the
page names the account and asks; only the user's yes makes it a session, under a new secret.
A session's secret is 32 random bytes behind ``acs_``; only its sha256 is stored, with the
user, the API token it was made with (deleting the token or the user ends it) and its expiry
(``SESSION_TTL``, not extended). Logging out deletes it. One token has at most
``MAX_PER_TOKEN`` sessions and pending logins: a new one ends the oldest, and expired ones go
when their user logs in again.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentcontext.control.identity import USER_PREFIX, UserPrincipal, token_hash
from agentcontext.control.models import ApiToken, DashboardSession, User, new_id
from agentcontext.errors import AuthError

SESSION_PREFIX = "acs_"
PENDING_TTL = dt.timedelta(minutes=10)
SESSION_TTL = dt.timedelta(days=30)
MAX_PER_TOKEN = 16

_SESSIONS = cast(sa.Table, DashboardSession.__table__)
_USERS = cast(sa.Table, User.__table__)
_TOKENS = cast(sa.Table, ApiToken.__table__)


@dataclass(frozen=True, slots=True)
class SessionUser:
    """Who a session (or a pending login) signs in as, and the hash of the API token it was made with."""

    user: UserPrincipal
    token_hash: str  # a session's event streams count as that token's (``edge.stream_key``)


@dataclass(frozen=True, slots=True)
class Issued:
    """A new secret for the cookie (shown once) and who it signs in as."""

    secret: str
    user: UserPrincipal
    expires_at: dt.datetime


_TOKEN_OWNER = (
    sa.select(_TOKENS.c.id, _USERS.c.id.label("user_id"), _USERS.c.name, _USERS.c.is_admin)
    .select_from(_TOKENS.join(_USERS, _USERS.c.id == _TOKENS.c.user_id))
    .where(_TOKENS.c.token_hash == sa.bindparam("digest"))
)
_FIND = (
    sa.select(_USERS.c.id, _USERS.c.name, _USERS.c.is_admin, _TOKENS.c.token_hash)
    .select_from(
        _SESSIONS.join(_USERS, _USERS.c.id == _SESSIONS.c.user_id).join(_TOKENS, _TOKENS.c.id == _SESSIONS.c.token_id)
    )
    .where(
        _SESSIONS.c.secret_hash == sa.bindparam("digest"),
        _SESSIONS.c.confirmed == sa.bindparam("confirmed"),
        _SESSIONS.c.expires_at > sa.bindparam("now"),
    )
)


def new_secret() -> str:
    return SESSION_PREFIX + secrets.token_urlsafe(32)


def begin(connection: Connection, token: str, *, now: dt.datetime) -> Issued:
    """A pending login for the user whose API token ``token`` is.

    Raises:
        AuthError: not a user's API token.
    """
    owner = None
    if token.startswith(USER_PREFIX):
        owner = connection.execute(_TOKEN_OWNER, {"digest": token_hash(token)}).first()
    if owner is None:
        raise AuthError("not a user's API token")
    _prune(connection, owner.user_id, owner.id, now)
    secret, expires = new_secret(), now + PENDING_TTL
    connection.execute(
        sa.insert(_SESSIONS).values(
            id=new_id(),
            secret_hash=token_hash(secret),
            user_id=owner.user_id,
            token_id=owner.id,
            confirmed=False,
            created_at=now,
            expires_at=expires,
        )
    )
    return Issued(secret, UserPrincipal("user", owner.user_id, owner.name, owner.is_admin), expires)


def _prune(connection: Connection, user_id: str, token_id: str, now: dt.datetime) -> None:
    """Delete the user's expired sessions, and the token's oldest past ``MAX_PER_TOKEN - 1``."""
    connection.execute(sa.delete(_SESSIONS).where(_SESSIONS.c.user_id == user_id, _SESSIONS.c.expires_at <= now))
    kept = (
        sa.select(_SESSIONS.c.id)
        .where(_SESSIONS.c.token_id == token_id)
        .order_by(_SESSIONS.c.created_at.desc(), _SESSIONS.c.id)
        .limit(MAX_PER_TOKEN - 1)
    )
    connection.execute(sa.delete(_SESSIONS).where(_SESSIONS.c.token_id == token_id, _SESSIONS.c.id.not_in(kept)))


def pending(connection: Connection, secret: str, *, now: dt.datetime) -> SessionUser:
    """Who the pending login ``secret`` would sign in as. Raises: AuthError (none, or expired)."""
    return _find(connection, secret, now=now, confirmed=False)


def confirm(connection: Connection, secret: str, *, now: dt.datetime) -> Issued:
    """The user said yes: the pending login ``secret`` becomes a session, under a new secret.

    Raises:
        AuthError: no such pending login (expired, answered already, or never begun).
    """
    found = pending(connection, secret, now=now)
    fresh, expires = new_secret(), now + SESSION_TTL
    answered = connection.execute(
        sa.update(_SESSIONS)
        .where(
            _SESSIONS.c.secret_hash == token_hash(secret),
            _SESSIONS.c.confirmed.is_(False),
            _SESSIONS.c.expires_at > now,
        )
        .values(secret_hash=token_hash(fresh), confirmed=True, created_at=now, expires_at=expires)
    )
    if answered.rowcount != 1:  # a concurrent answer took it first
        raise AuthError("no such login waiting for an answer")
    return Issued(fresh, found.user, expires)


def find(connection: Connection, secret: str, *, now: dt.datetime) -> SessionUser:
    """Who the session ``secret`` signs in as. Raises: AuthError (no such session, or expired)."""
    return _find(connection, secret, now=now, confirmed=True)


def _find(connection: Connection, secret: str, *, now: dt.datetime, confirmed: bool) -> SessionUser:
    row = None
    if secret.startswith(SESSION_PREFIX):
        row = connection.execute(_FIND, {"digest": token_hash(secret), "confirmed": confirmed, "now": now}).first()
    if row is None:
        raise AuthError("no such session" if confirmed else "no such login waiting for an answer")
    return SessionUser(UserPrincipal("user", row.id, row.name, row.is_admin), row.token_hash)


def end(connection: Connection, secret: str) -> None:
    """Delete the session or pending login ``secret`` (nothing when there is none)."""
    connection.execute(sa.delete(_SESSIONS).where(_SESSIONS.c.secret_hash == token_hash(secret)))
