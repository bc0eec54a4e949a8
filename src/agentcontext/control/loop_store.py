"""Short store work run on the event loop itself: on a PostgreSQL reached without a network, or a SQLite file's reads.

A request's store work normally hops to a worker thread (the driver blocks): on PostgreSQL two thirds
of a short transaction's CPU is that hop and the thread's waits, the statements a third
(``bench/db_hop.py``). Against a database on a Unix socket or loopback a short transaction answers in
a fraction of a millisecond, so the loop can run it itself on a connection of its own, provided
nothing makes it wait while every other request of the replica waits with it:

- the connection's ``lock_timeout`` and ``statement_timeout`` are short: a transaction that meets a
  held row lock (a refresh behind a push holding its agent's row, perhaps on another replica) or a
  slow statement is stopped by the database within milliseconds;
- such a transaction, and one that loses its connection or its serialization, is rolled back and
  handed back (``MISSED``) to be run again in a worker thread, where waiting costs nobody else; work
  here must be safe to run again, as ``db._retrying`` already requires;
- a write first asks, with its ``BEGIN``, whether the database's commits wait for a synchronous
  standby (a wait no time limit ends): while they do, writes run in threads;
- a database that answers slowly anyway (a tunnel that looks like loopback) is noticed and left to
  the threads for a while. What a run waited for a CPU (the loop's thread queued behind others, from
  Linux's ``schedstat``) is not the database's slowness and is not counted: on a machine whose CPUs are
  all busy (the database's backends among them) threads would only add the cost of their hops.

What the loop may still wait for: the local disk's flush of a commit, and a run's statements one
after another (each limited, not the run), each bounded by a watchdog: a database that does not answer
for ``HUNG`` seconds (a backend stopped or stuck, whose own time limits then do nothing) has the loop's
connection cut under it, and the work goes to a thread like any other miss. A write whose connection is
lost or cut during its ``COMMIT`` may have been committed, so it is not run again: the request fails as
unavailable instead (``prepared.CommitOutcomeUnknown``, as in the threads).

What may run here is the caller's choice (``ControlPlane`` sends ORM sessions, PostgreSQL's pushes and large
SQLite ones to threads).

On SQLite (a file: ``SqliteLoopStore``) the database is this process's own library: in WAL mode a reader
never waits for the writer, and the connection has no busy timeout, so a write whose ``BEGIN IMMEDIATE``
meets the file's write lock (a worker thread's write under way) is handed back at once, to wait for it in a
thread. Reads run on a ``query_only`` connection and writes on a second one (a connection switched between
the two would prepare its statements anew each time), and a progress handler stops any run past
``STATEMENT_SECONDS``. What the loop may wait for is the disk, as on PostgreSQL: a commit
that checkpoints flushes the file (WAL, ``synchronous=NORMAL``: only a checkpoint flushes).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypeVar

import anyio
import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from agentcontext.control import prepared

log = logging.getLogger("agentcontext.control")
T = TypeVar("T")
LOCK_WAIT = "2ms"  # what a statement here may wait for a row lock before it is redone in a thread
STATEMENT_TIME = "50ms"  # what one statement here may take
STATEMENT_SECONDS = 0.050  # SQLite: what a run here may take (its progress handler stops it past that)
PROGRESS_EVERY = 1000  # SQLite: virtual machine steps between the progress handler's looks at the clock
SLOW = 0.020  # seconds: a run that took longer counts against the database being near
SLOW_IN_A_ROW = 3  # that many slow runs in a row: the database is left to the threads ...
REST = 30.0  # ... for this many seconds
REOPEN_AFTER = 1.0  # seconds before a connection that could not be opened is tried again
HUNG = 2.0  # seconds a run may wait for the database before the watchdog cuts its connection
WATCH_EVERY = 0.25  # seconds between the watchdog's looks
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


Kind = Literal["read", "write", "statements"]  # a read or write transaction, or statements outside any


class Missed(enum.Enum):
    MISSED = enum.auto()


MISSED: Final = Missed.MISSED


def nearby(url: URL, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``url`` is a PostgreSQL reached through a Unix socket or loopback only (libpq's own defaults
    and ``PGHOST``/``PGHOSTADDR`` counted). A service file (``service=``, ``PGSERVICE``) may name any host:
    not near."""
    if url.get_backend_name() != "postgresql":
        return False
    env = os.environ if environ is None else environ
    query = url.query

    def one(name: str) -> str:
        value = query.get(name)
        return (value if isinstance(value, str) else ",".join(value)) if value else ""

    if one("service") or env.get("PGSERVICE"):
        return False
    addresses = one("hostaddr") or env.get("PGHOSTADDR", "")  # libpq connects there, whatever the host says
    if addresses:
        return all(address.strip() in _LOOPBACK for address in addresses.split(","))
    # the URL's host and a host= of its query both reach the driver (the query's wins): both must be near
    hosts = [value for value in (url.host or "", one("host")) if value] or [env.get("PGHOST", "")]
    return all(_near_host(host.strip()) for value in hosts for host in value.split(","))


def _near_host(host: str) -> bool:
    # empty: libpq's default Unix socket; a path (or an abstract socket, "@name"): a Unix socket
    if not host or host.startswith(("/", "@")) or host.lower() in _LOOPBACK:
        return True
    name, colon, port = host.rpartition(":")  # SQLAlchemy's hosts in the query carry their port: "host:5432"
    return bool(colon) and port.isdigit() and name.lower() in _LOOPBACK


# a commit that waits for a standby's answer waits with no limit (statement_timeout ends before it): not on the loop
COMMITS_WAIT_FOR_STANDBY = (
    "current_setting('synchronous_standby_names') <> ''"
    " AND current_setting('synchronous_commit') IN ('on', 'remote_write', 'remote_apply')"
)
_WAITS_FOR_STANDBY = f"SELECT {COMMITS_WAIT_FOR_STANDBY}"


class _NotHere(Exception):
    """Work that must not, or could not, be done on the loop after all: rolled back, run in a thread."""


class LoopStore:
    """One connection the event loop runs short transactions on itself (see the module)."""

    def __init__(self, url: URL, begin_read: str, begin_write: str) -> None:
        self._begin: dict[Kind, str | None] = {"read": begin_read, "write": begin_write, "statements": None}
        self._engine: Engine = self._create_engine(url)
        self._connection: Connection | None = None
        self._opening = False
        self._resting_until = 0.0  # time.monotonic() before which nothing runs here
        self._writes_resting_until = 0.0  # and before which no write does (its commits wait for a standby)
        self._slow = 0  # slow runs in a row
        self._driver: Any = None  # the connection's psycopg connection, for the watchdog
        self._watched: float | None = None  # when the run under way began (perf_counter); None: none under way
        self._cut = False  # the watchdog cut the run under way
        self._watching = threading.Lock()  # the watchdog's look and cut, against the run's end and a close
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None
        self.runs = 0  # what ran here to the end, and what was handed back (for tests)
        self.missed = 0

    async def ready(self) -> bool:
        """Whether a run may be tried now; opens the connection (in a worker thread) when there is none."""
        if self._connection is not None:
            return self._resting_until == 0.0 or self._rested()
        if self._opening or not self._rested():
            return False
        self._opening = True
        try:
            self._connection = await anyio.to_thread.run_sync(self._open)
        except DBAPIError as exc:  # the threads' way will say what is wrong, with its retries and translation
            log.info("store connection for the event loop not opened: %s", exc.orig)
            self._resting_until = time.monotonic() + REOPEN_AFTER
            return False
        finally:
            self._opening = False
        if self._resting_until == math.inf:  # closed while it opened
            self._drop()
            return False
        self._driver = self._connection.connection.driver_connection
        self._watch_from_now()
        return True

    def _watch_from_now(self) -> None:
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, name="agentcontext-loop-store-watchdog", daemon=True)
            self._watchdog.start()

    def run(self, kind: Kind, work: Callable[[Connection], T]) -> T | Literal[Missed.MISSED]:
        """``work`` in a transaction of ``kind`` (``statements``: none, each statement its own), or ``MISSED``:
        nothing done (rolled back), run it in a thread. An error of ``work`` itself is raised, rolled back."""
        connection = self._connection
        if connection is None or (kind == "write" and not self._may_write()):
            return MISSED
        started = time.perf_counter()
        queued = _queued()
        self._cut = False
        self._watched = started
        try:
            result = self._run(kind, connection, work)
        except (DBAPIError, _NotHere):  # a lock or time limit, a lost connection, a serialization failure, ...
            self._end(connection)
            self.missed += 1
            return MISSED
        except BaseException:
            self._end(connection)
            raise
        finally:
            with self._watching:
                self._watched = None
            self._timed(time.perf_counter() - started - (_queued() - queued))
        if connection.in_transaction():  # SQLAlchemy's own (autocommit: nothing open below it), as a new one has none
            connection.rollback()
        self.runs += 1
        return result

    def _may_write(self) -> bool:
        return time.monotonic() >= self._writes_resting_until

    def _run(self, kind: Kind, connection: Connection, work: Callable[[Connection], T]) -> T:
        begin = self._begin[kind]
        if begin is None:
            return work(connection)
        if kind == "write":  # begun with the question, in the same round trip
            if prepared.ask(connection, f"{begin}; {_WAITS_FOR_STANDBY}") == "t":
                self._writes_resting_until = time.monotonic() + REST
                log.info("the database's commits wait for a synchronous standby: writes run in worker threads")
                raise _NotHere
            begin = None
        # refuses an aborted one; a write whose connection is lost (or cut) during its COMMIT raises
        # CommitOutcomeUnknown, which is not handed back: committed or not, it must never run twice
        return prepared.transaction(connection, begin, work, writes=kind == "write")

    def close(self) -> None:
        self._resting_until = math.inf  # for good
        self._closed.set()
        self._drop()
        self._engine.dispose()

    # --- the watchdog --------------------------------------------------------------------

    def _watch(self) -> None:
        """Cut the connection of a run that has waited ``HUNG`` seconds (a thread of its own: the loop is the one
        waiting). Under ``_watching``, so the run cannot end and its connection be closed (its descriptor's number
        then another socket's) while it is cut."""
        while not self._closed.wait(WATCH_EVERY):
            with self._watching:
                began = self._watched
                if began is None or self._cut or time.perf_counter() - began < HUNG:
                    continue
                self._cut = True
                log.warning(
                    "the database did not answer the event loop for %.1f s: its connection is cut, the work goes to "
                    "a worker thread (a write cut during its COMMIT fails instead)", time.perf_counter() - began,
                )  # fmt: skip
                _shut(self._driver)

    # --- the connection ----------------------------------------------------------------

    @staticmethod
    def _create_engine(url: URL) -> Engine:
        return sa.create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")

    def _open(self) -> Connection:
        connection = self._engine.connect()
        try:
            prepared.say(connection, f"SET lock_timeout = '{LOCK_WAIT}'; SET statement_timeout = '{STATEMENT_TIME}'")
        except BaseException:
            connection.close()
            raise
        return connection

    def _end(self, connection: Connection) -> None:
        """Leave ``connection`` outside any transaction, or drop it when it cannot be (lost, or its rollback
        failed): the next ``ready`` opens another."""
        if connection.invalidated:
            self._drop()
            return
        driver: Any = connection.connection.driver_connection
        try:
            driver.rollback()  # what BEGIN opened (psycopg says nothing when no transaction is open)
            if connection.in_transaction():
                connection.rollback()
        except Exception:
            self._drop()

    def _drop(self) -> None:
        with self._watching:  # not watched from here on: its descriptor is about to close
            self._watched = None
            connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()

    def _timed(self, seconds: float) -> None:
        if seconds <= SLOW:
            self._slow = 0
            return
        self._slow += 1
        if self._slow >= SLOW_IN_A_ROW:
            log.warning(
                "the database took over %d ms a transaction %d times in a row: its work runs in worker threads "
                "for %d s", SLOW * 1000, SLOW_IN_A_ROW, REST,
            )  # fmt: skip
            self._slow = 0
            self._resting_until = time.monotonic() + REST

    def _rested(self) -> bool:
        if time.monotonic() < self._resting_until:
            return False
        self._resting_until = 0.0
        return True


class _SqliteConnection(LoopStore):
    """A connection of the loop to a SQLite file: no busy timeout, the file's rules, a progress handler."""

    read_only = True

    @staticmethod
    def _create_engine(url: URL) -> Engine:
        # timeout 0: no busy wait (a lock met hands the work back); opened in a worker thread, used on the loop's
        return sa.create_engine(
            url,
            poolclass=NullPool,
            isolation_level="AUTOCOMMIT",
            connect_args={"check_same_thread": False, "timeout": 0},
        )

    def _open(self) -> Connection:
        connection = self._engine.connect()
        driver: Any = connection.connection.driver_connection
        try:
            # the file's rules as every connection of ``db`` keeps them (WAL is the file's own): a write checks
            # foreign keys, and commits without flushing, as theirs do
            driver.execute("PRAGMA foreign_keys = ON")
            driver.execute("PRAGMA synchronous = NORMAL")
            if self.read_only:  # set once: changing it expires every prepared statement of the connection
                driver.execute("PRAGMA query_only = 1")
            driver.set_progress_handler(self._too_long, PROGRESS_EVERY)
        except BaseException:
            connection.close()
            raise
        return connection

    def _too_long(self) -> int:
        """SQLite's progress handler: nonzero stops the statement ("interrupted"), and the work goes to a thread."""
        began = self._watched
        return int(began is not None and time.perf_counter() - began > STATEMENT_SECONDS)

    def _watch_from_now(self) -> None:
        """No watchdog: the database is this process's own library, and the progress handler stops a long run."""

    def _may_write(self) -> bool:
        return not self.read_only


class _SqliteWriter(_SqliteConnection):
    """The loop's connection for writes to a SQLite file."""

    read_only = False

    def _run(self, kind: Kind, connection: Connection, work: Callable[[Connection], T]) -> T:
        # only writes come here (``SqliteLoopStore.run``). No busy timeout: BEGIN IMMEDIATE meets a write lock held
        # elsewhere (a worker thread's write) as "database is locked" at once, and the work goes to a thread
        return prepared.transaction(connection, self._begin["write"], work, writes=True)


class SqliteLoopStore(_SqliteConnection):
    """``LoopStore`` on a SQLite file (see the module): reads on a ``query_only`` connection, writes on another."""

    def __init__(self, url: URL, begin_read: str, begin_write: str) -> None:
        super().__init__(url, begin_read, begin_write)
        self.writer = _SqliteWriter(url, begin_read, begin_write)

    async def ready(self) -> bool:
        if not await super().ready():
            return False
        await self.writer.ready()  # while it is not, a write is handed back, to a thread
        return True

    def run(self, kind: Kind, work: Callable[[Connection], T]) -> T | Literal[Missed.MISSED]:
        return self.writer.run(kind, work) if kind == "write" else super().run(kind, work)

    def close(self) -> None:
        self.writer.close()
        super().close()


_SCHEDSTAT = threading.local()  # each thread's open /proc/thread-self/schedstat (None: not there)


def _queued() -> float:
    """Seconds the calling thread has waited for a CPU since it began (Linux's schedstat: its second field);
    0.0 where there is none. One ``pread`` of a file kept open: about 2 us."""
    fd = getattr(_SCHEDSTAT, "fd", -1)
    if fd == -1:
        try:
            fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            fd = None
        _SCHEDSTAT.fd = fd
    if fd is None:
        return 0.0
    try:
        return int(os.pread(fd, 128, 0).split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _shut(driver: Any) -> None:
    """Shut down the socket of ``driver`` (a psycopg connection) under the thread blocked on it: its wait
    returns, and libpq reports the connection lost. A connection already closed has nothing to shut."""
    with contextlib.suppress(Exception), socket.socket(fileno=os.dup(driver.pgconn.socket)) as sock:
        sock.shutdown(socket.SHUT_RDWR)
