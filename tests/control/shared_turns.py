"""Two users, each with an agent in a workspace of their own, on one control plane: for the shared-render tests.

Snapshots are pushed as the agent's pusher sends them (``push_body``), with the agent information a
hostile agent may choose freely; prompts are asked over the API (in process), so ``X-Prompt-Cache``
is read as a client reads it. ``fresh`` asks a second control plane on the same database, which has
kept nothing: what the chat renders by itself.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from agentcontext.control import identity, migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.chats import NewChat
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.resource import Resource
from agentcontext.server.app import build_app
from tests.control.conftest import AGENT_INFO, CONTROL_EDGE, WORK, push_body
from tests.migrated import fresh_sqlite


@dataclass
class Person:
    """A user, their API client, and their agent (in workspace ``ws-<name>``)."""

    name: str
    user: identity.UserPrincipal
    agent: identity.AgentPrincipal
    client: httpx.AsyncClient
    pushed: int = 0

    @property
    def workspace(self) -> str:
        return f"ws-{self.name}"


@dataclass
class Plane:
    plane: ControlPlane
    db: Database
    people: dict[str, Person] = field(default_factory=dict)

    async def push(self, who: str, resources: list[Resource], **agent: Any) -> None:
        """``resources`` pushed by the person's agent, its information overridden by ``agent``."""
        person = self.people[who]
        person.pushed += 1
        body = push_body(
            resources, version=person.pushed, initial=person.pushed == 1, work_dir=WORK, agent={**AGENT_INFO, **agent}
        )
        outcome = await self.plane.sync.push(person.agent, body)
        assert outcome.accepted, outcome

    async def chat(self, who: str, *, plan_mode: bool = False) -> str:
        person = self.people[who]
        new = NewChat(workspace=person.workspace, plan_mode=plan_mode)
        return str((await self.plane.chats.create(person.user, new)).id)

    async def prompt(self, who: str, chat: str) -> tuple[dict[str, Any], str]:
        """The chat's prompt as its user's client gets it, and its ``X-Prompt-Cache``."""
        response = await self.people[who].client.get(f"/api/v1/chats/{chat}/prompt")
        assert response.status_code == 200, response.text
        return response.json(), response.headers["X-Prompt-Cache"]

    async def refresh(self, who: str, chat: str) -> None:
        await self.plane.chats.refresh(self.people[who].user, chat)

    async def fresh(self, who: str, chat: str) -> dict[str, Any]:
        """The chat's prompt as a control plane that has kept nothing renders it."""
        other = ControlPlane(self.db, LocalBroker(), link=AgentLink())
        try:
            answer = await other.chats.prompt_json(self.people[who].user, chat)
            assert not answer.cached
            found: dict[str, Any] = json.loads(answer.body)
            return found
        finally:
            await other.aclose()


@contextlib.asynccontextmanager
async def two_users(
    tmp_path: Path, names: tuple[str, ...] = ("alice", "bob"), *, db_url: str | None = None
) -> AsyncIterator[Plane]:
    """``db_url``: a database to use instead of a SQLite file in ``tmp_path``."""
    db = Database(db_url or fresh_sqlite(tmp_path / "c.db"))
    migrate.upgrade(db)  # a database of the caller's own may be empty
    plane = ControlPlane(db, LocalBroker(), link=AgentLink())
    app = build_app(plane, background=False, edge=CONTROL_EDGE)
    try:
        async with contextlib.AsyncExitStack() as stack:
            running = Plane(plane, db)
            for name in names:
                user = db.write(partial(identity.create_user, name=name))
                owner = db.write(partial(identity.user_id, name=name))
                made = partial(identity.create_agent, workspace_name=f"ws-{name}", name="dev", owner_id=owner)
                agent = db.write(made)
                person = await plane.access.authenticate(user.token)
                principal = await plane.access.authenticate(agent.token)
                assert isinstance(person, identity.UserPrincipal) and isinstance(principal, identity.AgentPrincipal)
                headers = {"Authorization": f"Bearer {user.token}"}
                transport = httpx.ASGITransport(app=app)
                client = await stack.enter_async_context(
                    httpx.AsyncClient(transport=transport, base_url="http://control", headers=headers)
                )
                running.people[name] = Person(name, person, principal, client)
            yield running
    finally:
        await plane.aclose()
        db.dispose()
