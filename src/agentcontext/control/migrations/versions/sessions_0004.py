"""Dashboard sessions: the login cookie holds a session's secret, not the API token

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02

Cookies made before hold API tokens, which no longer log in: their browsers log in again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dashboard_sessions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("token_id", sa.String(length=36), nullable=False),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["token_id"], ["api_tokens.id"], name=op.f("fk_dashboard_sessions_token_id_api_tokens"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_dashboard_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_sessions")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_dashboard_sessions_secret_hash")),
    )
    op.create_index(op.f("ix_dashboard_sessions_user_id"), "dashboard_sessions", ["user_id"], unique=False)
    op.create_index(op.f("ix_dashboard_sessions_token_id"), "dashboard_sessions", ["token_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_dashboard_sessions_token_id"), table_name="dashboard_sessions")
    op.drop_index(op.f("ix_dashboard_sessions_user_id"), table_name="dashboard_sessions")
    op.drop_table("dashboard_sessions")
