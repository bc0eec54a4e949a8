"""Another user of the machine reading the control plane's database: its files are the owner's alone.

The SQLite file holds token hashes, chats and every pushed snapshot. It is created 0600 in
folders created 0700, and SQLite gives its ``-wal`` and ``-shm`` files the same mode, whatever
the umask of the process that made them (here 000: everything would be world-writable).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentcontext.control import migrate
from agentcontext.control.db import Database

pytestmark = pytest.mark.timeout(120)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_database_and_its_wal_and_shm_files_are_created_for_their_owner_only(tmp_path: Path) -> None:
    database = tmp_path / "new" / "data" / "control.db"
    command = [sys.executable, "-m", "agentcontext", "users", "create", "carol", "--db", f"sqlite:///{database}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, umask=0, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in database.parent.iterdir())
    assert "control.db" in files
    for name in files:
        assert mode(database.parent / name) == 0o600, (name, oct(mode(database.parent / name)))
    assert (mode(database.parent), mode(database.parent.parent)) == (0o700, 0o700)


def test_the_wal_and_shm_files_of_an_open_database_are_the_owners_only(tmp_path: Path) -> None:
    database = tmp_path / "data" / "control.db"
    previous = os.umask(0)
    try:
        db = Database(f"sqlite:///{database}")
        migrate.upgrade(db)
        with db.read():  # a connection is open: the -wal and -shm files exist now
            names = sorted(p.name for p in database.parent.iterdir())
            assert names == ["control.db", "control.db-shm", "control.db-wal"]
            assert [mode(database.parent / name) for name in names] == [0o600, 0o600, 0o600]
        db.dispose()
    finally:
        os.umask(previous)


def test_a_database_file_that_exists_keeps_its_mode(tmp_path: Path) -> None:
    database = tmp_path / "shared.db"
    database.touch(mode=0o640)
    database.chmod(0o640)  # shared with a group on purpose
    command = [sys.executable, "-m", "agentcontext", "db", "upgrade", "--db", f"sqlite:///{database}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert mode(database) == 0o640
