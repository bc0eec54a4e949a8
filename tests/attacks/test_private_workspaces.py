"""A private workspace stays private: when its owner goes, and when an agent joins it (found by a review).

Deleting a user (an operator's SQL) set their workspaces' owner to NULL, and a workspace
without an owner is open to every user: another user listed it, opened a chat on it, read its
snapshot (the owner's private notes) and ran its MCP tools on the owner's machine. A user's
workspaces now go with the user (migration 0007), on SQLite and PostgreSQL; an owner given for a
workspace that exists otherwise is refused, and a chat whose workspace its owner may no longer see
answers "not found" on every chat route.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from agentcontext.control import identity, ingest, overview
from agentcontext.control.db import Database
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Snapshot, User, Workspace, now
from agentcontext.errors import AuthError, ConflictError
from agentcontext.wire.sync import PushRequest, validated
from tests.control.conftest import BOX, db, first_push, migrated_url
from tests.control.test_api import sqlite_world

__all__ = ["db", "migrated_url"]


def principal(db: Database, name: str) -> UserPrincipal:
    issued = db.write(lambda s: identity.create_user(s, name))
    return UserPrincipal("user", issued.id, name, False)


def test_a_deleted_users_private_workspace_is_not_opened_to_every_user(db: Database) -> None:
    carol, dave = principal(db, "carol"), principal(db, "dave")
    agent = db.write(lambda s: identity.create_agent(s, "carols-box", "box", owner_id=carol.user_id))
    push = validated(PushRequest, first_push(agents_md="Carol's private notes\n"))
    db.write_rows(lambda c: ingest.ingest(c, agent.id, push, now=now(), box=BOX))
    db.write(lambda s: identity.create_agent(s, "shared", "main"))
    with db.read() as session:
        assert [w.name for w in overview.visible_workspaces(session, dave)] == ["shared"]

    db.write(lambda s: s.execute(sa.delete(User).where(User.name == "carol")))

    with db.read() as session:
        assert [w.name for w in overview.visible_workspaces(session, dave)] == ["shared"]
        assert session.scalar(sa.select(sa.func.count()).select_from(Workspace)) == 1
        assert session.scalar(sa.select(sa.func.count()).where(Agent.id == agent.id)) == 0  # its token is gone too
        assert session.scalar(sa.select(sa.func.count()).where(Snapshot.agent_id == agent.id)) == 0


def test_an_owner_given_for_a_workspace_that_exists_otherwise_is_refused_not_ignored(db: Database) -> None:
    """Found by a review: ``workspace-agents create --workspace open --owner bo`` exited 0 and left the workspace
    open to every user, and ``--workspace bos --owner al`` left it Bo's; the operator thought otherwise."""
    bo, al = principal(db, "bo"), principal(db, "al")
    db.write(lambda s: identity.create_agent(s, "open", "main"))
    db.write(lambda s: identity.create_agent(s, "bos", "main", owner_id=bo.user_id))

    with pytest.raises(ConflictError, match='workspace "open" already exists and has no owner'):
        db.write(lambda s: identity.create_agent(s, "open", "second", owner_id=bo.user_id))
    with pytest.raises(ConflictError, match='workspace "bos" already exists and belongs to another user'):
        db.write(lambda s: identity.create_agent(s, "bos", "second", owner_id=al.user_id))
    db.write(lambda s: identity.create_agent(s, "bos", "second", owner_id=bo.user_id))  # its own owner: joins it
    with db.read() as session:
        owners = {row.name: row.owner_id for row in session.execute(sa.select(Workspace.name, Workspace.owner_id))}
    assert owners == {"open": None, "bos": bo.user_id}


@pytest.mark.anyio
async def test_a_chat_in_a_workspace_its_owner_may_no_longer_see_is_not_found(tmp_path: Path) -> None:
    """Found by a review: Ivy's chat in an open workspace kept refreshing, prompting (with the workspace's latest
    secrets) and having children after an operator gave the workspace to Hank; chat routes checked the chat's owner
    only, never whether its workspace was still the user's to see."""
    async with sqlite_world(tmp_path) as world:
        assert (await world.push(first_push())).json()["accepted"]
        chat = (await world.chat())["id"]
        assert (await world.call("GET", f"/api/v1/chats/{chat}/prompt", "alice")).status_code == 200
        bob = sa.select(User.id).where(User.name == "bob").scalar_subquery()
        world.db.write(lambda s: s.execute(sa.update(Workspace).where(Workspace.name == "shared").values(owner_id=bob)))

        for method, path, body in (
            ("GET", f"/api/v1/chats/{chat}", None),
            ("GET", f"/api/v1/chats/{chat}/prompt", None),
            ("PUT", f"/api/v1/chats/{chat}/context", None),
            ("GET", f"/api/v1/chats/{chat}/events", None),
            ("POST", "/api/v1/chats", {"parent_id": chat}),
            ("POST", f"/api/v1/chats/{chat}/touched", {"paths": ["services/billing/api.py"]}),
        ):
            answer = await world.call(method, path, "alice", json=body)
            assert answer.status_code == 404, (method, path, answer.text)
        assert (await world.call("GET", f"/api/v1/chats/{chat}/prompt", "admin")).status_code == 404  # not theirs
        assert (await world.call("POST", "/api/v1/chats", "bob", json={"workspace": "shared"})).status_code == 201


def test_a_push_of_an_agent_deleted_with_its_owner_is_refused_as_unauthenticated(db: Database) -> None:
    """The trigger deletes a user's workspaces and their agents: a push of such an agent, its token checked before
    the delete, is a 401 (``AuthError``), not a foreign-key violation (a 500)."""
    carol = principal(db, "carol")
    agent = db.write(lambda s: identity.create_agent(s, "carols-box", "box", owner_id=carol.user_id))
    db.write(lambda s: s.execute(sa.delete(User).where(User.name == "carol")))

    push = validated(PushRequest, first_push())
    with pytest.raises(AuthError, match="this agent no longer exists"):
        db.write_rows(lambda c: ingest.ingest(c, agent.id, push, now=now(), box=BOX))
