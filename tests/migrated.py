"""Databases at the newest revision without migrating each: a copy of one migrated once per process.

Migrating a fresh database took 0.1-0.4 s, and a few hundred tests each take one; ``tests/control/test_migrate.py``
runs the migrations themselves.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from agentcontext.control import migrate
from agentcontext.control.db import Database


def migrate_once(url: str) -> None:
    """Bring the database at ``url`` to the newest revision, and let go of it (a template has no connection)."""
    database = Database(url)
    try:
        migrate.upgrade(database)
    finally:
        database.dispose()


@functools.cache
def _sqlite_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="agentcontext-migrated-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "control.db"
    migrate_once(f"sqlite:///{path}")
    assert not path.with_name("control.db-wal").exists(), "every change is in the file itself, to be copied whole"
    return path


def fresh_sqlite(path: Path) -> str:
    """The URL of a new SQLite file at ``path``, at the newest revision."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_sqlite_template(), path)
    return f"sqlite:///{path}"
