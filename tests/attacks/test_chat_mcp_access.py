"""A chat's MCP endpoint is reachable only by its owner: no token, a wrong token, another user, a stolen session id."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.control.test_chat_mcp import Stack, _init_params, pinned_chat, stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("chat-mcp-access")) as running:
        yield running


def test_another_users_chat_is_not_found_and_a_missing_or_unknown_token_is_refused(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    with shared.client() as admin:
        other = admin._call("POST", "/api/v1/users", json_body={"name": "mallory"})["token"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()}
    headers = {"Accept": "application/json, text/event-stream"}
    url = shared.url(f"chats/{chat_id}")
    assert httpx.post(url, json=body, headers=headers).status_code == 401
    assert httpx.post(url, json=body, headers={**headers, "Authorization": "Bearer nope"}).status_code == 401
    stolen = httpx.post(url, json=body, headers={**headers, "Authorization": f"Bearer {other}"})
    assert stolen.status_code == 404
    assert chat_id not in stolen.text or "not found" in stolen.text


def test_a_session_id_is_refused_to_another_user_and_for_another_chat(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    second = pinned_chat(shared)
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {shared.admin}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()}
    opened = httpx.post(shared.url(f"chats/{chat_id}"), json=body, headers=headers)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    reused = {**headers, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    assert httpx.post(shared.url(f"chats/{second}"), json=listing, headers=reused).status_code == 404
    with shared.client() as admin:
        other = admin._call("POST", "/api/v1/users", json_body={"name": "eve"})["token"]
    foreign = {**reused, "Authorization": f"Bearer {other}"}
    assert httpx.post(shared.url(f"chats/{chat_id}"), json=listing, headers=foreign).status_code == 404


def test_an_agent_token_cannot_open_a_chat_session(shared: Stack) -> None:
    chat_id = pinned_chat(shared)
    issued = httpx.post(
        f"{shared.control.url}/api/v1/workspaces/ws/agents",
        json={"name": "intruder"},
        headers={"Authorization": f"Bearer {shared.admin}"},
    )
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()}
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {issued.json()['token']}"}
    refused = httpx.post(shared.url(f"chats/{chat_id}"), json=body, headers=headers)
    assert refused.status_code == 401
    assert "user's API token" in refused.json()["message"]
