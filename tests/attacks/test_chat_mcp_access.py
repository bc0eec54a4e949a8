"""A chat's MCP endpoint is reachable only by its owner: no token, a wrong token, another user, a stolen session id.

The owner is checked on every request, whatever its protocol version and headers: a 2026-07-28
request carrying an ``mcp-session-id`` (which that era does not use) once skipped the check, so
another user's ``subscriptions/listen`` heard the chat's notices and other methods logged a
traceback. And no user can take what every user shares: listen streams count against the
per-token stream cap, and one user holds at most 32 handshake-era sessions (once, one token
opened 10,000 and every user's ``initialize`` got 503).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.control.test_chat_mcp import Stack, _init_params, initialize, pinned_chat, session, stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

MODERN = "2026-07-28"
ACCEPT = {"Accept": "application/json, text/event-stream"}
SESSIONS_PER_USER = 32  # ControlSettings.mcp_sessions_per_user
STREAMS_PER_TOKEN = 16  # Edge.streams_per_token


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("chat-mcp-access")) as running:
        yield running


def new_user(running: Stack, name: str) -> str:
    with running.client() as admin:
        return str(json.loads(admin._call("POST", "/api/v1/users", json_body={"name": name}))["token"])


def modern(method: str, token: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    """A 2026-07-28 request (``json`` and ``headers`` for httpx): its envelope in ``_meta``, its routing headers."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": meta}}
    sent = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-protocol-version": MODERN, "mcp-method": method}
    return {"json": body, "headers": sent | headers}


LISTEN = {"notifications": {"toolsListChanged": True, "resourcesListChanged": True}}


def end(running: Stack, chat_id: str, token: str, session_id: str) -> None:
    headers = {"Authorization": f"Bearer {token}", "mcp-session-id": session_id}
    assert httpx.delete(running.url(f"chats/{chat_id}"), headers=headers).status_code == 200


def test_another_users_chat_is_not_found_and_a_missing_or_unknown_token_is_refused(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    other = new_user(shared, "mallory")
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()}
    url = shared.url(f"chats/{chat_id}")
    assert httpx.post(url, json=body, headers=ACCEPT).status_code == 401
    assert httpx.post(url, json=body, headers={**ACCEPT, "Authorization": "Bearer nope"}).status_code == 401
    stolen = httpx.post(url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {other}"})
    assert stolen.status_code == 404
    assert chat_id not in stolen.text or "not found" in stolen.text


def test_a_session_id_is_refused_to_another_user_and_for_another_chat(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    second = pinned_chat(shared)
    opened = initialize(shared, chat_id, shared.admin)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    reused = {**ACCEPT, "Authorization": f"Bearer {shared.admin}"}
    reused |= {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    assert httpx.post(shared.url(f"chats/{second}"), json=listing, headers=reused).status_code == 404
    foreign = {**reused, "Authorization": f"Bearer {new_user(shared, 'eve')}"}
    assert httpx.post(shared.url(f"chats/{chat_id}"), json=listing, headers=foreign).status_code == 404


def test_an_agent_token_cannot_open_a_chat_session(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    issued = httpx.post(
        f"{shared.control.url}/api/v1/workspaces/ws/agents",
        json={"name": "intruder"},
        headers={"Authorization": f"Bearer {shared.admin}"},
    )
    refused = initialize(shared, chat_id, issued.json()["token"])
    assert refused.status_code == 401
    assert "user's API token" in refused.json()["message"]


@pytest.mark.parametrize("method", ["subscriptions/listen", "tools/list", "server/discover"])
def test_a_2026_request_for_another_users_chat_is_not_found_whatever_session_id_it_carries(
    shared: Stack, method: str
) -> None:
    """Not acknowledged, no notice, no -32603 and no traceback: a clean 404 before the SDK sees the request."""
    chat_id = pinned_chat(shared)
    mallory = new_user(shared, f"mallory-{method.replace('/', '-')}")
    own = pinned_chat(shared, mallory)
    her_session = initialize(shared, own, mallory).headers["mcp-session-id"]
    logged = len(shared.control.text())
    params = LISTEN if method == "subscriptions/listen" else None
    for target in (chat_id, "no-such-chat"):
        for session_id in (uuid.uuid4().hex, her_session, "x"):
            request = modern(method, mallory, params, **{"mcp-session-id": session_id})
            with httpx.stream("POST", shared.url(f"chats/{target}"), timeout=10, **request) as answer:
                assert answer.status_code == 404, (target, session_id)  # not an acknowledged listen, held open
                answer.read()
                assert answer.json() == {"message": f'chat "{target}" not found', "detail": None}
    assert "Traceback" not in shared.control.text()[logged:]


def test_a_stolen_workspace_session_id_does_not_lead_another_user_to_its_chat(shared: Stack) -> None:
    opened = httpx.post(
        shared.url("workspaces/ws"),
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()},
        headers={**ACCEPT, "Authorization": f"Bearer {shared.admin}"},
    )
    assert opened.status_code == 200, opened.text
    admins_chat = opened.headers["x-agentcontext-chat"]
    mallory = new_user(shared, "mallory-ws")
    stolen = {"mcp-session-id": opened.headers["mcp-session-id"]}
    with httpx.stream(
        "POST", shared.url("workspaces/ws"), timeout=10, **modern("subscriptions/listen", mallory, LISTEN, **stolen)
    ) as answer:
        assert answer.status_code == 200
        assert answer.headers["x-agentcontext-chat"] != admins_chat  # her own MCP chat of the workspace


@contextlib.asynccontextmanager
async def listening(http: httpx.AsyncClient, url: str, token: str) -> AsyncIterator[httpx.Response]:
    """A 2026-07-28 listen stream, acknowledged (or its refusal, read whole)."""
    async with http.stream("POST", url, **modern("subscriptions/listen", token, LISTEN)) as response:
        lines = response.aiter_lines()  # held until the block ends: collected, it would close the stream
        if response.status_code == 200:
            with anyio.fail_after(10):
                while "acknowledged" not in await anext(lines):
                    pass
        else:
            await response.aread()
        yield response


@pytest.mark.anyio
async def test_listen_streams_count_against_the_per_token_stream_cap(shared: Stack) -> None:
    token = new_user(shared, "listener")
    chat_id = pinned_chat(shared, token)
    url = shared.url(f"chats/{chat_id}")
    legacy = {
        "Authorization": f"Bearer {token}",
        "mcp-session-id": initialize(shared, chat_id, token).headers["mcp-session-id"],
    }
    async with httpx.AsyncClient(timeout=30) as http, contextlib.AsyncExitStack() as held:
        for _ in range(STREAMS_PER_TOKEN - 1):
            assert (await held.enter_async_context(listening(http, url, token))).status_code == 200
        standing = await held.enter_async_context(http.stream("GET", url, headers={**ACCEPT, **legacy}))
        assert standing.status_code == 200  # a handshake-era session's standing stream takes the last place
        async with listening(http, url, token) as refused:
            assert refused.status_code == 429
            assert refused.json() == {
                "message": "Too many event streams.",
                "detail": f"at most {STREAMS_PER_TOKEN} event streams may be open at once with one token;"
                " close one first",
            }
        async with listening(http, shared.url(f"chats/{pinned_chat(shared)}"), shared.admin) as others:
            assert others.status_code == 200  # another token's share is its own


@pytest.mark.anyio
async def test_one_user_holds_at_most_32_sessions_and_everyone_else_can_still_open_theirs(shared: Stack) -> None:
    mallory = new_user(shared, "session-hoarder")
    chat_id = pinned_chat(shared, mallory)
    answers = [initialize(shared, chat_id, mallory) for _ in range(SESSIONS_PER_USER + 3)]
    assert [a.status_code for a in answers] == [200] * SESSIONS_PER_USER + [429] * 3
    refusal = answers[-1].json()
    assert refusal["jsonrpc"] == "2.0" and refusal["error"]["data"] == {"limit": SESSIONS_PER_USER}
    assert f"at most {SESSIONS_PER_USER} MCP sessions" in refusal["error"]["message"]
    with pytest.raises(ExceptionGroup) as shown:  # what her client shows
        async with session(shared.url(f"chats/{chat_id}"), mallory):
            pass
    assert shown.group_contains(MCPError, match=f"at most {SESSIONS_PER_USER} MCP sessions")
    others = initialize(shared, pinned_chat(shared), shared.admin)
    assert others.status_code == 200, others.text  # another user is not affected
    sessions = [a.headers["mcp-session-id"] for a in answers[:SESSIONS_PER_USER]]
    end(shared, chat_id, mallory, sessions.pop())
    again = initialize(shared, chat_id, mallory)
    assert again.status_code == 200  # an ended session gives its place back
    for session_id in [*sessions, again.headers["mcp-session-id"]]:
        end(shared, chat_id, mallory, session_id)
