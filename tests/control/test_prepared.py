"""Hot statements run on the driver's connection (``control.prepared``) answer exactly what SQLAlchemy's own
execution of them answers, on SQLite and PostgreSQL, and fail as SQLAlchemy's would."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql import psycopg as pg_psycopg
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

import agentcontext.control
from agentcontext.control import identity, migrate
from agentcontext.control import tables as t
from agentcontext.control.db import Database
from agentcontext.control.models import ApiToken, User
from agentcontext.control.prepared import CommitOutcomeUnknown, Prepared, at_commit, say
from agentcontext.control.turns import turn_row
from agentcontext.errors import NotFoundError
from agentcontext.resource import Kind
from tests.control.conftest import NOTES, REVIEW, WORK, mcp_server, text_resource
from tests.control.shared_turns import two_users
from tests.pg_cluster import TempCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def every_prepared() -> Iterator[tuple[str, Prepared]]:
    """Each ``Prepared`` a control plane module holds (alone, or in a table by dialect), by module and name."""
    for info in pkgutil.walk_packages(agentcontext.control.__path__, "agentcontext.control."):
        if ".migrations" in info.name:  # Alembic's scripts run only under Alembic
            continue
        module = importlib.import_module(info.name)
        where = info.name.rsplit(".", 1)[1]
        for name, value in vars(module).items():
            if isinstance(value, Prepared):
                yield f"{where}.{name}", value
            elif isinstance(value, dict):
                yield from ((f"{where}.{name}[{k}]", v) for k, v in value.items() if isinstance(v, Prepared))


PREPARED = dict(every_prepared())
USERS = cast(sa.Table, User.__table__)


def test_the_hot_paths_hold_prepared_statements() -> None:
    hot = {"turns._RUN_KEY", "turns._RUN_KEY_AND_INPUTS", "chats._PIN_TO_SNAPSHOT", "rediscovery._WATCHED"}
    assert hot <= PREPARED.keys()


@pytest.mark.parametrize(
    "dialect",
    [sqlite.dialect(), pg_psycopg.dialect()],  # type: ignore[no-untyped-call]
    ids=["sqlite", "postgresql"],
)
def test_every_prepared_statement_compiles_for_both_databases(dialect: sa.Dialect) -> None:
    for where, prepared in PREPARED.items():
        if prepared.only not in (None, dialect.name):
            with pytest.raises(ValueError, match=f"for {prepared.only} run on {dialect.name}"):
                prepared.compiled(dialect)
            continue
        compiled = prepared.compiled(dialect)
        assert compiled.sql, where
        assert compiled.order is None or dialect.paramstyle == "qmark", where


def test_a_statement_whose_parameters_expand_at_execution_is_refused() -> None:
    statement = sa.select(t.chats.c.id).where(t.chats.c.id.in_(sa.bindparam("ids", expanding=True)))
    with pytest.raises(ValueError, match="at execution"):
        Prepared(statement).compiled(sqlite.dialect())


def test_a_name_bound_twice_is_converted_once() -> None:
    now = sa.bindparam("now", type_=t.chats.c.updated_at.type)
    statement = sa.update(t.chats).values(updated_at=now, pinned_at=now).where(t.chats.c.id == sa.bindparam("id"))
    compiled = Prepared(statement).compiled(sqlite.dialect())
    when = dt.datetime(2026, 12, 2, 1, 2, 3, tzinfo=dt.UTC)
    arguments = compiled.arguments({"now": when, "id": "c"})
    assert arguments == ("2026-12-02 01:02:03.000000", "2026-12-02 01:02:03.000000", "c")


# --- the same answers as SQLAlchemy's execution, on a database with every kind of row --------------------------


def values_for(running: Any, chat: str) -> dict[str, Any]:
    """A value for every parameter the prepared statements take, from the database the test made."""
    alice = running.people["alice"]
    pinned = running.db.read_rows(
        lambda c: c.execute(sa.select(t.chat_resources.c.source).where(t.chat_resources.c.chat_id == chat)).all()
    )
    source = sorted(row.source for row in pinned)[0]
    when = dt.datetime(2026, 12, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    return {
        "chat_id": chat,
        "user_id": alice.user.user_id,
        "agent_id": alice.agent.agent_id,
        "source": source,
        "gone": source,
        "now": when,
        "new_agent_id": alice.agent.agent_id,
        "new_pinned_hash": "f" * 64,
        "new_pinned_version": 7,
        "new_pinned_error": None,
        "new_pinned_at": when,
        "for_agent": alice.agent.agent_id,
        "latest": "e" * 64,
        "version": 9,
        "error": None,
        **{f"new_{name}": value for name, value in _NEW_AGENT_AND_SNAPSHOT.items()},
        "channel": "agentcontext_test",
        "payload": '{"topic": "chat:x"}',
        "payloads": ['{"topic": "chat:x"}', '{"topic": "chat:y"}'],
    }


_NEW_AGENT_AND_SNAPSHOT = {  # what a push writes for the agent and its snapshot
    "online": True,
    "last_seen_at": dt.datetime(2026, 12, 2, 3, 4, 6, tzinfo=dt.UTC),
    "url": "http://127.0.0.1:9/",
    "run_id": "run-2",
    "os": "linux",
    "home": "/home/dev",
    "work_dir": WORK,
    "sealed_secret": "sealed",
    "version": 9,
    "aggregate_hash": "e" * 64,
    "error": None,
    "project_root": WORK,
    "profile": "codex",
    "payload_bytes": 123,
    "received_at": dt.datetime(2026, 12, 2, 3, 4, 7, tzinfo=dt.UTC),
    "mcp_hash": "d" * 64,
}


def both_ways(db: Database, prepared: Prepared, params: dict[str, Any]) -> tuple[Any, Any]:
    """``prepared`` run by SQLAlchemy and on the driver's connection, each undone after: both in one transaction,
    so that the database's clock (PostgreSQL's ``now()``, the transaction's start) reads alike in both."""

    table = getattr(prepared.statement, "table", None)  # what a write changes, compared as stored
    inserts = isinstance(prepared.statement, sa.Insert)

    def run(connection: Connection, how: Callable[[Connection], Any]) -> Any:
        savepoint = connection.begin_nested()
        try:
            answer = how(connection)
            if table is None or isinstance(answer, str):  # a refusal (PostgreSQL's savepoint is aborted)
                return answer
            stored = connection.exec_driver_sql(f"SELECT * FROM {table.name} ORDER BY 1, 2").all()
            return answer, [tuple(row) for row in stored]
        finally:
            savepoint.rollback()

    def by_sqlalchemy(connection: Connection) -> Any:
        try:
            result = connection.execute(prepared.statement, params)
        except sa.exc.DBAPIError as exc:  # refused alike, whichever way it runs (an insert of a row there already)
            return type(exc).__name__
        if not result.returns_rows:  # an insert's count is the driver's to give (SQLAlchemy says -1 on psycopg)
            return None if inserts else result.rowcount
        return [(tuple(row), row._fields) for row in result.all()]

    def on_the_driver(connection: Connection) -> Any:
        try:
            if prepared.compiled(connection.dialect).row is None:
                changed = prepared.execute(connection, params)
                return None if inserts else changed
            return [(tuple(row), row._fields) for row in prepared.all(connection, params)]
        except sa.exc.DBAPIError as exc:
            return type(exc).__name__

    with db.engine.connect() as connection:
        transaction = connection.begin()
        try:
            return run(connection, by_sqlalchemy), run(connection, on_the_driver)
        finally:
            transaction.rollback()


async def test_every_prepared_statement_answers_what_sqlalchemy_answers(tmp_path: Path, db_url: str) -> None:
    async with two_users(tmp_path, ("alice", "bob"), db_url=db_url) as running:
        skills = [
            text_resource(Kind.SKILL, f"{WORK}/.agents/skills/review/SKILL.md", REVIEW, name="review"),
            text_resource(Kind.SKILL, f"{WORK}/.agents/skills/notes/SKILL.md", NOTES, name="notes"),
        ]
        rules = text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Root rules.\n")
        await running.push("alice", [rules, *skills, mcp_server("time", "now")])
        chat = await running.chat("alice")
        await running.prompt("alice", chat)
        await running.push("alice", [rules, skills[0], mcp_server("time", "now", "zone")])  # the chat out of date
        mine = "---\nname: mine\ndescription: My own way of working\n---\nDo it my way.\n"
        await running.plane.skills.create(running.people["alice"].user, mine)
        bobs = await running.chat("bob")  # bob's agent has not pushed: his chat has no pin, his agent no snapshot
        touched = await running.chat("alice")  # pinned to the latest snapshot: a heartbeat rechecks what it found
        running.db.write_rows(lambda c: _discovered(c, touched, f"{WORK}/services/AGENTS.md", f"{WORK}/services/a.py"))
        params = values_for(running, chat)
        bob = {"chat_id": bobs, "agent_id": running.people["bob"].agent.agent_id}
        pinned_hash = running.db.read_rows(
            lambda c: c.execute(sa.select(t.chats.c.pinned_hash).where(t.chats.c.id == chat)).scalar()
        )
        alice = running.people["alice"]
        agent_digest, user_digest = running.db.read_rows(
            lambda c: (
                c.execute(sa.select(t.agents.c.token_hash).where(t.agents.c.id == alice.agent.agent_id)).scalar(),
                c.execute(sa.select(ApiToken.token_hash).where(ApiToken.user_id == alice.user.user_id)).scalar(),
            )
        )
        overrides: dict[
            str, dict[str, Any]
        ] = {  # where the shared values would only find a conflict or nothing to change
            "identity._AGENT_TOKEN": {"digest": agent_digest},
            "identity._USER_TOKEN": {"digest": user_digest},
            "ingest._COPY_PIN": {"chat_id": bobs},
            "ingest._INSERT_SNAPSHOT": {"agent_id": bob["agent_id"]},
            "ingest._PIN_AND_MARK": {"latest": pinned_hash},  # the push goes back to the chat's pin: a revert
        }

        compared = 0
        dialect = running.db.dialect
        here = {where: p for where, p in PREPARED.items() if p.only in (None, dialect)}
        for where, prepared in here.items():
            names = set(_required(prepared, running.db))
            given = {**params, **_stored_row(running.db, prepared), **overrides.get(where, {})}
            missing = names - given.keys()
            assert not missing, f"{where}: give the test a value for {sorted(missing)}"
            expected, found = both_ways(running.db, prepared, {name: given[name] for name in names})
            assert found == expected, where
            compared += bool(expected) and "Error" not in str(expected)
        assert compared == len(here)  # rows, or changed rows, for every statement: a real comparison


def _discovered(connection: sa.Connection, chat_id: str, path: str, cause: str) -> None:
    """A file the chat found on demand, as ``touched`` pins one: a copy of a pinned row, its origin "discovered"."""
    pinned = connection.execute(sa.select(t.chat_resources).where(t.chat_resources.c.chat_id == chat_id)).first()
    assert pinned is not None
    row = {**pinned._mapping, "source": f"discovered:{path}", "path": path}
    connection.execute(sa.insert(t.chat_resources).values({**row, "origin": "discovered", "caused_by": [cause]}))
    connection.execute(sa.update(t.chats).where(t.chats.c.id == chat_id).values(discovered_at=sa.func.now()))


def _stored_row(db: Database, prepared: Prepared) -> dict[str, Any]:
    """For an insert, the first row of its table as SQLAlchemy reads it; nothing for other statements."""
    statement = prepared.statement
    if not isinstance(statement, sa.Insert):
        return {}
    table: Any = statement.table
    row = db.read_rows(lambda c: c.execute(sa.select(table).order_by(*table.primary_key.columns)).first())
    assert row is not None, f"the test's database has no row in {table.name}"
    return dict(row._mapping)


def _required(prepared: Prepared, db: Database) -> list[str]:
    compiled: Any = prepared.statement.compile(dialect=db.engine.dialect)
    return [name for bind, name in compiled.bind_names.items() if bind.required]


# --- failures, as SQLAlchemy raises them ------------------------------------------------------------------------


async def test_a_refused_write_raises_sqlalchemys_integrity_error(tmp_path: Path, db_url: str) -> None:
    db = Database(db_url)
    from agentcontext.control import migrate

    migrate.upgrade(db)
    columns: dict[str, Any] = {name: sa.bindparam(name) for name in ("hash", "size_bytes", "text")}
    insert = Prepared(sa.insert(t.contents).values(columns))
    try:
        with pytest.raises(sa.exc.IntegrityError):  # the text is NOT NULL
            db.write_rows(lambda c: insert.execute(c, {"hash": "0" * 64, "size_bytes": 0, "text": None}))
    finally:
        db.dispose()


async def test_a_statement_after_a_caught_database_error_never_commits_on_its_own(db_url: str) -> None:
    """The error leaves the transaction open (SQLAlchemy's handler would roll it back, and what followed would
    run in autocommit, each statement committed alone): the work's own failure later undoes all of it."""
    db = Database(db_url)
    try:
        db.write_rows(lambda c: say(c, "CREATE TABLE kept (n int PRIMARY KEY)"))

        def swallow_then_fail(connection: Connection) -> None:
            say(connection, "INSERT INTO kept VALUES (1)")
            with contextlib.suppress(sa.exc.IntegrityError):
                say(connection, "INSERT INTO kept VALUES (1)")
            with contextlib.suppress(sa.exc.DBAPIError):  # PostgreSQL refuses it: the transaction is aborted
                say(connection, "INSERT INTO kept VALUES (2)")
            raise NotFoundError("changed its mind")

        with pytest.raises(NotFoundError):
            db.write_rows(swallow_then_fail)
        assert db.read_rows(lambda c: c.execute(sa.text("SELECT count(*) FROM kept")).scalar()) == 0
    finally:
        db.dispose()


async def test_a_transaction_that_ended_under_its_work_is_not_committed_as_a_success(db_url: str) -> None:
    db = Database(db_url)
    try:
        db.write_rows(lambda c: say(c, "CREATE TABLE kept (n int PRIMARY KEY)"))

        def end_early(connection: Connection) -> None:
            say(connection, "INSERT INTO kept VALUES (1)")
            say(connection, "ROLLBACK")

        with pytest.raises(sa.exc.InternalError, match="ended before its work did"):
            db.write_rows(end_early)
        assert db.read_rows(lambda c: c.execute(sa.text("SELECT count(*) FROM kept")).scalar()) == 0
    finally:
        db.dispose()


async def test_a_transaction_of_prepared_statements_alone_is_committed(tmp_path: Path, db_url: str) -> None:
    """SQLAlchemy's own commit does nothing for a transaction none of whose statements went through it."""
    db = Database(db_url)
    migrate.upgrade(db)
    user = db.write(lambda s: identity.create_user(s, "alice"))
    rename = Prepared(sa.update(USERS).where(USERS.c.id == sa.bindparam("id")).values(name=sa.bindparam("name")))
    try:
        owner = db.read_rows(lambda c: c.execute(sa.select(USERS.c.id)).scalar())
        assert db.write_rows(lambda c: rename.execute(c, {"id": owner, "name": "alicia"})) == 1
        names = db.read_rows(lambda c: c.execute(sa.select(USERS.c.name)).scalars().all())
        assert names == ["alicia"] and user.token
    finally:
        db.dispose()


async def test_a_hot_read_on_a_connection_postgresql_dropped_runs_again_on_a_fresh_one(
    tmp_path: Path, pg_cluster: TempCluster
) -> None:
    url = pg_cluster.create_database()
    async with two_users(tmp_path, ("alice",), db_url=url) as running:
        await running.push("alice", [text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Rules.\n")])
        chat = await running.chat("alice")
        alice = running.people["alice"].user
        before = running.db.read_one(lambda c: turn_row(c, alice, chat))
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (sa.make_url(url).database,),
            ).fetchone()
        assert dropped is not None and dropped[0] >= 1  # the pool's connections, the one just used among them
        assert running.db.read_one(lambda c: turn_row(c, alice, chat)) == before


@pytest.fixture
def pg_db(pg_database: str) -> Iterator[Database]:
    """A ``Database`` on a fresh, empty PostgreSQL database."""
    db = Database(pg_database)
    try:
        yield db
    finally:
        db.dispose()


async def test_a_write_whose_begin_finds_the_connection_dropped_runs_again_on_a_fresh_one(
    pg_cluster: TempCluster, pg_db: Database
) -> None:
    rename = Prepared(sa.update(USERS).where(USERS.c.id == sa.bindparam("id")).values(name=sa.bindparam("name")))
    migrate.upgrade(pg_db)
    pg_db.write(lambda s: identity.create_user(s, "alice"))
    owner = pg_db.read_rows(lambda c: c.execute(sa.select(USERS.c.id)).scalar())
    used = pg_db.write_rows(_backend)
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (used,))
    assert pg_db.write_rows(lambda c: rename.execute(c, {"id": owner, "name": "alicia"})) == 1
    assert pg_db.read_rows(lambda c: c.execute(sa.select(USERS.c.name)).scalars().all()) == ["alicia"]


async def test_a_statement_failing_at_commit_raises_the_databases_own_error(pg_db: Database) -> None:
    """A deferred constraint is checked by COMMIT: its refusal keeps its SQLSTATE class (an integrity error)."""
    pg_db.write_rows(lambda c: say(c, "CREATE TABLE once (n int UNIQUE DEFERRABLE INITIALLY DEFERRED)"))

    def twice(connection: Connection) -> None:
        say(connection, "INSERT INTO once VALUES (1)")
        say(connection, "INSERT INTO once VALUES (1)")  # accepted until COMMIT checks it

    with pytest.raises(sa.exc.IntegrityError, match="once_n_key"):
        pg_db.write_rows(twice)
    assert pg_db.read_rows(lambda c: c.execute(sa.text("SELECT count(*) FROM once")).scalar()) == 0


async def test_work_that_caught_a_database_error_and_went_on_is_not_committed_as_a_success(pg_db: Database) -> None:
    """PostgreSQL answers the COMMIT of an aborted transaction with ROLLBACK and no error: that must not pass."""
    pg_db.write_rows(lambda c: say(c, "CREATE TABLE kept (n int PRIMARY KEY)"))

    def insert_then_swallow(connection: Connection) -> str:
        say(connection, "INSERT INTO kept VALUES (1)")
        with contextlib.suppress(sa.exc.DBAPIError):
            say(connection, "INSERT INTO kept VALUES (1)")  # refused: the transaction is now aborted
        return "done"

    with pytest.raises(sa.exc.InternalError, match="aborted by an error its work caught"):
        pg_db.write_rows(insert_then_swallow)
    assert pg_db.read_rows(lambda c: c.execute(sa.text("SELECT count(*) FROM kept")).scalar()) == 0
    assert pg_db.write_rows(lambda c: say(c, "INSERT INTO kept VALUES (2)")) is None  # the connection goes on


def _backend(connection: Connection) -> int:
    driver: Any = connection.connection.driver_connection
    return int(driver.info.backend_pid)


def _lose_own_connection(pg_cluster: TempCluster, connection: Connection) -> None:
    """Terminate the backend of ``connection`` and wait until it has gone: it learns of it at its next statement."""
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (_backend(connection),))


async def test_a_write_that_loses_its_connection_during_its_commit_is_never_run_again(
    pg_cluster: TempCluster, pg_db: Database
) -> None:
    """Saved or not, nobody can tell: running the work again (as a lost connection's work is) could save it twice."""
    pg_db.write_rows(lambda c: say(c, "CREATE TABLE written (n int)"))
    ran: list[int] = []

    def insert_then_lose_the_connection(connection: Connection) -> None:
        ran.append(1)
        say(connection, "INSERT INTO written VALUES (1)")
        _lose_own_connection(pg_cluster, connection)

    with pytest.raises(CommitOutcomeUnknown, match="may or may not have been saved"):
        pg_db.write_rows(insert_then_lose_the_connection)
    assert ran == [1]
    assert pg_db.read_rows(lambda c: c.execute(sa.text("SELECT count(*) FROM written")).scalar()) == 0
    assert pg_db.write_rows(lambda c: say(c, "INSERT INTO written VALUES (2)")) is None  # a fresh connection


async def test_a_read_that_loses_its_connection_during_its_commit_runs_again_on_a_fresh_one(
    pg_cluster: TempCluster, pg_db: Database
) -> None:
    pids: list[int] = []

    def read_then_lose_the_connection(connection: Connection) -> int:
        pids.append(_backend(connection))
        if len(pids) == 1:
            _lose_own_connection(pg_cluster, connection)
        return pids[-1]

    assert pg_db.read_rows(read_then_lose_the_connection) == pids[1] != pids[0]


async def test_an_orm_write_that_loses_its_connection_during_its_commit_is_never_run_again(
    pg_cluster: TempCluster, pg_db: Database
) -> None:
    migrate.upgrade(pg_db)
    ran: list[int] = []

    def create_then_lose_the_connection(session: Session) -> None:
        ran.append(1)
        identity.create_user(session, "alice")
        session.flush()
        _lose_own_connection(pg_cluster, session.connection())

    with pytest.raises(CommitOutcomeUnknown, match="may or may not have been saved"):
        pg_db.write(create_then_lose_the_connection)
    assert ran == [1]
    assert pg_db.read_rows(lambda c: c.execute(sa.select(sa.func.count()).select_from(USERS)).scalar()) == 0


async def test_an_orm_write_that_loses_its_connection_before_its_commit_runs_again_on_a_fresh_one(
    pg_cluster: TempCluster, pg_db: Database
) -> None:
    migrate.upgrade(pg_db)
    ran: list[int] = []

    def lose_the_connection_then_create(session: Session) -> None:
        ran.append(1)
        if len(ran) == 1:
            _lose_own_connection(pg_cluster, session.connection())
        identity.create_user(session, "alice")

    pg_db.write(lose_the_connection_then_create)
    assert ran == [1, 1]
    assert pg_db.read_rows(lambda c: c.execute(sa.select(USERS.c.name)).scalars().all()) == ["alice"]


async def test_text_said_with_the_commit_keeps_its_characters_on_a_connection_that_is_not_utf8(
    pg_database: str,
) -> None:
    """What ``at_commit`` leaves is sent in the connection's own encoding (here LATIN1), as psycopg sends queries."""
    url = pg_database
    db = Database(f"{url}?client_encoding=LATIN1")
    notify = Prepared(sa.text("SELECT pg_notify('prepared_test', :payload)").columns(sa.column("n", sa.Text)))
    try:
        with psycopg.connect(url, autocommit=True) as listener:
            listener.execute("LISTEN prepared_test")
            db.write_rows(lambda c: at_commit(c, notify, {"payload": "café, naïve, ½"}))
            heard = [notice.payload for notice in listener.notifies(timeout=5, stop_after=1)]
        assert heard == ["café, naïve, ½"]
    finally:
        db.dispose()
