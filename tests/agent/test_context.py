"""The agent's context manager, after Coder's manager_test.go (coder.md 4.2, 6.2, 8.2).

Each test drives a real :class:`ContextAgent` over real files: its run loop in a task
group, its MCP manager entered, ``resync()`` where Coder's tests call ``Resync``.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agentcontext.agent.context import ContextAgent, SourceError, validate_source
from agentcontext.errors import NotFoundError
from agentcontext.resource import Kind, Status
from agentcontext.testing import make_workspace, skill_md
from tests.agent.conftest import (
    AUTO_TRUST,
    make_agent,
    of_kind,
    paths,
    ready,
    running,
    time_server_config,
    wait_snapshot,
    write_atomic,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def coder_agent(work: Path, home: Path, **settings: object) -> ContextAgent:
    return make_agent(work, home, profile="coder", settings=dict(settings))


async def test_manager_is_gated_until_set_ready(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "# Rules\n", "skills/": ""})
    (work / "CLAUDE.md").symlink_to(work / "AGENTS.md")
    (work / ".cursorrules").symlink_to(work / "AGENTS.md")
    (work / "skills" / "ghost").symlink_to(tmp_path / "missing")
    (work / "notes.md").symlink_to(tmp_path / "also-missing")
    agent = coder_agent(work, home)
    async with running(agent):
        await anyio.wait_all_tasks_blocked()
        before = agent.snapshot
        assert (before.version, before.resources, before.error, before.payload_bytes) == (0, (), None, 0)
        assert await agent.resync() is before
        assert agent.last is None  # gated: no scan happened at all
        agent.set_ready()
        snapshot = await wait_snapshot(agent, lambda s: s.version >= 1)
        assert snapshot.version == 1
        [instruction] = of_kind(snapshot, Kind.INSTRUCTION_FILE)
        assert (instruction.path, instruction.status, instruction.content) == (
            str(work / "AGENTS.md"),
            Status.OK,
            "# Rules\n",
        )


async def test_manager_set_ready_is_idempotent(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    agent = make_agent(work, home)
    async with running(agent):
        first = await ready(agent)
        for _ in range(3):
            agent.set_ready()
            assert (await agent.resync()).version == 1
        assert agent.snapshot is first


async def test_manager_resync_returns_latest_snapshot(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "old rules"})
    agent = make_agent(work, home)
    async with running(agent):
        first = await ready(agent)
        write_atomic(work / "AGENTS.md", "new rules")
        latest = await agent.resync()
        assert latest is agent.snapshot
        assert latest.version == first.version + 1
        assert latest.aggregate_hash != first.aggregate_hash
        resource = latest.find(str(work / "AGENTS.md"))
        assert resource is not None and resource.content == "new rules"


async def test_manager_resync_canceled_keeps_live_snapshot(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "old rules"})
    agent = make_agent(work, home)
    async with running(agent):
        first = await ready(agent)
        write_atomic(work / "AGENTS.md", "new rules")
        with anyio.CancelScope() as scope:
            scope.cancel()
            await agent.resync()
        assert scope.cancelled_caught
        assert agent.snapshot is first
        assert (await agent.resync()).version == 2


async def test_manager_initial_sources_seeded(tmp_path: Path, home: Path) -> None:
    notes = make_workspace(home / "notes", {"AGENTS.md": "notes"})
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "work"})
    agent = coder_agent(work, home, sources=[str(notes)])
    async with running(agent):
        snapshot = await ready(agent)
        assert agent.sources == [str(notes)]
        resource = snapshot.find(str(notes / "AGENTS.md"))
        assert resource is not None
        assert (resource.source, resource.status) == (str(notes), Status.OK)


async def test_manager_add_source_triggers_resolve(tmp_path: Path, home: Path) -> None:
    notes = make_workspace(home / "notes", {"AGENTS.md": "notes", "skills/lint/SKILL.md": skill_md("lint")})
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "work"})
    agent = coder_agent(work, home)
    async with running(agent):
        first = await ready(agent)
        assert first.find(str(notes / "AGENTS.md")) is None
        with agent.subscription() as events:
            assert agent.add_source(str(notes)) == str(notes)
            with anyio.fail_after(20):
                event = await events.receive()
                while event.kind != "snapshot":
                    event = await events.receive()
        snapshot = agent.snapshot
        assert event.data["version"] == snapshot.version > 1
        for path in (notes / "AGENTS.md", notes / "skills" / "lint" / "SKILL.md"):
            resource = snapshot.find(str(path))
            assert resource is not None, path
            assert (resource.source, resource.status) == (str(notes), Status.OK)


async def test_manager_add_source_accepts_home_shorthand(tmp_path: Path, home: Path) -> None:
    make_workspace(home / "notes", {"AGENTS.md": "notes"})
    agent = coder_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home)
    assert agent.add_source("  ~/notes  ") == str(home / "notes")
    assert agent.sources == [str(home / "notes")]


async def test_manager_add_source_rejects_outside_allowed_roots(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "work"})
    (home / "etc-link").symlink_to("/etc")
    agent = coder_agent(work, home)
    traversal = f"{home}/notes/../../secrets"
    refused = {
        "": "path is empty",
        "   ": "path is empty",
        "x": 'path "x" is not absolute',
        "notes/AGENTS.md": 'path "notes/AGENTS.md" is not absolute',
        "~someone/notes": 'path "~someone/notes" is not absolute',
        traversal: f'path "{traversal}" contains parent traversal segments',
        "/etc": 'path "/etc" is not inside any allowed root',
        str(tmp_path): f'path "{tmp_path}" is not inside any allowed root',
        str(home / "etc-link"): f'path "{home / "etc-link"}" is not inside any allowed root',
    }
    async with running(agent):
        first = await ready(agent)
        for path, message in refused.items():
            with pytest.raises(SourceError) as caught:
                agent.add_source(path)
            assert str(caught.value) == message, path
        assert agent.sources == []
        assert await agent.resync() is first


def test_validate_source_denies_everything_when_no_allowed_root_exists(tmp_path: Path) -> None:
    target = make_workspace(tmp_path / "notes", {"AGENTS.md": "notes"})
    with pytest.raises(SourceError, match="is not inside any allowed root"):
        validate_source(str(target), home=str(tmp_path / "nohome"), allowed=[str(tmp_path / "missing")])
    assert validate_source(str(target), home=str(tmp_path), allowed=[str(tmp_path / "missing"), str(tmp_path)]) == str(
        target
    )


async def test_manager_add_source_is_idempotent(tmp_path: Path, home: Path) -> None:
    notes = make_workspace(home / "notes", {"AGENTS.md": "notes"})
    agent = coder_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home)
    async with running(agent):
        await ready(agent)
        assert agent.add_source(str(notes)) == str(notes)
        added = await wait_snapshot(agent, lambda s: s.find(str(notes / "AGENTS.md")) is not None)
        for again in (str(notes), f"{notes}/", f"{notes}/./", "~/notes"):
            assert agent.add_source(again) == str(notes)
        assert agent.sources == [str(notes)]
        assert await agent.resync() is added


async def test_manager_remove_source(tmp_path: Path, home: Path) -> None:
    notes = make_workspace(home / "notes", {"AGENTS.md": "notes"})
    agent = coder_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home)
    async with running(agent):
        await ready(agent)
        agent.add_source(str(notes))
        added = await wait_snapshot(agent, lambda s: s.find(str(notes / "AGENTS.md")) is not None)
        agent.remove_source(str(notes))
        assert agent.sources == []
        removed = await wait_snapshot(agent, lambda s: s.find(str(notes / "AGENTS.md")) is None)
        assert removed.version > added.version
        with pytest.raises(NotFoundError) as caught:
            agent.remove_source(str(notes))
        assert str(caught.value) == f'No source registered for path "{notes}".'


async def test_manager_has_source_by_original_or_canonical_path(tmp_path: Path, home: Path) -> None:
    real = make_workspace(home / "real-notes", {"AGENTS.md": "notes"})
    link = home / "notes"
    link.symlink_to(real)
    agent = coder_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "work"}), home)
    assert agent.add_source(str(link)) == str(link)  # the identity is lexical: the link, not its target
    for lookup in (str(link), f"{link}/", str(real), "~/notes"):
        assert agent.find_source(lookup) == str(link), lookup
    for unknown in (str(home), str(home / "other"), ""):
        with pytest.raises(NotFoundError):
            agent.find_source(unknown)
    agent.remove_source(str(real))
    assert agent.sources == []


async def test_manager_subscribe_broadcast_on_change(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "v1"})
    agent = make_agent(work, home)
    async with running(agent):
        first = await ready(agent)
        with agent.subscription() as one, agent.subscription() as two:
            write_atomic(work / "AGENTS.md", "v2")
            latest = await agent.resync()
            for events in (one, two):
                with anyio.fail_after(5):
                    event = await events.receive()
                    while event.kind != "snapshot":
                        event = await events.receive()
                assert event.data == {
                    "version": latest.version,
                    "aggregate_hash": latest.aggregate_hash,
                    "error": None,
                }
        assert latest.version == first.version + 1
        assert latest.aggregate_hash != first.aggregate_hash


async def test_manager_publishes_only_on_change(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    agent = make_agent(work, home)
    async with running(agent):
        with agent.subscription() as events:
            agent.set_ready()
            seen: list[str] = []
            with anyio.fail_after(20):
                while "mcp" not in seen:  # the (empty) MCP catalog settles once, after the first scan
                    seen.append((await events.receive()).kind)
            assert seen.count("snapshot") == 1
            first = agent.snapshot
            for _ in range(3):
                assert await agent.resync() is first
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(anyio.WouldBlock):
                events.receive_nowait()
        assert first.version == 1


async def test_manager_mcp_only_change_keeps_aggregate_hash(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules", ".mcp.json": time_server_config()})
    agent = make_agent(work, home, settings=AUTO_TRUST)
    async with running(agent):
        agent.set_ready()
        first = await wait_snapshot(agent, lambda s: s.version >= 1)
        assert of_kind(first, Kind.MCP_SERVER) == []  # the server connects after the first scan
        connected = await wait_snapshot(
            agent, lambda s: any(r.status is Status.OK for r in of_kind(s, Kind.MCP_SERVER)), timeout=30
        )
        [server] = of_kind(connected, Kind.MCP_SERVER)
        assert server.path == "time"
        assert "get_current_time" in [tool.name for tool in server.tools]
        assert connected.version > first.version
        assert connected.aggregate_hash == first.aggregate_hash
        assert paths(connected, Kind.INSTRUCTION_FILE) == paths(first, Kind.INSTRUCTION_FILE)


async def test_manager_working_dir_scanned_shallow(tmp_path: Path, home: Path) -> None:
    repo = make_workspace(
        tmp_path / "repo",
        {".git/": "", "AGENTS.md": "repo root", "work/AGENTS.md": "work", "work/sub/AGENTS.md": "sub"},
    )
    agent = coder_agent(repo / "work", home)
    async with running(agent):
        snapshot = await ready(agent)
        assert paths(snapshot, Kind.INSTRUCTION_FILE) == [str(repo / "work" / "AGENTS.md")]


async def test_manager_watch_dirs_cover_the_work_dir_and_missing_containers(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules", ".agents/skills/lint/SKILL.md": skill_md("lint")})
    agent = coder_agent(work, home)
    assert agent.watch_dirs() == []
    async with running(agent):
        await ready(agent)
        watched = agent.watch_dirs()
    assert str(work) in watched
    assert str(work / ".agents" / "skills") in watched
    assert str(work / ".agents" / "skills" / "lint") in watched
    assert all(os.path.isdir(d) for d in watched)
