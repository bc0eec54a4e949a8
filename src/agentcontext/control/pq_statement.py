"""One statement said through libpq itself: prepared once a connection, its values adapted by psycopg.

psycopg's cursor spends about 30 us of CPU a statement in Python around libpq's call (the query's
conversion, its prepared-statement manager, the result's bookkeeping): over loopback TCP a short
statement costs this side 108 us through the cursor, 78 through here (``bench/pq_statement.py``). Here a
``Prepared`` statement's SQL, numbered (``$1``) by SQLAlchemy once, is prepared under a name of ours the
first time a connection runs it, and run with ``PQexecPrepared``; its values are dumped and its rows
loaded by the connection's own ``Transformer``, as the cursor's are. A statement is prepared once for
each set of its parameters' types, as psycopg keys its own (an int's type follows its size, a NULL's is
left to the server).

Prepared statements live as long as the connection (not its transactions); a connection that ran
``MAX_PREPARED`` of them runs any other unnamed (``PQexecParams``: parsed each time, one round trip all
the same).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.adapt import PyFormat, Transformer
from psycopg.pq import ConnStatus, ExecStatus
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement

MAX_PREPARED = 256  # a connection's statements prepared here; the hot set is a few dozen
_STATEMENTS = "agentcontext.pq_statements"  # where a pooled connection keeps its (sql, types) -> name
_TRANSFORMER = "agentcontext.pq_transformer"  # and its Transformer (its dumpers and loaders, kept warm)
_DONE = frozenset({ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK})


@dataclass(frozen=True, slots=True)
class Numbered:
    """A statement as PostgreSQL's protocol takes it: ``$n`` placeholders, and the parameters' names in order."""

    sql: str
    order: tuple[str, ...]
    formats: tuple[PyFormat, ...]  # each value's: psycopg's choice, as for a ``%s`` (SQLAlchemy's ``%(name)s``)


def numbered(statement: ClauseElement, dialect: Dialect) -> Numbered:
    """``statement`` compiled by ``dialect`` (the engine's own: its options, its server's version) but numbered."""
    as_numbered: Any = copy.copy(dialect)
    as_numbered.paramstyle, as_numbered.positional = "numeric_dollar", True
    as_numbered.identifier_preparer = as_numbered.preparer(as_numbered)  # no '%' doubled for a format paramstyle
    compiled: Any = statement.compile(dialect=as_numbered)
    order = tuple(compiled.positiontup)
    return Numbered(compiled.string, order, (PyFormat.AUTO,) * len(order))


def run(
    info: dict[str, Any], driver: psycopg.Connection[Any], statement: Numbered, values: Mapping[str, Any]
) -> tuple[list[tuple[Any, ...]], int]:
    """Run ``statement`` with ``values`` (by name) on ``driver``: its rows as tuples, and the cursor's rowcount.

    ``info`` is the pooled connection's own, where its prepared statements are remembered.

    Raises:
        psycopg.Error: as psycopg's cursor raises it (the database's own class, or ``OperationalError`` for a
            lost connection).
    """
    transformer: Any = info.get(_TRANSFORMER)
    if transformer is None:
        transformer = info[_TRANSFORMER] = Transformer(driver)
    params = transformer.dump_sequence([values[name] for name in statement.order], statement.formats)
    types, formats = transformer.types, transformer.formats
    pgconn = driver.pgconn
    encoding = driver.info.encoding
    prepared: dict[tuple[str, tuple[int, ...]], bytes] = info.setdefault(_STATEMENTS, {})
    key = (statement.sql, types)
    name = prepared.get(key)
    if name is None and len(prepared) < MAX_PREPARED:
        name = f"_agentcontext_{len(prepared)}".encode()
        checked(pgconn.prepare(name, statement.sql.encode(encoding), param_types=types), pgconn, encoding)
        prepared[key] = name
    if name is None:
        result = pgconn.exec_params(statement.sql.encode(encoding), params, param_types=types, param_formats=formats)
    else:
        result = pgconn.exec_prepared(name, params, param_formats=formats)
    checked(result, pgconn, encoding)
    if result.status != ExecStatus.TUPLES_OK:
        count = result.command_tuples
        return [], -1 if count is None else count
    transformer.set_pgresult(result)
    return transformer.load_rows(0, result.ntuples, tuple), result.ntuples


def checked(result: Any, pgconn: Any, encoding: str) -> Any:
    """``result``, if it is a success; else the error psycopg would raise for it."""
    if result.status in _DONE:
        return result
    if pgconn.status == ConnStatus.BAD:  # lost: psycopg's own class for it, whatever the message
        raise psycopg.OperationalError(result.get_error_message(encoding) or "the connection was lost")
    raise psycopg.errors.error_from_result(result, encoding=encoding)
