"""Schema migrations with Alembic: applied on server start and by ``agentcontext db upgrade``.

Replicas starting together on one PostgreSQL take an advisory lock first, so exactly one
of them migrates and the others find the schema current.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from agentcontext.control.db import Database

_LOCK_KEY = 0x61676E7463  # "agntc": any constant shared by every replica


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", "agentcontext.control:migrations")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert revision is not None
    return revision


def current(db: Database) -> str | None:
    """The revision the database is at; None when it was never migrated."""
    with db.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(db: Database, revision: str = "head") -> None:
    """Migrate to ``revision``; concurrent callers on one database take turns, and the later ones find nothing to do."""

    def attempt() -> None:
        with _exclusive(db) as connection:
            command.upgrade(alembic_config(connection), revision)

    _taking_turns(attempt)


def downgrade(db: Database, revision: str) -> None:
    def attempt() -> None:
        with _exclusive(db) as connection:
            command.downgrade(alembic_config(connection), revision)

    _taking_turns(attempt)


def _taking_turns(attempt: Callable[[], None], tries: int = 8) -> None:
    """``attempt()``, again after a short wait when SQLite refused its lock: two fresh connections racing for a
    new file (one switching it to WAL, one beginning) can be refused at once, without the busy timeout's wait.
    Any other error, or the last refusal, is raised as it is."""
    for number in range(tries):
        try:
            attempt()
            return
        except OperationalError as exc:
            if number + 1 == tries or "database is locked" not in str(exc.orig):
                raise
            time.sleep(random.uniform(0, 0.01 * 2**number))


@contextlib.contextmanager
def _exclusive(db: Database) -> Iterator[Connection]:
    """One transaction that holds the database's migration lock from its first statement.

    PostgreSQL: an advisory lock. SQLite: ``BEGIN IMMEDIATE``, the write lock taken up front
    (a deferred transaction that read the version table first could not upgrade to writing
    while another migration holds the lock: SQLite fails it at once, without waiting).
    """
    if db.dialect == "postgresql":
        with db.engine.begin() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
            yield connection
    else:
        with db.engine.execution_options(sqlite_begin="BEGIN IMMEDIATE").begin() as connection:
            yield connection
