"""A user's workspaces go with the user: a private workspace never becomes everyone's

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07

A workspace without an owner is open to every user (``visibility.may_see``). Deleting a user
(an operator's SQL: there is no command for it) set their workspaces' ``owner_id`` to NULL through
the foreign key's ``ON DELETE SET NULL``, and so opened each of them, its snapshot and its MCP
tools, to every user. A trigger now deletes a user's workspaces before the user (their agents,
snapshots and chats with them, by their own foreign keys), whoever deletes the user; altering the
foreign key instead would copy the table on SQLite (see 0002). On SQLite the cascades need foreign
keys on, as every connection of ours has them (``sqlite3``'s shell has them off unless told
``PRAGMA foreign_keys=ON``: a user deleted there leaves their agents behind, in no workspace, seen
by nobody).
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_DELETE = "DELETE FROM workspaces WHERE owner_id = OLD.id"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION workspaces_of_deleted_user() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN {_DELETE}; RETURN OLD; END $$"
        )
        op.execute(
            "CREATE TRIGGER workspaces_of_deleted_user BEFORE DELETE ON users"
            " FOR EACH ROW EXECUTE PROCEDURE workspaces_of_deleted_user()"
        )
        return
    op.execute(f"CREATE TRIGGER workspaces_of_deleted_user BEFORE DELETE ON users BEGIN {_DELETE}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER workspaces_of_deleted_user ON users")
        op.execute("DROP FUNCTION workspaces_of_deleted_user()")
        return
    op.execute("DROP TRIGGER workspaces_of_deleted_user")
