"""Agents' per-run secrets sealed with the server key; each snapshot's MCP digest

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

The secrets stored in the clear until now are dropped, not sealed: every agent sends its
secret again with its next heartbeat (every 15 s), and the clear copies must not survive in
the database.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


# Columns are added and dropped in place, never by copying the table as SQLite's batch mode does: with
# foreign keys on, SQLite's DROP TABLE of the old copy would cascade to every snapshot and chat.
# (ALTER TABLE ... DROP COLUMN: SQLite 3.35 or later.)


def upgrade() -> None:
    op.execute("ALTER TABLE agents DROP COLUMN api_token")
    op.add_column("agents", sa.Column("sealed_secret", sa.Text(), nullable=True))
    op.add_column("snapshots", sa.Column("mcp_hash", sa.String(length=64), server_default="", nullable=False))


def downgrade() -> None:
    op.execute("ALTER TABLE snapshots DROP COLUMN mcp_hash")
    op.execute("ALTER TABLE agents DROP COLUMN sealed_secret")
    op.add_column("agents", sa.Column("api_token", sa.Text(), nullable=True))
