"""A request to the control API finds its route once: the routes are the app's own, not an included router's.

FastAPI (0.16x) matches an included router's routes twice a request (once to choose the router, once inside
it), each through a per-include context: 60-100 us of CPU a prompt or read_skill at a thousand a second.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from starlette.routing import Match

from tests.control.test_api import sqlite_world

pytestmark = pytest.mark.anyio


async def test_a_prompt_request_matches_its_route_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: Counter[str] = Counter()
    matches = APIRoute.matches

    def counted(self: APIRoute, scope: Any) -> tuple[Match, Any]:
        found = matches(self, scope)
        if found[0] is Match.FULL:
            tried[self.path] += 1
        return found

    monkeypatch.setattr(APIRoute, "matches", counted)
    async with sqlite_world(tmp_path) as world:
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        response = await world.client.get("/api/v1/chats/no-such-chat/prompt", headers=headers)
        assert response.status_code == 404  # routed, then not found
        assert tried == {"/api/v1/chats/{chat_id}/prompt": 1}
