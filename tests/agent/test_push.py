"""Pushing snapshots to the control plane, after Coder's push_test.go (coder.md 4.4, 8.3).

The control plane is a real HTTP server: a small Starlette app served by uvicorn on a
loopback port, recording every request and answering from a script.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agentcontext import storable
from agentcontext.agent.context import ContextAgent
from agentcontext.agent.push import HEARTBEAT_PATH, PUSH_PATH, Pusher
from agentcontext.resource import Scope
from agentcontext.snapshot import Snapshot
from agentcontext.testing import make_workspace, skill_md
from agentcontext.wire.sync import PushRequest
from tests.agent.conftest import make_agent, ready, running, serving, write_atomic
from tests.helpers import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOKEN = "agent-token-5678"
QUIET = 0.3  # seconds in which something must not happen
Answer = tuple[int, dict[str, Any] | str]
MINE = skill_md("mine", "A skill of my own")


@dataclass
class Received:
    body: dict[str, Any]
    authorization: str | None


@dataclass
class ControlPlane:
    """Records each push; answers from ``script``, then accepts (``PushResponse``: accepted, version, stored).
    Records each heartbeat too, answering 503 to those numbered (from 1) in ``refuse_beats``."""

    script: list[Answer]
    url: str = ""
    received: list[Received] = field(default_factory=list)
    beats: list[dict[str, Any]] = field(default_factory=list)
    refuse_beats: frozenset[int] = frozenset()
    before_watch: bool = False  # a control plane from before the heartbeat's ``discovered`` (422 for it)
    _arrived: anyio.Event = field(default_factory=anyio.Event)

    async def push(self, request: Request) -> Response:
        pushed = await request.json()
        self.received.append(Received(pushed, request.headers.get("authorization")))
        self._arrived.set()
        accepted = {"accepted": True, "version": pushed["version"], "stored_version": pushed["version"]}
        status, body = self.script.pop(0) if self.script else (200, accepted)
        if isinstance(body, str):
            return PlainTextResponse(body, status_code=status)
        return JSONResponse(body, status_code=status)

    async def beat(self, request: Request) -> Response:
        self.beats.append(await request.json())
        self._arrived.set()
        if self.before_watch and "discovered" in self.beats[-1]:
            return JSONResponse({"message": "discovered is not a field of this body"}, status_code=422)
        return Response(status_code=503 if len(self.beats) in self.refuse_beats else 204)

    async def requests(self, count: int, timeout: float = 15) -> list[Received]:
        """The pushes so far, once there are at least ``count``."""
        await self._until(lambda: len(self.received) >= count, timeout)
        return self.received

    async def heartbeats(self, count: int, timeout: float = 15) -> list[dict[str, Any]]:
        """The heartbeats so far, once there are at least ``count``."""
        await self._until(lambda: len(self.beats) >= count, timeout)
        return self.beats

    async def _until(self, done: Callable[[], bool], timeout: float) -> None:
        with anyio.fail_after(timeout):
            while not done():
                await self._arrived.wait()
                self._arrived = anyio.Event()


@contextlib.asynccontextmanager
async def control_plane(
    script: Sequence[Answer] = (),
    port: int | None = None,
    *,
    refuse_beats: frozenset[int] = frozenset(),
    before_watch: bool = False,
) -> AsyncIterator[ControlPlane]:
    """The control plane, listening before the block starts (on ``port`` when given)."""
    plane = ControlPlane(list(script), refuse_beats=refuse_beats, before_watch=before_watch)
    routes = [Route(PUSH_PATH, plane.push, methods=["POST"]), Route(HEARTBEAT_PATH, plane.beat, methods=["POST"])]
    async with serving(Starlette(routes=routes), port) as url:
        plane.url = url
        yield plane


@contextlib.asynccontextmanager
async def pushing(agent: ContextAgent, pusher: Pusher) -> AsyncIterator[None]:
    async with running(agent), anyio.create_task_group() as group:
        group.start_soon(pusher.run, agent)
        yield
        group.cancel_scope.cancel()


async def outcomes(pusher: Pusher, count: int, timeout: float = 15) -> list[tuple[int, bool, str]]:
    """The pusher's outcomes, once it has recorded ``count`` of them."""
    with anyio.fail_after(timeout):
        while len(pusher.pushed) < count:
            await anyio.sleep(0.005)
    return list(pusher.pushed)


def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "work", {"AGENTS.md": "v1"})


async def change(agent: ContextAgent, work: Path, text: str) -> Snapshot:
    write_atomic(work / "AGENTS.md", text)
    return await agent.resync()


def wire(snapshot: Snapshot, *, initial: bool) -> dict[str, Any]:
    """What the control plane should receive for ``snapshot``: its JSON plus ``initial`` and ``agent``."""
    body: dict[str, Any] = json.loads(json.dumps({**snapshot.to_dict(), "initial": initial, "agent": {}}))
    return body


async def test_run_push_first_push_is_initial(tmp_path: Path, home: Path) -> None:
    agent = make_agent(workspace(tmp_path), home)
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await anyio.sleep(QUIET)
            assert plane.received == []  # nothing is pushed while the version is 0
            snapshot = await ready(agent)
            [first] = await plane.requests(1)
            assert await outcomes(pusher, 1) == [(1, True, "accepted")]
    assert (first.body["version"], first.body["initial"]) == (1, True)
    assert first.body == wire(snapshot, initial=True)
    assert first.authorization == f"Bearer {TOKEN}"


async def test_run_push_subsequent_push_on_change(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            await plane.requests(1)
            second = await change(agent, work, "v2")
            received = await plane.requests(2)
            assert await outcomes(pusher, 2) == [(1, True, "accepted"), (2, False, "accepted")]
    assert [(r.body["version"], r.body["initial"]) for r in received] == [(1, True), (2, False)]
    assert received[1].body == wire(second, initial=False)
    assert received[1].body["aggregate_hash"] != received[0].body["aggregate_hash"]


@pytest.mark.parametrize("status", [501, 410])
async def test_run_push_stops_on_unimplemented(tmp_path: Path, home: Path, status: int) -> None:
    agent = make_agent(workspace(tmp_path), home)
    async with control_plane([(status, {"message": "Context sync is disabled."})]) as plane, running(agent):
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        await ready(agent)
        with anyio.fail_after(15):
            await pusher.run(agent)  # returns: the control plane turned sync off
        assert len(plane.received) == 1
    assert pusher.stopped_reason == "Context sync is disabled."
    assert pusher.pushed == [(1, True, "disabled")]


async def test_run_push_stops_on_unimplemented_without_a_message(tmp_path: Path, home: Path) -> None:
    agent = make_agent(workspace(tmp_path), home)
    async with control_plane([(501, "")]) as plane, running(agent):
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        await ready(agent)
        with anyio.fail_after(15):
            await pusher.run(agent)
    assert pusher.stopped_reason == "context sync is disabled on the control plane"


@pytest.mark.parametrize("status", [503, 500, 429])
async def test_run_push_retries_transient_error(tmp_path: Path, home: Path, status: int) -> None:
    agent = make_agent(workspace(tmp_path), home)
    async with control_plane([(status, {"message": "busy"})]) as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            snapshot = await ready(agent)
            received = await plane.requests(2)
            assert await outcomes(pusher, 1) == [(1, True, "accepted")]
    assert [r.body for r in received] == [wire(snapshot, initial=True)] * 2


async def test_run_push_retries_until_the_control_plane_listens(tmp_path: Path, home: Path) -> None:
    agent = make_agent(workspace(tmp_path), home)
    port = free_port()
    pusher = Pusher(f"http://127.0.0.1:{port}", TOKEN, initial_backoff=0.01, max_backoff=0.05)
    async with pushing(agent, pusher):
        await ready(agent)
        await anyio.sleep(QUIET)
        assert pusher.pushed == []  # connection refused: retrying
        async with control_plane(port=port) as plane:
            [first] = await plane.requests(1)
            assert await outcomes(pusher, 1) == [(1, True, "accepted")]
    assert (first.body["version"], first.body["initial"]) == (1, True)


async def test_run_push_accepted_false_is_not_retried(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane([(200, {"accepted": False, "version": 1, "stored_version": 5})]) as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            await plane.requests(1)
            await change(agent, work, "v2")
            received = await plane.requests(2)
            assert await outcomes(pusher, 2) == [(1, True, "rejected"), (2, False, "accepted")]
    # had version 1 been retried, the second request would carry it again
    assert [(r.body["version"], r.body["initial"]) for r in received] == [(1, True), (2, False)]


async def test_run_push_refused_request_is_not_retried_and_the_next_change_is_pushed(
    tmp_path: Path, home: Path
) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane([(400, {"message": "bad snapshot"})]) as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            await plane.requests(1)
            await change(agent, work, "v2")
            received = await plane.requests(2)
            assert await outcomes(pusher, 2) == [(1, True, "refused"), (2, True, "accepted")]
    # a refused push was never taken: the next one still introduces this process
    assert [(r.body["version"], r.body["initial"]) for r in received] == [(1, True), (2, True)]


async def test_a_push_refused_for_its_token_says_how_to_get_one_that_works(
    tmp_path: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane([(401, {"message": "invalid token"})]) as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            assert await outcomes(pusher, 1) == [(1, True, "refused")]
    [refused] = [r.getMessage() for r in caplog.records if "context push refused" in r.getMessage()]
    assert refused.startswith("context push refused (401): invalid token; ")
    assert "--token-file" in refused and "workspace-agents rotate" in refused


async def test_a_push_that_times_out_says_so_rather_than_nothing(
    tmp_path: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx's timeouts carry no text: the log names the kind of failure instead of an empty reason."""
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # takes the connection, never answers
    with listener:
        pusher = Pusher(f"http://127.0.0.1:{listener.getsockname()[1]}", TOKEN, initial_backoff=0.01, timeout=0.2)
        async with running(agent), anyio.create_task_group() as group:
            group.start_soon(pusher.run, agent)
            await ready(agent)
            with anyio.fail_after(10):
                while not any("context push failed" in r.getMessage() for r in caplog.records):
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()
    failed = next(r.getMessage() for r in caplog.records if "context push failed" in r.getMessage())
    assert failed.startswith("context push failed (ReadTimeout); retrying in ")


@pytest.mark.parametrize("answer", ["not json", "[]", ""])
async def test_run_push_survives_an_answer_that_is_not_a_json_object(tmp_path: Path, home: Path, answer: str) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane([(200, answer)]) as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            await plane.requests(1)
            await change(agent, work, "v2")
            received = await plane.requests(2)
            assert await outcomes(pusher, 2) == [(1, True, "rejected"), (2, False, "accepted")]
    assert [r.body["version"] for r in received] == [1, 2]


async def test_run_push_retry_sends_the_newest_snapshot_not_the_one_that_failed(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    async with control_plane([(503, {"message": "busy"})]) as plane:
        # a long first backoff: the change lands while the pusher waits to retry version 1
        pusher = Pusher(plane.url, TOKEN, initial_backoff=1.0)
        async with pushing(agent, pusher):
            await ready(agent)
            await plane.requests(1)
            newer = await change(agent, work, "v2")
            received = await plane.requests(2)
            assert await outcomes(pusher, 1) == [(2, True, "accepted")]
    assert [(r.body["version"], r.body["initial"]) for r in received] == [(1, True), (2, True)]
    assert received[1].body == wire(newer, initial=True)


async def test_a_snapshot_that_breaks_the_contract_is_not_sent_and_the_next_change_is(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pusher builds its body from the definition the control plane validates against: a push the control
    plane would refuse (a snapshot error past its 4,096 bytes, here a watcher's as it was stored before
    ``storable.said`` cut it) is never sent; the next snapshot goes out as usual."""
    work = workspace(tmp_path)
    agent = make_agent(work, home)
    agent.watch_error = "the watcher failed: " + "x" * 5000
    monkeypatch.setattr(storable, "said", lambda text: text)
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            assert await outcomes(pusher, 1) == [(1, True, "refused")]
            assert plane.received == []
            monkeypatch.undo()
            agent.watch_error = None
            await change(agent, work, "v2")
            [sent] = await plane.requests(1)
            assert await outcomes(pusher, 2) == [(1, True, "refused"), (2, True, "accepted")]
    assert sent.body["version"] == 2 and sent.body["initial"] is True
    assert PushRequest.model_validate(sent.body).version == 2  # what went out is the contract's


@pytest.mark.parametrize("home_files", [True, False])
async def test_what_is_read_from_the_home_is_pushed_only_while_push_home_files_is_on(
    tmp_path: Path, home: Path, home_files: bool
) -> None:
    make_workspace(home, {".codex/AGENTS.md": "My own rules.\n", ".agents/skills/mine/SKILL.md": MINE})
    work = make_workspace(tmp_path / "work", {".git/": "", "AGENTS.md": "Project rules.\n"})
    agent = make_agent(work, home, settings={"agent.push_home_files": home_files})
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, home_files=agent.config.agent.push_home_files)
        async with pushing(agent, pusher):
            snapshot = await ready(agent)
            [first] = await plane.requests(1)
    assert {r.scope for r in snapshot.resources} >= {Scope.HOME, Scope.USER, Scope.PROJECT}  # read either way
    pushed = PushRequest.model_validate(first.body)  # the contract's own check: the hash matches what is left
    scopes = {r.scope for r in pushed.checked_resources}
    assert (Scope.HOME in scopes, Scope.USER in scopes, Scope.PROJECT in scopes) == (home_files, home_files, True)
    assert ("My own rules" in json.dumps(first.body)) is home_files


async def test_a_discovered_change_is_told_at_once_and_by_every_heartbeat_until_one_is_answered(
    tmp_path: Path, home: Path
) -> None:
    """``agent/discovered.py``: a change its watch saw goes out at once, not a beat later, and stays told until the
    control plane answers a heartbeat that carried it."""
    agent = make_agent(workspace(tmp_path), home)
    async with (
        control_plane(refuse_beats=frozenset({2})) as plane,
        pushing(agent, Pusher(plane.url, TOKEN, heartbeat=1.0)),
    ):
        first = (await plane.heartbeats(1))[0]  # a plain beat: nothing changed yet
        started = anyio.current_time()
        agent.discovered.changed()
        told = (await plane.heartbeats(2))[1]  # answered 503
        took = anyio.current_time() - started
        again, after = (await plane.heartbeats(4))[2:4]  # the next beat tells it again (answered); then told
    assert first["discovered"] == {"watching": True, "changed": False}
    assert told["discovered"] == {"watching": True, "changed": True} and took < 0.5
    assert again["discovered"]["changed"] is True
    assert after["discovered"]["changed"] is False


async def test_against_a_control_plane_from_before_the_discovered_watch_heartbeats_go_on_without_its_state(
    tmp_path: Path, home: Path
) -> None:
    agent = make_agent(workspace(tmp_path), home)
    async with control_plane(before_watch=True) as plane, pushing(agent, Pusher(plane.url, TOKEN, heartbeat=0.2)):
        refused, again, later = (await plane.heartbeats(3))[:3]
    assert "discovered" in refused  # answered 422: sent again at once without it, and so from then on
    assert "discovered" not in again and "discovered" not in later
    assert again["online"] is True


async def test_a_snapshot_listing_more_than_a_push_holds_is_pushed_with_the_rest_left_out_and_counted(
    tmp_path: Path, home: Path
) -> None:
    """The caps exclude without dropping: 1,100 skills give a snapshot of 1,101 resources, 601 of them ``excluded``.
    A push holds 1,000 (the control plane refuses more, whole): the last 101 excluded are left out of it, and said."""
    files = {"AGENTS.md": "rules", **{f".agents/skills/s{i:04}/SKILL.md": skill_md(f"s{i:04}") for i in range(1100)}}
    agent = make_agent(make_workspace(tmp_path / "work", files), home)
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            snapshot = await ready(agent)
            [sent] = await plane.requests(1)
            assert await outcomes(pusher, 1) == [(1, True, "accepted")]
    assert len(snapshot.resources) == 1101  # the agent's own view keeps them all
    body = PushRequest.model_validate(sent.body)
    assert len(body.resources) == 1000
    assert sum(r["status"] == "excluded" for r in sent.body["resources"]) == 500  # and every ok one
    assert sent.body["error"] == (
        "101 resources past the 1,000 one push holds are left out of it (101 of them excluded by the caps);"
        " agentcontext scan lists them all"
    )


async def test_a_text_that_swells_past_what_a_push_holds_is_sent_without_it_and_the_push_accepted(
    tmp_path: Path, home: Path
) -> None:
    """60 KB of control characters is within the 64 KiB cap and 360 KB as JSON: that resource goes without its text
    (``excluded``, said), where the control plane refused the whole push."""
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "\x01" * 60_000 + "\n", "sub/AGENTS.md": "fine"})
    agent = make_agent(work, home)
    async with control_plane() as plane:
        pusher = Pusher(plane.url, TOKEN, initial_backoff=0.01)
        async with pushing(agent, pusher):
            await ready(agent)
            [sent] = await plane.requests(1)
            assert await outcomes(pusher, 1) == [(1, True, "accepted")]
    pushed = {r["path"]: r for r in sent.body["resources"]}
    swollen = pushed[str(work / "AGENTS.md")]
    assert (swollen["status"], swollen.get("content")) == ("excluded", None)
    assert "as JSON its text takes" in swollen["error"] and "one resource of a push holds" in swollen["error"]
