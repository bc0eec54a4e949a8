"""A hot statement on PostgreSQL through psycopg's cursor (before) and through libpq itself (now), side by side.

    .venv/bin/python bench/pq_statement.py [--calls 3000] [--rounds 7]

A throwaway PostgreSQL cluster (``TempCluster``) and a table shaped like the control plane's ``chats`` (ids,
text, a flag, a version, timestamps). Three statements as ``Prepared`` runs them: a row read by its key, an
``UPDATE`` of a row by its key, and an ``INSERT``. Each is run on an autocommit connection with psycopg's
cursor (one kept per connection, as ``Prepared`` did: ``cursor.execute`` then ``fetchall``) and with
``pq_statement.run`` (now), over loopback TCP and over the cluster's Unix socket. Reported, each the median of
``--rounds`` alternating rounds of ``--calls``: this process's CPU a statement (``time.process_time``), the
database backend's (its ``/proc`` counters, in clock ticks: coarse), and the wall time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import bench_database

from agentcontext.control import pq_statement
from agentcontext.control.prepared import Prepared
from load import cpu_seconds

METADATA = sa.MetaData()
ROWS = sa.Table(
    "rows",
    METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("owner_id", sa.Text, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("archived", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("pinned_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)
READ = Prepared(sa.select(ROWS).where(ROWS.c.id == sa.bindparam("id"), ROWS.c.owner_id == sa.bindparam("owner")))
UPDATE = Prepared(
    sa.update(ROWS)
    .where(ROWS.c.id == sa.bindparam("id"))
    .values(version=ROWS.c.version + 1, updated_at=sa.bindparam("now"))
)
INSERT = Prepared(
    sa.insert(ROWS).values(
        id=sa.bindparam("id"),
        owner_id=sa.bindparam("owner"),
        title="",
        archived=False,
        version=1,
        pinned_at=None,
        updated_at=sa.bindparam("now"),
    )
)
Way = Callable[[Prepared, dict[str, Any]], Any]


def figures(url: sa.URL, calls: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    engine = sa.create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    METADATA.drop_all(engine)
    METADATA.create_all(engine)
    now = dt.datetime.now(dt.UTC)
    with engine.connect() as connection:
        pooled = connection.connection
        driver: Any = pooled.driver_connection
        backend = driver.info.backend_pid
        cursor = driver.cursor()

        def by_cursor(statement: Prepared, params: dict[str, Any]) -> Any:
            compiled = statement.compiled(connection.dialect)
            cursor.execute(compiled.sql, compiled.arguments(params))
            return cursor.fetchall() if compiled.row is not None else cursor.rowcount

        def by_libpq(statement: Prepared, params: dict[str, Any]) -> Any:
            compiled = statement.compiled(connection.dialect)
            assert compiled.numbered is not None
            values: Any = compiled.arguments(params)  # by name on PostgreSQL
            return pq_statement.run(pooled.info, driver, compiled.numbered, values)

        ways: dict[str, Way] = {"cursor": by_cursor, "libpq": by_libpq}
        by_cursor(INSERT, {"id": "row-7", "owner": "alice", "now": now})  # the row read and updated
        out: dict[str, dict[str, list[float]]] = {}
        counter = iter(range(10**9))
        for _ in range(rounds):
            for name, way in ways.items():
                for what, statement, params in (
                    ("read", READ, lambda: {"id": "row-7", "owner": "alice"}),
                    ("update", UPDATE, lambda: {"id": "row-7", "now": now}),
                    ("insert", INSERT, lambda: {"id": f"new-{next(counter)}", "owner": "alice", "now": now}),
                ):
                    for _ in range(200):  # warm: prepared, loaders built
                        way(statement, params())
                    ticks, cpu, wall = cpu_seconds(backend), time.process_time(), time.perf_counter()
                    for _ in range(calls):
                        way(statement, params())
                    row = out.setdefault(f"{what} {name}", {"cpu": [], "backend": [], "wall": []})
                    row["cpu"].append((time.process_time() - cpu) / calls)
                    row["backend"].append((cpu_seconds(backend) - ticks) / calls)
                    row["wall"].append((time.perf_counter() - wall) / calls)
    engine.dispose()
    return out


def report(title: str, found: dict[str, dict[str, list[float]]]) -> None:
    print(f"{title} (us a statement, medians):")
    print(f"  {'statement':16} {'this process':>13} {'backend':>8} {'wall':>7}")
    for name, values in found.items():
        cpu, backend, wall = (statistics.median(values[k]) * 1e6 for k in ("cpu", "backend", "wall"))
        print(f"  {name:16} {cpu:13.1f} {backend:8.1f} {wall:7.1f}")
    for what in ("read", "update", "insert"):
        before, now = (statistics.median(found[f"{what} {way}"]["cpu"]) for way in ("cursor", "libpq"))
        print(f"  {what}: cursor / libpq, this process's CPU: {before / now:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with bench_database() as (cluster, tcp):
        for title, address in (("loopback TCP", tcp), ("Unix socket", cluster.socket_url("bench"))):
            url = sa.make_url(address).set(drivername="postgresql+psycopg")
            report(title, figures(url, args.calls, args.rounds))


if __name__ == "__main__":
    main()
