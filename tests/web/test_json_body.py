"""One-pass JSON bodies (``web.json_body``): the same answers as FastAPI's two passes, with one parse."""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from typing import Any

import pytest
from fastapi import APIRouter, Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.testclient import TestClient

from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash
from agentcontext.web.json_body import OnePassRoute, one_model_body
from agentcontext.wire import sync as sync_contract
from agentcontext.wire.sync import HeartbeatRequest, PushRequest


def _push() -> dict[str, Any]:
    texts = {"/w/AGENTS.md": "# Rules\n\nBe brief.\n", "/w/api/AGENTS.md": "# API\n\nUse the spec.\n"}
    resources = [
        Resource(Kind.INSTRUCTION_FILE, path, Scope.PROJECT, Status.OK, len(text), "", text, None, (), doc_order=n)
        for n, (path, text) in enumerate(texts.items())
    ]
    return {
        "version": 3,
        "aggregate_hash": aggregate_hash(resources),
        "work_dir": "/w",
        "resources": [r.to_dict() for r in resources],
        "agent": {"run_id": "r1", "os": "linux"},
    }


PUSH = _push()
GOOD = json.dumps(PUSH).encode()
JSON = "application/json"

# bodies that each model, or the JSON reader, refuses in its own way; and the few only json.loads takes
BODIES: dict[str, tuple[bytes, str | None]] = {
    "good": (GOOD, JSON),
    "empty": (b"", JSON),
    "not JSON": (b"{nope", JSON),
    "cut short": (GOOD[:40], JSON),
    "trailing data": (GOOD + b" x", JSON),
    "an array": (b"[1, 2]", JSON),
    "null": (b"null", JSON),
    "no content type": (GOOD, None),
    "text/plain": (GOOD, "text/plain"),
    "+json": (GOOD, "application/problem+json"),
    "with a charset": (GOOD, "application/json; charset=utf-8"),
    "upper case type": (GOOD, "Application/JSON"),
    "version true": (json.dumps({**PUSH, "version": True}).encode(), JSON),
    "version 1.0": (GOOD.replace(b'"version": 3', b'"version": 3.0'), JSON),
    "strings for a number and a boolean": (json.dumps({**PUSH, "version": "7", "initial": "yes"}).encode(), JSON),
    "an unknown field": (json.dumps({**PUSH, "zzz": 1}).encode(), JSON),
    "a wrong hash": (json.dumps({**PUSH, "aggregate_hash": "0" * 64}).encode(), JSON),
    "a BOM": (b"\xef\xbb\xbf" + GOOD, JSON),
    "UTF-16": (GOOD.decode().encode("utf-16"), JSON),
    "Latin-1": (b'{"version": 1, "aggregate_hash": "\xe9"}', JSON),
    "NaN": (b'{"version": NaN, "aggregate_hash": ""}', JSON),
    "a lone surrogate": (GOOD.replace(b'"work_dir": "/w"', b'"work_dir": "\\ud800"'), JSON),
    "a NUL": (GOOD.replace(b'"work_dir": "/w"', b'"work_dir": "\\u0000"'), JSON),
    "a duplicate key": (GOOD.replace(b'"version": 3,', b'"version": "x", "version": 3,'), JSON),
    "deep nesting": (GOOD.replace(b'"work_dir": "/w"', b'"work_dir": ' + b"[" * 400 + b"]" * 400), JSON),
}


def _app(route_class: type | None) -> FastAPI:
    """The same two routes (a push and a heartbeat) with FastAPI's body reading, or with ``OnePassRoute``."""
    router = APIRouter(route_class=route_class) if route_class else APIRouter()

    @router.post("/push")
    async def push(body: PushRequest) -> dict[str, Any]:
        return {"version": body.version, "resources": len(body.checked_resources)}

    @router.post("/heartbeat")
    async def heartbeat(body: HeartbeatRequest) -> dict[str, Any]:
        return body.model_dump()

    app = FastAPI()
    app.include_router(router)
    app.add_exception_handler(RequestValidationError, _errors)  # type: ignore[arg-type]
    return app


async def _errors(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's errors but their inputs (a NaN one is not JSON): type, place and message of each."""
    said = [{"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"], "ctx": str(e.get("ctx"))} for e in exc.errors()]
    return JSONResponse(said, status_code=422)


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    with TestClient(_app(None)) as two_pass, TestClient(_app(OnePassRoute)) as one_pass:
        yield two_pass, one_pass


@pytest.mark.parametrize("case", sorted(BODIES))
def test_every_body_gets_the_answer_fastapi_gives_it_status_and_errors_alike(
    clients: tuple[TestClient, TestClient], case: str
) -> None:
    body, content_type = BODIES[case]
    headers = {"Content-Type": content_type} if content_type else {}
    two_pass, one_pass = clients
    for path in ("/push", "/heartbeat"):
        theirs = two_pass.post(path, content=body, headers=headers)
        ours = one_pass.post(path, content=body, headers=headers)
        assert (ours.status_code, ours.json()) == (theirs.status_code, theirs.json()), (case, path)
        if case == "good" and path == "/push":
            assert ours.json() == {"version": 3, "resources": 2}


async def status_when_the_client_leaves(app: FastAPI, path: str = "/push", *headers: tuple[bytes, bytes]) -> int:
    """The status the app answers a JSON POST whose client went away before sending its body."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
        "headers": [(b"host", b"testserver"), (b"content-type", JSON.encode()), *headers],
    }  # fmt: skip
    sent: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.append(message["status"])

    await app(scope, receive, send)
    return sent[0]


@pytest.mark.anyio
async def test_a_body_that_cannot_be_read_is_answered_as_fastapi_answers_it() -> None:
    theirs = await status_when_the_client_leaves(_app(None))
    assert theirs == 400  # FastAPI: "There was an error parsing the body"
    assert await status_when_the_client_leaves(_app(OnePassRoute)) == theirs


def test_a_json_body_is_parsed_by_pydantic_alone_and_checked_once(
    clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[object] = []
    checked: list[Resource] = []
    loads, to_resource = json.loads, sync_contract.PushedResource.to_resource

    def reading(raw: str | bytes, **kwargs: Any) -> Any:
        parsed.append(raw)
        return loads(raw, **kwargs)

    def building(self: sync_contract.PushedResource) -> Resource:
        checked.append(to_resource(self))
        return checked[-1]

    monkeypatch.setattr(json, "loads", reading)  # as Starlette's Request.json calls it
    monkeypatch.setattr(sync_contract.PushedResource, "to_resource", building)
    answer = clients[1].post("/push", content=GOOD, headers={"Content-Type": JSON})
    assert answer.status_code == 200
    assert GOOD not in parsed  # json.loads never read the body
    assert len(checked) == 2  # each resource built once: FastAPI's pass over the instance checks nothing again
    checked.clear()
    assert clients[0].post("/push", content=GOOD, headers={"Content-Type": JSON}).status_code == 200
    assert GOOD in parsed and len(checked) == 2  # the two-pass route: what this test tells apart


def test_a_model_accepts_nothing_from_json_bytes_it_would_refuse_from_json_loads() -> None:
    for case, (body, _) in BODIES.items():
        try:
            fast = PushRequest.model_validate_json(body)
        except ValidationError:
            continue
        assert fast == PushRequest.model_validate(json.loads(body)), case
        assert fast.checked_resources == PushRequest.model_validate(json.loads(body)).checked_resources, case


class Part(BaseModel):
    n: int


def test_only_a_body_of_exactly_one_model_takes_the_one_pass() -> None:
    router = APIRouter(route_class=OnePassRoute)

    @router.post("/one")
    async def one(body: Part) -> None: ...

    @router.post("/embedded")
    async def embedded(body: Part = Body(embed=True)) -> None: ...

    @router.post("/two")
    async def two(a: Part, b: Part) -> None: ...

    @router.post("/plain")
    async def plain(body: dict[str, int]) -> None: ...

    found = {route.path: one_model_body(route) for route in router.routes if isinstance(route, APIRoute)}
    assert found == {"/one": Part, "/embedded": None, "/two": None, "/plain": None}
