"""The control plane's HTTP API under ``/api/v1/``, with its OpenAPI document at ``/openapi.json``.

This module makes the application: the routes (``routes``), their wire models (``wire``)
and authentication (``auth``), the error answers and the body limit. Errors are
``{"message", "detail"}``: 400 invalid, 401 no or unknown token, 403 the wrong kind of
token or not an administrator, 404 not found (another user's chat is not found either),
409 a conflict, 413 a body over 8 MiB, 422 a body that breaks the contract (the detail
names each field), 501 context sync disabled, 503 unreachable; the request guard
(``control.edge``) answers 421 for a Host this server does not serve, 403 for another site's page,
401 before the body is read, 408 for a body that takes too long and 429 for too many event streams.
Chat tools answer 200 with ``is_error`` for their own failures, as a model expects. Each chat is
also served over MCP under ``/mcp`` (``chat_mcp``; the MCP SDK is loaded by the first chat that connects).
The dashboard is not part of it: the server's app is composed above both (``agentcontext.server``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute

from agentcontext import __version__
from agentcontext.control import auth, wire
from agentcontext.control import edge as control_edge
from agentcontext.control.chat_mcp.mount import ChatMcpMount
from agentcontext.control.error_status import status_of
from agentcontext.control.plane import ControlPlane
from agentcontext.control.routes import agent_router, answer, router
from agentcontext.errors import AgentContextError
from agentcontext.web.guard import Edge, RequestGuard
from agentcontext.wire.sync import describe

log = logging.getLogger("agentcontext.control.api")
MAX_BODY = 8 * 1024 * 1024

# --- the application -----------------------------------------------------------------


async def _known_error(request: Request, exc: AgentContextError) -> JSONResponse:
    status, message = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"message": message, "detail": str(exc)}, status_code=status, headers=headers)


_HTTP_MESSAGES = {
    400: "Invalid request.",
    401: "Unauthorized.",
    403: "Forbidden.",
    404: "Not found.",
    405: "Method not allowed.",
    413: "Request body too large.",
}


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (no such route, wrong method, an unreadable body) in our error shape."""
    status = exc.status_code
    message = _HTTP_MESSAGES.get(status) or f"{HTTPStatus(status).phrase}."
    detail = exc.detail
    if status == 404 and detail == "Not Found":
        detail = f"no route {request.method} {request.url.path}"
    elif status == 405 and exc.headers and "Allow" in exc.headers:
        detail = f"{request.method} is not allowed here; use {exc.headers['Allow']}"
    return JSONResponse({"message": message, "detail": detail}, status_code=status, headers=exc.headers)


async def _internal(request: Request, exc: Exception) -> JSONResponse:
    """A bug: logged here with its traceback, never described to the caller."""
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"message": "Internal error.", "detail": None}, status_code=500)


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A body that breaks its model: 422 naming each field; one that is not JSON at all: 400."""
    errors = exc.errors()
    unreadable = [e for e in errors if e.get("type") == "json_invalid"]
    if unreadable:
        reason = (unreadable[0].get("ctx") or {}).get("error") or unreadable[0].get("msg")
        return JSONResponse({"message": "Invalid request.", "detail": f"body is not valid JSON: {reason}"}, 400)
    return JSONResponse({"message": "Invalid request.", "detail": describe(errors)}, status_code=422)


def create_app(plane: ControlPlane, *, background: bool = True, edge: Edge | None = None) -> FastAPI:
    """The API over ``plane`` behind the request guard (``control.edge``; ``edge``: the names served and the
    limits, default loopback only); with ``background``, the event broker, the offline sweeper and the deletion
    of unreferenced texts run alongside, and the chats' MCP endpoint is loaded at once (``ChatMcpMount.preload``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            chat_mcp.serve_in(group)  # each chat's MCP sessions live as long as the server
            if background:
                await group.start(plane.broker.run)
                group.start_soon(plane.sync.run_sweeper)
                group.start_soon(plane.sync.run_collector)
                group.start_soon(chat_mcp.preload)
            yield
            chat_mcp.serve_in(None)
            group.cancel_scope.cancel()

    app = FastAPI(
        title="agentcontext control plane",
        version=__version__,
        description="Snapshots pushed by workspace agents, chats that pin them, each turn's prompt and tools.",
        lifespan=lifespan,
        # no /docs or /redoc: they load Swagger UI's scripts from a CDN, unpinned, on the dashboard's origin
        docs_url=None,
        redoc_url=None,
        # nothing here exports OpenTelemetry; switched on, FastAPI asks the global providers on every request
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    chat_mcp = ChatMcpMount(plane)
    app.state.plane = plane
    app.mount("/mcp", chat_mcp)
    app.add_exception_handler(AgentContextError, _known_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _internal)
    # the routes themselves, not ``include_router``: FastAPI matches an included router's routes twice a request,
    # each through its per-include context (60-100 us of CPU a prompt or read_skill; the same OpenAPI document),
    # and serves its own copy of each, never the direct one (``web.direct_route``)
    app.router.routes.extend([*agent_router.routes, *router.routes])
    health = answer(wire.HealthResponse(ok=True, version=__version__, database=plane.db.dialect))

    @app.get(
        "/healthz", summary="Liveness and the database in use", tags=["health"], response_model=wire.HealthResponse
    )
    async def healthz() -> Any:
        return health

    app.router.routes.sort(key=_busiest_first)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    app.add_middleware(
        RequestGuard,
        edge=edge or Edge(max_body=MAX_BODY),
        authenticate=control_edge.authenticator(plane),
        streams=control_edge.is_stream,
        stream_key=control_edge.stream_key(plane),
    )
    return app


# What a running deployment is asked most: each turn's prompt and tool call, each agent's heartbeat and push, a
# chat's refresh and event stream. Starlette tries every route's pattern in turn until one matches (about 1.4 us
# each; a prompt was the 20th); no two of the app's routes match one request, so the order changes nothing else
# but the order /openapi.json lists the paths in.
BUSIEST_FIRST = (
    ("GET", "/api/v1/chats/{chat_id}/prompt"),
    ("POST", "/api/v1/chats/{chat_id}/tools/{name:tool}"),
    ("POST", "/api/v1/agent/heartbeat"),
    ("POST", "/api/v1/agent/context"),
    ("PUT", "/api/v1/chats/{chat_id}/context"),
    ("GET", "/api/v1/chats/{chat_id}/events"),
)


def _busiest_first(route: BaseRoute) -> int:
    """A route's place in ``BUSIEST_FIRST``; every other route after them, in the order it was added."""
    methods = getattr(route, "methods", None) or ()
    path = getattr(route, "path", "")
    places = [BUSIEST_FIRST.index((m, path)) for m in methods if (m, path) in BUSIEST_FIRST]
    return min(places, default=len(BUSIEST_FIRST))


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, saying what this API does: a refused body is 422 ``ErrorBody``, not FastAPI's shape."""
    if app.openapi_schema is None:
        document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                if "422" in responses:
                    responses["422"] = {"description": "Unprocessable Content", "content": _ERROR_CONTENT}
                for code, response in responses.items():  # errors are JSON, whatever a route answers otherwise
                    if code[0] in "45":
                        response["content"] = _ERROR_CONTENT
        components = document.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        # the routes authenticate in one dependency of their own (auth): the scheme is declared here
        components["securitySchemes"] = {
            auth.SCHEME: {"type": "http", "scheme": "bearer", "description": auth.SCHEME_DESCRIPTION}
        }
        for path, operations in document.get("paths", {}).items():
            if path.startswith("/api/"):
                for operation in operations.values():
                    operation["security"] = [{auth.SCHEME: []}]
        app.openapi_schema = document
    return app.openapi_schema


_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
