"""A count of changes to who a token names, kept by the database itself: replicas cache checked tokens until it moves

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05

Triggers bump ``auth_epoch.changes`` whenever an agent's token, name or workspace changes or an
agent goes, an API token changes or goes, a user's name or admin flag changes or a user goes,
whoever writes it (a replica, the CLI on the same database, an operator's SQL). A replica reads
that one number at most once every ``server.auth_ttl`` seconds and forgets every checked token
when it moved, instead of looking each token up again every ``auth_ttl``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_BUMP = "UPDATE auth_epoch SET changes = changes + 1 WHERE id = 1"
# table, the UPDATE OF columns that change who a token names (None: any), whether a DELETE does
_WATCHED = (("agents", "token_hash, name, workspace_id"), ("api_tokens", None), ("users", "name, is_admin"))


def upgrade() -> None:
    op.create_table(
        "auth_epoch",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("changes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_epoch")),
    )
    op.execute("INSERT INTO auth_epoch (id, changes) VALUES (1, 0)")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION auth_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN {_BUMP}; RETURN NULL; END $$"
        )
        for table, columns in _WATCHED:
            update = f"UPDATE OF {columns}" if columns else "UPDATE"
            op.execute(
                f"CREATE TRIGGER auth_epoch_{table} AFTER {update} OR DELETE ON {table}"
                " FOR EACH STATEMENT EXECUTE PROCEDURE auth_epoch_bump()"
            )
        return
    for table, columns in _WATCHED:  # SQLite: row triggers, one an event
        update = f"UPDATE OF {columns}" if columns else "UPDATE"
        op.execute(f"CREATE TRIGGER auth_epoch_{table}_update AFTER {update} ON {table} BEGIN {_BUMP}; END")
        op.execute(f"CREATE TRIGGER auth_epoch_{table}_delete AFTER DELETE ON {table} BEGIN {_BUMP}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table, _ in _WATCHED:
            op.execute(f"DROP TRIGGER auth_epoch_{table} ON {table}")
        op.execute("DROP FUNCTION auth_epoch_bump()")
    else:
        for table, _ in _WATCHED:
            op.execute(f"DROP TRIGGER auth_epoch_{table}_update")
            op.execute(f"DROP TRIGGER auth_epoch_{table}_delete")
    op.drop_table("auth_epoch")
