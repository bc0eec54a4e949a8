"""A refresh's pinned-row upsert, as a ``Prepared`` statement against SQLAlchemy Core's execution of it, on PostgreSQL.

    .venv/bin/python bench/repin.py [--count 1000] [--rounds 5]

A refresh after a push that edited one file writes that one row of the chat's pin (``chats._repin``):
an ``INSERT ... ON CONFLICT DO UPDATE`` of every column. On a throwaway cluster (``TempCluster``, over
loopback TCP), one chat with one pinned row; ``--count`` write transactions (``Database.write_rows``:
``BEGIN``, the upsert, ``COMMIT``) each way, the two ways alternated ``--rounds`` times. Reported: this
process's CPU a transaction (the database's own is another process), median over the rounds.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py

from tests.pg_cluster import bench_database

from agentcontext.control import chats, identity, migrate, rows
from agentcontext.control import tables as t
from agentcontext.control.db import Database

ROW = {
    "chat_id": "chat-1",
    "source": "/w/AGENTS.md",
    "kind": "instruction_file",
    "path": "/w/AGENTS.md",
    "scope": "project",
    "status": "ok",
    "size_bytes": 12,
    "content_hash": "h" * 64,
    "error": None,
    "content_key": "h" * 64,
    "meta": {"doc_order": 0},
}


def _world(db: Database) -> None:
    """One user, one workspace (made with its agent), one chat, one content row."""
    user = db.write(lambda session: identity.create_user(session, "alice"))
    db.write(lambda session: identity.create_agent(session, "shared", "main"))

    def made(connection: sa.Connection) -> None:
        workspace = connection.execute(sa.select(t.workspaces.c.id)).scalar()
        connection.execute(sa.insert(t.contents).values(hash="h" * 64, text="Use pytest.\n", size_bytes=12))
        connection.execute(
            sa.insert(t.chats).values(id=ROW["chat_id"], owner_id=user.id, workspace_id=workspace, status="running")
        )

    db.write_rows(made)


def measure(db: Database, count: int, rounds: int) -> dict[str, list[float]]:
    before = postgresql.insert(t.chat_resources)  # what _repin executed through SQLAlchemy before
    replaced = {c.name: before.excluded[c.name] for c in t.chat_resources.columns if not c.primary_key}
    core = before.on_conflict_do_update(index_elements=["chat_id", "source"], set_=replaced)
    prepared = chats._UPSERT_PINNED["postgresql"]
    ways: dict[str, Callable[[sa.Connection], Any]] = {
        "sqlalchemy": lambda connection: connection.execute(core, [ROW]),
        "prepared": lambda connection: prepared.execute(connection, {**ROW, "origin": rows.SNAPSHOT}),
    }
    spent: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, work in ways.items():
            for _ in range(50):
                db.write_rows(work)
            began = time.process_time()
            for _ in range(count):
                db.write_rows(work)
            spent[name].append((time.process_time() - began) / count * 1e6)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="transactions each way in a round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with bench_database("repin") as (_, url):
        db = Database(url)
        migrate.upgrade(db)
        _world(db)
        spent = measure(db, args.count, args.rounds)
        db.dispose()
    print(f"{platform.machine()}, Python {platform.python_version()}; {args.rounds} rounds of {args.count}")
    for name, figures in spent.items():
        print(f"{name:<11} {statistics.median(figures):6.0f} us a transaction (rounds: {[round(f) for f in figures]})")


if __name__ == "__main__":
    main()
