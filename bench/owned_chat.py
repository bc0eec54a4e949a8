"""What a chat query's new workspace check costs (``visibility.OWNED_CHAT``), on SQLite and PostgreSQL.

    .venv/bin/python bench/owned_chat.py

Every chat route's query now also asks whether the chat's workspace is still the user's to see (an
``EXISTS`` on ``workspaces`` and ``users``). One database of each kind (``bench/collect.py``'s world:
20 agents of 3 files, a chat each); the chat's lookup as a ``Prepared`` statement, without the check and
with it, 2,000 times each, alternated 7 times on one read connection. Reported: this process's CPU a
query, median (on SQLite the database's work is in it; PostgreSQL's own is another process).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests/pg_cluster.py
sys.path.insert(0, str(Path(__file__).resolve().parent))  # collect.py

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentcontext.control import chats, migrate
from agentcontext.control import tables as t
from agentcontext.control.db import Database
from agentcontext.control.prepared import Prepared
from agentcontext.control.visibility import OWNED_CHAT
from collect import World, _databases

_COLUMNS = [t.chats.c[name] for name in chats._CHAT_FIELDS]
WITH_CHECK = Prepared(sa.select(*_COLUMNS).where(OWNED_CHAT))
OWNER_ONLY = Prepared(
    sa.select(*_COLUMNS).where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
)


def cpu(db: Database, statement: Prepared, params: dict[str, str], count: int = 2000) -> float:
    """This process's CPU microseconds a run of ``statement``, ``count`` times in one read transaction."""

    def work(connection: Connection) -> float:
        started = time.process_time()
        for _ in range(count):
            statement.first(connection, params)
        return (time.process_time() - started) / count * 1e6

    return db.read_rows(work)


def main() -> None:
    for backend in ("sqlite", "postgresql"):
        with _databases(backend) as dbs:
            db = dbs["after"]
            migrate.upgrade(db)
            world = World(db, 20, 3)
            params = {"chat_id": world.chat_ids[5], "user_id": world.user.user_id}

            figures: dict[str, list[float]] = {"owner only": [], "with the check": []}
            for _ in range(7):
                figures["owner only"].append(cpu(db, OWNER_ONLY, params))
                figures["with the check"].append(cpu(db, WITH_CHECK, params))
            medians = {name: round(statistics.median(values), 1) for name, values in figures.items()}
            print(f"{backend:10}  {medians} us of CPU a query")


if __name__ == "__main__":
    main()
