"""Hot statements said through libpq itself (``control.pq_statement``): the SQL is the one SQLAlchemy compiled,
a statement is prepared once per connection and per parameter types, and transactions stay whoever said them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import psycopg as pg_psycopg
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from agentcontext.control import pq_statement, prepared
from agentcontext.control.prepared import Prepared
from tests.control.test_prepared import PREPARED
from tests.pg_cluster import TempCluster

METADATA = sa.MetaData()
NUMBERS = sa.Table(
    "numbers", METADATA, sa.Column("id", sa.BigInteger, primary_key=True), sa.Column("label", sa.Text, nullable=True)
)
ADD = Prepared(sa.insert(NUMBERS).values(id=sa.bindparam("id"), label=sa.bindparam("label")))
LABEL = Prepared(sa.select(NUMBERS.c.label, NUMBERS.c.id).where(NUMBERS.c.id == sa.bindparam("id")))
COUNT = Prepared(sa.select(sa.func.count()).select_from(NUMBERS).where(NUMBERS.c.id >= sa.bindparam("least")))
OURS = "SELECT count(*) FROM pg_prepared_statements WHERE starts_with(name, '_agentcontext_')"


@pytest.mark.parametrize("where", sorted(w for w, p in PREPARED.items() if p.only in (None, "postgresql")))
def test_every_prepared_statement_numbered_for_libpq_is_the_sql_sqlalchemy_compiled(where: str) -> None:
    compiled = PREPARED[where].compiled(pg_psycopg.dialect())  # type: ignore[no-untyped-call]
    numbered = compiled.numbered
    assert numbered is not None
    place = {name: f"${index}" for index, name in enumerate(numbered.order, 1)}
    said = re.sub(r"%\((\w+)\)s|%%", lambda m: place[m.group(1)] if m.group(1) else "%", compiled.sql)
    assert said == numbered.sql
    assert set(numbered.order) == set(re.findall(r"%\((\w+)\)s", compiled.sql))


@pytest.fixture(params=["tcp", "unix_socket"])
def engines(
    request: pytest.FixtureRequest, pg_cluster: TempCluster, pg_database: str
) -> Iterator[tuple[Engine, Engine]]:
    """An autocommit engine (as the hot paths') and one where psycopg begins its own transactions, on one table,
    over loopback TCP or the cluster's Unix socket."""
    if request.param == "unix_socket":
        pg_database = pg_cluster.socket_url(str(sa.make_url(pg_database).database))
    url = sa.make_url(pg_database).set(drivername="postgresql+psycopg")
    hot = sa.create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    own = sa.create_engine(url, poolclass=NullPool)
    METADATA.create_all(hot)
    try:
        yield hot, own
    finally:
        hot.dispose()
        own.dispose()


def _ours(connection: Connection) -> int:
    return int(connection.exec_driver_sql(OURS).scalar_one())


def test_an_int_that_outgrows_its_first_type_is_prepared_again_and_nulls_answer(
    engines: tuple[Engine, Engine],
) -> None:
    hot, _ = engines
    with hot.connect() as connection:
        for number, label in ((1, "small"), (2**40, "large"), (3, None), (2**62, "larger")):
            assert ADD.execute(connection, {"id": number, "label": label}) == 1
        assert [tuple(r) for r in LABEL.all(connection, {"id": 2**40})] == [("large", 2**40)]
        assert LABEL.first(connection, {"id": 3}) == (None, 3)
        assert LABEL.first(connection, {"id": 2**62}).label == "larger"  # rows answer to their column names
        assert LABEL.all(connection, {"id": 4}) == []
        # an int2 and an int8 id: each its own statement, then reused; a label, text or NULL, is sent untyped
        # (the server's to type), so both share one
        prepared_now = _ours(connection)
        assert prepared_now == 4  # ADD and LABEL, each with an int2 and with an int8 id
        assert ADD.execute(connection, {"id": 5, "label": "again"}) == 1
        assert COUNT.scalar(connection, {"least": 0}) == 5
        assert _ours(connection) == prepared_now + 1  # COUNT's; ADD's int2 + text was prepared already


def test_past_the_cap_a_connection_runs_its_statements_unnamed(
    engines: tuple[Engine, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    hot, _ = engines
    monkeypatch.setattr(pq_statement, "MAX_PREPARED", 1)
    with hot.connect() as connection:
        assert ADD.execute(connection, {"id": 1, "label": "one"}) == 1
        assert ADD.execute(connection, {"id": 2**40, "label": "two"}) == 1
        assert COUNT.scalar(connection, {"least": 0}) == 2
        assert LABEL.first(connection, {"id": 2**40}) == ("two", 2**40)
        assert _ours(connection) == 1


def test_a_statement_in_psycopgs_own_transaction_is_rolled_back_with_it(engines: tuple[Engine, Engine]) -> None:
    hot, own = engines
    with own.connect() as connection, connection.begin() as transaction:
        assert ADD.execute(connection, {"id": 7, "label": "kept?"}) == 1
        transaction.rollback()
    with hot.connect() as connection:
        assert COUNT.scalar(connection, {"least": 0}) == 0


def test_a_statement_prepared_in_a_rolled_back_transaction_runs_again_after_it(engines: tuple[Engine, Engine]) -> None:
    hot, _ = engines
    with hot.connect() as connection:

        def fail(c: Connection) -> Any:
            ADD.execute(c, {"id": 8, "label": "gone"})
            raise LookupError("the work failed")

        with pytest.raises(LookupError):
            prepared.transaction(connection, "BEGIN", fail)
        prepared.say(connection, "ROLLBACK")
        assert COUNT.scalar(connection, {"least": 0}) == 0  # rolled back ...
        assert prepared.transaction(connection, "BEGIN", lambda c: ADD.execute(c, {"id": 8, "label": "kept"})) == 1
        assert LABEL.first(connection, {"id": 8}) == ("kept", 8)  # ... and its statement, prepared in it, still there


def test_a_refused_statement_raises_sqlalchemys_error_and_the_connection_goes_on(
    engines: tuple[Engine, Engine],
) -> None:
    hot, _ = engines
    with hot.connect() as connection:
        assert ADD.execute(connection, {"id": 9, "label": "first"}) == 1
        with pytest.raises(sa.exc.IntegrityError, match="numbers_pkey"):
            ADD.execute(connection, {"id": 9, "label": "second"})
        assert LABEL.first(connection, {"id": 9}) == ("first", 9)
