"""One token may hold only so many event streams open: the rest of the server stays for everyone else.

An event stream never ends on its own, so each one holds a connection and a subscription as
long as the client likes. The guard counts open streams per token (a dashboard session counts
as the token it was made with) and answers 429 beyond ``Edge.streams_per_token``;
another token is not affected, and a closed stream frees its place.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from agentcontext.agent.api import create_app as agent_app
from agentcontext.server.app import build_app as control_app
from agentcontext.web.guard import Edge
from tests.attacks.http_surfaces import AGENT_TOKEN, agent_surface, control_surface, guarded_serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
CAP = Edge(streams_per_token=2)


@contextlib.asynccontextmanager
async def stream(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
    """An open event stream whose first event has arrived (or the refusal, read whole)."""
    async with client.stream("GET", path, headers=headers) as response:
        lines = response.aiter_lines()  # held until the block ends: collected, it would close the stream
        if response.status_code == 200:
            with anyio.fail_after(10):
                await anext(lines)
        else:
            await response.aread()
        yield response


async def test_a_token_holds_at_most_its_share_of_chat_and_dashboard_streams(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as control:
        world = control.world
        chat = await world.chat()
        app = control_app(world.plane, background=False, edge=CAP)
        alice, bob = (f"Bearer {world.tokens[who]}" for who in ("alice", "bob"))
        events = f"/api/v1/chats/{chat['id']}/events"
        async with guarded_serving(app, CAP) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as client:
            async with (
                stream(client, events, {"Authorization": alice}) as first,
                stream(client, events, {"Authorization": alice}) as second,
            ):
                assert (first.status_code, second.status_code) == (200, 200)
                async with stream(client, events, {"Authorization": alice}) as third:
                    assert third.status_code == 429
                    assert third.json() == {
                        "message": "Too many event streams.",
                        "detail": "at most 2 event streams may be open at once with one token; close one first",
                    }
                login = await world.plane.access.begin_login(world.tokens["alice"])
                session = await world.plane.access.confirm_login(login.secret)
                cookie = {"Cookie": f"agentcontext_session={session.secret}"}
                async with stream(client, "/ui/events", cookie) as dashboard:
                    assert dashboard.status_code == 429  # a session counts as the token it was made with
                async with stream(client, "/api/v1/chats", {"Authorization": bob}) as other:
                    assert other.status_code == 200  # a plain request is not a stream
            with anyio.fail_after(10):  # both closed: the server notices the disconnects and frees the places
                while True:
                    async with stream(client, events, {"Authorization": alice}) as again:
                        if again.status_code == 200:
                            break
                    await anyio.sleep(0.05)


async def test_the_agents_event_stream_is_capped_per_token(tmp_path: Path, home: Path) -> None:
    async with agent_surface(tmp_path, home) as surface:
        app = agent_app(surface.agent, token=AGENT_TOKEN, edge=CAP)
        headers = {"Authorization": f"Bearer {AGENT_TOKEN}"}
        async with (
            guarded_serving(app, CAP) as served,
            httpx.AsyncClient(base_url=served.url, timeout=10) as client,
            stream(client, "/api/v0/events", headers) as first,
            stream(client, "/api/v0/events", headers),
        ):
            assert first.status_code == 200
            async with stream(client, "/api/v0/events", headers) as third:
                assert third.status_code == 429
            assert (await client.get("/api/v0/context", headers=headers)).status_code == 200
