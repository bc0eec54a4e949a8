"""Pinned rows record their origin: a snapshot's, or discovered on demand for the paths a chat touched

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

Every row pinned so far came from a snapshot: ``origin`` starts as "snapshot" for all of them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


# Columns are added and dropped in place (never by SQLite's batch copy: see 0002).


def upgrade() -> None:
    op.add_column(
        "chat_resources", sa.Column("origin", sa.String(length=16), server_default="snapshot", nullable=False)
    )
    op.add_column(
        "chat_resources",
        sa.Column("caused_by", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=True),
    )
    op.add_column("chats", sa.Column("discovered_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM chat_resources WHERE origin <> 'snapshot'")
    op.execute("ALTER TABLE chats DROP COLUMN discovered_at")
    op.execute("ALTER TABLE chat_resources DROP COLUMN caused_by")
    op.execute("ALTER TABLE chat_resources DROP COLUMN origin")
