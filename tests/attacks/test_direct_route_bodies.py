"""Attack: a body crafted to be read one way by a directly served route (``web.direct_route``) and another by
FastAPI, to slip past a check one of them makes (text no database stores, a field's type, the agent's caps).

Every control-plane route that takes a body is sent the same hostile bodies in two fresh worlds: one served
as built (plain routes directly), one with every route answered by FastAPI's own handling. Each answer's
status and error must be the same in both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentcontext.web import direct_route
from tests.control.test_api import ROUTES, Alices, World, fill, make_alices, sqlite_world

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

JSON = "application/json"


def hostile(body: Any) -> Iterator[tuple[str, bytes, str | None]]:
    """Bodies built on a route's good one: each names what it tries."""
    good = json.dumps(body).encode()
    first = next(iter(body)) if isinstance(body, dict) and body else None
    yield "good", good, JSON
    yield "a charset", good, "application/json; charset=utf-8"
    yield "no content type", good, None
    yield "text/plain", good, "text/plain"
    yield "a BOM", b"\xef\xbb\xbf" + good, JSON
    yield "UTF-16", good.decode().encode("utf-16"), JSON
    yield "empty", b"", JSON
    yield "null", b"null", JSON
    yield "an array", b"[]", JSON
    yield "deep nesting", b"[" * 5000 + b"]" * 5000, JSON
    yield "NaN", b'{"x": NaN}', JSON
    yield "invalid UTF-8", b'{"x": "\xff\xfe"}', JSON
    if first is not None:
        for name, value in [
            ("a NUL", '"a\\u0000b"'),
            ("a lone surrogate", '"\\ud800"'),
            ("a surrogate's raw bytes", '"\xed\xa0\x80"'),
            ("a number for a string", "7"),
            ("an object for a string", '{"$ne": null}'),
        ]:
            yield name, good.replace(f'"{first}": '.encode(), f'"{first}": {value}, "__was": '.encode(), 1), JSON
        yield "a duplicate key", good.replace(f'"{first}": '.encode(), f'"{first}": 1, "{first}": '.encode(), 1), JSON
        yield "an unknown field", json.dumps({**body, "__unknown": 1}).encode(), JSON


@contextmanager
def fastapi_for_every_route(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    async def fastapis(self: Any, scope: Any, receive: Any, send: Any) -> None:
        await self.fastapi(scope, receive, send)

    with monkeypatch.context() as patched:
        patched.setattr(direct_route._DirectApp, "__call__", fastapis)
        yield


async def _answers(world: World, alices: Alices) -> dict[tuple[str, str], tuple[int, Any]]:
    said: dict[tuple[str, str], tuple[int, Any]] = {}
    for method, path, body in ROUTES:
        if body is None:
            continue
        token = "agent" if path.startswith("/api/v1/agent/") else "alice"
        for case, raw, content_type in hostile(body):
            headers = {"Authorization": f"Bearer {world.tokens[token]}"}
            if content_type:
                headers["Content-Type"] = content_type
            answer = await world.client.request(method, fill(path, alices.ids()), content=raw, headers=headers)
            error = answer.json() if answer.status_code >= 400 else None
            said[(f"{method} {path}", case)] = (answer.status_code, error)
    return said


async def test_every_hostile_body_gets_the_same_answer_served_directly_as_from_fastapi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with sqlite_world(tmp_path / "direct") as world:
        direct = await _answers(world, await make_alices(world))
    with fastapi_for_every_route(monkeypatch):
        async with sqlite_world(tmp_path / "fastapi") as world:
            fastapis = await _answers(world, await make_alices(world))
    assert direct.keys() == fastapis.keys()
    differ = {key: (direct[key], fastapis[key]) for key in direct if direct[key] != fastapis[key]}
    assert not differ
    refused = {key for key, (status, _) in direct.items() if status >= 400}
    assert len(refused) > len(direct) // 2  # hostile bodies were refused, not ignored: the comparison means something
