"""The agent's watch of its chats' discovered files (``agent/discovered.py``, issue 34 item 3).

What an on-demand answer depended on is watched, at most ``agent.discovered_watch_cap``
folders (the least recently asked dropped, and the heartbeats then say the watch is not
whole); a relevant change is told at once by a heartbeat, and again by each heartbeat until
the control plane answers one. The control plane here is a real HTTP server recording the
heartbeats.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from watchfiles import Change

from agentcontext.agent.discovered import DiscoveredWatch
from agentcontext.agent.push import HEARTBEAT_PATH, PUSH_PATH, Pusher
from agentcontext.instructions.applied import Interest
from agentcontext.testing import make_workspace
from tests.agent.conftest import make_agent, running, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def test_past_the_cap_the_least_recently_asked_folders_are_dropped_and_the_watch_is_not_whole() -> None:
    watch = DiscoveredWatch(cap=2)
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md"})), Interest("/w/b", frozenset({"AGENTS.md"}))])
    whole = watch.report()[0].watching
    watch.learn([Interest("/w/a", frozenset({"CLAUDE.md"}))])  # asked again: the most recent now
    watch.learn([Interest("/w/c", None)])
    assert whole is True
    assert watch.folders() == ["/w/a", "/w/c"]
    assert watch.report()[0].watching is False


def test_a_change_counts_only_for_the_names_that_matter_in_its_folder() -> None:
    watch = DiscoveredWatch(cap=10)
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md", "deep"})), Interest("/w/a/.claude/rules", None)])
    watch.learn([Interest("/w/a", frozenset({"CLAUDE.md"}))])
    assert watch.relevant(Change.modified, "/w/a/AGENTS.md")
    assert watch.relevant(Change.added, "/w/a/CLAUDE.md")
    assert watch.relevant(Change.deleted, "/w/a/deep")
    assert watch.relevant(Change.added, "/w/a/.claude/rules/anything.md")
    assert not watch.relevant(Change.modified, "/w/a/api.py")
    assert not watch.relevant(Change.added, "/w/b/AGENTS.md")


@dataclass
class Beats:
    """Records each heartbeat; answers 503 to those numbered in ``refuse`` (from 1)."""

    refuse: frozenset[int] = frozenset()
    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    _arrived: anyio.Event = field(default_factory=anyio.Event)

    async def beat(self, request: Request) -> Response:
        self.received.append(await request.json())
        self._arrived.set()
        return Response(status_code=503 if len(self.received) in self.refuse else 204)

    async def push(self, request: Request) -> Response:
        version = (await request.json())["version"]
        return JSONResponse({"accepted": True, "version": version, "stored_version": version})

    async def count(self, count: int, timeout: float = 10) -> list[dict[str, Any]]:
        with anyio.fail_after(timeout):
            while len(self.received) < count:
                await self._arrived.wait()
                self._arrived = anyio.Event()
        return self.received


@contextlib.asynccontextmanager
async def beats(refuse: frozenset[int] = frozenset()) -> AsyncIterator[Beats]:
    plane = Beats(refuse)
    routes = [Route(HEARTBEAT_PATH, plane.beat, methods=["POST"]), Route(PUSH_PATH, plane.push, methods=["POST"])]
    async with serving(Starlette(routes=routes)) as url:
        plane.url = url
        yield plane


async def test_a_change_is_told_at_once_and_by_every_heartbeat_until_one_is_answered(
    tmp_path: Path, home: Path
) -> None:
    agent = make_agent(make_workspace(tmp_path / "work", {"AGENTS.md": "root"}), home)
    async with beats(refuse=frozenset({2})) as plane, running(agent), anyio.create_task_group() as group:
        group.start_soon(Pusher(plane.url, "t", heartbeat=1.0).run, agent)
        first = (await plane.count(1))[0]  # a plain beat: nothing changed yet
        started = anyio.current_time()
        agent.discovered.changed()
        told = (await plane.count(2))[1]  # at once, not a beat later; answered 503
        took = anyio.current_time() - started
        again, after = (await plane.count(4))[2:4]  # the next beat tells it again (answered); then it is told
        group.cancel_scope.cancel()
    assert first["discovered"] == {"watching": True, "changed": False}
    assert told["discovered"] == {"watching": True, "changed": True} and took < 0.5
    assert again["discovered"]["changed"] is True
    assert after["discovered"]["changed"] is False
