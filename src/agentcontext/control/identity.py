"""Who is calling: users with API tokens, workspaces, and agents with tokens of their own.

Tokens are 32 random bytes behind a readable prefix (``acu_`` for users, ``aca_`` for
agents); only their sha256 is stored, so a copy of the database grants nothing. A fast
hash is enough for secrets this long (no dictionary to search).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentcontext.control.models import Agent, ApiToken, AuthEpoch, User, Workspace, new_id, now
from agentcontext.control.prepared import Prepared
from agentcontext.errors import AuthError, ConflictError, InvalidRequestError, NotFoundError

USER_PREFIX = "acu_"
AGENT_PREFIX = "aca_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(kind: str, name: str) -> str:
    """Names of users, workspaces and agents: letters, digits, ``.``, ``_``, ``-``; at most 128.

    Raises:
        InvalidRequestError: anything else.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):  # fullmatch: "$" would let a trailing newline in
        raise InvalidRequestError(
            f"invalid {kind} name {name!r}: use letters, digits, '.', '_' and '-' (at most 128, not starting with"
            " a symbol)"
        )
    return name


@dataclass(frozen=True, slots=True)
class UserPrincipal:
    kind: Literal["user"]
    user_id: str
    name: str
    is_admin: bool


@dataclass(frozen=True, slots=True)
class AgentPrincipal:
    kind: Literal["agent"]
    agent_id: str
    workspace_id: str
    name: str


Principal = UserPrincipal | AgentPrincipal


_AGENTS = cast(sa.Table, Agent.__table__)
_USERS = cast(sa.Table, User.__table__)
_TOKENS = cast(sa.Table, ApiToken.__table__)
# a token is read once a replica until who tokens name changes (``auth_epoch``): after a restart, every agent's
_AGENT_TOKEN = Prepared(
    sa.select(_AGENTS.c.id, _AGENTS.c.workspace_id, _AGENTS.c.name).where(
        _AGENTS.c.token_hash == sa.bindparam("digest")
    )
)
_USER_TOKEN = Prepared(
    sa.select(_USERS.c.id, _USERS.c.name, _USERS.c.is_admin)
    .select_from(_USERS.join(_TOKENS, _TOKENS.c.user_id == _USERS.c.id))
    .where(_TOKENS.c.token_hash == sa.bindparam("digest"))
)


_EPOCH = cast(sa.Table, AuthEpoch.__table__)
_AUTH_EPOCH = Prepared(sa.select(_EPOCH.c.changes).where(_EPOCH.c.id == 1))


def auth_epoch(executor: Session | Connection) -> int | None:
    """How often who a token names has changed (None: no count kept, as in a schema made without migrations)."""
    found: int | None = _AUTH_EPOCH.scalar(executor, {})
    return found


def authenticate(executor: Session | Connection, token: str) -> Principal:
    """The user or agent ``token`` belongs to.

    Raises:
        AuthError: not a token we issued (or one since revoked).
    """
    digest = token_hash(token)
    if token.startswith(AGENT_PREFIX):
        agent = _AGENT_TOKEN.first(executor, {"digest": digest})
        if agent is not None:
            return AgentPrincipal("agent", agent.id, agent.workspace_id, agent.name)
    elif token.startswith(USER_PREFIX):
        user = _USER_TOKEN.first(executor, {"digest": digest})
        if user is not None:
            return UserPrincipal("user", user.id, user.name, user.is_admin)
    raise AuthError("invalid token")


@dataclass(frozen=True, slots=True)
class Issued:
    """A new token, shown once."""

    id: str
    name: str
    token: str


def create_user(session: Session, name: str, *, admin: bool = False) -> Issued:
    """A new user and a first API token.

    Raises:
        ConflictError: the name is taken. InvalidRequestError: the name is not valid.
    """
    check_name("user", name)
    if session.scalar(sa.select(User.id).where(User.name == name)) is not None:
        raise ConflictError(f'user "{name}" already exists')
    user = User(name=name, is_admin=admin)
    session.add(user)
    _flush_unique(session, f'user "{name}" already exists')
    token = new_token(USER_PREFIX)
    session.add(ApiToken(user_id=user.id, name="default", token_hash=token_hash(token)))
    return Issued(user.id, name, token)


def create_token(session: Session, user_name: str, *, label: str = "") -> Issued:
    """Another API token for an existing user.

    Raises:
        NotFoundError: no such user.
    """
    owner = user_id(session, user_name)
    token = new_token(USER_PREFIX)
    session.add(ApiToken(user_id=owner, name=label, token_hash=token_hash(token)))
    return Issued(owner, user_name, token)


def user_id(session: Session, name: str) -> str:
    """Raises: NotFoundError."""
    found = session.scalar(sa.select(User.id).where(User.name == name))
    if found is None:
        raise NotFoundError(f'user "{name}" not found')
    return found


def has_users(session: Session) -> bool:
    return session.scalar(sa.select(User.id).limit(1)) is not None


def workspace_by_name_or_id(session: Session, key: str) -> Workspace:
    """Raises: NotFoundError.

    An id wins over a name: another workspace may be *named* like this one's id.
    """
    found = session.get(Workspace, key) or session.scalar(sa.select(Workspace).where(Workspace.name == key))
    if found is None:
        raise NotFoundError(f'workspace "{key}" not found')
    return found


def ensure_workspace(session: Session, name: str, *, owner_id: str | None = None) -> Workspace:
    """The workspace of that name, created if needed (by whichever of two concurrent callers comes first).

    Raises:
        InvalidRequestError: the name is not valid. ConflictError: ``owner_id`` is given and the workspace exists
            with another owner, or none (an operator who thinks it private must not be left with it open to all).
    """
    check_name("workspace", name)
    query = sa.select(Workspace).where(Workspace.name == name)
    found = session.scalar(query)
    if found is None:
        # ON CONFLICT: a concurrent creator that committed first makes this a no-op here (or, on
        # PostgreSQL's REPEATABLE READ, a serialization failure that Database.write retries)
        insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        session.execute(
            insert(Workspace)
            .values(id=new_id(), name=name, owner_id=owner_id, created_at=now())
            .on_conflict_do_nothing(index_elements=["name"])
        )
        found = session.scalar(query)
        assert found is not None
    if owner_id is not None and found.owner_id != owner_id:  # it existed (or a concurrent creator made it)
        whose = "has no owner (every user may see it)" if found.owner_id is None else "belongs to another user"
        raise ConflictError(f'workspace "{name}" already exists and {whose}: its owner is not changed here')
    return found


def create_agent(
    session: Session,
    workspace_name: str,
    name: str,
    *,
    owner_id: str | None = None,
    parent: str | None = None,
    display_order: int = 0,
) -> Issued:
    """A new agent in the workspace (created if needed), with its token.

    Raises:
        ConflictError: the workspace has an agent of that name, or exists with another owner than ``owner_id``.
        NotFoundError: no such parent agent.
    """
    check_name("agent", name)
    workspace = ensure_workspace(session, workspace_name, owner_id=owner_id)
    if session.scalar(sa.select(Agent.id).where(Agent.workspace_id == workspace.id, Agent.name == name)):
        raise ConflictError(f'workspace "{workspace_name}" already has an agent named "{name}"')
    parent_id = None
    if parent is not None:
        parent_id = session.scalar(sa.select(Agent.id).where(Agent.workspace_id == workspace.id, Agent.name == parent))
        if parent_id is None:
            raise NotFoundError(f'workspace "{workspace_name}" has no agent named "{parent}"')
    token = new_token(AGENT_PREFIX)
    agent = Agent(
        workspace_id=workspace.id,
        name=name,
        parent_id=parent_id,
        display_order=display_order,
        token_hash=token_hash(token),
    )
    session.add(agent)
    _flush_unique(session, f'workspace "{workspace_name}" already has an agent named "{name}"')
    return Issued(agent.id, name, token)


def _flush_unique(session: Session, message: str) -> None:
    """Flush; a unique violation (a concurrent creation of the same name won) is a ConflictError.

    Raises:
        ConflictError: ``message``.
    """
    try:
        session.flush()
    except IntegrityError as exc:
        if getattr(exc.orig, "sqlstate", None) == "23505" or "UNIQUE constraint failed" in str(exc.orig):
            raise ConflictError(message) from None
        raise


def rotate_agent_token(session: Session, workspace_name: str, name: str) -> Issued:
    """A new token for an agent; the old one stops working at once.

    Raises:
        NotFoundError: no such agent.
    """
    workspace = workspace_by_name_or_id(session, workspace_name)
    agent = session.scalar(sa.select(Agent).where(Agent.workspace_id == workspace.id, Agent.name == name))
    if agent is None:
        raise NotFoundError(f'workspace "{workspace_name}" has no agent named "{name}"')
    token = new_token(AGENT_PREFIX)
    agent.token_hash = token_hash(token)
    return Issued(agent.id, name, token)


def offline_after(session: Session, silence: dt.timedelta, *, now: dt.datetime) -> list[str]:
    """Mark agents not heard from for longer than ``silence`` offline; the ids of those that just went offline.

    Silence is measured on the clock ``last_seen_at`` is written with (``ingest``): the database's on PostgreSQL,
    which every replica shares (a replica's own clock may be off), ``now`` (the one server's) on SQLite.
    """
    clock: Any = sa.func.now() if session.get_bind().dialect.name == "postgresql" else now
    rows = session.execute(
        sa.update(Agent)
        .where(Agent.online.is_(True), Agent.last_seen_at < clock - silence)
        .values(online=False)
        .returning(Agent.id)
    )
    return [row.id for row in rows]
