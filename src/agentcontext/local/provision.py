"""The local user, and a workspace and agent for a work dir: made on first use, reused while their tokens work.

``agentcontext up`` runs this on the database before it starts the server, so the server's
first start finds a user and creates no ``admin``. A token the database no longer accepts
(the database was deleted, the agent rotated) is replaced: the user gets a new API token,
the agent a rotated one. A new workspace is named after the work dir's folder, made unique
with ``-2``, ``-3``... when another workspace has the name; it belongs to the local user.
"""

from __future__ import annotations

import getpass
import re
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import identity
from agentcontext.control.db import Database
from agentcontext.control.models import Agent, User, Workspace
from agentcontext.errors import AuthError
from agentcontext.local.state import Binding, LocalState

AGENT_NAME = "local"
TOKEN_LABEL = "agentcontext up"


def safe_name(text: str, fallback: str) -> str:
    """``text`` made into a valid user or workspace name (letters, digits, ``.``, ``_``, ``-``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("._-")[:100]
    return cleaned or fallback


def os_user() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a container)
        name = ""
    return safe_name(name, "local")


def provision(db: Database, state: LocalState, work_dir: Path) -> tuple[LocalState, Binding]:
    """The state with a working user token and a binding for ``work_dir`` (resolved), and that binding."""
    state = db.write(lambda s: _ensure_user(s, state))
    key = str(work_dir)
    binding = db.write(lambda s: _ensure_binding(s, state, key, work_dir.name))
    return state.bound(key, binding), binding


def _principal(session: Session, token: str | None) -> identity.Principal | None:
    if not token:
        return None
    try:
        return identity.authenticate(session, token)
    except AuthError:
        return None


def _ensure_user(session: Session, state: LocalState) -> LocalState:
    principal = _principal(session, state.user_token)
    if isinstance(principal, identity.UserPrincipal):
        return LocalState(state.server_url, state.database, principal.name, state.user_token, state.bindings)
    name = state.user or os_user()
    if session.scalar(sa.select(User.id).where(User.name == name)) is not None:
        issued = identity.create_token(session, name, label=TOKEN_LABEL)
    else:
        issued = identity.create_user(session, name, admin=True)
    return LocalState(state.server_url, state.database, issued.name, issued.token, state.bindings)


def _ensure_binding(session: Session, state: LocalState, key: str, folder: str) -> Binding:
    known = state.bindings.get(key)
    if known is not None:
        principal = _principal(session, known.token)
        if isinstance(principal, identity.AgentPrincipal):
            return known
        if _agent_exists(session, known.workspace, known.agent):
            issued = identity.rotate_agent_token(session, known.workspace, known.agent)
            return Binding(known.workspace, known.agent, issued.token)
    assert state.user is not None
    owner = identity.user_id(session, state.user)
    workspace = _free_workspace_name(session, safe_name(folder, "workspace"))
    issued = identity.create_agent(session, workspace, AGENT_NAME, owner_id=owner)
    return Binding(workspace, AGENT_NAME, issued.token)


def _agent_exists(session: Session, workspace: str, agent: str) -> bool:
    query = sa.select(Agent.id).join(Workspace).where(Workspace.name == workspace, Agent.name == agent)
    return session.scalar(query) is not None


def _free_workspace_name(session: Session, base: str) -> str:
    taken = set(session.scalars(sa.select(Workspace.name).where(Workspace.name.like(f"{base}%"))))
    if base not in taken:
        return base
    return next(f"{base}-{n}" for n in range(2, len(taken) + 3) if f"{base}-{n}" not in taken)
