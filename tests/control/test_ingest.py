"""Taking a pushed snapshot (coder.md 4.5, 4.6): validation, the version gate, storage, pinning, marking.

The validation table mirrors Coder's server caps: at most 1,000 resources, 256 KiB a
resource body, 4 MiB in all, 1,024-byte sources and paths, 4,096-byte errors, 64-byte
hashes, versions and sizes up to MaxInt64, unique non-empty sources, known enums; a bad
push is refused whole with a message naming the field. Storage tests run on SQLite and
PostgreSQL.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agentcontext.control import chats, identity, ingest, rows, wire
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.db import Database
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import Agent, Chat, Snapshot
from agentcontext.errors import InvalidRequestError
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.snapshot import aggregate_hash
from agentcontext.testing import make_workspace, scan_tree, skill_md
from agentcontext.wire.sync import PushRequest, validated
from tests.control.conftest import BOX

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
KIB = 1024
MAX_INT64 = 2**63 - 1


def at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


# --- building pushes ---------------------------------------------------------------


def instruction(path: str, text: str, status: Status = Status.OK) -> Resource:
    data = text.encode("utf-8")
    return Resource(
        Kind.INSTRUCTION_FILE,
        path,
        Scope.PROJECT,
        status,
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=text if status.carries_content else None,
    )


def skill(name: str, description: str = "does a thing") -> Resource:
    text = skill_md(name, description)
    return Resource(
        Kind.SKILL,
        f"/w/.agents/skills/{name}/SKILL.md",
        Scope.REPO,
        Status.OK,
        size_bytes=len(text.encode()),
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        content=text,
        name=name,
        description=description,
    )


def mcp_server(name: str, *tools: str) -> Resource:
    return Resource(
        Kind.MCP_SERVER,
        name,
        Scope.PROJECT,
        Status.OK,
        name=name,
        tools=tuple(Tool(t, f"{t} tool", {"type": "object", "properties": {}}) for t in tools),
    )


def body(*resources: Resource, version: int = 1, initial: bool = False, error: str | None = None) -> dict[str, Any]:
    """A push as the agent sends it: ``Snapshot.to_dict()`` plus ``initial`` (see agent/push.py)."""
    ordered = sorted(resources, key=lambda r: r.id)
    return {
        "version": version,
        "aggregate_hash": aggregate_hash(ordered),
        "work_dir": "/w",
        "project_root": "/w",
        "profile": "default",
        "payload_bytes": sum(r.payload_bytes for r in ordered),
        "error": error,
        "resources": [r.to_dict() for r in ordered],
        "initial": initial,
    }


def rehash(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with the aggregate hash its (edited) resources call for, when they still make resources at all."""
    try:
        resources = [Resource.from_dict(r) for r in raw["resources"]]
        return {**raw, "aggregate_hash": aggregate_hash(resources)}
    except (KeyError, TypeError, ValueError, AttributeError):
        return raw  # the edit itself is what must be refused


AGENTS = instruction("/w/AGENTS.md", "Use tabs.\n")
AGENTS_V2 = instruction("/w/AGENTS.md", "Use spaces.\n")
VALID = body(AGENTS)


# --- validation --------------------------------------------------------------------


def refused(raw: Any, message: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        validated(PushRequest, raw)
    assert message in str(caught.value)


def edited(edit: Callable[[dict[str, Any]], object], *, fix_hash: bool = True) -> dict[str, Any]:
    raw = copy.deepcopy(VALID)
    edit(raw)
    return rehash(raw) if fix_hash else raw


def first(field: str, value: Any) -> Callable[[dict[str, Any]], object]:
    return lambda raw: raw["resources"][0].__setitem__(field, value)


def moved(path: Any) -> Callable[[dict[str, Any]], object]:
    """Give the first resource another path (and the id that goes with it)."""
    return lambda raw: raw["resources"][0].update(path=path, id=f"instruction_file:{path}")


def top(field: str, value: Any) -> Callable[[dict[str, Any]], object]:
    return lambda raw: raw.__setitem__(field, value)


def many(count: int) -> dict[str, Any]:
    return body(*(instruction(f"/w/d{i}/AGENTS.md", f"file {i}") for i in range(count)))


def sized(path: str, size: int) -> dict[str, Any]:
    """An instruction file resource whose compact JSON is exactly ``size`` bytes."""
    length = size
    for _ in range(3):  # the size_bytes digits grow with the text: settle on the length that fits
        raw = instruction(path, "x" * length).to_dict()
        length -= len(json.dumps(raw, separators=(",", ":")).encode()) - size
    raw = instruction(path, "x" * length).to_dict()
    assert len(json.dumps(raw, separators=(",", ":")).encode()) == size
    return raw


def test_the_agents_own_push_of_a_scanned_workspace_passes(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", "AGENTS.md": "Be brief.\n", ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship it")},
    )
    snapshot = scan_tree(work, home=home).snapshot

    push = validated(PushRequest, {**snapshot.to_dict(), "initial": True})

    assert push.aggregate_hash == snapshot.aggregate_hash
    assert push.checked_resources == snapshot.resources
    assert push.initial is True and push.version == snapshot.version


def test_a_thousand_resources_pass() -> None:
    assert len(validated(PushRequest, many(1000)).resources) == 1000


def test_a_thousand_and_one_resources_are_refused() -> None:
    refused(many(1001), "resources has 1001 items (at most 1000)")


def test_a_resource_body_of_exactly_256_kib_passes() -> None:
    raw = rehash({**VALID, "resources": [sized("/w/AGENTS.md", 256 * KIB)]})
    assert validated(PushRequest, raw).resources[0].size_bytes > 255 * KIB


def test_a_resource_body_over_256_kib_is_refused() -> None:
    raw = rehash({**VALID, "resources": [sized("/w/AGENTS.md", 256 * KIB + 1)]})
    refused(raw, "resources[0] is larger than 262144 bytes")


def test_resource_bodies_of_exactly_4_mib_in_all_pass() -> None:
    raw = rehash({**VALID, "resources": [sized(f"/w/{i:02d}/AGENTS.md", 256 * KIB) for i in range(16)]})
    assert len(validated(PushRequest, raw).resources) == 16


def test_resource_bodies_over_4_mib_in_all_are_refused() -> None:
    resources = [sized(f"/w/{i:02d}/AGENTS.md", 256 * KIB) for i in range(16)]
    resources.append(instruction("/w/zz/AGENTS.md", "one more").to_dict())
    refused(rehash({**VALID, "resources": resources}), "resources are larger than 4194304 bytes in all")


def path_of(size: int, char: str = "a") -> str:
    return "/" + char * ((size - 1) // len(char.encode()))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(top("version", 0), "version must be at least 1", id="version-0-is-the-placeholder"),
        pytest.param(top("version", -1), "version must be at least 1", id="negative-version"),
        pytest.param(top("version", 2**63), "version must be at most 9223372036854775807", id="version-2^63"),
        pytest.param(top("version", "7"), "version must be an integer", id="version-as-text"),
        pytest.param(top("version", 7.0), "version must be an integer", id="version-as-float"),
        pytest.param(top("version", True), "version must be an integer", id="version-as-bool"),
        pytest.param(top("version", None), "version must be an integer", id="version-missing"),
        pytest.param(top("error", "e" * 4097), "error is longer than 4096 bytes", id="snapshot-error-4097"),
        pytest.param(top("error", "é" * 2049), "error is longer than 4096 bytes", id="snapshot-error-counted-in-bytes"),
        pytest.param(top("aggregate_hash", "a" * 65), "aggregate_hash is longer than 64 bytes", id="aggregate-hash-65"),
        pytest.param(top("aggregate_hash", None), "aggregate_hash must be a string", id="aggregate-hash-missing"),
        pytest.param(top("resources", {"a": 1}), "resources must be a list", id="resources-not-a-list"),
        pytest.param(
            top("payload_bytes", 2**63), "payload_bytes must be at most 9223372036854775807", id="payload-bytes-2^63"
        ),
        pytest.param(top("work_dir", "/" + "w" * 1024), "work_dir is longer than 1024 bytes", id="work-dir-1025"),
        pytest.param(top("agent", "me"), "agent must be an object", id="agent-not-an-object"),
        pytest.param(top("agent", {"url": "ftp://x"}), "agent.url must be an http", id="agent-url-scheme"),
    ],
)
def test_a_bad_snapshot_field_is_refused_by_name(edit: Callable[[dict[str, Any]], object], message: str) -> None:
    refused(edited(edit, fix_hash=False), message)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(first("kind", "plugin_file"), "resources[0].kind 'plugin_file' is not one of", id="unknown-kind"),
        pytest.param(first("status", "fine"), "resources[0].status 'fine' is not one of", id="unknown-status"),
        pytest.param(first("status", None), "resources[0].status None is not one of", id="status-missing"),
        pytest.param(first("scope", "galaxy"), "resources[0].scope 'galaxy' is not one of", id="unknown-scope"),
        pytest.param(first("kind", ["skill"]), "resources[0].kind", id="kind-not-hashable"),
        pytest.param(first("status", {"ok": 1}), "resources[0].status", id="status-not-hashable"),
        pytest.param(moved(""), "resources[0].path is empty", id="empty-source"),
        pytest.param(first("path", None), "resources[0].path must be a string", id="missing-source"),
        pytest.param(moved(path_of(1025)), "resources[0].path is longer than 1024 bytes", id="path-1025"),
        pytest.param(moved(path_of(1026, "é")), "resources[0].path is longer than 1024 bytes", id="path-in-bytes"),
        pytest.param(first("source", path_of(1025)), "resources[0].source is longer than 1024 bytes", id="source-1025"),
        pytest.param(first("id", "skill:/w/AGENTS.md"), 'resources[0]: id must be "instruction_file:/w/AGENTS.md"'),
        pytest.param(first("error", "e" * 4097), "resources[0].error is longer than 4096 bytes", id="error-4097"),
        pytest.param(
            first("content_hash", "a" * 65), "resources[0].content_hash is longer than 64 bytes", id="hash-65"
        ),
        pytest.param(first("content_hash", "A" * 64), "resources[0].content_hash", id="hash-upper-case"),
        pytest.param(first("content_hash", "abc"), "resources[0].content_hash", id="hash-odd-length"),
        pytest.param(first("content_hash", "ab" * 16), "resources[0].content_hash", id="hash-of-16-bytes"),
        pytest.param(first("size_bytes", 2**63), "resources[0].size_bytes must be at most", id="size-2^63"),
        pytest.param(first("size_bytes", -1), "resources[0].size_bytes must be at least 0", id="negative-size"),
        pytest.param(first("warnings", "w"), "resources[0].warnings must be a list", id="warnings-not-a-list"),
        pytest.param(first("doc_order", "first"), "resources[0].doc_order must be an integer", id="doc-order-text"),
        pytest.param(first("name", 7), "resources[0].name must be a string", id="name-not-text"),
    ],
)
def test_a_bad_resource_field_is_refused_by_name(edit: Callable[[dict[str, Any]], object], message: str) -> None:
    refused(edited(edit), message)


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        pytest.param("t", "resources[0].tools must be a list", id="tools-not-a-list"),
        pytest.param(["t"], "resources[0].tools[0] must be an object", id="tool-not-an-object"),
        pytest.param([{"description": "x"}], "resources[0].tools[0].name is required", id="tool-without-name"),
        pytest.param([{"name": "t", "input_schema": "x"}], "resources[0].tools[0].input_schema must be an object"),
    ],
)
def test_a_malformed_mcp_tool_list_is_refused_by_name(tools: Any, message: str) -> None:
    raw = body(mcp_server("github", "search"))
    raw["resources"][0]["tools"] = tools
    refused(raw, message)


@pytest.mark.parametrize("item", [None, "instruction_file:/w/AGENTS.md", ["kind", "skill"], 7])
def test_a_nil_or_non_object_resource_is_refused(item: Any) -> None:
    raw = copy.deepcopy(VALID)
    raw["resources"].append(item)
    refused(raw, "resources[1] must be an object")


@pytest.mark.parametrize("raw", [None, [], "push", 1])
def test_a_push_that_is_not_an_object_is_refused(raw: Any) -> None:
    refused(raw, "body must be an object")


def test_duplicate_sources_are_refused() -> None:
    raw = copy.deepcopy(VALID)
    raw["resources"].append(instruction("/w/AGENTS.md", "again").to_dict())
    refused(rehash(raw), 'resources[1]: duplicate source "instruction_file:/w/AGENTS.md"')


def test_the_same_path_under_two_kinds_is_two_sources() -> None:
    other = Resource(Kind.MCP_CONFIG, "/w/AGENTS.md", Scope.PROJECT, Status.INVALID, error="not JSON")
    assert len(validated(PushRequest, body(AGENTS, other)).resources) == 2


def test_an_aggregate_hash_that_does_not_match_the_resources_is_refused() -> None:
    raw = {**VALID, "aggregate_hash": aggregate_hash([AGENTS_V2])}
    refused(raw, "aggregate_hash")


def test_the_aggregate_hash_is_recomputed_not_trusted_for_content_changes() -> None:
    raw = copy.deepcopy(VALID)
    raw["resources"][0]["content_hash"] = AGENTS_V2.content_hash  # content changed, pushed hash kept
    refused(raw, "does not match the resources")


@pytest.mark.parametrize(
    ("edit", "check"),
    [
        pytest.param(top("version", MAX_INT64), lambda p: p.version == MAX_INT64, id="version-2^63-1"),
        pytest.param(top("version", 1), lambda p: p.version == 1, id="version-1"),
        pytest.param(
            first("size_bytes", MAX_INT64), lambda p: p.checked_resources[0].size_bytes == MAX_INT64, id="size"
        ),
        pytest.param(moved(path_of(1024)), lambda p: len(p.checked_resources[0].path) == 1024, id="path-1024"),
        pytest.param(
            first("source", path_of(1024)), lambda p: len(p.checked_resources[0].source) == 1024, id="source-1024"
        ),
        pytest.param(first("error", "e" * 4096), lambda p: len(p.checked_resources[0].error) == 4096, id="error-4096"),
        pytest.param(top("error", "é" * 2048), lambda p: len(p.error) == 2048, id="snapshot-error-4096-bytes"),
        pytest.param(
            first("content_hash", ""), lambda p: p.checked_resources[0].content_hash == "", id="no-content-hash"
        ),
        pytest.param(top("resources", []), lambda p: p.checked_resources == (), id="no-resources"),
    ],
)
def test_values_at_the_limits_pass(edit: Callable[[dict[str, Any]], object], check: Callable[[Any], bool]) -> None:
    assert check(validated(PushRequest, edited(edit)))


# --- the version gate --------------------------------------------------------------


@dataclass
class World:
    """One user, one workspace ``ws`` with one agent ``dev``; pushes and chats on top."""

    db: Database
    user: UserPrincipal
    agent_id: str

    def push(self, raw: dict[str, Any], *, minutes: int = 0, agent_id: str | None = None) -> ingest.Outcome:
        checked = validated(PushRequest, raw)
        return self.db.write(lambda s: ingest.ingest(s, agent_id or self.agent_id, checked, now=at(minutes), box=BOX))

    def chat(self, status: str = "pending", *, workspace: str = "ws", archived: bool = False) -> str:
        def work(session: sa.orm.Session) -> str:
            new = chats.NewChat(workspace=workspace, status=status)
            chat = chats.create(session, self.user, new, suffix=DEFAULT_SUFFIX, now=T0)
            if archived:
                chats.update(session, self.user, chat.id, status=None, archived=True, title=None, now=T0)
            return chat.id

        return self.db.write(work)

    def row(self, chat_id: str) -> Chat:
        with self.db.read() as session:
            chat = session.get(Chat, chat_id)
            assert chat is not None
            return chat

    def pinned(self, chat_id: str) -> dict[str, str | None]:
        with self.db.read() as session:
            return {r.path: r.content for r in rows.chat_resources(session, chat_id)}

    def stored(self, agent_id: str | None = None) -> dict[str, str | None]:
        with self.db.read() as session:
            return {r.path: r.content for r in rows.snapshot_resources(session, agent_id or self.agent_id)}

    def snapshot(self) -> Snapshot | None:
        with self.db.read() as session:
            return session.get(Snapshot, self.agent_id)

    def seen_at(self) -> tuple[bool, dt.datetime | None]:
        with self.db.read() as session:
            agent = session.get(Agent, self.agent_id)
            assert agent is not None
            return agent.online, agent.last_seen_at

    def silent(self, minutes: int) -> None:
        """The agent last heard from ``minutes`` before the clock (PostgreSQL: the database's; SQLite: ``at(0)``)."""
        since: Any = sa.func.now() if self.db.dialect == "postgresql" else at(minutes)
        update = sa.update(Agent).where(Agent.id == self.agent_id)
        self.db.write(lambda s: s.execute(update.values(last_seen_at=since - dt.timedelta(minutes=minutes))))

    def pushed_at(self, raw: dict[str, Any], *, minutes: int) -> tuple[ingest.Outcome, bool]:
        """Push at ``minutes``; and whether the agent's last-seen time is now that push's: the time it was given on
        SQLite (the one server's clock), the database's clock during the push on PostgreSQL (which replicas share)."""
        clock = sa.select(sa.func.now())
        before = self.db.read_rows(lambda c: c.execute(clock).scalar()) if self.db.dialect == "postgresql" else None
        outcome = self.push(raw, minutes=minutes)
        _, seen = self.seen_at()
        if before is None:
            return outcome, seen == at(minutes)
        after = self.db.read_rows(lambda c: c.execute(clock).scalar())
        return outcome, seen is not None and after is not None and before <= seen <= after


@pytest.fixture
def world(db: Database) -> World:
    user = db.write(lambda s: identity.create_user(s, "alice"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    return World(db, UserPrincipal("user", user.id, "alice", False), agent.id)


def test_the_first_push_is_accepted_whatever_its_version(world: World) -> None:
    outcome = world.push(body(AGENTS, version=41))

    assert (outcome.accepted, outcome.version, outcome.stored_version) == (True, 41, 41)
    snapshot = world.snapshot()
    assert snapshot is not None
    assert (snapshot.version, snapshot.aggregate_hash) == (41, VALID["aggregate_hash"])
    assert world.stored() == {"/w/AGENTS.md": "Use tabs.\n"}


def test_a_higher_version_is_accepted(world: World) -> None:
    world.push(body(AGENTS, version=5))

    outcome = world.push(body(AGENTS_V2, version=6))

    assert outcome.accepted and outcome.stored_version == 6
    assert world.stored() == {"/w/AGENTS.md": "Use spaces.\n"}


@pytest.mark.parametrize("version", [5, 4, 1])
def test_an_equal_or_lower_version_is_not_accepted_and_nothing_is_written(world: World, version: int) -> None:
    world.push(body(AGENTS, version=5), minutes=0)
    pinned = world.chat()
    before = world.snapshot()

    outcome = world.push(body(AGENTS_V2, version=version, error="late"), minutes=5)

    assert (outcome.accepted, outcome.version, outcome.stored_version) == (False, version, 5)
    assert [e.kind for e in outcome.events] == []
    after = world.snapshot()
    assert before is not None and after is not None
    assert (after.version, after.aggregate_hash, after.error, after.received_at) == (
        5,
        before.aggregate_hash,
        None,
        before.received_at,
    )
    assert world.stored() == {"/w/AGENTS.md": "Use tabs.\n"}
    assert world.row(pinned).dirty_since is None


def test_an_initial_push_with_a_lower_version_is_accepted(world: World) -> None:
    world.push(body(AGENTS, version=90))

    outcome = world.push(body(AGENTS_V2, version=1, initial=True))  # the agent restarted: versions start again

    assert outcome.accepted and outcome.stored_version == 1
    assert world.stored() == {"/w/AGENTS.md": "Use spaces.\n"}
    assert world.push(body(AGENTS, version=2)).accepted  # and counts up from there


def test_a_refused_push_still_records_that_the_agent_is_alive(world: World) -> None:
    world.push(body(AGENTS, version=5), minutes=0)
    world.silent(minutes=7)

    outcome, seen_then = world.pushed_at(body(AGENTS, version=3), minutes=7)

    assert not outcome.accepted and seen_then and world.seen_at()[0] is True


# --- storage -----------------------------------------------------------------------


def test_rows_are_upserted_and_rows_no_longer_pushed_are_deleted(world: World) -> None:
    world.push(body(AGENTS, instruction("/w/a/AGENTS.md", "a"), instruction("/w/b/AGENTS.md", "b"), version=1))

    world.push(body(AGENTS_V2, instruction("/w/b/AGENTS.md", "b"), instruction("/w/c/AGENTS.md", "c"), version=2))

    assert world.stored() == {"/w/AGENTS.md": "Use spaces.\n", "/w/b/AGENTS.md": "b", "/w/c/AGENTS.md": "c"}


def test_an_empty_push_deletes_every_row(world: World) -> None:
    world.push(body(AGENTS, skill("deploy"), version=1))

    world.push(body(version=2))

    assert world.stored() == {}
    snapshot = world.snapshot()
    assert snapshot is not None and snapshot.aggregate_hash == aggregate_hash([])


def test_stored_rows_read_back_as_the_pushed_resources(tmp_path: Path, home: Path, world: World) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "AGENTS.md": "Be brief.\n",
            "empty/AGENTS.md": "",
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship it"),
            ".agents/skills/Bad_Name/SKILL.md": skill_md("Bad_Name", "nope"),
            ".mcp.json": '{"mcpServers": {"x": {"command": "true"}}}',
        },
    )
    snapshot = scan_tree(work, home=home).snapshot
    extra = (mcp_server("github", "search", "open_pr"),)

    world.push(rehash({**snapshot.to_dict(), "resources": [r.to_dict() for r in snapshot.resources + extra]}))

    with world.db.read() as session:
        stored = rows.snapshot_resources(session, world.agent_id)
    assert sorted(stored, key=lambda r: r.id) == sorted(snapshot.resources + extra, key=lambda r: r.id)


def test_a_claude_profile_push_keeps_each_resources_load_through_the_store(
    tmp_path: Path, home: Path, world: World
) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "CLAUDE.md": "Be brief.\n@notes.md\n@../outside.md\n",
            "notes.md": "notes\n",
            ".claude/rules/py.md": "---\npaths: src/**/*.py\n---\npython\n",
            "pkg/CLAUDE.md": "nested\n",
        },
    )
    snapshot = scan_tree(work, home=home, profile="claude").snapshot
    loads = {r.path: r.load for r in snapshot.resources if r.load is not None}
    assert {load.type for load in loads.values()} >= {"startup", "import", "path_scoped", "on_demand", "not_loaded"}

    world.push(rehash({**snapshot.to_dict(), "resources": [r.to_dict() for r in snapshot.resources]}))

    with world.db.read() as session:
        stored = rows.snapshot_resources(session, world.agent_id)
    assert {r.path: r.load for r in stored if r.load is not None} == loads


@pytest.mark.parametrize(
    ("load", "message"),
    [
        ("startup", "resources[0].load must be an object"),
        ({"type": "sometimes"}, "resources[0].load.type 'sometimes' is not one of"),
        ({"type": "import", "chain": "x"}, "resources[0].load.chain must be a list"),
        ({"type": "path_scoped", "globs": [1]}, "resources[0].load.globs[0] must be a string"),
        ({"type": "import", "importer": "x" * 5000}, "resources[0].load.importer is longer than"),
    ],
)
def test_a_malformed_load_is_refused_with_the_field_named(load: Any, message: str) -> None:
    refused(edited(first("load", load)), message)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("scope", "source"),
        ("source", "/w"),
        ("warnings", ["hidden text"]),
        ("doc_order", 3),
        ("size_bytes", 99),
        ("load", {"type": "import", "importer": "/w/CLAUDE.md", "chain": ["/w/CLAUDE.md"]}),
    ],
)
def test_a_change_of_any_stored_field_of_the_same_file_is_stored(world: World, field: str, value: Any) -> None:
    world.push(body(AGENTS, version=1))
    changed = Resource.from_dict({**AGENTS.to_dict(), field: value})

    world.push(body(changed, version=2))

    with world.db.read() as session:
        assert rows.snapshot_resources(session, world.agent_id) == [changed]


def test_a_push_records_the_agents_address_and_work_dir(world: World) -> None:
    token = "agent-token-in-the-clear"  # long enough never to turn up by chance in the sealed text
    raw = {**VALID, "agent": {"url": "http://10.0.0.5:4000", "api_token": token, "run_id": "r1", "os": "linux"}}

    outcome, seen_then = world.pushed_at(raw, minutes=3)

    assert [e.kind for e in outcome.events] == ["agent_online"] and seen_then
    with world.db.read() as session:
        agent = session.get(Agent, world.agent_id)
        assert agent is not None
        assert (agent.url, agent.run_id, agent.os, agent.work_dir) == ("http://10.0.0.5:4000", "r1", "linux", "/w")
        assert agent.sealed_secret is not None and token not in agent.sealed_secret  # sealed, never in the clear
        assert BOX.open(world.agent_id, agent.sealed_secret) == token
        assert agent.online is True
    assert [e.kind for e in world.push(body(AGENTS, version=2)).events] == []  # already online: no event


def test_concurrent_pushes_of_one_agent_end_at_the_highest_version(world: World) -> None:
    versions = list(range(2, 10))  # the first push of all, eight times at once
    start = threading.Barrier(len(versions))
    outcomes: dict[int, bool] = {}
    errors: list[BaseException] = []

    def push(version: int) -> None:
        text = f"version {version}"
        try:
            start.wait(timeout=30)
            outcomes[version] = world.push(body(instruction("/w/AGENTS.md", text), version=version)).accepted
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=push, args=(v,)) for v in versions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert outcomes[9] is True
    snapshot = world.snapshot()
    assert snapshot is not None and snapshot.version == 9
    assert world.stored() == {"/w/AGENTS.md": "version 9"}


# --- hydration ---------------------------------------------------------------------


def test_a_push_pins_the_agents_chats_that_have_no_pin_yet(world: World) -> None:
    early = world.chat()  # no snapshot yet: nothing to pin
    assert world.row(early).pinned_hash is None

    outcome = world.push(body(AGENTS, skill("deploy"), version=3, error="one root unreadable"), minutes=2)

    chat = world.row(early)
    assert (chat.pinned_hash, chat.pinned_version, chat.pinned_error, chat.pinned_at, chat.dirty_since) == (
        aggregate_hash([AGENTS, skill("deploy")]),
        3,
        "one root unreadable",
        at(2),
        None,
    )
    assert world.pinned(early) == world.stored()
    pinned_events = [e for e in outcome.events if e.kind == "pinned"]
    assert [(e.topic, e.data["chat_id"], e.data["version"]) for e in pinned_events] == [(f"chat:{early}", early, 3)]


def test_hydration_skips_archived_chats(world: World) -> None:
    archived = world.chat(archived=True)

    outcome = world.push(body(AGENTS))

    assert world.row(archived).pinned_hash is None
    assert world.pinned(archived) == {}
    assert not [e for e in outcome.events if e.kind == "pinned"]


def test_hydration_pins_chats_of_every_status(world: World) -> None:
    ids = [world.chat(status) for status in wire.STATUSES]

    world.push(body(AGENTS))

    assert {world.row(c).pinned_hash for c in ids} == {VALID["aggregate_hash"]}


def test_hydration_leaves_pinned_chats_alone(world: World) -> None:
    world.push(body(AGENTS, version=1), minutes=0)
    pinned = world.chat()

    outcome = world.push(body(AGENTS, skill("deploy"), version=2), minutes=1)

    assert world.row(pinned).pinned_version == 1
    assert "pinned" not in [e.kind for e in outcome.events]


# --- marking chats out of date -----------------------------------------------------


@pytest.mark.parametrize("status", wire.STATUSES)
def test_only_active_chats_are_marked_out_of_date(world: World, status: str) -> None:
    world.push(body(AGENTS, version=1), minutes=0)
    chat = world.chat(status)

    outcome = world.push(body(AGENTS_V2, version=2), minutes=4)

    active = status in ("waiting", "running", "paused", "pending", "requires_action")
    assert world.row(chat).dirty_since == (at(4) if active else None)
    assert [e.kind for e in outcome.events if e.topic == f"chat:{chat}"] == (["out_of_date"] if active else [])


def test_archived_chats_are_not_marked_out_of_date(world: World) -> None:
    world.push(body(AGENTS, version=1))
    chat = world.chat(archived=True)  # pinned at creation, then archived

    outcome = world.push(body(AGENTS_V2, version=2))

    assert world.row(chat).pinned_hash == VALID["aggregate_hash"]
    assert world.row(chat).dirty_since is None
    assert not outcome.events


def test_the_out_of_date_event_names_both_hashes(world: World) -> None:
    world.push(body(AGENTS, version=1))
    chat = world.chat()

    outcome = world.push(body(AGENTS_V2, version=2), minutes=9)

    (event,) = [e for e in outcome.events if e.kind == "out_of_date"]
    assert event.topic == f"chat:{chat}"
    assert event.data == {
        "chat_id": chat,
        "pinned_hash": VALID["aggregate_hash"],
        "latest_hash": aggregate_hash([AGENTS_V2]),
        "dirty_since": at(9).isoformat(),
    }


def test_a_push_with_the_pinned_hash_does_not_mark_a_chat(world: World) -> None:
    world.push(body(AGENTS, version=1))
    chat = world.chat()

    outcome = world.push(body(AGENTS, version=2))

    assert world.row(chat).dirty_since is None
    assert not outcome.events


def test_dirty_since_is_set_once_and_later_pushes_do_not_move_it(world: World) -> None:
    world.push(body(AGENTS, version=1), minutes=0)
    chat = world.chat()
    world.push(body(AGENTS_V2, version=2), minutes=1)

    later = world.push(body(instruction("/w/AGENTS.md", "third"), version=3), minutes=2)

    assert world.row(chat).dirty_since == at(1)
    assert not [e for e in later.events if e.kind == "out_of_date"]


def test_a_dirty_chat_keeps_its_pinned_hash_and_resources(world: World) -> None:
    world.push(body(AGENTS, version=1))
    chat = world.chat()

    world.push(body(AGENTS_V2, skill("deploy"), version=2))

    assert world.row(chat).pinned_hash == VALID["aggregate_hash"]
    assert world.pinned(chat) == {"/w/AGENTS.md": "Use tabs.\n"}
    assert world.stored() != world.pinned(chat)


def test_an_mcp_only_change_never_marks_a_chat(world: World) -> None:
    world.push(body(AGENTS, mcp_server("github", "search"), version=1))
    chat = world.chat()

    outcome = world.push(body(AGENTS, mcp_server("github", "search", "open_pr"), mcp_server("jira", "find"), version=2))

    assert world.row(chat).dirty_since is None
    assert not [e for e in outcome.events if e.kind == "out_of_date"]
    with world.db.read() as session:
        servers = {r.path: [t.name for t in r.tools] for r in rows.snapshot_resources(session, world.agent_id)}
    assert servers == {"/w/AGENTS.md": [], "github": ["search", "open_pr"], "jira": ["find"]}


def test_pushing_the_pinned_hash_again_after_a_revert_marks_the_chat_up_to_date(world: World) -> None:
    # Our documented deviation (ingest.py): Coder keeps such a chat dirty until refreshed.
    world.push(body(AGENTS, version=1), minutes=0)
    chat = world.chat()
    world.push(body(AGENTS_V2, version=2), minutes=1)
    assert world.row(chat).dirty_since == at(1)

    outcome = world.push(body(AGENTS, version=3), minutes=2)

    assert world.row(chat).dirty_since is None
    assert [(e.kind, e.data) for e in outcome.events] == [
        ("up_to_date", {"chat_id": chat, "pinned_hash": VALID["aggregate_hash"]})
    ]


def test_a_reverted_chat_is_marked_again_by_the_next_change(world: World) -> None:
    world.push(body(AGENTS, version=1), minutes=0)
    chat = world.chat()
    world.push(body(AGENTS_V2, version=2), minutes=1)
    world.push(body(AGENTS, version=3), minutes=2)

    world.push(body(AGENTS_V2, version=4), minutes=3)

    assert world.row(chat).dirty_since == at(3)


def test_chats_of_another_agent_are_untouched(world: World) -> None:
    other = world.db.write(lambda s: identity.create_agent(s, "ws2", "dev"))
    world.push(body(AGENTS_V2, version=1), agent_id=other.id)
    theirs = world.chat(workspace="ws2")
    world.push(body(AGENTS, version=1))

    outcome = world.push(body(instruction("/w/AGENTS.md", "changed"), version=2))

    chat = world.row(theirs)
    assert (chat.agent_id, chat.pinned_hash, chat.dirty_since) == (other.id, aggregate_hash([AGENTS_V2]), None)
    assert world.pinned(theirs) == {"/w/AGENTS.md": "Use spaces.\n"}
    assert not [e for e in outcome.events if e.topic == f"chat:{theirs}"]
    assert world.stored(other.id) == {"/w/AGENTS.md": "Use spaces.\n"}


def test_a_chat_without_an_agent_is_unaffected_by_pushes(world: World) -> None:
    world.db.write(lambda s: identity.ensure_workspace(s, "empty"))
    lonely = world.chat(workspace="empty")

    outcome = world.push(body(AGENTS, version=1))
    world.push(body(AGENTS_V2, version=2))

    chat = world.row(lonely)
    assert (chat.agent_id, chat.pinned_hash, chat.dirty_since) == (None, None, None)
    assert world.pinned(lonely) == {}
    assert not [e for e in outcome.events if e.topic == f"chat:{lonely}"]


def test_a_hydrated_chat_is_not_also_marked_out_of_date(world: World) -> None:
    early = world.chat()

    outcome = world.push(body(AGENTS, version=1))

    assert world.row(early).dirty_since is None
    assert [e.kind for e in outcome.events if e.topic == f"chat:{early}"] == ["pinned"]


def test_the_marks_are_written_with_the_snapshot_in_one_transaction(world: World) -> None:
    world.push(body(AGENTS, version=1))
    chat = world.chat()
    checked = validated(PushRequest, body(AGENTS_V2, version=2))

    def push_then_fail(session: sa.orm.Session) -> None:
        ingest.ingest(session, world.agent_id, checked, now=at(1), box=BOX)
        raise RuntimeError("crash after the marks, before commit")

    with pytest.raises(RuntimeError):
        world.db.write(push_then_fail)

    snapshot = world.snapshot()
    assert snapshot is not None and snapshot.version == 1
    assert world.stored() == {"/w/AGENTS.md": "Use tabs.\n"}
    assert world.row(chat).dirty_since is None


def test_an_unchanged_resource_is_not_rewritten(world: World) -> None:
    world.push(body(AGENTS, skill("deploy"), mcp_server("github", "search"), version=1))
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()).lower())

    sa.event.listen(world.db.engine, "before_cursor_execute", record)
    try:
        world.push(body(AGENTS_V2, skill("deploy"), mcp_server("github", "search"), version=2))
    finally:
        sa.event.remove(world.db.engine, "before_cursor_execute", record)

    writes = [
        s for s in statements if s.startswith(("insert into snapshot_resources", "delete from snapshot_resources"))
    ]
    assert len(writes) == 1  # AGENTS.md rewritten in place; the skill and the server untouched
    assert world.stored()["/w/AGENTS.md"] == "Use spaces.\n"
