"""Schema migrations with Alembic: applied on server start and by ``agentcontext db upgrade``.

Replicas starting together on one PostgreSQL take an advisory lock first, so exactly one
of them migrates and the others find the schema current.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

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
    with _exclusive(db) as connection:
        command.upgrade(alembic_config(connection), revision)


def downgrade(db: Database, revision: str) -> None:
    with _exclusive(db) as connection:
        command.downgrade(alembic_config(connection), revision)


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
