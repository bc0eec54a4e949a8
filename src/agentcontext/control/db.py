"""The database: two engines, short transactions, and the two dialects we run on.

SQLite (the default, a file in the user data dir) runs in WAL mode so readers never wait
for the writer; a write transaction starts with ``BEGIN IMMEDIATE`` so two writers queue on
the busy timeout instead of failing half-way with "database is locked". PostgreSQL (psycopg
3) runs ORM writes at REPEATABLE READ and retries serialization failures and deadlocks, as
Coder does for push, hydration and refresh. The hot paths (``read_rows``, ``write_rows``)
run on Core connections; their writes run at READ COMMITTED and order themselves with row
locks instead (``ingest`` and ``chats`` say which), so each statement sees what committed
before it. A read of one statement (a turn whose key has not moved, a token, an event
stream's first state) runs outside any transaction (``read_one``): no BEGIN and COMMIT.

The hot paths have an engine of their own whose connections stay in autocommit: a transaction
is begun by saying BEGIN (with its isolation level) on the driver's connection, and a single
statement needs none. Nothing is set on a connection as it is checked out and reset as it
goes back (SQLAlchemy's isolation-level execution options cost that on every request), and
psycopg's implicit BEGIN is not needed. The ORM sessions (cold paths: administration,
personal skills, the dashboard) and migrations use the other engine.

The hot engine's pool holds as many connections as the control plane runs database work at
once (``pool_size``; the plane's worker threads are limited to it), so no request waits for a
connection and none is opened per request; the other keeps a few (``COLD_POOL``) and opens
more when it needs them. A connection the database dropped is replaced and the work run
again, without a ping before each use; but a write that lost it during its COMMIT may have been
saved, so it is not run again: the request fails as unavailable, saying so.

Events a write produces are handed back with its result and published only after commit.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from agentcontext.control import prepared
from agentcontext.control.loop_store import LoopStore, SqliteLoopStore, nearby
from agentcontext.control.sqlite_file import create_private
from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.workspace_mcp.trust import data_dir

T = TypeVar("T")
RETRIES = 8
# A request's work is tried for at most this long from when it was asked (its wait for a worker thread counted),
# then answered 503; an attempt begun by then may still wait out one SQLite lock: below the 30 s a client waits
# (the CLI's), so a client never gives up on a write the server then does anyway (a chat made twice when asked again)
RETRY_FOR = 18.0
BUSY_WAIT_MS = 10_000  # how long SQLite waits on a lock before "database is locked" (another process holding it)
POOL_SIZE = 16  # connections, and the control plane's worker threads: enough for two CPUs and a network database
COLD_POOL = 4  # connections the ORM's engine keeps (it opens up to POOL_SIZE more when busy)
PG_CONNECT_TIMEOUT = (
    10  # seconds for a PostgreSQL connection to be made (libpq's connect_timeout; a URL may set its own)
)
_RETRY_SQLSTATES = {"40001", "40P01"}  # serialization_failure, deadlock_detected


class StorageUnavailable(UnavailableError):
    """The database cannot take this request now (full, unreachable, busy): nothing was written; retry later."""


@contextlib.contextmanager
def _storage_errors() -> Iterator[None]:
    """Operational failures of the database as ``StorageUnavailable`` (HTTP 503), saying which, never how."""
    try:
        yield
    except OperationalError as exc:
        raise StorageUnavailable(_describe(exc)) from exc


def _describe(exc: OperationalError) -> str:
    text = str(exc.orig).lower()
    if "full" in text or "no space" in text or "could not extend" in text or "file too large" in text:
        return "the database is out of space: nothing was written; retry when space is freed"
    if "i/o error" in text:  # SQLite reports a write refused by a quota or a failing disk this way
        return "the database could not write to its disk (full or failing): nothing was written; retry later"
    if "locked" in text or "busy" in text:
        return "the database is busy (locked by another process?): nothing was written; retry"
    return "the database is unreachable: nothing was written; retry"


def default_url(environ: Mapping[str, str] | None = None) -> str:
    """``AGENTCONTEXT_DB``, else ``sqlite:///<data dir>/control.db``."""
    env = os.environ if environ is None else environ
    explicit = env.get("AGENTCONTEXT_DB", "").strip()
    if explicit:
        return explicit
    return f"sqlite:///{data_dir(env) / 'control.db'}"


def normalize_url(url: str) -> URL:
    """Accept ``postgres://``, ``postgresql://`` and ``sqlite:///``; PostgreSQL always goes through psycopg 3.

    Raises:
        ConfigError: a URL SQLAlchemy cannot read, or a database other than SQLite and PostgreSQL.
    """
    try:
        parsed = make_url(url.replace("postgres://", "postgresql://", 1) if url.startswith("postgres://") else url)
    except sa.exc.ArgumentError as exc:
        raise ConfigError(f"not a database URL: {url!r} ({exc})") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return parsed.set(drivername="sqlite")
    raise ConfigError(f"unsupported database {backend!r}: use sqlite:///PATH or postgresql://...")


def sqlite_path(url: str) -> Path | None:
    """The file a ``sqlite:///PATH`` URL names, resolved (links followed); None for another database, an
    in-memory one or a ``file:`` URI.

    Raises:
        ConfigError: not a database URL (``normalize_url``).
    """
    normal = normalize_url(url)
    path = normal.database or ""
    if normal.get_backend_name() != "sqlite" or path in ("", ":memory:") or path.startswith("file:"):
        return None
    return Path(path).expanduser().resolve()


class Database:
    """An engine plus the transaction helpers every store function uses."""

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = POOL_SIZE) -> None:
        self.url = normalize_url(url)
        self.dialect = self.url.get_backend_name()
        self.pool_size = pool_size
        self.engine = _create_engine(self.url, echo=echo, pool_size=min(pool_size, COLD_POOL), overflow=pool_size)
        self._read_engine = self.engine.execution_options(**_read_options(self.dialect))
        # the hot paths' engine: autocommit connections, without the BEGIN listener SQLite's sessions need (a
        # listener makes SQLAlchemy dispatch events around every statement); these say BEGIN themselves
        self._rows = _create_engine(self.url, echo=echo, pool_size=pool_size, listeners=False, autocommit=True)
        self._begin_read, self._begin_write = _BEGIN[self.dialect]
        self._loop_stores: list[LoopStore] = []
        self._sessions = sessionmaker(self._read_engine, expire_on_commit=False)
        self._writer = sessionmaker(
            self.engine.execution_options(**_write_options(self.dialect)), expire_on_commit=False
        )

    def warm(self) -> None:
        """Open the hot paths' connections before the first request: on PostgreSQL each costs a backend's start
        and an authentication, which a replica's first burst of requests would otherwise pay all at once
        (``bench/load.py --postgres``: the slow requests of a stage were its first seconds'). SQLite's are a
        file's open, left to the first use."""
        if self.dialect != "postgresql":
            return
        held = [self._rows.connect() for _ in range(self.pool_size)]
        for connection in held:
            connection.close()

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session: a consistent view, never a lock that blocks the writer.

        Consistent across statements: a chat and its pinned rows read in one session belong
        to the same pin even when a refresh commits in between (PostgreSQL: REPEATABLE READ,
        which never fails a transaction that only reads; SQLite: a WAL read transaction).
        """
        with _storage_errors(), self._sessions() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def read_connection(self) -> Iterator[Connection]:
        """``read`` without the ORM: a Core connection in a read transaction, for hot paths."""
        with _storage_errors(), self._read_engine.connect() as connection, connection.begin():
            yield connection

    def write(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in one write transaction, retrying it whole on a serialization failure.

        ``work`` must be safe to run again: it reads what it needs inside the transaction.
        """

        def attempt() -> T:
            committing = False
            try:
                with self._writer() as session, session.begin():
                    result = work(session)
                    session.flush()  # what work left pending: the block's end says COMMIT alone
                    committing = True
            except DBAPIError as exc:
                if committing and exc.connection_invalidated:  # saved or not: never run twice
                    raise prepared.CommitOutcomeUnknown(prepared.UNKNOWN_OUTCOME) from exc
                raise
            return result

        return _retrying(attempt)

    def read_rows(self, work: Callable[[Connection], T]) -> T:
        """``read`` on a Core connection, for hot paths; run again on a fresh connection if the old one was dropped."""
        return _retrying(partial(_transaction, self._rows, self._begin_read, work, writes=False))

    def read_one(self, work: Callable[[Connection], T]) -> T:
        """``read_rows`` without a transaction, for ``work`` that runs one statement (or statements that need
        not agree): each statement sees what had committed when it ran, and none waits on a BEGIN or COMMIT."""
        return _retrying(partial(_statements, self._rows, work))

    def write_rows(self, work: Callable[[Connection], T]) -> T:
        """``write`` on a Core connection at READ COMMITTED (PostgreSQL), for hot paths that lock what they order on."""
        return _retrying(partial(_transaction, self._rows, self._begin_write, work))

    def loop_store(self, environ: Mapping[str, str] | None = None) -> LoopStore | None:
        """A connection for short transactions the event loop runs itself (``loop_store``), where the database is
        PostgreSQL on a Unix socket or loopback, or a SQLite file; None elsewhere (an in-memory
        SQLite is another database on each connection)."""
        store: LoopStore
        if self.is_sqlite:
            database = self.url.database or ""
            if database in ("", ":memory:") or database.startswith("file:"):
                return None
            store = SqliteLoopStore(self.url, self._begin_read, self._begin_write)
        elif nearby(self.url, environ):
            store = LoopStore(self.url, self._begin_read, self._begin_write)
        else:
            return None
        self._loop_stores.append(store)
        return store

    def dispose(self) -> None:
        for store in self._loop_stores:  # a control plane closes its own; one never closed is closed here
            store.close()
        self.engine.dispose()
        self._rows.dispose()


# how the hot paths begin a read and a write transaction on each database
_BEGIN = {
    "sqlite": ("BEGIN", "BEGIN IMMEDIATE"),
    "postgresql": ("BEGIN ISOLATION LEVEL REPEATABLE READ", "BEGIN ISOLATION LEVEL READ COMMITTED"),
}


def _transaction(engine: Engine, begin: str, work: Callable[[Connection], T], *, writes: bool = True) -> T:
    """``work`` in one transaction begun with ``begin`` on a connection in autocommit (which begins none).

    Both ends are said on the driver's own connection (SQLAlchemy's statement machinery costs about a third of a
    round trip more), their errors raised as SQLAlchemy's: a dropped connection is replaced and the work retried,
    SQLite's BEGIN IMMEDIATE that waited out its busy timeout is "database is locked", retried too; but not a
    write whose connection was lost during its COMMIT (``prepared.CommitOutcomeUnknown``): it may have been saved."""
    with engine.connect() as connection:
        return prepared.transaction(connection, begin, work, writes=writes)


def _statements(engine: Engine, work: Callable[[Connection], T]) -> T:
    """``work`` on a connection in autocommit: each statement its own transaction."""
    with engine.connect() as connection:
        return work(connection)


_ASKED: ContextVar[float | None] = ContextVar("asked", default=None)  # when the request's work was handed over


def asked_at(when: float) -> None:
    """Count this context's retry budget (``RETRY_FOR``) from ``when`` (``time.monotonic``), the moment its work
    was handed to a worker: a wait in the pool's queue is the client's wait too."""
    _ASKED.set(when)


def _retrying(attempt: Callable[[], T]) -> T:
    deadline = (_ASKED.get() or time.monotonic()) + RETRY_FOR
    if time.monotonic() >= deadline:  # it waited its whole budget for a worker: its client is about to give up
        raise StorageUnavailable("the database is busy: nothing was written; retry")
    for number in range(RETRIES):
        try:
            return attempt()
        except DBAPIError as exc:
            if number + 1 < RETRIES and _retryable(exc) and time.monotonic() < deadline:
                time.sleep(random.uniform(0, 0.005 * 2**number))
                continue
            if isinstance(exc, OperationalError):
                raise StorageUnavailable(_describe(exc)) from exc
            raise
    raise AssertionError("unreachable")


def _retryable(exc: DBAPIError) -> bool:
    if exc.connection_invalidated:  # the database dropped the connection: the pool replaced it
        return True
    code = getattr(exc.orig, "sqlstate", None)
    if code in _RETRY_SQLSTATES:
        return True
    # SQLite: a writer that found the database locked past the busy timeout
    return isinstance(exc, OperationalError) and "database is locked" in str(exc.orig)


def _read_options(dialect: str) -> dict[str, Any]:
    return {"isolation_level": "REPEATABLE READ"} if dialect == "postgresql" else {}


def _write_options(dialect: str) -> dict[str, Any]:
    if dialect == "postgresql":
        return {"isolation_level": "REPEATABLE READ"}
    return {"sqlite_begin": "BEGIN IMMEDIATE"}


def _create_engine(
    url: URL, *, echo: bool, pool_size: int, overflow: int = 4, listeners: bool = True, autocommit: bool = False
) -> Engine:
    # a few connections beyond the workers' for what runs outside them (migrations, the CLI's own)
    pool = {"pool_size": pool_size, "max_overflow": overflow, "pool_recycle": 3600}
    if url.get_backend_name() == "postgresql":
        # a host that takes the connection and never answers would otherwise hold each connect (and the CLI) for good
        connect = {} if "connect_timeout" in url.query else {"connect_args": {"connect_timeout": PG_CONNECT_TIMEOUT}}
        autocommitting = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
        return sa.create_engine(url, echo=echo, **pool, **connect, **autocommitting)
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        create_private(Path(database))
    if database in ("", ":memory:"):
        pool = {}  # one in-memory database per connection: SQLAlchemy's singleton pool
    engine = sa.create_engine(
        url, echo=echo, connect_args={"check_same_thread": False, "timeout": BUSY_WAIT_MS / 1000}, **pool
    )
    _sqlite_connections(engine)
    if listeners:
        _sqlite_transactions(engine)
    return engine


def _sqlite_connections(engine: Engine) -> None:
    """Each new connection: autocommit in the sqlite3 module (we say when to begin), WAL, waits, foreign keys."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None  # the module's own BEGIN would be deferred
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_WAIT_MS}")  # first: switching a new file to WAL can find it locked
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()


def _sqlite_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not the sqlite3 module, decide when a transaction begins (and how)."""

    @event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get("sqlite_begin", "BEGIN"))
