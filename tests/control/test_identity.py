"""Users, tokens, workspaces and agents (issue 5, "Identity"), on SQLite and PostgreSQL.

Tokens are shown once and stored only as their sha256: a copy of the database grants
nothing. A token of the wrong kind, a revoked token or any near miss is an ``AuthError``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import identity
from agentcontext.control.db import Database
from agentcontext.control.identity import AgentPrincipal, UserPrincipal
from agentcontext.control.models import Agent, Base, User, Workspace
from agentcontext.errors import AuthError, ConflictError, InvalidRequestError, NotFoundError

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def authenticate(db: Database, token: str) -> identity.Principal:
    with db.read() as session:
        return identity.authenticate(session, token)


def every_stored_value(db: Database) -> list[str]:
    """Every value of every column of every table, as text (but the count of token changes: bookkeeping)."""
    with db.read() as session:
        return [
            str(value)
            for table in Base.metadata.sorted_tables
            if table.name != "auth_epoch"
            for row in session.execute(sa.select(table))
            for value in row
            if value is not None
        ]


def test_tokens_are_stored_as_their_sha256_and_never_in_plain(db: Database) -> None:
    user = db.write(lambda s: identity.create_user(s, "alice"))
    second = db.write(lambda s: identity.create_token(s, "alice", label="laptop"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    stored = every_stored_value(db)
    for token in (user.token, second.token, agent.token):
        assert not any(token in value for value in stored)
        assert not any(token.split("_", 1)[1] in value for value in stored)  # nor its secret part
        assert hashlib.sha256(token.encode()).hexdigest() in stored


def test_issued_tokens_carry_their_kind_prefix_and_differ(db: Database) -> None:
    first = db.write(lambda s: identity.create_user(s, "alice"))
    second = db.write(lambda s: identity.create_token(s, "alice"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    assert first.token.startswith("acu_") and second.token.startswith("acu_")
    assert agent.token.startswith("aca_")
    assert first.token != second.token
    assert len(first.token) > 40  # 32 random bytes behind the prefix


def test_a_user_token_authenticates_as_that_user(db: Database) -> None:
    db.write(lambda s: identity.create_user(s, "bob"))
    alice = db.write(lambda s: identity.create_user(s, "alice", admin=True))

    assert authenticate(db, alice.token) == UserPrincipal("user", alice.id, "alice", True)


def test_every_token_of_a_user_authenticates_as_that_user(db: Database) -> None:
    alice = db.write(lambda s: identity.create_user(s, "alice"))
    extra = db.write(lambda s: identity.create_token(s, "alice", label="ci"))

    assert authenticate(db, extra.token) == UserPrincipal("user", alice.id, "alice", False)
    assert authenticate(db, alice.token) == authenticate(db, extra.token)


def test_an_agent_token_authenticates_as_that_agent(db: Database) -> None:
    db.write(lambda s: identity.create_agent(s, "ws", "other"))
    dev = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    with db.read() as session:
        workspace_id = identity.workspace_by_name_or_id(session, "ws").id

    assert authenticate(db, dev.token) == AgentPrincipal("agent", dev.id, workspace_id, "dev")


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda t: t[:-1], id="truncated"),
        pytest.param(lambda t: t + "x", id="extended"),
        pytest.param(lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), id="last-character-changed"),
        pytest.param(lambda t: t.upper(), id="upper-cased"),
        pytest.param(lambda t: " " + t, id="leading-space"),
        pytest.param(lambda t: "", id="empty"),
        pytest.param(lambda t: "acu_", id="prefix-only"),
        pytest.param(lambda t: "aca_" + t[4:], id="user-secret-behind-agent-prefix"),
        pytest.param(lambda t: t[4:], id="secret-without-prefix"),
        pytest.param(lambda t: hashlib.sha256(t.encode()).hexdigest(), id="the-stored-hash-itself"),
    ],
)
def test_near_misses_of_a_user_token_are_refused(db: Database, mangle: object) -> None:
    alice = db.write(lambda s: identity.create_user(s, "alice"))
    assert callable(mangle)

    with pytest.raises(AuthError, match="invalid token"):
        authenticate(db, mangle(alice.token))


def test_an_agent_secret_behind_the_user_prefix_is_refused(db: Database) -> None:
    db.write(lambda s: identity.create_user(s, "alice"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    with pytest.raises(AuthError):
        authenticate(db, "acu_" + agent.token[4:])


def test_a_token_nobody_was_issued_is_refused(db: Database) -> None:
    db.write(lambda s: identity.create_user(s, "alice"))

    with pytest.raises(AuthError):
        authenticate(db, identity.new_token(identity.USER_PREFIX))
    with pytest.raises(AuthError):
        authenticate(db, identity.new_token(identity.AGENT_PREFIX))


def test_rotating_an_agent_token_invalidates_the_old_one_at_once(db: Database) -> None:
    old = db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    new = db.write(lambda s: identity.rotate_agent_token(s, "ws", "dev"))

    assert new.id == old.id and new.token != old.token
    with pytest.raises(AuthError):
        authenticate(db, old.token)
    principal = authenticate(db, new.token)
    assert isinstance(principal, AgentPrincipal) and principal.agent_id == old.id


def test_rotating_the_token_of_an_unknown_agent_is_not_found(db: Database) -> None:
    db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    with pytest.raises(NotFoundError, match='no agent named "ghost"'):
        db.write(lambda s: identity.rotate_agent_token(s, "ws", "ghost"))
    with pytest.raises(NotFoundError, match='workspace "nowhere" not found'):
        db.write(lambda s: identity.rotate_agent_token(s, "nowhere", "dev"))


@pytest.mark.parametrize(
    "name",
    [
        "",
        "-alice",
        ".alice",
        "_alice",
        "al ice",
        "al/ice",
        "alice\n",
        "\nalice",
        "al\x00ice",
        "ålice",
        "a" * 129,
    ],
)
def test_invalid_names_are_refused_for_users_workspaces_and_agents(db: Database, name: str) -> None:
    with pytest.raises(InvalidRequestError, match="invalid user name"):
        db.write(lambda s: identity.create_user(s, name))
    with pytest.raises(InvalidRequestError, match="invalid workspace name"):
        db.write(lambda s: identity.create_agent(s, name, "dev"))
    with pytest.raises(InvalidRequestError, match="invalid agent name"):
        db.write(lambda s: identity.create_agent(s, "ws", name))
    assert every_stored_value(db) == []  # nothing half-created


@pytest.mark.parametrize("name", ["a", "A9", "dev-coderd-chat", "my.agent_2", "a" * 128])
def test_valid_names_are_accepted(db: Database, name: str) -> None:
    user = db.write(lambda s: identity.create_user(s, name))
    agent = db.write(lambda s: identity.create_agent(s, name, name))

    assert user.name == name and agent.name == name


def test_a_taken_user_name_is_a_conflict(db: Database) -> None:
    db.write(lambda s: identity.create_user(s, "alice"))

    with pytest.raises(ConflictError, match='user "alice" already exists'):
        db.write(lambda s: identity.create_user(s, "alice"))


def test_a_taken_agent_name_in_the_same_workspace_is_a_conflict(db: Database) -> None:
    db.write(lambda s: identity.create_agent(s, "ws", "dev"))

    with pytest.raises(ConflictError, match='already has an agent named "dev"'):
        db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    other = db.write(lambda s: identity.create_agent(s, "ws2", "dev"))  # another workspace is fine
    assert other.name == "dev"


def test_a_token_for_an_unknown_user_is_not_found(db: Database) -> None:
    with pytest.raises(NotFoundError, match='user "ghost" not found'):
        db.write(lambda s: identity.create_token(s, "ghost"))


def test_an_agent_with_an_unknown_parent_is_not_found(db: Database) -> None:
    with pytest.raises(NotFoundError, match='no agent named "host"'):
        db.write(lambda s: identity.create_agent(s, "ws", "devcontainer", parent="host"))


def test_a_sub_agent_records_its_parent(db: Database) -> None:
    host = db.write(lambda s: identity.create_agent(s, "ws", "host"))
    sub = db.write(lambda s: identity.create_agent(s, "ws", "devcontainer", parent="host", display_order=3))

    with db.read() as session:
        row = session.get(Agent, sub.id)
        assert row is not None
        assert (row.parent_id, row.display_order) == (host.id, 3)


def test_agents_of_one_workspace_share_it_and_it_is_found_by_name_or_id(db: Database) -> None:
    first = db.write(lambda s: identity.create_agent(s, "ws", "a"))
    second = db.write(lambda s: identity.create_agent(s, "ws", "b"))

    with db.read() as session:
        workspace = identity.workspace_by_name_or_id(session, "ws")
        assert identity.workspace_by_name_or_id(session, workspace.id).name == "ws"
        owners = {session.get(Agent, first.id).workspace_id, session.get(Agent, second.id).workspace_id}  # type: ignore[union-attr]
        assert owners == {workspace.id}
        with pytest.raises(NotFoundError):
            identity.workspace_by_name_or_id(session, "nowhere")


def test_a_workspace_id_wins_over_another_workspace_named_like_it(db: Database) -> None:
    db.write(lambda s: identity.create_agent(s, "first", "dev"))
    with db.read() as session:
        first_id = identity.workspace_by_name_or_id(session, "first").id
    db.write(lambda s: identity.create_agent(s, first_id, "dev"))  # a workspace *named* like the first's id

    with db.read() as session:
        assert identity.workspace_by_name_or_id(session, first_id).name == "first"


def test_has_users_is_false_until_the_first_user(db: Database) -> None:
    with db.read() as session:
        assert identity.has_users(session) is False
    db.write(lambda s: identity.create_user(s, "alice"))
    with db.read() as session:
        assert identity.has_users(session) is True


def _online(db: Database) -> dict[str, bool]:
    with db.read() as session:
        return {row.name: row.online for row in session.execute(sa.select(Agent.name, Agent.online))}


def test_offline_after_marks_only_online_agents_silent_for_longer_than_the_silence(db: Database) -> None:
    """Silence is told on the clock last-seen times are written with: on PostgreSQL the database's, whatever the
    server's own clock says (``now``, months off here); on SQLite, its one server's."""
    silence = dt.timedelta(seconds=45)
    ago = {  # name -> (last seen this long before the clock, online)
        "stale": (silence + dt.timedelta(minutes=5), True),
        "fresh": (silence - dt.timedelta(seconds=1), True),
        "edge": (silence, True),  # silent exactly that long: not longer
        "gone": (dt.timedelta(hours=1), False),
    }
    ids = {name: db.write(partial(identity.create_agent, workspace_name="ws", name=name)).id for name in ago}
    clock: Any = sa.func.now() if db.dialect == "postgresql" else T0

    def seen_then_swept(session: Session) -> tuple[list[str], list[str]]:  # one transaction: one now()
        for name, (before, online) in ago.items():
            agent = sa.update(Agent).where(Agent.id == ids[name])
            session.execute(agent.values(online=online, last_seen_at=clock - before))
        return identity.offline_after(session, silence, now=T0), identity.offline_after(session, silence, now=T0)

    assert db.write(seen_then_swept) == ([ids["stale"]], [])  # reported once
    assert _online(db) == {"stale": False, "fresh": True, "edge": True, "gone": False}


def race(count: int, work: Callable[[int], object]) -> list[object]:
    """Run ``work(0..count-1)`` on as many threads released together; each one's result or exception."""
    start = threading.Barrier(count)
    results: list[object] = [None] * count

    def run(number: int) -> None:
        start.wait(timeout=30)
        try:
            results[number] = work(number)
        except Exception as exc:  # the outcome under test
            results[number] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_concurrent_creations_of_one_user_name_make_one_user_and_conflicts(db: Database) -> None:
    results = race(4, lambda _: db.write(lambda s: identity.create_user(s, "alice")))

    assert sorted(type(r).__name__ for r in results) == ["ConflictError"] * 3 + ["Issued"]
    with db.read() as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(User)) == 1


def test_concurrent_creations_of_one_agent_name_make_one_agent_and_conflicts(db: Database) -> None:
    results = race(4, lambda _: db.write(lambda s: identity.create_agent(s, "ws", "dev")))

    assert sorted(type(r).__name__ for r in results) == ["ConflictError"] * 3 + ["Issued"]


def test_agents_created_concurrently_in_a_new_workspace_share_it(db: Database) -> None:
    results = race(4, lambda n: db.write(lambda s: identity.create_agent(s, "fresh", f"agent-{n}")))

    assert all(isinstance(r, identity.Issued) for r in results)
    with db.read() as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(Workspace)) == 1
        assert len(set(session.scalars(sa.select(Agent.workspace_id)))) == 1
