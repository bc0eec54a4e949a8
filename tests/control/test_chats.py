"""Chats: created once, bound to an agent, pinned, marked out of date, refreshed (coder.md 4.6, 6.3, 8.7; seed 001).

The first tests are Coder's "Context pinning integration tests" (coder.md 8.7): push
hash A pins; push hash B marks dirty with DirtySince; resources stay pinned while dirty;
refresh clears dirty, re-pins the error and returns the resources; re-pushing the pinned
hash does not re-dirty; an agent-less chat is unaffected. All run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import chats, identity, ingest, rows
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.db import Database
from agentcontext.control.events import Event
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Chat, Workspace
from agentcontext.errors import ConflictError, InvalidRequestError, NotFoundError
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.snapshot import aggregate_hash
from agentcontext.testing import skill_md
from agentcontext.wire.sync import PushRequest, validated
from tests.control.conftest import BOX

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


def at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def text_resource(kind: Kind, path: str, text: str, status: Status = Status.OK, **fields: Any) -> Resource:
    data = text.encode("utf-8")
    return Resource(
        kind,
        path,
        Scope.PROJECT,
        status,
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=text if status.carries_content else None,
        **fields,
    )


def instruction(path: str, text: str, status: Status = Status.OK, error: str | None = None) -> Resource:
    return text_resource(Kind.INSTRUCTION_FILE, path, text, status, error=error)


def skill(name: str, description: str = "does a thing", *, folder: str | None = None) -> Resource:
    path = f"/w/.agents/skills/{folder or name}/SKILL.md"
    return text_resource(Kind.SKILL, path, skill_md(name, description), name=name, description=description)


def body(*resources: Resource, version: int = 1, error: str | None = None) -> dict[str, Any]:
    ordered = sorted(resources, key=lambda r: r.id)
    return {
        "version": version,
        "aggregate_hash": aggregate_hash(ordered),
        "work_dir": "/w",
        "error": error,
        "resources": [r.to_dict() for r in ordered],
        "initial": False,
    }


HASH_A = [instruction("/w/AGENTS.md", "Use tabs.\n"), skill("deploy")]
HASH_B = [instruction("/w/AGENTS.md", "Use spaces.\n"), skill("deploy")]


@dataclass
class World:
    """Users alice and bob; workspace ``ws`` with one agent ``dev``."""

    db: Database
    alice: UserPrincipal
    bob: UserPrincipal
    agent_id: str

    def add_agent(self, name: str, workspace: str = "ws", **options: Any) -> str:
        return self.db.write(lambda s: identity.create_agent(s, workspace, name, **options)).id

    def push(self, *resources: Resource, version: int, minutes: int = 0, agent: str | None = None, **kw: Any) -> None:
        checked = validated(PushRequest, body(*resources, version=version, **kw))
        outcome = self.db.write(lambda s: ingest.ingest(s, agent or self.agent_id, checked, now=at(minutes), box=BOX))
        assert outcome.accepted

    def create(self, user: UserPrincipal | None = None, **fields: Any) -> chats.ChatRow:
        new = chats.NewChat(**({"workspace": "ws"} | fields))
        return self.db.write(lambda s: chats.create(s, user or self.alice, new, suffix=DEFAULT_SUFFIX, now=T0))

    def refresh(self, chat_id: str, *, minutes: int = 0, user: UserPrincipal | None = None) -> chats.Refreshed:
        who = user or self.alice
        return self.db.write(lambda s: chats.refresh(s, who, chat_id, suffix=DEFAULT_SUFFIX, now=at(minutes)))

    def ensure_bound(self, chat_id: str, *, minutes: int = 0) -> list[Event]:
        def work(session: Session) -> list[Event]:
            chat = chats.owned_chat(session, self.alice, chat_id, lock=True)
            return chats.bind(session, chat, suffix=DEFAULT_SUFFIX, now=at(minutes))[1]

        return self.db.write(work)

    def row(self, chat_id: str) -> Chat:
        with self.db.read() as session:
            chat = session.get(Chat, chat_id)
            assert chat is not None
            return chat

    def summary(self, chat_id: str) -> dict[str, Any]:
        """The chat as the API answers it, as JSON."""
        with self.db.read() as session:
            chat = chats.summary(session, chats.owned_chat(session, self.alice, chat_id))
        return chat.model_dump(mode="json", exclude_unset=True)

    def pinned(self, chat_id: str) -> dict[str, str | None]:
        with self.db.read() as session:
            return {r.path: r.content for r in rows.chat_resources(session, chat_id)}

    def delete_agent(self, agent_id: str) -> None:
        self.db.write(lambda s: s.execute(sa.delete(Agent).where(Agent.id == agent_id)))


@pytest.fixture
def world(db: Database) -> World:
    alice = db.write(lambda s: identity.create_user(s, "alice"))
    bob = db.write(lambda s: identity.create_user(s, "bob"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    return World(
        db,
        UserPrincipal("user", alice.id, "alice", False),
        UserPrincipal("user", bob.id, "bob", False),
        agent.id,
    )


# --- Coder's context pinning integration tests -------------------------------------------


def test_push_hash_a_pins_a_new_chat(world: World) -> None:
    world.push(*HASH_A, version=1)

    chat = world.create()

    assert (chat.agent_id, chat.pinned_hash, chat.pinned_version, chat.dirty_since) == (
        world.agent_id,
        aggregate_hash(HASH_A),
        1,
        None,
    )
    context = world.summary(chat.id)["context"]
    assert (context["pinned_hash"], context["dirty"], context["dirty_since"]) == (aggregate_hash(HASH_A), False, None)
    assert [r["path"] for r in context["resources"]] == ["/w/.agents/skills/deploy/SKILL.md", "/w/AGENTS.md"]


def test_push_hash_b_marks_the_chat_dirty_with_dirty_since(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()

    world.push(*HASH_B, version=2, minutes=5)

    context = world.summary(chat.id)["context"]
    assert (context["dirty"], context["dirty_since"]) == (True, at(5).isoformat())
    assert (context["pinned_hash"], context["latest_hash"]) == (aggregate_hash(HASH_A), aggregate_hash(HASH_B))


def test_resources_stay_pinned_while_dirty(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()

    world.push(*HASH_B, instruction("/w/docs/AGENTS.md", "More.\n"), version=2, minutes=1)

    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use tabs.\n"
    assert "/w/docs/AGENTS.md" not in world.pinned(chat.id)
    assert [r["path"] for r in world.summary(chat.id)["context"]["resources"]] == [
        "/w/.agents/skills/deploy/SKILL.md",
        "/w/AGENTS.md",
    ]


def test_refresh_clears_dirty_re_pins_the_error_and_returns_the_resources(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.push(*HASH_B, version=2, minutes=1, error="~/.coder is unreadable")

    done = world.refresh(chat.id, minutes=2)

    assert (done.chat.pinned_hash, done.chat.pinned_version, done.chat.pinned_error, done.chat.dirty_since) == (
        aggregate_hash(HASH_B),
        2,
        "~/.coder is unreadable",
        None,
    )
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use spaces.\n"
    context = world.summary(chat.id)["context"]
    assert (context["dirty"], context["error"], context["pinned_at"]) == (
        False,
        "~/.coder is unreadable",
        at(2).isoformat(),
    )
    assert [(r["path"], r["status"]) for r in context["resources"]] == [
        ("/w/.agents/skills/deploy/SKILL.md", "ok"),
        ("/w/AGENTS.md", "ok"),
    ]
    assert [(e.kind, e.data["pinned_hash"]) for e in done.events] == [("refreshed", aggregate_hash(HASH_B))]


def test_re_pushing_the_pinned_hash_does_not_re_dirty(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.push(*HASH_B, version=2, minutes=1)
    world.refresh(chat.id, minutes=2)

    world.push(*HASH_B, version=3, minutes=3)

    assert world.row(chat.id).dirty_since is None


def test_an_agent_less_chat_is_unaffected(world: World) -> None:
    world.db.write(lambda s: identity.ensure_workspace(s, "bare"))
    lonely = world.create(workspace="bare")
    world.push(*HASH_A, version=1)
    world.push(*HASH_B, version=2)

    done = world.refresh(lonely.id)

    chat = world.row(lonely.id)
    assert (chat.agent_id, chat.pinned_hash, chat.dirty_since) == (None, None, None)
    assert world.pinned(lonely.id) == {}
    assert done.diff.empty


# --- one write at creation (seed 001) ----------------------------------------------------


@contextlib.contextmanager
def chat_writes(world: World) -> Iterator[list[str]]:
    """Every statement that writes the chats table inside the block, as it reaches the driver."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        flat = " ".join(statement.split()).lower()
        if flat.startswith(("insert into chats ", "update chats ", "delete from chats ")):
            seen.append(flat)

    sa.event.listen(world.db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(world.db.engine, "before_cursor_execute", record)


@pytest.mark.parametrize("status", ["pending", "running", "waiting"])
def test_a_chat_is_created_with_its_final_status_in_one_insert(world: World, status: str) -> None:
    world.push(*HASH_A, version=1)

    with chat_writes(world) as statements:
        chat = world.create(status=status, title="Fix the build")

    assert len(statements) == 1 and statements[0].startswith("insert into chats ")
    row = world.row(chat.id)
    assert (row.status, row.title, row.agent_id, row.pinned_hash) == (
        status,
        "Fix the build",
        world.agent_id,
        aggregate_hash(HASH_A),
    )


def test_a_child_chat_is_created_in_one_insert_too(world: World) -> None:
    world.push(*HASH_A, version=1)
    parent = world.create()
    world.push(*HASH_B, version=2)

    with chat_writes(world) as statements:
        world.create(workspace=None, parent_id=parent.id)

    assert len(statements) == 1 and statements[0].startswith("insert into chats ")


def test_a_chat_without_any_status_given_starts_pending(world: World) -> None:
    assert world.create().status == "pending"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"status": "done"}, "status 'done' is not one of"),
        ({"title": "t" * 257}, "title is longer than 256 characters"),
        ({"workspace": None}, "workspace is required"),
        ({"workspace": ""}, "workspace is required"),
    ],
)
def test_a_malformed_new_chat_is_refused_and_nothing_is_written(
    world: World, fields: dict[str, Any], message: str
) -> None:
    with chat_writes(world) as statements, pytest.raises(InvalidRequestError, match=message):
        world.create(**fields)
    assert statements == []


# --- binding -----------------------------------------------------------------------------


def test_a_chat_binds_to_the_agent_carrying_the_chat_suffix(world: World) -> None:
    chat_agent = world.add_agent("main-coderd-chat", display_order=9)

    assert world.create().agent_id == chat_agent


def test_two_agents_carrying_the_suffix_make_creation_a_conflict(world: World) -> None:
    world.add_agent("a-coderd-chat")
    world.add_agent("b-coderd-chat")

    with chat_writes(world) as statements, pytest.raises(ConflictError, match="multiple agents match the chat suffix"):
        world.create()
    assert statements == []


def test_the_binding_is_persisted_and_reused_when_a_better_agent_appears(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    newcomer = world.add_agent("new-coderd-chat")
    world.push(*HASH_B, version=1, agent=newcomer)

    events = world.ensure_bound(chat.id)
    world.refresh(chat.id)

    assert events == []
    assert (world.row(chat.id).agent_id, world.row(chat.id).pinned_hash) == (world.agent_id, aggregate_hash(HASH_A))
    assert world.create().agent_id == newcomer  # new chats do pick it


def test_a_binding_whose_agent_was_deleted_is_re_resolved_and_re_pinned(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.push(*HASH_B, version=2, minutes=1)  # dirty
    replacement = world.add_agent("rebuilt")
    world.push(instruction("/w/AGENTS.md", "Rebuilt.\n"), version=1, agent=replacement, error="partial")

    world.delete_agent(world.agent_id)
    assert world.row(chat.id).agent_id is None  # the foreign key let go of it
    events = world.ensure_bound(chat.id, minutes=3)

    row = world.row(chat.id)
    assert (row.agent_id, row.pinned_hash, row.pinned_error, row.pinned_at, row.dirty_since) == (
        replacement,
        aggregate_hash([instruction("/w/AGENTS.md", "Rebuilt.\n")]),
        "partial",
        at(3),
        None,
    )
    assert world.pinned(chat.id) == {"/w/AGENTS.md": "Rebuilt.\n"}
    assert [(e.kind, e.topic) for e in events] == [("pinned", f"chat:{chat.id}")]


def test_a_rebound_chat_whose_new_agent_has_no_snapshot_drops_the_old_pin_until_it_pushes(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    replacement = world.add_agent("rebuilt")
    world.delete_agent(world.agent_id)

    assert world.ensure_bound(chat.id) == []

    row = world.row(chat.id)
    assert (row.agent_id, row.pinned_hash, row.pinned_version, row.dirty_since) == (replacement, None, None, None)
    assert world.pinned(chat.id) == {}  # not the deleted agent's files
    world.push(*HASH_B, version=1, agent=replacement)
    assert world.row(chat.id).pinned_hash == aggregate_hash(HASH_B)  # its first push pins it
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use spaces.\n"


def test_a_chat_whose_agent_was_deleted_and_has_no_other_keeps_its_pin(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.delete_agent(world.agent_id)

    assert world.ensure_bound(chat.id) == []

    assert world.row(chat.id).pinned_hash == aggregate_hash(HASH_A)
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use tabs.\n"


def test_a_chat_created_before_the_workspace_had_an_agent_binds_lazily(world: World) -> None:
    world.db.write(lambda s: identity.ensure_workspace(s, "later"))
    chat = world.create(workspace="later")
    assert (chat.agent_id, chat.pinned_hash) == (None, None)
    agent = world.add_agent("dev", workspace="later")
    world.push(*HASH_A, version=4, agent=agent)
    assert world.row(chat.id).pinned_hash is None  # a push pins only chats bound to its agent

    events = world.ensure_bound(chat.id, minutes=1)

    row = world.row(chat.id)
    assert (row.agent_id, row.pinned_hash, row.pinned_version) == (agent, aggregate_hash(HASH_A), 4)
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use tabs.\n"
    assert [e.kind for e in events] == ["pinned"]
    assert world.ensure_bound(chat.id) == []  # once


def test_a_lazily_bound_chat_whose_agent_has_not_pushed_is_pinned_by_the_first_push(world: World) -> None:
    world.db.write(lambda s: identity.ensure_workspace(s, "later"))
    chat = world.create(workspace="later")
    agent = world.add_agent("dev", workspace="later")

    assert world.ensure_bound(chat.id) == []
    assert (world.row(chat.id).agent_id, world.row(chat.id).pinned_hash) == (agent, None)

    world.push(*HASH_A, version=1, agent=agent)
    assert world.row(chat.id).pinned_hash == aggregate_hash(HASH_A)


def test_a_child_chat_inherits_its_parents_binding_and_pin(world: World) -> None:
    world.push(*HASH_A, version=1)
    parent = world.create()
    world.push(*HASH_B, version=2, minutes=1)  # the parent is now out of date

    child = world.create(workspace=None, parent_id=parent.id, status="running")

    assert (child.parent_id, child.workspace_id, child.agent_id) == (parent.id, parent.workspace_id, world.agent_id)
    assert (child.pinned_hash, child.pinned_version, child.dirty_since) == (aggregate_hash(HASH_A), 1, at(1))
    assert (
        world.pinned(child.id)
        == world.pinned(parent.id)
        == {
            "/w/AGENTS.md": "Use tabs.\n",
            "/w/.agents/skills/deploy/SKILL.md": skill_md("deploy", "does a thing"),
        }
    )


def test_a_child_chat_may_name_its_parents_workspace_but_no_other(world: World) -> None:
    world.add_agent("dev", workspace="elsewhere")
    parent = world.create()

    assert world.create(workspace="ws", parent_id=parent.id).parent_id == parent.id
    with pytest.raises(InvalidRequestError, match="a child chat stays in its parent's workspace"):
        world.create(workspace="elsewhere", parent_id=parent.id)


# --- ownership ---------------------------------------------------------------------------


def test_another_users_chat_is_not_found_never_forbidden(world: World) -> None:
    world.push(*HASH_A, version=1)
    mine = world.create()
    missing = "00000000-0000-0000-0000-000000000000"

    def update(session: Session, chat_id: str) -> chats.ChatRow:
        return chats.update(session, world.bob, chat_id, status="error", archived=None, title=None, now=T0)

    for chat_id in (mine.id, missing):
        with world.db.read() as session, pytest.raises(NotFoundError, match=f'chat "{chat_id}" not found'):
            chats.owned_chat(session, world.bob, chat_id)
        with pytest.raises(NotFoundError, match=f'chat "{chat_id}" not found'):
            world.refresh(chat_id, user=world.bob)
        with pytest.raises(NotFoundError, match=f'chat "{chat_id}" not found'):
            world.create(user=world.bob, workspace=None, parent_id=chat_id)
        with pytest.raises(NotFoundError, match=f'chat "{chat_id}" not found'):
            world.db.write(functools.partial(update, chat_id=chat_id))
    assert world.row(mine.id).status == "pending"


def test_a_workspace_owned_by_another_user_is_not_found(world: World) -> None:
    world.db.write(lambda s: identity.ensure_workspace(s, "private", owner_id=world.bob.user_id))

    with pytest.raises(NotFoundError, match='workspace "private" not found'):
        world.create(workspace="private")
    assert world.create(user=world.bob, workspace="private").workspace_id is not None


def test_a_chat_can_be_created_by_workspace_id(world: World) -> None:
    with world.db.read() as session:
        workspace_id = session.scalar(sa.select(Workspace.id).where(Workspace.name == "ws"))

    assert world.create(workspace=workspace_id).workspace_id == workspace_id


def test_listing_shows_only_the_users_own_unarchived_chats(world: World) -> None:
    first, second = world.create(), world.create()
    world.create(user=world.bob)
    world.db.write(lambda s: chats.update(s, world.alice, first.id, status=None, archived=True, title=None, now=T0))

    with world.db.read() as session:
        assert [c.id for c in chats.list_chats(session, world.alice)] == [second.id]
        assert [c.id for c in chats.list_chats(session, world.alice, archived=True)] == [first.id]


# --- the summary ---------------------------------------------------------------------------


def test_the_summary_lists_what_coder_lists_sorted_by_source(world: World) -> None:
    server = Resource(
        Kind.MCP_SERVER,
        "github",
        Scope.PROJECT,
        Status.OK,
        name="github",
        tools=(Tool("search", "Search code", {"type": "object"}),),
    )
    world.push(
        instruction("/w/AGENTS.md", "Use tabs.\n"),
        instruction("/w/empty/AGENTS.md", ""),
        instruction("/w/blank/AGENTS.md", " \n\t\n"),
        instruction("/w/hidden/AGENTS.md", "<!-- only a comment -->\u200b\n"),
        instruction("/w/big/AGENTS.md", "x", Status.OVERSIZE, error="larger than 64 KiB"),
        skill("deploy", "Ship it"),
        skill("a/b", "slash in the name", folder="slashed"),
        skill("", "no name", folder="nameless"),
        Resource(Kind.SKILL, "/w/.agents/skills/Bad/SKILL.md", Scope.REPO, Status.INVALID, error="bad name"),
        Resource(Kind.MCP_CONFIG, "/w/.mcp.json", Scope.PROJECT, Status.OK, servers=("github",)),
        server,
        version=1,
    )

    listing = world.summary(world.create().id)["context"]["resources"]

    assert [(r["path"], r["kind"], r["status"]) for r in listing] == [
        ("/w/.agents/skills/Bad/SKILL.md", "skill", "invalid"),
        ("/w/.agents/skills/deploy/SKILL.md", "skill", "ok"),
        ("/w/.mcp.json", "mcp_config", "ok"),
        ("/w/AGENTS.md", "instruction_file", "ok"),
        ("/w/big/AGENTS.md", "instruction_file", "oversize"),
        ("github", "mcp_server", "ok"),
    ]
    by_path = {r["path"]: r for r in listing}
    assert by_path["/w/.agents/skills/deploy/SKILL.md"] | {"size_bytes": 0} == {
        "path": "/w/.agents/skills/deploy/SKILL.md",
        "kind": "skill",
        "status": "ok",
        "size_bytes": 0,
        "error": None,
        "origin": "snapshot",
        "skill_name": "deploy",
        "skill_description": "Ship it",
    }
    assert by_path["/w/big/AGENTS.md"]["error"] == "larger than 64 KiB"
    assert by_path["github"]["tools"] == [{"name": "search", "description": "Search code"}]
    assert by_path["/w/AGENTS.md"]["size_bytes"] == len("Use tabs.\n")


def test_the_summary_shows_the_chat_and_its_binding(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create(title="Triage", plan_mode=True)

    data = world.summary(chat.id)

    assert {k: data[k] for k in ("id", "status", "title", "agent_id", "parent_id", "plan_mode", "archived")} == {
        "id": chat.id,
        "status": "pending",
        "title": "Triage",
        "agent_id": world.agent_id,
        "parent_id": None,
        "plan_mode": True,
        "archived": False,
    }
    assert data["workspace_id"] == chat.workspace_id and data["created_at"] == T0.isoformat()


# --- refresh -------------------------------------------------------------------------------


def test_refresh_reports_the_paths_added_removed_and_changed(world: World) -> None:
    world.push(
        instruction("/w/AGENTS.md", "Use tabs.\n"),
        instruction("/w/old/AGENTS.md", "old"),
        instruction("/w/same/AGENTS.md", "same"),
        skill("deploy"),
        version=1,
    )
    chat = world.create()
    world.push(
        instruction("/w/AGENTS.md", "Use spaces.\n"),
        instruction("/w/same/AGENTS.md", "same"),
        instruction("/w/new/AGENTS.md", "new"),
        Resource.from_dict({**skill("deploy").to_dict(), "status": "invalid", "content": None, "error": "bad"}),
        version=2,
    )

    done = world.refresh(chat.id)

    assert done.diff.to_dict() == {
        "added": ["/w/new/AGENTS.md"],
        "removed": ["/w/old/AGENTS.md"],
        "changed": ["/w/.agents/skills/deploy/SKILL.md", "/w/AGENTS.md"],
    }
    (event,) = done.events
    assert event.data["added"] == ["/w/new/AGENTS.md"] and event.data["removed"] == ["/w/old/AGENTS.md"]


def test_refresh_of_an_up_to_date_chat_changes_nothing(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()

    done = world.refresh(chat.id, minutes=1)

    assert done.diff.empty
    assert world.row(chat.id).pinned_hash == aggregate_hash(HASH_A)
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use tabs.\n"


def test_refresh_pins_a_chat_that_had_no_pin(world: World) -> None:
    chat = world.create()  # the agent had not pushed yet
    world.db.write(lambda s: s.execute(sa.update(Chat).values(agent_id=None)))  # and the binding was lost
    world.push(*HASH_A, version=1)

    done = world.refresh(chat.id)

    assert world.row(chat.id).pinned_hash == aggregate_hash(HASH_A)
    assert done.diff.added == ("/w/.agents/skills/deploy/SKILL.md", "/w/AGENTS.md")
    assert [e.kind for e in done.events] == ["refreshed"]  # one event, not "pinned" and "refreshed"


def test_refresh_after_the_agents_snapshot_vanished_clears_the_pin(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.db.write(lambda s: s.execute(sa.text("DELETE FROM snapshots")))

    done = world.refresh(chat.id)

    row = world.row(chat.id)
    assert (row.pinned_hash, row.pinned_version, row.dirty_since) == (None, None, None)
    assert world.pinned(chat.id) == {}
    assert done.diff.removed == ("/w/.agents/skills/deploy/SKILL.md", "/w/AGENTS.md")


def test_refresh_of_a_chat_whose_agent_is_gone_for_good_clears_the_pin(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.delete_agent(world.agent_id)  # and the workspace has no other

    done = world.refresh(chat.id)

    row = world.row(chat.id)
    assert (row.agent_id, row.pinned_hash, row.pinned_error, row.dirty_since) == (None, None, None, None)
    assert world.pinned(chat.id) == {}
    assert done.diff.removed == ("/w/.agents/skills/deploy/SKILL.md", "/w/AGENTS.md")


def test_a_read_sees_one_pin_even_when_a_refresh_commits_in_the_middle(world: World) -> None:
    world.push(*HASH_A, version=1)
    chat = world.create()
    world.push(*HASH_B, version=2)

    with world.db.read() as session:
        row = session.get(Chat, chat.id)
        assert row is not None and row.pinned_hash == aggregate_hash(HASH_A)
        world.refresh(chat.id)  # another connection re-pins and commits
        pinned = {r.path: r.content for r in rows.chat_resources(session, chat.id)}

    assert pinned["/w/AGENTS.md"] == "Use tabs.\n"  # the rows of the pin read first, not the new ones
    assert world.pinned(chat.id)["/w/AGENTS.md"] == "Use spaces.\n"


def test_updating_a_chat_changes_its_status_title_and_archive_flag(world: World) -> None:
    chat = world.create()

    world.db.write(
        lambda s: chats.update(s, world.alice, chat.id, status="completed", archived=True, title="Done", now=at(1))
    )

    row = world.row(chat.id)
    assert (row.status, row.archived, row.title, row.updated_at) == ("completed", True, "Done", at(1))
    with pytest.raises(InvalidRequestError, match="status 'finished' is not one of"):
        world.db.write(
            lambda s: chats.update(s, world.alice, chat.id, status="finished", archived=None, title=None, now=T0)
        )
