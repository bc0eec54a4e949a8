"""Hot statements compiled once per dialect and run on the driver's own connection.

SQLAlchemy's execution of a Core statement costs, on every call, a walk of the statement for its cache
key, an execution context and a result built from the cursor's description (psycopg makes an object per
column for it): 150-250 us of CPU a statement on PostgreSQL where the driver alone needs 50, and 30-40 us
on SQLite where it needs 7 (``bench/percpu.py`` counts a request's CPU against ``/healthz``'s). A
``Prepared`` statement is compiled by SQLAlchemy once for each dialect (its SQL, its parameters' order,
the type processing SQLAlchemy would do) and run with the driver's cursor, or on PostgreSQL's autocommit
connections (the hot paths', whose transactions are said here) through libpq itself (``pq_statement``:
about 30 us of CPU a statement less than the cursor): rows come back as tuples that also answer to their
column names, as SQLAlchemy's do. Driver errors are raised as SQLAlchemy's ``DBAPIError`` (a dropped
connection invalidated, as SQLAlchemy does), so ``db._retrying`` and the storage error translation treat
both paths alike; but a write whose connection is lost during its ``COMMIT`` is ``CommitOutcomeUnknown``,
never run again.

Given a session (a cold path) a ``Prepared`` runs through SQLAlchemy as any statement. It refuses what
it cannot run as compiled (parameters expanded at execution, ``IN`` lists): those stay SQLAlchemy's.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import psycopg
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Delete, Insert, Update, UpdateBase
from sqlalchemy.sql.elements import TextClause
from sqlalchemy.sql.selectable import CompoundSelect, Select, SelectBase, TextualSelect

from agentcontext.control import pq_statement
from agentcontext.errors import UnavailableError

Executor = Connection | Session  # as ``contents.Executor``: a Core connection on hot paths, a session on cold ones
Processor = Callable[[Any], Any]
T = TypeVar("T")
Statement = Select[Any] | CompoundSelect[Any] | TextualSelect | Update | Delete | Insert | TextClause
_new = tuple.__new__
_CURSOR = "agentcontext.cursor"  # where a pooled connection keeps the cursor prepared statements run on
_AT_COMMIT = "agentcontext.at_commit"  # and the statements to say with the transaction's COMMIT
_ENDED = "the transaction ended before its work did: what followed was not part of it"
_ABORTED = "the transaction was aborted by an error its work caught and went on from: nothing was committed"
UNKNOWN_OUTCOME = (
    "the connection to the database was lost during a commit: the change may or may not have been saved; "
    "check, then retry"
)


class CommitOutcomeUnknown(UnavailableError):
    """A write's ``COMMIT`` whose connection was lost before the answer: it may have been saved, so the work must
    not run again as a lost connection's work is (``db._retrying``); the request fails as unavailable instead."""


@dataclass(frozen=True, slots=True)
class _Compiled:
    """One statement as one dialect runs it."""

    sql: str
    order: tuple[str, ...] | None  # positional parameters (SQLite's ``?``): the names in order; None: by name
    defaults: Mapping[str, Any]  # values the statement carries itself (literals it binds)
    binds: tuple[tuple[str, Processor], ...]  # parameters SQLAlchemy would convert on their way in
    row: type[tuple[Any, ...]] | None  # the row class (column names as attributes); None: no rows
    results: tuple[tuple[int, Processor], ...]  # columns SQLAlchemy would convert on their way out
    numbered: pq_statement.Numbered | None = None  # PostgreSQL: the statement as libpq runs it (``pq_statement``)

    def arguments(self, params: Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
        values = {**self.defaults, **params}
        for name, process in self.binds:
            values[name] = process(values[name])
        return values if self.order is None else tuple([values[name] for name in self.order])

    def rows(self, fetched: Sequence[Sequence[Any]]) -> list[Any]:
        row = self.row
        assert row is not None
        if not self.results:
            return [_new(row, raw) for raw in fetched]
        out = []
        for raw in fetched:
            values = list(raw)
            for index, process in self.results:
                values[index] = process(values[index])
            out.append(_new(row, values))
        return out


class Prepared:
    """A Core statement compiled once per dialect, run on the driver's connection (see the module)."""

    __slots__ = ("_by_dialect", "only", "statement")

    def __init__(self, statement: Statement, *, only: str | None = None) -> None:
        """``only``: the one database the statement is written for (``postgresql``: its row locks, ``UPDATE ...
        FROM ... RETURNING`` as SQLite does not read it)."""
        self.statement = statement
        self.only = only
        self._by_dialect: dict[str, _Compiled] = {}

    def all(self, executor: Executor, params: Mapping[str, Any]) -> list[Any]:
        """Every row (tuples with named columns)."""
        if not isinstance(executor, Connection):
            return list(executor.execute(self.statement, params).all())
        return self._run(executor, params)[0]

    def first(self, executor: Executor, params: Mapping[str, Any]) -> Any:
        """The first row, or None."""
        found = self.all(executor, params)
        return found[0] if found else None

    def scalar(self, executor: Executor, params: Mapping[str, Any]) -> Any:
        """The first column of the first row, or None."""
        row = self.first(executor, params)
        return None if row is None else row[0]

    def execute(self, executor: Executor, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> int:
        """Run a statement that returns no rows, once or (a list) once for each; the number of rows it changed."""
        if not isinstance(executor, Connection):
            result: Any = executor.execute(self.statement, params)
            return int(result.rowcount)
        return self._run(executor, params)[1]

    def compiled(self, dialect: Dialect) -> _Compiled:
        found = self._by_dialect.get(dialect.name)
        if found is None:
            if self.only is not None and dialect.name != self.only:
                raise ValueError(f"a statement for {self.only} run on {dialect.name}")
            found = self._by_dialect[dialect.name] = _compile(self.statement, dialect)
        return found

    def _run(
        self, connection: Connection, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    ) -> tuple[list[Any], int]:
        compiled = self.compiled(connection.dialect)
        pooled = connection.connection
        many = not isinstance(params, Mapping)
        arguments: Any = (
            [compiled.arguments(p) for p in params] if many else compiled.arguments(params)  # type: ignore[arg-type]
        )
        driver: Any = pooled.driver_connection
        # libpq's own call where we say the transaction's ends: in psycopg's own transactions its cursor says BEGIN
        if compiled.numbered is not None and not many and isinstance(driver, psycopg.Connection) and driver.autocommit:
            try:
                found, changed = pq_statement.run(pooled.info, driver, compiled.numbered, arguments)
            except psycopg.Error as exc:
                _translated(connection, compiled.sql, arguments, exc, None)
            return (compiled.rows(found) if found else []), changed
        # One cursor a connection, kept with it in the pool: psycopg builds a cursor's type loaders afresh
        # (a third of a short statement's cost). It keeps only its last result, until the next statement.
        cursor = pooled.info.get(_CURSOR)
        if cursor is None:
            cursor = pooled.info[_CURSOR] = driver.cursor()
        try:
            if many:
                cursor.executemany(compiled.sql, arguments)
            else:
                cursor.execute(compiled.sql, arguments)
            fetched = cursor.fetchall() if compiled.row is not None and not many else ()
            changed = cursor.rowcount
        except connection.dialect.loaded_dbapi.Error as exc:
            pooled.info.pop(_CURSOR, None)
            _translated(connection, compiled.sql, arguments, exc, cursor)
        return (compiled.rows(fetched) if fetched else []), changed


def _compile(statement: Statement, dialect: Dialect) -> _Compiled:
    compiled: Any = statement.compile(dialect=dialect)
    if compiled.escaped_bind_names or "POSTCOMPILE" in compiled.string:
        raise ValueError(f"cannot run as compiled (parameters rendered at execution): {compiled.string[:80]}")
    names = compiled.bind_names  # every bind parameter -> its name in the SQL
    if any(bind.expanding or bind.literal_execute for bind in names):
        raise ValueError("cannot run as compiled: a parameter expands at execution")
    if getattr(compiled, "insert_prefetch", None) or getattr(compiled, "update_prefetch", None):
        raise ValueError("cannot run as compiled: a column's default is computed at execution")
    if any(bind.callable is not None for bind in names):
        raise ValueError("cannot run as compiled: a parameter's value is computed at execution")
    binds: dict[str, Processor] = {}  # by name: a name bound twice is converted once
    for bind, name in names.items():
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            binds[name] = process
    defaults = {name: bind.value for bind, name in names.items() if not bind.required}
    columns: Any = None
    if isinstance(statement, SelectBase):
        columns = statement.selected_columns
    elif isinstance(statement, UpdateBase):
        columns = statement.exported_columns  # what RETURNING gives: none without it
    row: type[tuple[Any, ...]] | None = None
    results = []
    if columns is not None and len(columns):
        row = _row_class(list(columns.keys()))
        for index, column in enumerate(columns):
            process = column.type.dialect_impl(dialect).result_processor(dialect, None)
            if process is not None:
                results.append((index, process))
    order = tuple(compiled.positiontup) if compiled.positional else None
    numbered = pq_statement.numbered(statement, dialect) if dialect.driver == "psycopg" else None
    return _Compiled(compiled.string, order, defaults, tuple(binds.items()), row, tuple(results), numbered)


def _row_class(names: list[str]) -> type[tuple[Any, ...]]:
    """Tuples that answer to their column names, as SQLAlchemy's rows do (a repeated name gets a positional one)."""
    made: type[tuple[Any, ...]] = namedtuple("Row", names, rename=True)  # type: ignore[misc]
    return made


def say(connection: Connection, sql: str) -> None:
    """Run ``sql`` (no parameters, no rows: a ``BEGIN``) on the driver's connection, its errors SQLAlchemy's."""
    driver: Any = connection.connection.driver_connection
    try:
        if isinstance(driver, psycopg.Connection):
            _command(driver, sql)
        else:
            driver.execute(sql)
    except connection.dialect.loaded_dbapi.Error as exc:
        _translated(connection, sql, (), exc, None)


def ask(connection: Connection, sql: str) -> str | None:
    """``say`` of ``sql`` whose last statement is a query of one text value (PostgreSQL): that value."""
    driver: Any = connection.connection.driver_connection
    try:
        return _command(driver, sql, answer=True)
    except connection.dialect.loaded_dbapi.Error as exc:
        _translated(connection, sql, (), exc, None)


def _command(driver: psycopg.Connection[Any], sql: str, *, answer: bool = False, ending: bool = False) -> str | None:
    """``sql`` (commands without parameters or rows; with ``answer``, the last a query of one value; with
    ``ending``, the last a ``COMMIT``) said through libpq itself, as psycopg says its own ``BEGIN`` and ``COMMIT``:
    through a cursor (its type adapters, the query's conversion) a ``BEGIN`` and ``COMMIT`` cost 69 us of CPU
    against 28 (``bench/begin_commit.py``). A failure is raised as the error psycopg would raise."""
    pgconn = driver.pgconn
    encoding = driver.info.encoding  # the connection's, as psycopg encodes its queries (and ``mogrify`` quoted for)
    result = pq_statement.checked(pgconn.exec_(sql.encode(encoding)), pgconn, encoding)
    if result.status == psycopg.pq.ExecStatus.COMMAND_OK and not answer:
        if ending and result.command_status == b"ROLLBACK":
            # PostgreSQL answers the COMMIT of an aborted transaction (work that caught a database error and went
            # on) with ROLLBACK and no error: nothing was written, so it must not pass for a success
            raise psycopg.errors.InFailedSqlTransaction(_ABORTED)
        return None
    if result.status == psycopg.pq.ExecStatus.TUPLES_OK and answer:
        value = result.get_value(0, 0)
        return None if value is None else bytes(value).decode(encoding)
    raise psycopg.ProgrammingError(f"{sql[:80]!r} answered {result.status.name}, not what it was said for")


def at_commit(connection: Connection, statement: Prepared, params: Mapping[str, Any]) -> None:
    """Run ``statement`` with the transaction's ``COMMIT``, in the same round trip, on PostgreSQL (elsewhere at
    once): for a statement nothing in the transaction reads and whose effect shows only on commit anyway, as
    ``pg_notify``'s. Its parameters are bound by psycopg on this side (``ClientCursor.mogrify``, the
    connection's own quoting), as a query of several statements takes none."""
    if connection.dialect.name != "postgresql":
        statement.execute(connection, params)
        return
    compiled = statement.compiled(connection.dialect)
    pooled = connection.connection
    driver: Any = pooled.driver_connection
    text = psycopg.ClientCursor(driver).mogrify(compiled.sql, compiled.arguments(params))
    pooled.info.setdefault(_AT_COMMIT, []).append(text)


def transaction(
    connection: Connection, begin: str | None, work: Callable[[Connection], T], *, writes: bool = True
) -> T:
    """``work`` in one transaction begun with ``begin`` (its isolation level; None: begun already) on a connection
    in autocommit, both ends said on the driver's connection (``say``, ``commit``); ``writes``: see ``commit``."""
    if begin is not None:
        say(connection, begin)
    try:
        result = work(connection)
    except BaseException:
        discard_at_commit(connection)
        raise
    commit(connection, writes=writes)
    return result


def discard_at_commit(connection: Connection) -> None:
    """Forget what was left for a ``COMMIT`` that will not come (the transaction failed)."""
    if not connection.invalidated:
        connection.connection.info.pop(_AT_COMMIT, None)


def commit(connection: Connection, *, writes: bool = True) -> None:
    """End the transaction a BEGIN said on the driver's connection opened, whichever path ran its statements
    (SQLAlchemy's own ``commit`` does nothing when none of them went through it), with what ``at_commit`` left.

    Raises:
        CommitOutcomeUnknown: ``writes`` and the connection was lost before the COMMIT's answer (a read's lost
            COMMIT is raised as any lost connection, whose work runs again).
    """
    pooled = connection.connection
    pending: list[str] | None = pooled.info.pop(_AT_COMMIT, None)
    driver: Any = pooled.driver_connection
    try:
        # a transaction that ended under its work (a ROLLBACK said, or SQLite's whole-transaction rollback on a
        # full disk) left what followed committed alone: its COMMIT would do nothing and pass for a success
        if isinstance(driver, psycopg.Connection):  # with what was left for it: one simple query, one round trip
            if driver.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                raise psycopg.errors.NoActiveSqlTransaction(_ENDED)
            _command(driver, "; ".join([*pending, "COMMIT"]) if pending else "COMMIT", ending=True)
        else:
            if not driver.in_transaction:
                raise connection.dialect.loaded_dbapi.InternalError(_ENDED)
            driver.commit()
    except connection.dialect.loaded_dbapi.Error as exc:
        try:
            _translated(connection, "COMMIT", (), exc, None)
        except DBAPIError as error:
            if writes and error.connection_invalidated:  # saved or not, nobody here can tell
                raise CommitOutcomeUnknown(UNKNOWN_OUTCOME) from error
            raise


def _translated(connection: Connection, sql: str, arguments: Any, exc: Any, cursor: Any) -> NoReturn:
    """Raise the driver's error as SQLAlchemy's. A connection the database dropped goes through SQLAlchemy's own
    handler: invalidated with every pooled one opened before it (they went with it), so the retry gets a fresh
    one. Any other error is wrapped here, because that handler would also roll back the transaction our BEGIN
    opened (it began none of its own): work that caught the error and went on would then write outside any
    transaction, each statement committed alone. Left open, PostgreSQL refuses what follows in it and ``commit``
    refuses its end; SQLite rolls back the failed statement (or, on a full disk or an I/O error, the whole
    transaction, which ``commit`` then refuses)."""
    dialect = connection.dialect
    if dialect.is_disconnect(exc, connection.connection.dbapi_connection, cursor):
        connection._handle_dbapi_exception(exc, sql, arguments, cursor, None)
    wrapped: Any = DBAPIError.instance(
        sql,
        arguments,
        exc,
        dialect.loaded_dbapi.Error,
        hide_parameters=connection.engine.hide_parameters,
        dialect=dialect,
        ismulti=False,  # as SQLAlchemy's handler says it (how long parameters are cut in the message)
    )
    raise wrapped from exc
