"""A refresh-shaped PostgreSQL transaction from the event loop, four ways, in CPU per transaction.

    .venv/bin/python bench/db_hop.py [--count 2000] [--rounds 5]

The control plane runs a chat's statements in a worker thread (``anyio.to_thread``) on
psycopg's blocking connection. Issue 13 asks whether another way would cost less. One
transaction here is what a refresh says: ``BEGIN``, a ``SELECT ... FOR UPDATE`` of one row,
an ``UPDATE`` of it, ``COMMIT`` (``BEGIN``/``COMMIT`` through libpq as ``control/prepared.py``
says them), on a throwaway cluster (``TempCluster``), one at a time from an asyncio loop:

* ``thread hop``: what the control plane does (one hop a transaction, four round trips);
* ``thread hop, pipelined``: the same with psycopg's pipeline mode (two round trips);
* ``async connection``: psycopg's ``AsyncConnection`` awaited on the loop, no thread;
* ``on the loop, blocking``: the blocking connection called on the loop itself, which a server
  cannot do (a lock wait or a distant database would stop every request): the floor that
  shows what the hop and the waits cost.

Reported: this process's CPU time (``time.process_time``, PostgreSQL's own processes not
counted) per transaction, the median of ``--rounds`` alternating rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import bench_database

from agentcontext.control import prepared

SELECT = "SELECT pin, snapshot FROM chats WHERE id = %s FOR UPDATE"
UPDATE = "UPDATE chats SET pin = pin + 1 WHERE id = %s"


async def figures(url: str, count: int, rounds: int) -> dict[str, float]:
    blocking = psycopg.connect(url, autocommit=True)
    cursor = blocking.cursor()
    awaited = await psycopg.AsyncConnection.connect(url, autocommit=True)
    async_cursor = awaited.cursor()
    limiter = anyio.CapacityLimiter(40)

    def transaction(i: int) -> None:
        key = (f"c{i % 100}",)
        prepared._command(blocking, "BEGIN")
        cursor.execute(SELECT, key, prepare=True)
        cursor.fetchone()
        cursor.execute(UPDATE, key, prepare=True)
        prepared._command(blocking, "COMMIT")

    def pipelined(i: int) -> None:
        key = (f"c{i % 100}",)
        with blocking.pipeline():
            cursor.execute("BEGIN")
            cursor.execute(SELECT, key, prepare=True)
        cursor.fetchone()
        with blocking.pipeline():
            cursor.execute(UPDATE, key, prepare=True)
            cursor.execute("COMMIT")

    async def hop(i: int) -> None:
        await anyio.to_thread.run_sync(transaction, i, limiter=limiter)

    async def hop_pipelined(i: int) -> None:
        await anyio.to_thread.run_sync(pipelined, i, limiter=limiter)

    async def on_the_loop(i: int) -> None:
        key = (f"c{i % 100}",)
        await async_cursor.execute("BEGIN")
        await async_cursor.execute(SELECT, key, prepare=True)
        await async_cursor.fetchone()
        await async_cursor.execute(UPDATE, key, prepare=True)
        await async_cursor.execute("COMMIT")

    async def blocking_the_loop(i: int) -> None:
        transaction(i)

    ways: dict[str, Callable[[int], Awaitable[None]]] = {
        "thread hop (now)": hop,
        "thread hop, pipelined": hop_pipelined,
        "async connection": on_the_loop,
        "on the loop, blocking": blocking_the_loop,
    }
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, way in ways.items():
            started = time.process_time()
            for i in range(count):
                await way(i)
            samples[name].append((time.process_time() - started) / count * 1e6)
    blocking.close()
    await awaited.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with bench_database() as (_, url):
        with psycopg.connect(url, autocommit=True) as setup:
            setup.execute("CREATE TABLE chats (id text PRIMARY KEY, pin int NOT NULL, snapshot text)")
            setup.execute("INSERT INTO chats SELECT 'c' || g, 0, 's' FROM generate_series(0, 99) g")
        medians = asyncio.run(figures(url, args.count, args.rounds))
    now = medians["thread hop (now)"]
    print("BEGIN, SELECT ... FOR UPDATE, UPDATE, COMMIT from an asyncio loop, CPU per transaction:")
    for name, value in medians.items():
        print(f"  {name:24} {value:6.1f} us  ({value / now:.2f} of now)")


if __name__ == "__main__":
    main()
