"""Dashboard sessions (``control.sessions``), on SQLite and PostgreSQL.

A user's API token starts a pending login; only the user's yes makes it a session, under a new
secret. Secrets are stored as their sha256; a session expires, ends at logout, and ends with the
API token (or the user) it was made with; one token keeps at most ``MAX_PER_TOKEN`` of them.
"""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
import sqlalchemy as sa

from agentcontext.control import identity, sessions
from agentcontext.control.db import Database
from agentcontext.control.models import ApiToken, DashboardSession, User
from agentcontext.errors import AuthError

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def user_token(db: Database, name: str = "alice") -> str:
    return db.write(lambda s: identity.create_user(s, name)).token


def begin(db: Database, token: str, now: dt.datetime = T0) -> sessions.Issued:
    return db.write_rows(lambda c: sessions.begin(c, token, now=now))


def confirm(db: Database, secret: str, now: dt.datetime = T0) -> sessions.Issued:
    return db.write_rows(lambda c: sessions.confirm(c, secret, now=now))


def find(db: Database, secret: str, now: dt.datetime = T0) -> sessions.SessionUser:
    return db.read_rows(lambda c: sessions.find(c, secret, now=now))


def stored(db: Database) -> list[tuple[str, bool]]:
    with db.read() as read:
        return [(row.secret_hash, row.confirmed) for row in read.scalars(sa.select(DashboardSession))]


def test_a_login_is_a_session_only_once_the_user_said_yes_and_under_a_new_secret(db: Database) -> None:
    token = user_token(db)
    pending = begin(db, token)
    assert pending.user.name == "alice" and pending.secret.startswith("acs_") and pending.expires_at > T0
    assert db.read_rows(lambda c: sessions.pending(c, pending.secret, now=T0)).user.name == "alice"
    with pytest.raises(AuthError):
        find(db, pending.secret)  # a login waiting for an answer signs nobody in
    session = confirm(db, pending.secret)
    assert session.secret != pending.secret and session.expires_at == T0 + sessions.SESSION_TTL
    found = find(db, session.secret)
    assert (found.user.name, found.token_hash) == ("alice", identity.token_hash(token))
    for answered in (pending.secret, session.secret):
        with pytest.raises(AuthError):  # answered once; a session is not a login to answer
            confirm(db, answered)
    assert stored(db) == [(hashlib.sha256(session.secret.encode()).hexdigest(), True)]  # only the hash is kept


@pytest.mark.parametrize("token", ["", "acu_never-issued", "aca_an-agents-token", "not-a-token"])
def test_only_a_users_api_token_starts_a_login(db: Database, token: str) -> None:
    user_token(db)
    with pytest.raises(AuthError):
        begin(db, token)
    assert stored(db) == []


def test_a_login_left_unanswered_and_a_session_past_its_time_expire(db: Database) -> None:
    token = user_token(db)
    late = begin(db, token)
    with pytest.raises(AuthError):
        confirm(db, late.secret, T0 + sessions.PENDING_TTL)
    session = confirm(db, begin(db, token).secret)
    assert find(db, session.secret, session.expires_at - dt.timedelta(seconds=1)).user.name == "alice"
    with pytest.raises(AuthError):
        find(db, session.secret, session.expires_at)
    begin(db, token, session.expires_at)  # the next login clears the user's expired ones
    assert [confirmed for _, confirmed in stored(db)] == [False]


def test_logging_out_deleting_the_token_or_the_user_ends_its_sessions(db: Database) -> None:
    alice, bob = user_token(db), user_token(db, "bob")
    first, second = (confirm(db, begin(db, alice).secret) for _ in range(2))
    db.write_rows(lambda c: sessions.end(c, first.secret))
    with pytest.raises(AuthError):
        find(db, first.secret)
    assert find(db, second.secret).user.name == "alice"
    bobs = confirm(db, begin(db, bob).secret)
    db.write(lambda s: s.execute(sa.delete(ApiToken).where(ApiToken.token_hash == identity.token_hash(alice))))
    with pytest.raises(AuthError):
        find(db, second.secret)
    db.write(lambda s: s.execute(sa.delete(User).where(User.name == "bob")))
    with pytest.raises(AuthError):
        find(db, bobs.secret)
    assert stored(db) == []


def test_one_token_keeps_at_most_its_share_of_sessions_and_logins_the_oldest_going_first(db: Database) -> None:
    token = user_token(db)
    made = [begin(db, token, T0 + dt.timedelta(seconds=n)) for n in range(sessions.MAX_PER_TOKEN + 4)]
    assert len(stored(db)) == sessions.MAX_PER_TOKEN
    kept = {hashlib.sha256(issued.secret.encode()).hexdigest() for issued in made[-sessions.MAX_PER_TOKEN :]}
    assert {secret for secret, _ in stored(db)} == kept
