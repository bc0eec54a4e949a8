"""Alembic migrations (issue 5, "Storage"): they build exactly the models' schema, on SQLite and PostgreSQL.

``compare_metadata`` is what ``alembic revision --autogenerate`` runs: an empty answer
means a migrated database and ``models.py`` agree on every table, column, type,
nullability, index, unique constraint and foreign key.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from agentcontext.control import identity, migrate
from agentcontext.control.db import Database
from agentcontext.control.models import Base, User
from agentcontext.control.service import prepare


def differences(db: Database) -> list[Any]:
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def tables(db: Database) -> set[str]:
    return set(sa.inspect(db.engine).get_table_names())


def model_tables() -> set[str]:
    return set(Base.metadata.tables)


@pytest.fixture
def fresh(db_url: str) -> Any:
    database = Database(db_url)
    yield database
    database.dispose()


def test_a_fresh_database_is_at_no_revision(fresh: Database) -> None:
    assert migrate.current(fresh) is None
    assert tables(fresh) == set()


def test_upgrade_creates_exactly_the_models_schema(fresh: Database) -> None:
    migrate.upgrade(fresh)

    assert differences(fresh) == []
    assert tables(fresh) == model_tables() | {"alembic_version"}


def test_upgrade_reaches_head(fresh: Database) -> None:
    migrate.upgrade(fresh)

    assert migrate.current(fresh) == migrate.head()


def test_the_comparison_notices_a_schema_that_differs_from_the_models(fresh: Database) -> None:
    migrate.upgrade(fresh)
    with fresh.engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE stray (id INTEGER PRIMARY KEY)"))
        connection.execute(sa.text("DROP INDEX ix_chats_agent_id"))

    found = {(diff[0], getattr(diff[1], "name", None)) for diff in differences(fresh)}
    assert ("remove_table", "stray") in found
    assert ("add_index", "ix_chats_agent_id") in found


def test_upgrade_again_is_a_no_op_that_keeps_the_data(fresh: Database) -> None:
    migrate.upgrade(fresh)
    fresh.write(lambda s: identity.create_user(s, "alice"))

    migrate.upgrade(fresh)
    migrate.upgrade(fresh)

    assert migrate.current(fresh) == migrate.head()
    with fresh.read() as session:
        assert session.scalars(sa.select(User.name)).all() == ["alice"]
    assert differences(fresh) == []


def test_downgrade_to_base_drops_everything_and_upgrade_rebuilds_it(fresh: Database) -> None:
    migrate.upgrade(fresh)
    fresh.write(lambda s: identity.create_user(s, "alice"))

    migrate.downgrade(fresh, "base")

    assert migrate.current(fresh) is None
    assert tables(fresh) <= {"alembic_version"}

    migrate.upgrade(fresh)

    assert migrate.current(fresh) == migrate.head()
    assert differences(fresh) == []
    with fresh.read() as session:
        assert session.scalars(sa.select(User.name)).all() == []


def test_migrated_sqlite_enforces_foreign_keys(tmp_path: Any) -> None:
    database = Database(f"sqlite:///{tmp_path / 'fk.db'}")
    try:
        migrate.upgrade(database)
        with pytest.raises(sa.exc.IntegrityError):
            database.write(
                lambda s: s.execute(sa.text("INSERT INTO api_tokens VALUES ('t', 'nobody', '', 'h', '2026-01-01')"))
            )
    finally:
        database.dispose()


def test_two_concurrent_upgrades_of_one_fresh_postgresql_database_both_succeed(pg_database: str) -> None:
    concurrent_upgrades(pg_database)


def test_two_concurrent_upgrades_of_one_fresh_sqlite_file_both_succeed(tmp_path: Path) -> None:
    concurrent_upgrades(f"sqlite:///{tmp_path / 'control.db'}")


def concurrent_upgrades(url: str) -> None:
    """Two replicas starting together on one fresh database: both migrate without an error, once."""
    replicas = [Database(url), Database(url)]
    start = threading.Barrier(len(replicas))
    errors: list[BaseException] = []

    def upgrade(database: Database) -> None:
        try:
            start.wait(timeout=30)
            migrate.upgrade(database)
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=upgrade, args=(database,)) for database in replicas]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        assert migrate.current(replicas[0]) == migrate.head()
        assert differences(replicas[0]) == []
        with replicas[0].engine.connect() as connection:
            assert connection.scalar(sa.text("SELECT count(*) FROM alembic_version")) == 1
    finally:
        for database in replicas:
            database.dispose()


def test_a_server_on_postgresql_opens_its_request_connections_before_the_first_request(
    pg_database: str,
) -> None:
    url = pg_database
    database, _admin = prepare(url)
    try:
        with database.engine.connect() as connection:
            backends = connection.execute(
                sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
            ).scalar_one()
        # the request pool's connections, plus the one asking (the ORM's own pool may hold others)
        assert backends >= database.pool_size + 1
    finally:
        database.dispose()
