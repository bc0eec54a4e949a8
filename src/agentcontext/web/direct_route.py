"""A route whose signature is plain is served directly: what FastAPI would do for it, without its per-request work.

For each request FastAPI builds its telemetry context, two exit stacks, the query, header and
cookie maps, and solves the route's dependencies field by field: 70-100 us of CPU a request on this
machine before the route does anything (``bench/direct_route.py``: a prompt served from the turn
cache took 214 us, 142 served directly), a tenth of a request's cost in a loaded server. The routes
a running deployment is asked most need little of it: one dependency that takes the request
(authentication), path parameters that are strings, and at most one JSON body (a model, or any
JSON value), and they answer with a ``Response`` of their own.

A ``DirectRoute`` with exactly that signature (``direct_plan``) answers a request itself: the
dependency is called with the request, each path parameter is the string the router matched,
the body is validated in one pass by pydantic's JSON mode (``json.loads`` for any JSON value),
and the endpoint's response is sent as it is. Errors propagate to the application's exception
handlers, as FastAPI's own handler lets them. Whatever is not that plain case goes to FastAPI's
handler untouched, with the body as it came: a content type other than ``application/json``; a
body that is empty, does not pass, or nests past ``json``'s recursion limit (FastAPI reads it
again and answers 400 or 422 exactly as it always has); a body the request guard refused
mid-read; dependency overrides. Any other route (a query parameter, a response model to
serialise) is FastAPI's alone, and so is a route reached through ``include_router``, which serves
copies of its own: the control plane adds its routes to the app itself.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import params
from fastapi.dependencies.models import Dependant
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentcontext.web.json_body import OnePassRoute, is_json, one_model_body

# raises ValueError (pydantic's ValidationError is one), or json's RecursionError, for a body it does not take
Parse = Callable[[bytes], Any]


@dataclass(frozen=True, slots=True)
class DirectPlan:
    """How a route is answered directly: its endpoint, its one dependency, its path parameters and its body."""

    endpoint: Callable[..., Awaitable[Response]]
    dependency: Callable[[Request], Awaitable[Any]]
    dependency_name: str
    path_names: tuple[str, ...]
    body_name: str | None = None
    parse_body: Parse | None = None


class DirectRoute(OnePassRoute):
    """A route served directly when its signature allows (``direct_plan``), else as ``OnePassRoute`` serves it."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        plan = direct_plan(self.dependant, body_model=one_model_body(self), embedded=self._embed_body_fields)
        self.plan = plan if kwargs.get("max_body_size") is None else None  # a route's own limit: FastAPI applies it
        self.fastapi_app: ASGIApp = self.app  # FastAPI's own handling of the route
        if self.plan is not None:
            self.app = _DirectApp(self.plan, fastapi=self.fastapi_app, overrides=self.dependency_overrides_provider)


def direct_plan(dependant: Dependant, *, body_model: type[BaseModel] | None, embedded: bool) -> DirectPlan | None:
    """The plan for a route whose signature is exactly the plain case (see the module), else None."""
    endpoint = dependant.call
    if endpoint is None or not inspect.iscoroutinefunction(endpoint) or not _answers_a_response(endpoint):
        return None
    if dependant.query_params or dependant.header_params or dependant.cookie_params or _special(dependant):
        return None
    if len(dependant.dependencies) != 1 or embedded:
        return None
    sub = dependant.dependencies[0]
    plain_sub = sub.request_param_name is not None and not _special(sub, but_request=True)
    own_params = sub.path_params or sub.query_params or sub.header_params or sub.cookie_params or sub.body_params
    if not plain_sub or own_params or sub.dependencies or sub.name is None or not inspect.iscoroutinefunction(sub.call):
        return None
    paths = tuple(field.name for field in dependant.path_params)
    if any(field.field_info.annotation is not str or field.alias != field.name for field in dependant.path_params):
        return None
    assert sub.call is not None
    plan = DirectPlan(endpoint, sub.call, sub.name, paths)
    if not dependant.body_params:
        return plan
    if len(dependant.body_params) != 1:
        return None
    body = dependant.body_params[0]
    info = body.field_info
    if not isinstance(info, params.Body) or info.media_type != "application/json" or body.alias != body.name:
        return None
    if body_model is not None:
        return DirectPlan(endpoint, sub.call, sub.name, paths, body.name, body_model.model_validate_json)
    if info.annotation is Any:
        return DirectPlan(endpoint, sub.call, sub.name, paths, body.name, json.loads)
    return None


def _answers_a_response(endpoint: Callable[..., Any]) -> bool:
    """Whether the endpoint is declared to return a ``Response``: nothing of it is left to serialise."""
    try:
        returns = typing.get_type_hints(endpoint).get("return")
    except Exception:  # a hint that does not resolve: FastAPI's to judge
        return False
    return isinstance(returns, type) and issubclass(returns, Response)


_SPECIAL = (
    "websocket_param_name",
    "http_connection_param_name",
    "response_param_name",
    "background_tasks_param_name",
    "security_scopes_param_name",
)


def _special(dependant: Dependant, *, but_request: bool = False) -> bool:
    """Whether the dependant takes one of the parameters FastAPI fills itself (the request too, unless allowed)."""
    if not but_request and dependant.request_param_name is not None:
        return True
    return any(getattr(dependant, name, None) is not None for name in _SPECIAL)


class _DirectApp:
    """The route's ASGI app: the plain case answered here, anything else by FastAPI's own (``fastapi``)."""

    def __init__(self, plan: DirectPlan, *, fastapi: ASGIApp, overrides: Any) -> None:
        self.plan, self.fastapi, self.overrides = plan, fastapi, overrides

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        plan = self.plan
        if getattr(self.overrides, "dependency_overrides", None):  # a test's override: only FastAPI applies it
            await self.fastapi(scope, receive, send)
            return
        request = Request(scope, receive, send)
        arguments: dict[str, Any] = {}
        if plan.parse_body is not None and plan.body_name is not None:
            if not is_json(request.headers.get("content-type")):
                await self.fastapi(scope, receive, send)
                return
            try:
                raw = await request.body()
            except Exception as exc:  # a refusal, a client gone: FastAPI's own read meets it and answers it
                await self.fastapi(scope, _raising(exc), send)
                return
            try:
                arguments[plan.body_name] = plan.parse_body(raw)
            except (ValueError, RecursionError):  # empty, not JSON, too deep: FastAPI reads it again and answers
                await self.fastapi(scope, _replaying(raw, receive), send)
                return
        arguments[plan.dependency_name] = await plan.dependency(request)
        path_params = request.path_params
        for name in plan.path_names:
            arguments[name] = path_params[name]
        response = await plan.endpoint(**arguments)
        await response(scope, receive, send)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` that gives the body already read once, then whatever the connection says next."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _raising(exc: Exception) -> Receive:
    async def receive() -> Message:
        raise exc

    return receive
