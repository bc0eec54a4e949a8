"""Routes served directly (``web.direct_route``): the answers FastAPI gives, without its dependency solving."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Body, Depends, FastAPI, Request
from fastapi.dependencies.utils import solve_dependencies
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.testclient import TestClient

from agentcontext.control import api, routes
from agentcontext.web.direct_route import DirectRoute
from agentcontext.web.json_body import OnePassRoute
from agentcontext.wire.sync import HeartbeatRequest

from .test_json_body import BODIES, JSON, status_when_the_client_leaves


def solving_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of each request FastAPI solves the dependencies of, from now on in the test."""
    solved: list[str] = []

    async def solving(**kwargs: Any) -> Any:
        solved.append(kwargs["request"].url.path)
        return await solve_dependencies(**kwargs)

    monkeypatch.setattr("fastapi.routing.solve_dependencies", solving)
    return solved


class Refused(Exception):
    """What the dependency raises for a missing token: the app's handler answers 401."""


async def _caller(request: Request) -> str:
    token = request.headers.get("authorization", "")
    if not token:
        raise Refused("a token is required")
    await request.body()  # as ``auth.check_text`` reads a declared body before the route parses it
    return token


Caller = Annotated[str, Depends(_caller)]


def _app(route_class: type) -> FastAPI:
    """Routes shaped as the control plane's hot ones, served by ``route_class``."""
    app = FastAPI()
    router = APIRouter(route_class=route_class, dependency_overrides_provider=app)

    @router.post("/chats/{chat_id}/tools/{name}")
    async def tool(
        call: Caller, chat_id: str, name: str, arguments: Annotated[Any, Body(description="any JSON")] = None
    ) -> Response:
        said = {"call": call, "chat": chat_id, "tool": name, "arguments": arguments}
        return Response(json.dumps(said, default=repr), media_type=JSON, headers={"X-Seen": "tool"})

    @router.post("/heartbeat", status_code=204)
    async def heartbeat(call: Caller, body: HeartbeatRequest) -> Response:
        return Response(json.dumps(body.model_dump()), media_type=JSON)

    @router.get("/chats/{chat_id}/prompt")
    async def prompt(call: Caller, chat_id: str) -> Response:
        return Response(json.dumps([call, chat_id]), media_type=JSON, headers={"X-Prompt-Cache": "hit"})

    app.router.routes.extend(router.routes)  # as ``control.api`` adds them: an included router's copies are FastAPI's
    app.add_exception_handler(RequestValidationError, _errors)  # type: ignore[arg-type]
    app.add_exception_handler(Refused, _refused)  # type: ignore[arg-type]
    return app


async def _errors(request: Request, exc: RequestValidationError) -> JSONResponse:
    said = [{"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"], "ctx": str(e.get("ctx"))} for e in exc.errors()]
    return JSONResponse(said, status_code=422)


async def _refused(request: Request, exc: Refused) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=401)


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    with TestClient(_app(OnePassRoute)) as fastapis, TestClient(_app(DirectRoute)) as direct:
        yield fastapis, direct


def _same(theirs: Any, ours: Any, case: object) -> None:
    assert ours.status_code == theirs.status_code, case
    assert ours.content == theirs.content, case
    assert ours.headers.items() == theirs.headers.items(), case


TOOL_BODIES = {
    **BODIES,
    "an object": (b'{"path": "a/b.md"}', JSON),
    "a number": (b"7", JSON),
    "past json's recursion limit": (b"[" * 5000 + b"]" * 5000, JSON),  # RecursionError, not a ValueError
}


@pytest.mark.parametrize("case", sorted(TOOL_BODIES))
@pytest.mark.parametrize("token", ["Bearer t1", None])
def test_every_body_gets_the_answer_fastapi_gives_it_with_a_token_or_without(
    clients: tuple[TestClient, TestClient], case: str, token: str | None
) -> None:
    body, content_type = TOOL_BODIES[case]
    headers = {"Content-Type": content_type} if content_type else {}
    if token:
        headers["Authorization"] = token
    fastapis, direct = clients
    for path in ("/chats/c1/tools/read_skill", "/heartbeat"):
        theirs = fastapis.post(path, content=body, headers=headers)
        _same(theirs, direct.post(path, content=body, headers=headers), case)


def test_path_parameters_and_the_routes_own_headers_come_through_as_fastapi_gives_them(
    clients: tuple[TestClient, TestClient],
) -> None:
    fastapis, direct = clients
    headers = {"Authorization": "Bearer t1"}
    for path in ("/chats/c%201/prompt", "/chats/%C3%A9/prompt", "/chats/c1/prompt?x=1", "/chats//prompt"):
        _same(fastapis.get(path, headers=headers), direct.get(path, headers=headers), path)
    answer = direct.get("/chats/c%20one/prompt", headers=headers)
    assert (answer.json(), answer.headers["x-prompt-cache"]) == (["Bearer t1", "c one"], "hit")
    _same(fastapis.get("/chats/c1/prompt"), direct.get("/chats/c1/prompt"), "no token")
    assert direct.get("/chats/c1/prompt").status_code == 401


def test_a_plain_request_is_answered_without_fastapis_dependency_solving(
    clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    solved = solving_counted(monkeypatch)
    fastapis, direct = clients
    headers = {"Authorization": "Bearer t1", "Content-Type": JSON}
    assert direct.post("/chats/c1/tools/read_skill", content=b'{"name": "x"}', headers=headers).status_code == 200
    assert direct.get("/chats/c1/prompt", headers=headers).status_code == 200
    assert direct.post("/heartbeat", content=b'{"online": true}', headers=headers).status_code == 200
    assert solved == []
    assert direct.post("/heartbeat", content=b'{"online": "maybe"}', headers=headers).status_code == 422
    assert solved == ["/heartbeat"]  # a body that does not pass is FastAPI's to answer
    assert fastapis.get("/chats/c1/prompt", headers=headers).status_code == 200
    assert solved == ["/heartbeat", "/chats/c1/prompt"]  # what this test tells apart


@pytest.mark.anyio
async def test_a_body_that_cannot_be_read_is_answered_as_fastapi_answers_it() -> None:
    token = (b"authorization", b"Bearer t")
    theirs = await status_when_the_client_leaves(_app(OnePassRoute), "/heartbeat", token)
    assert theirs == 400  # FastAPI: "There was an error parsing the body"
    assert await status_when_the_client_leaves(_app(DirectRoute), "/heartbeat", token) == theirs


def test_a_dependency_override_is_applied_as_fastapi_applies_it() -> None:
    app = _app(DirectRoute)

    async def tester(request: Request) -> str:
        return "Bearer overridden"

    app.dependency_overrides[_caller] = tester
    with TestClient(app) as client:
        assert client.get("/chats/c1/prompt").json() == ["Bearer overridden", "c1"]
    app.dependency_overrides.clear()
    with TestClient(app) as client:
        assert client.get("/chats/c1/prompt").status_code == 401


class Part(HeartbeatRequest):
    pass


async def _other(request: Request) -> str:
    return ""


async def _plain(call: Caller, a: str) -> Response:
    return Response()


async def _query(call: Caller, archived: bool = False) -> Response:
    return Response()


async def _number(call: Caller, n: int) -> Response:
    return Response()


async def _model(call: Caller) -> dict[str, str]:
    return {}


async def _two(call: Caller, other: Annotated[str, Depends(_other)]) -> Response:
    return Response()


async def _none() -> Response:
    return Response()


async def _request(call: Caller, request: Request) -> Response:
    return Response()


async def _embedded(call: Caller, body: Part = Body(embed=True)) -> Response:
    return Response()


async def _mapping(call: Caller, body: dict[str, int]) -> Response:
    return Response()


async def _one(call: Caller, body: Part) -> Response:
    return Response()


def _sync(call: Caller) -> Response:
    return Response()


def test_only_one_request_dependency_string_paths_and_one_json_body_make_a_route_served_directly() -> None:
    router = APIRouter(route_class=DirectRoute)
    endpoints: list[tuple[str, Callable[..., Any], str]] = [
        ("/plain/{a}", _plain, "GET"),
        ("/query", _query, "GET"),
        ("/number/{n}", _number, "GET"),
        ("/model", _model, "GET"),
        ("/two", _two, "GET"),
        ("/none", _none, "GET"),
        ("/request", _request, "GET"),
        ("/sync", _sync, "GET"),
        ("/embedded", _embedded, "POST"),
        ("/dict", _mapping, "POST"),
        ("/one", _one, "POST"),
    ]
    for path, endpoint, method in endpoints:
        router.add_api_route(path, endpoint, methods=[method])
    direct = {route.path for route in router.routes if isinstance(route, DirectRoute) and route.plan is not None}
    assert direct == {"/plain/{a}", "/one"}


def test_the_control_planes_hot_routes_are_served_directly() -> None:
    served = {
        (method, route.path)
        for route in [*routes.agent_router.routes, *routes.router.routes]
        if isinstance(route, DirectRoute) and route.plan is not None
        for method in route.methods or ()
    }
    hot = set(api.BUSIEST_FIRST)  # what a running deployment is asked most
    assert hot <= served
    assert ("GET", "/api/v1/chats") not in served  # its query parameter is FastAPI's to read
