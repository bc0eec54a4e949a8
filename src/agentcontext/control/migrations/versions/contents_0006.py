"""Every column that points at a stored text is indexed: texts nothing points at any more can be found and deleted

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-07

A push that changes a file leaves the old text in ``contents``; the server now deletes such texts
a page at a time (``contents.unreferenced_page``, ``delete_unreferenced``). Asking whether anything
still points at a text, and the foreign keys' own check on each delete, look up each of these four
columns: without an index each lookup read the whole table (seconds a page at a few thousand
agents).
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_POINTING = ("snapshot_resources", "chat_resources", "chat_files", "personal_skills")


def upgrade() -> None:
    for table in _POINTING:
        op.create_index(op.f(f"ix_{table}_content_key"), table, ["content_key"], unique=False)


def downgrade() -> None:
    for table in reversed(_POINTING):
        op.drop_index(op.f(f"ix_{table}_content_key"), table_name=table)
