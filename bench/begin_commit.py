"""A transaction's two ends on PostgreSQL, side by side with how they were said before.

    .venv/bin/python bench/begin_commit.py [--calls 2500] [--rounds 7]

A throwaway PostgreSQL cluster (``TempCluster``); a ``BEGIN`` and a ``COMMIT`` said on an
autocommit psycopg connection with ``Connection.execute`` (the control plane before) against
``prepared.say`` / ``prepared.commit``'s way, libpq's ``PQexec`` (now). Reported: this
process's CPU time (``time.process_time``) a pair, the median of ``--rounds`` alternating
rounds, and the ratio before / now.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import bench_database

from agentcontext.control import prepared


def begin_commit_figures(url: str, calls: int, rounds: int) -> dict[str, list[float]]:
    connection = psycopg.connect(url, autocommit=True)

    def via_execute() -> None:
        connection.execute("BEGIN")
        connection.execute("COMMIT")

    def via_libpq() -> None:
        prepared._command(connection, "BEGIN")
        prepared._command(connection, "COMMIT")

    ways = {"Connection.execute": via_execute, "PQexec": via_libpq}
    figures: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, way in ways.items():
            started = time.process_time()
            for _ in range(calls):
                way()
            figures[name].append((time.process_time() - started) / calls)
    connection.close()
    return figures


def report(title: str, figures: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) * 1e6 for name, values in figures.items()}
    before, now = medians.values()
    print(f"{title}:")
    for name, value in medians.items():
        print(f"  {name:20} {value:6.1f} us CPU a BEGIN and COMMIT")
    print(f"  before / now: {before / now:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2500)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with bench_database() as (_, url):
        report("BEGIN + COMMIT on PostgreSQL", begin_commit_figures(url, args.calls, args.rounds))


if __name__ == "__main__":
    main()
