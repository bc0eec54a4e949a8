"""Storage fixtures: every test that takes ``db`` runs on SQLite and on a real PostgreSQL.

The PostgreSQL cluster is started once per test session from the installed binaries
(``agentcontext.control.pg_cluster``) and each test gets a fresh database in it. Where no
PostgreSQL is installed those runs are skipped with a message saying so; CI installs
Debian's ``postgresql`` so they always run there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcontext.control import migrate
from agentcontext.control.db import Database
from agentcontext.control.pg_cluster import TempCluster, find_binaries

NO_POSTGRES = "PostgreSQL is not installed here (no initdb/pg_ctl/postgres found; apt-get install postgresql)"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TempCluster]:
    if find_binaries() is None:
        pytest.skip(NO_POSTGRES)
    with TempCluster.start() as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'control.db'}"
    cluster: TempCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database()


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    migrate.upgrade(database)
    yield database
    database.dispose()
