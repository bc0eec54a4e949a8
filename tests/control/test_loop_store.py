"""Short store work on the event loop's own connection (``loop_store``): only against a near PostgreSQL or a
SQLite file (reads alone), and never a wait that stops the loop: a held lock, a slow statement, a lost connection
or a slow database sends the work to a worker thread, where it runs again and answers as it would have."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

from agentcontext.control import identity, loop_store, migrate, prepared
from agentcontext.control import tables as t
from agentcontext.control.chats import NewChat
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.loop_store import MISSED, LoopStore, SqliteLoopStore, nearby
from agentcontext.control.plane import ControlPlane
from agentcontext.control.services.sync import LOOP_PUSH_RESOURCES
from agentcontext.control.settings import ControlSettings
from agentcontext.errors import NotFoundError
from agentcontext.testing import skill_md
from tests.control.test_flow import big_snapshot

T = TypeVar("T")

NEAR = [
    "postgresql://u@127.0.0.1:5432/db",
    "postgresql://u@localhost/db",
    "postgresql://u@[::1]:5432/db",
    "postgresql:///db",  # libpq's default Unix socket
    "postgresql:///db?host=/var/run/postgresql",
    "postgresql:///db?host=127.0.0.1:5432&host=localhost:5433",
]
FAR = [
    "postgresql://u@db.example.com/db",
    "postgresql://u@10.0.0.5:5432/db",
    "postgresql://u@localhost/db?hostaddr=10.0.0.5",  # libpq connects to hostaddr, whatever host says
    "postgresql:///db?host=127.0.0.1:5432&host=db.example.com:5432",
    "postgresql:///db?service=production",  # a service file may name any host
    "postgresql://u@127.0.0.1/db?host=db.example.com",  # the query's host reaches the driver
    "sqlite:///control.db",
]


@pytest.mark.parametrize("url", NEAR)
def test_a_postgresql_on_a_unix_socket_or_loopback_is_near(url: str) -> None:
    assert nearby(make_url(url), {})


@pytest.mark.parametrize("url", FAR)
def test_a_database_across_a_network_or_of_unknown_place_is_not_near(url: str) -> None:
    assert not nearby(make_url(url), {})


def test_libpq_environment_says_where_a_url_without_a_host_goes() -> None:
    assert not nearby(make_url("postgresql:///db"), {"PGHOST": "db.example.com"})
    assert not nearby(make_url("postgresql:///db"), {"PGHOSTADDR": "10.0.0.5"})
    assert not nearby(make_url("postgresql:///db"), {"PGSERVICE": "production"})
    assert nearby(make_url("postgresql:///db"), {"PGHOST": "/run/postgresql"})
    assert nearby(make_url("postgresql://u@127.0.0.1/db"), {"PGHOST": "db.example.com"})  # the URL's host wins
    # but libpq connects to PGHOSTADDR whatever the host is
    assert not nearby(make_url("postgresql://u@localhost/db"), {"PGHOSTADDR": "10.0.0.5"})


# --- on a real PostgreSQL ------------------------------------------------------------------------------------


@pytest.fixture
def steady(monkeypatch: pytest.MonkeyPatch) -> None:
    """No run counts as slow: on a busy machine (the suite's other workers) a run may take past ``SLOW``, and
    the tests that say what runs where must not see the store resting instead."""
    monkeypatch.setattr(loop_store, "SLOW", 60.0)


@pytest.fixture
def pg(pg_database: str) -> Iterator[Database]:
    yield from _migrated(pg_database)


def _migrated(url: str) -> Iterator[Database]:
    database = Database(url)
    migrate.upgrade(database)
    yield database
    database.dispose()


@pytest.fixture
async def store(pg: Database) -> AsyncIterator[LoopStore]:
    found = pg.loop_store()
    assert found is not None  # the test cluster listens on 127.0.0.1
    assert await found.ready()
    yield found
    found.close()


def _insert_eve(connection: Connection) -> None:
    connection.exec_driver_sql("INSERT INTO users (id, name, is_admin, created_at) VALUES ('u1', 'eve', false, now())")


def _backend(connection: Connection) -> int:
    pid: int = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    return pid


@pytest.mark.anyio
async def test_a_statement_that_runs_long_on_the_loop_is_stopped_and_handed_back(store: LoopStore) -> None:
    started = time.monotonic()
    done = store.run("statements", lambda c: c.exec_driver_sql("SELECT pg_sleep(2)").all())
    assert done is MISSED and time.monotonic() - started < 1.0
    assert store.run("read", lambda c: c.exec_driver_sql("SELECT 41 + 1").scalar_one()) == 42  # still usable


@pytest.mark.anyio
async def test_work_that_fails_on_the_loop_is_rolled_back_and_its_error_raised(pg: Database, store: LoopStore) -> None:
    def insert_then_fail(connection: Connection) -> None:
        _insert_eve(connection)
        raise NotFoundError("no such chat")

    with pytest.raises(NotFoundError, match="no such chat"):
        store.run("write", insert_then_fail)
    with pg.engine.connect() as connection:
        assert connection.scalar(sa.text("SELECT count(*) FROM users WHERE name = 'eve'")) == 0
    assert store.run("statements", lambda c: c.exec_driver_sql("SELECT 1").scalar_one()) == 1


@pytest.mark.anyio
async def test_work_that_caught_a_lock_time_out_and_went_on_is_handed_back_with_nothing_written(
    pg: Database, store: LoopStore
) -> None:
    """Both statements on the driver's connection, as the hot paths run theirs: SQLAlchemy has no transaction of
    its own to keep the error from rolling ours back and leaving the rest to autocommit."""

    def insert_then_swallow(connection: Connection) -> str:
        prepared.say(
            connection, "INSERT INTO users (id, name, is_admin, created_at) VALUES ('u1', 'eve', false, now())"
        )
        with contextlib.suppress(sa.exc.DBAPIError):
            prepared.say(connection, "SELECT pg_sleep(1)")  # stopped by the loop's statement time-out
        return "done"

    assert store.run("write", insert_then_swallow) is MISSED
    with pg.engine.connect() as connection:
        assert connection.scalar(sa.text("SELECT count(*) FROM users WHERE name = 'eve'")) == 0
    assert store.run("statements", lambda c: c.exec_driver_sql("SELECT 1").scalar_one()) == 1


@pytest.fixture
def watchful(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watchdog cuts a run after 0.3 s (2 s by default), looking every 50 ms."""
    monkeypatch.setattr(loop_store, "HUNG", 0.3)
    monkeypatch.setattr(loop_store, "WATCH_EVERY", 0.05)


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The backend ``pid`` stopped (SIGSTOP: alive, its socket open, answering nothing) until the block ends."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.anyio
@pytest.mark.usefixtures("watchful")
async def test_a_database_that_stops_answering_is_cut_off_the_loop_and_the_work_handed_back(store: LoopStore) -> None:
    """A stopped backend honours no time limit of its own: without the watchdog the loop would wait for ever."""
    pid = store.run("statements", _backend)
    assert isinstance(pid, int)
    with stopped(pid):
        started = time.monotonic()
        assert store.run("read", lambda c: c.exec_driver_sql("SELECT 41 + 1").scalar_one()) is MISSED
        assert time.monotonic() - started < 1.5
    assert await store.ready()  # a new connection
    assert store.run("read", lambda c: c.exec_driver_sql("SELECT 41 + 1").scalar_one()) == 42


@pytest.mark.anyio
@pytest.mark.usefixtures("watchful")
async def test_a_write_cut_during_its_commit_is_refused_as_unavailable_never_run_again(
    pg: Database, store: LoopStore
) -> None:
    """The commit may have been saved: running the work again in a thread could save it twice."""
    pid = store.run("statements", _backend)
    assert isinstance(pid, int)
    ran: list[int] = []

    def insert_then_stop(connection: Connection) -> None:
        ran.append(1)
        _insert_eve(connection)
        os.kill(pid, signal.SIGSTOP)  # its COMMIT will go unanswered

    try:
        started = time.monotonic()
        with pytest.raises(prepared.CommitOutcomeUnknown, match="may or may not have been saved"):
            store.run("write", insert_then_stop)
        assert time.monotonic() - started < 1.5
    finally:
        os.kill(pid, signal.SIGCONT)
    assert ran == [1]
    assert await store.ready()
    assert store.run("read", lambda c: c.exec_driver_sql("SELECT 1").scalar_one()) == 1


@pytest.mark.anyio
async def test_a_write_whose_connection_is_lost_during_its_commit_is_refused_as_unavailable_never_run_again(
    pg: Database, store: LoopStore
) -> None:
    """Not cut by the watchdog this time: the database dropped the connection (a restart, a network's reset)."""
    pid = store.run("statements", _backend)
    assert isinstance(pid, int)
    ran: list[int] = []

    def insert_then_lose_the_connection(connection: Connection) -> None:
        ran.append(1)
        _insert_eve(connection)
        with pg.engine.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})

    with pytest.raises(prepared.CommitOutcomeUnknown, match="may or may not have been saved"):
        store.run("write", insert_then_lose_the_connection)
    assert ran == [1]
    assert await store.ready()  # a new connection
    assert store.run("read", lambda c: c.exec_driver_sql("SELECT count(*) FROM users").scalar_one()) == 0


@pytest.mark.anyio
async def test_a_loop_connection_the_database_dropped_is_handed_back_then_replaced(
    pg: Database, store: LoopStore
) -> None:
    first = store.run("statements", _backend)
    assert isinstance(first, int)
    with pg.engine.connect() as connection:
        connection.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
    assert store.run("read", _backend) is MISSED  # lost: nothing answered, the thread's way asks again
    assert await store.ready()  # a new connection, opened in a worker thread
    second = store.run("read", _backend)
    assert isinstance(second, int) and second != first


@pytest.mark.anyio
async def test_a_database_slow_to_answer_is_left_to_worker_threads(store: LoopStore) -> None:
    def slow(connection: Connection) -> int:
        time.sleep(loop_store.SLOW * 1.5)  # as a database across a tunnel answers
        return 1

    for _ in range(loop_store.SLOW_IN_A_ROW - 1):
        assert store.run("read", slow) == 1
        assert await store.ready()
    assert store.run("read", slow) == 1
    assert not await store.ready()


@pytest.mark.anyio
async def test_a_closed_loop_store_runs_nothing(store: LoopStore) -> None:
    store.close()
    assert not await store.ready()
    assert store.run("statements", lambda c: 1) is MISSED


async def _chat(pg: Database) -> tuple[ControlPlane, identity.UserPrincipal, str, str]:
    user = pg.write(lambda s: identity.create_user(s, "alice"))
    issued = pg.write(lambda s: identity.create_agent(s, "ws", "dev"))
    plane = ControlPlane(pg, LocalBroker())
    principal = await plane.access.authenticate(user.token)
    agent = await plane.access.authenticate(issued.token)
    assert isinstance(principal, identity.UserPrincipal) and isinstance(agent, identity.AgentPrincipal)
    await plane.sync.push(agent, big_snapshot(1, initial=True, files=3))
    created = await plane.chats.create(principal, NewChat("ws"))
    return plane, principal, created.id, agent.agent_id


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_a_chat_s_store_work_runs_on_the_event_loop_against_a_near_postgresql(pg: Database) -> None:
    plane, principal, chat_id, _ = await _chat(pg)
    store = plane.store.loop_store
    assert store is not None
    before = store.runs
    await plane.chats.get(principal, chat_id)
    refreshed = await plane.chats.refresh(principal, chat_id)
    await plane.chats.prompt_json(principal, chat_id)
    assert store.runs >= before + 3
    assert refreshed.context.pinned_hash
    await plane.aclose()
    assert not await store.ready()


@pytest.mark.anyio
async def test_a_control_plane_told_to_keep_store_work_in_threads_has_no_loop_connection(pg: Database) -> None:
    plane = ControlPlane(pg, LocalBroker(), ControlSettings(store_on_loop=False))
    assert plane.store.loop_store is None


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_a_refresh_behind_a_held_agent_row_never_stalls_the_event_loop(pg: Database) -> None:
    """A push holding the agent's row (here: another connection, as another replica's push would) makes the
    refresh wait: in a worker thread, while the loop goes on serving; the refresh then answers as usual."""
    plane, principal, chat_id, agent_id = await _chat(pg)
    store = plane.store.loop_store
    assert store is not None
    held = 0.6
    gaps: list[float] = []
    refreshed: list[Any] = []

    async def refresh() -> None:
        refreshed.append(await plane.chats.refresh(principal, chat_id))

    holder = _holder(pg)
    try:
        holder.execute("SELECT id FROM agents WHERE id = %s FOR UPDATE", (agent_id,))
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(_watch, gaps, refreshed)
            group.start_soon(refresh)
            await anyio.sleep(held)
            holder.commit()
        waited = time.monotonic() - started
    finally:
        holder.close()
    await plane.aclose()
    assert refreshed and refreshed[0].context.pinned_hash
    assert waited >= held  # it did wait for the lock ...
    assert store.missed >= 1, "the refresh was not tried on the loop"
    assert max(gaps) < held / 2, f"the loop stood still {max(gaps):.3f} s"  # ... but not on the loop


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_a_personal_skill_read_behind_a_table_lock_waits_in_a_thread_and_answers(pg: Database) -> None:
    """The skill's read meets a lock (a migration on another replica) on the loop: that error is the transaction's,
    not the skill's, so the call is redone in a thread, waits, and answers the text (not "failed to load")."""
    plane, principal, chat_id, _ = await _chat(pg)
    await plane.skills.create(principal, skill_md("notes", "Takes notes", body="Write it down.\n"))
    first = await plane.chats.call_tool(principal, chat_id, "read_skill", {"name": "notes"})
    assert not first.is_error, first.content  # the chat's turn is kept
    results: list[Any] = []

    async def call() -> None:
        results.append(await plane.chats.call_tool(principal, chat_id, "read_skill", {"name": "notes"}))

    holder = _holder(pg)
    try:
        holder.execute("LOCK TABLE contents IN ACCESS EXCLUSIVE MODE")
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.sleep(0.3)
            holder.commit()
    finally:
        holder.close()
    await plane.aclose()
    assert not results[0].is_error, results[0].content
    assert "Write it down." in str(results[0].content)


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_writes_wait_for_a_synchronous_standby_in_a_thread_never_on_the_loop(pg: Database) -> None:
    """A commit that waits for a synchronous standby (one that is down here) waits with no time limit: a write is
    not run on the loop while the database's commits wait for one; the loop keeps serving, and the write
    completes once the standby is no longer waited for."""
    admin = _holder(pg)
    admin.autocommit = True
    admin.execute(f"ALTER DATABASE {pg.url.database} SET synchronous_commit = on")
    plane, principal, chat_id, _ = await _chat(pg)
    store = plane.store.loop_store
    assert store is not None
    done: list[Any] = []

    async def write() -> None:
        done.append(await plane.chats.update(principal, chat_id, title="renamed"))

    gaps = await _while_a_standby_is_waited_for(admin, write, done)
    await plane.aclose()
    assert done[0].title == "renamed"
    assert store.missed >= 1, "the write was not tried on the loop"
    assert max(gaps) < 0.3, f"the loop stood still {max(gaps):.3f} s"


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_a_heartbeat_is_one_statement_on_the_loop_and_waits_for_a_synchronous_standby_in_a_thread(
    pg: Database,
) -> None:
    """A heartbeat of an online agent is one statement the loop runs; while the database's commits wait for a
    synchronous standby that statement changes nothing (so commits at once), and the heartbeat is written in a
    thread that waits for the standby while the loop keeps serving."""
    admin = _holder(pg)
    admin.autocommit = True
    admin.execute(f"ALTER DATABASE {pg.url.database} SET synchronous_commit = on")  # the connections opened next
    issued = pg.write(lambda s: identity.create_agent(s, "ws", "dev"))
    plane = ControlPlane(pg, LocalBroker())
    agent = await plane.access.authenticate(issued.token)
    assert isinstance(agent, identity.AgentPrincipal)
    await plane.sync.push(agent, big_snapshot(1, initial=True, files=3))
    agent_id = agent.agent_id
    store = plane.store.loop_store
    assert store is not None
    await plane.sync.heartbeat(agent, {"agent": {"run_id": "run-1"}})  # the first also rechecks discovered files
    runs, missed = store.runs, store.missed
    await plane.sync.heartbeat(agent, {"agent": {"run_id": "run-2"}})
    assert (store.runs - runs, store.missed - missed) == (1, 0)
    assert _seen(pg, agent_id)[1] == "run-2"

    done: list[Any] = []

    async def beat() -> None:
        await plane.sync.heartbeat(agent, {"agent": {"run_id": "run-3"}})
        done.append(True)

    gaps = await _while_a_standby_is_waited_for(admin, beat, done)
    await plane.aclose()
    assert _seen(pg, agent_id)[1] == "run-3"
    assert max(gaps) < 0.3, f"the loop stood still {max(gaps):.3f} s"


def _seen(pg: Database, agent_id: str) -> tuple[Any, ...]:
    with pg.engine.connect() as connection:
        row = connection.execute(
            sa.select(t.agents.c.last_seen_at, t.agents.c.run_id).where(t.agents.c.id == agent_id)
        ).one()
    return tuple(row)


async def _while_a_standby_is_waited_for(
    admin: psycopg.Connection[Any], work: Callable[[], Coroutine[Any, Any, None]], done: list[Any]
) -> list[float]:
    """``work`` run while the database's commits wait for a synchronous standby that is down (for 1 s, then no
    longer), beside a ticker; the ticker's gaps: how long the loop stood still. Closes ``admin``."""
    gaps: list[float] = []

    def release() -> None:
        time.sleep(1.0)
        admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
        admin.execute("SELECT pg_reload_conf()")

    releaser = threading.Thread(target=release)  # started before the work: a stalled loop could not start it
    try:
        admin.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby_that_is_down'")
        admin.execute("SELECT pg_reload_conf()")
        time.sleep(0.3)
        releaser.start()
        async with anyio.create_task_group() as group:
            group.start_soon(_watch, gaps, done)
            group.start_soon(work)
        releaser.join()
    finally:
        admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
        admin.execute("SELECT pg_reload_conf()")
        admin.close()
    return gaps


async def _watch(gaps: list[float], done: list[Any]) -> None:
    """Tick every 5 ms until ``done`` holds something, keeping each gap: how long the loop stood still."""
    last = time.monotonic()
    while not done:
        await anyio.sleep(0.005)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


def _holder(pg: Database) -> psycopg.Connection[Any]:
    return psycopg.connect(pg.url.set(drivername="postgresql").render_as_string(hide_password=False))


# --- on a SQLite file ----------------------------------------------------------------------------------------


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Database]:
    yield from _migrated(f"sqlite:///{tmp_path / 'control.db'}")


@pytest.fixture
async def lite_store(lite: Database) -> AsyncIterator[LoopStore]:
    found = lite.loop_store()
    assert isinstance(found, SqliteLoopStore)
    assert await found.ready()
    yield found
    found.close()


def _count_users(connection: Connection) -> int:
    count: int = connection.exec_driver_sql("SELECT count(*) FROM users").scalar_one()
    return count


_EVE = "INSERT INTO users (id, name, is_admin, created_at) VALUES ('u1', 'eve', 0, '2026-12-02 00:00:00')"


def _insert_eve_lite(connection: Connection) -> None:
    connection.exec_driver_sql(_EVE)


@contextlib.contextmanager
def _another_connection(database: Database) -> Iterator[sqlite3.Connection]:
    """A connection of another process's kind: the sqlite3 module's own, beginning only when told."""
    connection = sqlite3.connect(database.url.database or "", isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_sqlite_has_no_loop_connection(url: str) -> None:
    """Each connection to it would be another, empty, database."""
    database = Database(url)
    try:
        assert database.loop_store() is None
    finally:
        database.dispose()


@pytest.mark.anyio
@pytest.mark.usefixtures("steady")
async def test_a_chat_s_store_work_and_a_small_push_run_on_the_event_loop_of_a_sqlite_file(
    lite: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    plane, principal, chat_id, agent_id = await _chat(lite)
    store = plane.store.loop_store
    assert isinstance(store, SqliteLoopStore)
    hops: list[object] = []
    in_thread = plane.store.thread

    async def counted(work: Callable[[], T]) -> T:
        hops.append(work)
        return await in_thread(work)

    monkeypatch.setattr(plane.store, "thread", counted)
    agent = identity.AgentPrincipal(kind="agent", agent_id=agent_id, workspace_id="", name="dev")
    await plane.chats.get(principal, chat_id)
    await plane.chats.prompt_json(principal, chat_id)
    await plane.sync.push(agent, big_snapshot(2, initial=False, files=3))
    refreshed = await plane.chats.refresh(principal, chat_id)
    assert refreshed.context.pinned_version == 2
    assert (await plane.chats.get(principal, chat_id)).context.pinned_hash == refreshed.context.pinned_hash
    assert hops == []  # not one worker thread: reads, the push and the refresh's re-pin
    assert store.missed == store.writer.missed == 0 and store.writer.runs >= 2
    large = big_snapshot(3, initial=False, files=LOOP_PUSH_RESOURCES + 1)
    await plane.sync.push(agent, large)  # past LOOP_PUSH_RESOURCES: a worker thread's, as a run here stops at 50 ms
    assert len(hops) == 1
    await plane.aclose()
    assert not await store.ready()


@pytest.mark.anyio
async def test_a_read_on_a_sqlite_file_never_waits_for_a_writer_holding_it(
    lite: Database, lite_store: LoopStore
) -> None:
    """WAL: a reader sees what had committed while another connection holds the write lock mid-transaction."""
    with _another_connection(lite) as writer:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(_EVE)
        started = time.monotonic()
        assert lite_store.run("read", _count_users) == 0
        assert lite_store.run("statements", _count_users) == 0
        assert time.monotonic() - started < 1.5  # a reader that waited would wait for the writer's COMMIT
        writer.execute("COMMIT")
    assert lite_store.run("read", _count_users) == 1


@pytest.mark.anyio
async def test_a_sqlite_read_that_runs_long_on_the_loop_is_interrupted_and_handed_back(lite_store: LoopStore) -> None:
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n"
    )
    started = time.monotonic()
    assert lite_store.run("read", lambda c: c.exec_driver_sql(endless).scalar_one()) is MISSED
    assert time.monotonic() - started < 2.0  # stopped near loop_store.STATEMENT_SECONDS, not after a billion rows
    assert lite_store.run("read", lambda c: c.exec_driver_sql("SELECT 41 + 1").scalar_one()) == 42  # still usable


@pytest.mark.anyio
async def test_the_sqlite_loop_connection_writes_only_in_a_write_run(lite: Database, lite_store: LoopStore) -> None:
    def insert(connection: Connection) -> None:
        _insert_eve_lite(connection)

    assert lite_store.run("statements", insert) is MISSED  # query_only: refused, and handed back
    assert lite_store.run("read", insert) is MISSED
    assert lite_store.run("write", insert) is None
    with lite.engine.connect() as connection:
        assert _count_users(connection) == 1  # committed
    assert lite_store.run("read", lambda c: c.exec_driver_sql("DELETE FROM users")) is MISSED  # query_only again
    assert lite_store.run("read", _count_users) == 1


@pytest.mark.anyio
async def test_the_sqlite_loop_connection_keeps_the_rules_of_the_other_connections(lite_store: LoopStore) -> None:
    def pragma(name: str) -> Any:
        return lite_store.run("read", lambda c: c.exec_driver_sql(f"PRAGMA {name}").scalar_one())

    def pragma_writing(name: str) -> Any:
        return lite_store.run("write", lambda c: c.exec_driver_sql(f"PRAGMA {name}").scalar_one())

    for look in (pragma, pragma_writing):  # the reads' connection and the writes'
        assert look("foreign_keys") == 1  # a write here checks what the threads' writes check
        assert look("synchronous") == 1  # NORMAL: under WAL, only a checkpoint flushes the file
        assert look("journal_mode") == "wal"
    assert pragma("query_only") == 1 and pragma_writing("query_only") == 0
    orphan = (
        "INSERT INTO agents (id, workspace_id, name, display_order, token_hash, online, created_at)"
        " VALUES ('a1', 'no-such-workspace', 'x', 0, 'h', 0, '2026-12-02')"
    )
    assert lite_store.run("write", lambda c: c.exec_driver_sql(orphan)) is MISSED  # refused, and rolled back


@pytest.mark.anyio
async def test_a_sqlite_write_on_the_loop_meets_a_held_write_lock_and_is_handed_back_at_once(
    lite: Database, lite_store: LoopStore
) -> None:
    """No busy timeout: the loop never sleeps in the driver for the file's lock; the work waits in a thread."""
    with _another_connection(lite) as writer:
        writer.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        assert lite_store.run("write", _insert_eve_lite) is MISSED
        assert time.monotonic() - started < 1.5  # the threads' busy timeout is 30 s
        writer.execute("COMMIT")
    assert lite_store.run("read", _count_users) == 0
    assert lite_store.run("write", _insert_eve_lite) is None
    assert lite_store.run("read", _count_users) == 1


@pytest.mark.anyio
async def test_a_sqlite_write_that_runs_long_on_the_loop_is_rolled_back_and_handed_back(
    lite: Database, lite_store: LoopStore
) -> None:
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n"
    )

    def insert_then_run_on(connection: Connection) -> None:
        _insert_eve_lite(connection)
        connection.exec_driver_sql(endless).scalar_one()

    started = time.monotonic()
    assert lite_store.run("write", insert_then_run_on) is MISSED
    assert time.monotonic() - started < 2.0
    with lite.engine.connect() as connection:
        assert _count_users(connection) == 0  # its insert rolled back: the thread does it all again
    assert lite_store.run("read", insert_then_run_on) is MISSED  # query_only again, after the failed write
    assert lite_store.run("write", _insert_eve_lite) is None  # and the connection still usable


@pytest.mark.anyio
async def test_a_closed_sqlite_loop_store_runs_nothing(lite_store: LoopStore) -> None:
    lite_store.close()
    assert not await lite_store.ready()
    assert lite_store.run("read", _count_users) is MISSED


@pytest.mark.anyio
async def test_time_a_run_waited_for_a_cpu_is_not_the_databases_slowness(
    store: LoopStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = [0.0]
    monkeypatch.setattr(loop_store, "_queued", lambda: queued[0])

    def starved(connection: Connection) -> int:
        time.sleep(loop_store.SLOW * 1.5)  # as long as a slow database, but all of it queued for a CPU
        queued[0] += loop_store.SLOW * 1.5
        return 1

    for _ in range(loop_store.SLOW_IN_A_ROW * 2):
        assert store.run("read", starved) == 1
        assert await store.ready()
