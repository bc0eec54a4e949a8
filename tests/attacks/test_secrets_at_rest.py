"""A copy of the control plane's database alone calls no agent: the agents' per-run secrets are sealed.

The attacker has the database (a backup, a stolen SQLite file with its WAL, a PostgreSQL dump)
but not the server key, which lives outside it (``agent_secret``). Every file and every row is
searched for the secret an agent pushed, in the clear and in the encodings a tool would try;
a control plane with another key cannot call the agent with what it finds; replicas that share
the key all can. A database upgraded from the first schema keeps no secret stored in the clear.
"""

from __future__ import annotations

import base64
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from agentcontext.control import agent_secret, identity, migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.chats import NewChat
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.identity import AgentPrincipal, UserPrincipal
from agentcontext.control.plane import ControlPlane
from agentcontext.errors import ConfigError
from tests.control.conftest import db, db_url, first_push, migrated_url

# the control tests' fixtures: SQLite and a real PostgreSQL (the cluster: tests/conftest.py)
__all__ = ["db", "db_url", "migrated_url"]

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "per-run-" + secrets.token_urlsafe(32)
INFO = {"url": "http://10.0.0.7:8766", "api_token": SECRET, "os": "linux", "home": "/home/dev"}


class Agent:
    """The workspace agent's API as a mock transport: it records every bearer token it is called with."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        self.seen.append(token)
        if token != SECRET:
            return httpx.Response(401, json={"message": "Unauthorized.", "detail": None})
        body = {"content": [{"type": "text", "text": "called"}], "is_error": False}
        return httpx.Response(200, json=body)


def encodings(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw, raw.hex().encode(), base64.b64encode(raw), base64.urlsafe_b64encode(raw), raw[:24]]


async def setup(db: Database, box: SecretBox, agent: Agent) -> tuple[ControlPlane, UserPrincipal, str]:
    """A plane over ``db`` with ``box``; the agent pushed (with its secret), alice has a chat offering its tool."""
    user = db.write(lambda s: identity.create_user(s, "alice"))
    issued = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    plane = ControlPlane(db, LocalBroker(), link=AgentLink(transport=httpx.MockTransport(agent)), secrets=box)
    principal = await plane.access.authenticate(issued.token)
    person = await plane.access.authenticate(user.token)
    assert isinstance(principal, AgentPrincipal) and isinstance(person, UserPrincipal)
    assert (await plane.sync.push(principal, {**first_push(initial=True), "agent": INFO})).accepted
    chat = await plane.chats.create(person, NewChat("ws"))
    return plane, person, chat.id


def every_cell(db: Database) -> Iterator[Any]:
    with db.engine.connect() as connection:
        for table in sa.inspect(connection).get_table_names():
            for row in connection.execute(sa.text(f'SELECT * FROM "{table}"')):
                yield from row


async def test_no_file_or_row_of_the_database_holds_the_agents_secret(db: Database, tmp_path: Path) -> None:
    agent = Agent()
    plane, user, chat = await setup(db, SecretBox.ephemeral(), agent)
    called = await plane.chats.call_tool(user, chat, "docs__search", {"q": "x"})
    assert called.content == "called" and agent.seen == [SECRET]  # the plane itself reaches the agent
    await plane.aclose()

    cells = [str(cell) for cell in every_cell(db) if cell is not None]
    assert cells and not any(form.decode() in cell for cell in cells for form in encodings(SECRET))
    if db.is_sqlite:
        database = Path(db.url.database or "")
        files = [p for p in database.parent.iterdir() if p.name.startswith(database.name)]  # with -wal, -shm
        assert database in files
        for path in files:
            data = path.read_bytes()
            assert not any(form in data for form in encodings(SECRET)), path.name


async def test_a_control_plane_without_the_key_cannot_call_the_agent_with_what_the_database_holds(
    db: Database,
) -> None:
    agent = Agent()
    plane, user, chat = await setup(db, SecretBox.ephemeral(), agent)
    await plane.aclose()
    thief = ControlPlane(db, LocalBroker(), link=AgentLink(transport=httpx.MockTransport(agent)))  # another key
    result = await thief.chats.call_tool(user, chat, "docs__search", {"q": "x"})
    await thief.aclose()
    assert result.is_error and "another server key" in result.content
    assert SECRET not in agent.seen  # it never got the secret to present


async def test_replicas_sharing_the_key_all_reach_the_agent(db: Database) -> None:
    agent = Agent()
    key = secrets.token_urlsafe(32)
    first, user, chat = await setup(db, SecretBox(key), agent)
    await first.aclose()
    second = ControlPlane(
        db, LocalBroker(), link=AgentLink(transport=httpx.MockTransport(agent)), secrets=SecretBox(key)
    )
    result = await second.chats.call_tool(user, chat, "docs__search", {"q": "x"})
    await second.aclose()
    assert (result.is_error, result.content) == (False, "called")
    assert agent.seen == [SECRET]


def test_a_sealed_secret_opens_only_for_its_own_agent() -> None:
    box = SecretBox.ephemeral()
    sealed = box.seal("agent-a", SECRET)
    assert box.open("agent-a", sealed) == SECRET
    with pytest.raises(agent_secret.ForeignSeal):
        box.open("agent-b", sealed)  # a row's sealed secret moved to another agent's row opens nothing
    assert box.seal("agent-a", SECRET) != sealed  # a fresh nonce each time


def test_the_server_key_file_is_made_0600_once_and_one_others_may_read_is_refused(tmp_path: Path) -> None:
    environ = {"AGENTCONTEXT_HOME": str(tmp_path / "data")}
    box = agent_secret.load(environ)
    path = tmp_path / "data" / agent_secret.KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = agent_secret.load(environ)
    assert again.open("a", box.seal("a", SECRET)) == SECRET  # the same key on the next start
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="may be read by others"):
        agent_secret.load(environ)
    shared = {agent_secret.KEY_ENV: secrets.token_urlsafe(32)}
    assert agent_secret.load(shared).open("a", agent_secret.load(shared).seal("a", SECRET)) == SECRET
    with pytest.raises(ConfigError, match="at least 32 characters"):
        agent_secret.load({agent_secret.KEY_ENV: "short"})


def test_a_server_key_file_of_binary_bytes_is_one_clear_refusal(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_bytes(bytes(range(128, 192)))
    key_file.chmod(0o600)
    with pytest.raises(ConfigError, match=f"the server key file {key_file} is not text"):
        agent_secret.load({}, key_file)


def test_upgrading_a_database_that_kept_secrets_in_the_clear_drops_them(db_url: str) -> None:
    db = Database(db_url)
    try:
        migrate.upgrade(db, "0001")
        with db.engine.begin() as connection:
            connection.execute(sa.text("INSERT INTO workspaces VALUES ('w', 'w', NULL, '2026-01-01')"))
            connection.execute(
                sa.text(
                    "INSERT INTO agents (id, workspace_id, name, display_order, token_hash, api_token, online,"
                    " created_at) VALUES ('a', 'w', 'a', 0, 'h', :secret, false, '2026-01-01')"
                ),
                {"secret": SECRET},
            )
        migrate.upgrade(db)
        cells = [str(cell) for cell in every_cell(db) if cell is not None]
        assert "a" in cells and not any(SECRET in cell for cell in cells)
    finally:
        db.dispose()
