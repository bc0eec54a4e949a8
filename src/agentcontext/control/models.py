"""The tables. Alembic migrations (``control/migrations``) create them; a test keeps the two equal.

Contents are stored once: ``contents`` is keyed by the sha256 of the stored text, computed
here (a pushed hash is never trusted as a key), and every snapshot row, pinned chat row,
personal skill and plan attachment points at it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

JsonColumn = sa.JSON().with_variant(JSONB(), "postgresql")


class UtcDateTime(TypeDecorator[dt.datetime]):
    """Timezone-aware UTC in, timezone-aware UTC out, on SQLite (which keeps no zone) too."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: sa.Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: dt.datetime | None, dialect: sa.Dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def new_id() -> str:
    return str(uuid.uuid4())


class Base(DeclarativeBase):
    metadata = sa.MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(sa.String(128), unique=True)
    is_admin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)


class AuthEpoch(Base):
    """One row: how often who a token names changed (database triggers count it, migration 0005), so a replica
    keeps checked tokens until it moves (``services/access``)."""

    __tablename__ = "auth_epoch"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    changes: Mapped[int] = mapped_column(sa.BigInteger)


class ApiToken(Base):
    """A user's API token; only its sha256 is kept."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(sa.ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(128), default="")
    token_hash: Mapped[str] = mapped_column(sa.String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)


class DashboardSession(Base):
    """A dashboard login: what its cookie's random secret (only the sha256 kept) signs in as, and until when.

    Unconfirmed, it is a login waiting for the user's yes on the page that names the account. It belongs to
    the API token it was made with: deleting the token (or the user) ends it.
    """

    __tablename__ = "dashboard_sessions"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    secret_hash: Mapped[str] = mapped_column(sa.String(64), unique=True)
    user_id: Mapped[str] = mapped_column(sa.ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_id: Mapped[str] = mapped_column(sa.ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True)
    confirmed: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)


class Workspace(Base):
    __tablename__ = "workspaces"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(sa.String(128), unique=True)
    # None: made without an owner, open to every user. A user's workspaces are deleted before the user (a trigger,
    # migration 0007), so this SET NULL is never reached and a private workspace never becomes everyone's
    owner_id: Mapped[str | None] = mapped_column(sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)


class Agent(Base):
    """A workspace agent: its token (hashed), and what it last told us about itself."""

    __tablename__ = "agents"
    __table_args__ = (sa.UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(sa.ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(128))
    parent_id: Mapped[str | None] = mapped_column(sa.ForeignKey("agents.id", ondelete="SET NULL"), nullable=True)
    display_order: Mapped[int] = mapped_column(default=0)
    token_hash: Mapped[str] = mapped_column(sa.String(64), unique=True)
    url: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    # the per-run secret its API accepts, sealed with the server key (agent_secret): never stored in the clear
    sealed_secret: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    run_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    os: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    home: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    work_dir: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    online: Mapped[bool] = mapped_column(default=False)
    last_seen_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)


class Content(Base):
    """A stored text, once, by the sha256 of its UTF-8 bytes."""

    __tablename__ = "contents"

    hash: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    text: Mapped[str] = mapped_column(sa.Text)


class Snapshot(Base):
    """The latest accepted snapshot of each agent (one row an agent, as Coder keeps it)."""

    __tablename__ = "snapshots"

    agent_id: Mapped[str] = mapped_column(sa.ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(sa.BigInteger)
    aggregate_hash: Mapped[str] = mapped_column(sa.String(64))
    error: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    work_dir: Mapped[str] = mapped_column(sa.Text, default="")
    project_root: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    profile: Mapped[str] = mapped_column(sa.String(32), default="default")
    payload_bytes: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    run_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    received_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
    # a digest of the MCP servers it holds: a chat's prompt overlays them, so its cache key carries this
    mcp_hash: Mapped[str] = mapped_column(sa.String(64), default="", server_default="")


class ResourceRow:
    """The columns a snapshot row and a pinned chat row share."""

    source: Mapped[str] = mapped_column(sa.String(1100), primary_key=True)  # the resource id, "kind:path"
    kind: Mapped[str] = mapped_column(sa.String(32))
    path: Mapped[str] = mapped_column(sa.Text)
    scope: Mapped[str] = mapped_column(sa.String(32))
    status: Mapped[str] = mapped_column(sa.String(32))
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    content_hash: Mapped[str] = mapped_column(sa.String(64), default="")  # as pushed: sha256 of the original bytes
    # indexed, as every column pointing at a text: a collection asks each whether anything still does
    content_key: Mapped[str | None] = mapped_column(sa.ForeignKey("contents.hash"), nullable=True, index=True)
    error: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JsonColumn, default=dict)  # warnings, name, tools, ...


class SnapshotResource(ResourceRow, Base):
    __tablename__ = "snapshot_resources"

    agent_id: Mapped[str] = mapped_column(sa.ForeignKey("snapshots.agent_id", ondelete="CASCADE"), primary_key=True)


class Chat(Base):
    """A chat and its pin: the snapshot hash it uses until refreshed, and since when that is out of date."""

    __tablename__ = "chats"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    owner_id: Mapped[str] = mapped_column(sa.ForeignKey("users.id", ondelete="CASCADE"), index=True)
    workspace_id: Mapped[str] = mapped_column(sa.ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    agent_id: Mapped[str | None] = mapped_column(
        sa.ForeignKey("agents.id", ondelete="SET NULL"), nullable=True, index=True
    )
    parent_id: Mapped[str | None] = mapped_column(sa.ForeignKey("chats.id", ondelete="SET NULL"), nullable=True)
    title: Mapped[str] = mapped_column(sa.String(256), default="")
    status: Mapped[str] = mapped_column(sa.String(32))
    plan_mode: Mapped[bool] = mapped_column(default=False)
    archived: Mapped[bool] = mapped_column(default=False)
    pinned_hash: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    pinned_version: Mapped[int | None] = mapped_column(sa.BigInteger, nullable=True)
    pinned_error: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    pinned_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    dirty_since: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
    # when the discovered part of its pin last changed (``discovered``): a turn's cache key carries it
    discovered_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class ChatResource(ResourceRow, Base):
    """A chat's pinned row: a copy of one snapshot row (``origin`` "snapshot"), or an instruction file found on
    demand for paths the chat touched (``origin`` "discovered", ``caused_by`` those paths). Content is shared
    through ``contents``."""

    __tablename__ = "chat_resources"

    chat_id: Mapped[str] = mapped_column(sa.ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True)
    origin: Mapped[str] = mapped_column(sa.String(16), default="snapshot", server_default="snapshot")
    caused_by: Mapped[list[str] | None] = mapped_column(JsonColumn, nullable=True)


class ChatFile(Base):
    """An attachment of a chat: a proposed plan."""

    __tablename__ = "chat_files"

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    chat_id: Mapped[str] = mapped_column(sa.ForeignKey("chats.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(256))
    kind: Mapped[str] = mapped_column(sa.String(32))
    media_type: Mapped[str] = mapped_column(sa.String(128))
    path: Mapped[str] = mapped_column(sa.Text, default="")
    content_key: Mapped[str] = mapped_column(sa.ForeignKey("contents.hash"), index=True)
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)


class PersonalSkill(Base):
    """A skill a user keeps on the control plane, offered in every chat of theirs."""

    __tablename__ = "personal_skills"
    __table_args__ = (sa.UniqueConstraint("owner_id", "name"),)

    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True, default=new_id)
    owner_id: Mapped[str] = mapped_column(sa.ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(64))
    description: Mapped[str] = mapped_column(sa.Text, default="")
    content_key: Mapped[str] = mapped_column(sa.ForeignKey("contents.hash"), index=True)
    size_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=now)
