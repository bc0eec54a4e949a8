"""Starting the control plane: the database migrated, the first administrator, the event broker.

SQLite (the default) delivers events in-process; PostgreSQL through LISTEN/NOTIFY, so any
number of replicas can share one database. The first start on an empty database creates the
user ``admin`` and prints its token once; it is never shown again. ``agentcontext.server``
serves the app.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from agentcontext.control import identity, migrate
from agentcontext.control.db import Database
from agentcontext.control.events import Broker, LocalBroker, PostgresBroker


def broker_for(db: Database) -> Broker:
    if db.dialect == "postgresql":
        return PostgresBroker(db.url.set(drivername="postgresql").render_as_string(hide_password=False))
    return LocalBroker()


def bootstrap_admin(db: Database) -> identity.Issued | None:
    """The first administrator and their token, on an empty database only (None otherwise)."""

    def work(session: Session) -> identity.Issued | None:
        if identity.has_users(session):
            return None
        return identity.create_user(session, "admin", admin=True)

    return db.write(work)


def prepare(db_url: str) -> tuple[Database, identity.Issued | None]:
    """Open the database, apply migrations, create the first administrator if there is none, and open the
    connections the requests will use."""
    db = Database(db_url)
    migrate.upgrade(db)
    admin = bootstrap_admin(db)
    db.warm()
    return db, admin
