"""A hostile workspace agent's answers to the control plane: each may fail its own call, never a page or a quota.

Found by a review, with the agent's token holder answering the control plane's calls:
an ``https://`` agent's answer was read whole (200 MB: +602 MiB) and a trickle never timed
out; ``propose_plan`` trusted the size the agent said (8 MiB stored as a 32 KiB plan); a lone
surrogate in an answer made a 500 on other users' pages and chat tools; and the texts every
push replaced stayed in the database for good (20 pushes of 3.5 MB: 70 MB).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentcontext.control.agent_http import MAX_BODY
from agentcontext.control.agent_link import AgentAddress, AgentLink
from agentcontext.control.db import Database
from agentcontext.errors import UnavailableError
from agentcontext.resource import Kind
from tests.control.conftest import AGENT_INFO, WORK, fake_agent, first_push, push_body, text_resource
from tests.control.test_api import World, open_world
from tests.migrated import fresh_sqlite

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
HALF = "x\ud800y"  # a lone surrogate: JSON may carry it, no UTF-8 page or answer can


def answered(value: Any) -> httpx.Response:
    """An answer as the agent may write it: ``json.dumps`` escapes a lone surrogate, as any JSON writer may."""
    return httpx.Response(200, content=json.dumps(value).encode(), headers={"content-type": "application/json"})


@asynccontextmanager
async def world_with(tmp_path: Path, agent: Callable[[httpx.Request], httpx.Response]) -> AsyncIterator[World]:
    database = Database(fresh_sqlite(tmp_path / "control.db"))
    try:
        async with open_world(database, agent=httpx.MockTransport(agent)) as world:
            assert (await world.push(first_push())).status_code == 200
            yield world
    finally:
        database.dispose()


class _Endless(httpx.AsyncByteStream):
    def __init__(self, chunk: bytes, pause: float = 0.0) -> None:
        self.chunk, self.pause = chunk, pause

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            yield self.chunk
            await anyio.sleep(self.pause)


@pytest.mark.parametrize("pause", [0.0, 0.2], ids=["flood", "trickle"])
async def test_an_https_agents_answer_is_read_within_the_cap_and_the_deadline(pause: float) -> None:
    """As the ``http://`` client already read it: at most ``MAX_BODY`` bytes, the whole answer within the call's
    time (httpx's read timeout is per read: a byte every 0.2 s never ends it)."""

    def agent(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Endless(b'{"content": "' + b"A" * 65536, pause))

    link = AgentLink(transport=httpx.MockTransport(agent), call_timeout=2.0)
    address = AgentAddress("https://agent.example", "secret")
    said = f"larger than {MAX_BODY} bytes" if pause == 0 else "timed out"
    with anyio.fail_after(30), pytest.raises(UnavailableError, match=said):
        await link.skill_file(address, "review", "big.md")


async def test_propose_plan_measures_the_text_not_the_size_the_agent_says(tmp_path: Path) -> None:
    def agent(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v0/plan-file":
            return answered({"content": "A" * 40_000, "resolved": request.url.params["path"], "size_bytes": 1})
        return fake_agent(request)

    async with world_with(tmp_path, agent) as world:
        chat = (await world.chat())["id"]
        answer = await world.call(
            "POST", f"/api/v1/chats/{chat}/tools/propose_plan", "alice", json={"path": f"{WORK}/p.md"}
        )
        assert answer.json() == {"content": "plan file exceeds 32 KiB size limit", "is_error": True}
        assert (await world.call("GET", f"/api/v1/chats/{chat}/files", "alice")).json() == []


async def test_a_lone_surrogate_in_an_agents_answer_is_replaced_not_a_500(tmp_path: Path) -> None:
    def agent(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/api/v0/mcp/call-tool":
            return answered({"content": [{"type": "text", "text": HALF}], "is_error": False})
        if path.startswith("/api/v0/skills/") and "/files/" in path:
            return answered({"content": HALF})
        if path == "/api/v0/mcp/call-tool-binary":
            return answered({})
        return fake_agent(request)

    async with world_with(tmp_path, agent) as world:
        chat = (await world.chat())["id"]
        calls = [("docs__search", {"q": "a"}), ("read_skill_file", {"name": "review", "path": "roles/x.md"})]
        for name, arguments in calls:
            answer = await world.call("POST", f"/api/v1/chats/{chat}/tools/{name}", "alice", json=arguments)
            assert answer.status_code == 200 and "x\ufffdy" in answer.json()["content"], (name, answer.text)


async def test_a_binary_block_whose_type_is_not_text_is_answered(tmp_path: Path) -> None:
    def agent(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v0/mcp/call-tool":
            return answered({"content": [{"type": 7, "media_type": {"x": 1}, "data": "AAAA"}], "is_error": False})
        return fake_agent(request)

    async with world_with(tmp_path, agent) as world:
        chat = (await world.chat())["id"]
        answer = await world.call("POST", f"/api/v1/chats/{chat}/tools/docs__search", "alice", json={"q": "a"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["attachments"] == [{"type": None, "media_type": None, "data": "AAAA"}]


async def test_texts_no_snapshot_refers_to_any_more_are_deleted(tmp_path: Path) -> None:
    async with world_with(tmp_path, fake_agent) as world:
        for version in range(2, 7):
            texts = [(f"push {version} file {n} " * 2000) for n in range(3)]
            resources = [text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/d{n}/AGENTS.md", t) for n, t in enumerate(texts)]
            body = push_body(resources, version=version, work_dir=WORK, agent=AGENT_INFO)
            assert (await world.push(body)).json()["accepted"]
        removed = await world.plane.sync.collect_contents()
        assert removed == 2 + 4 * 3  # the first push's two texts, and three for each push replaced since
        assert await world.plane.sync.collect_contents() == 0
        prompt = await world.call("GET", f"/api/v1/chats/{(await world.chat())['id']}/prompt", "alice")
        assert "push 6 file 2" in prompt.text  # what the snapshot holds is kept
