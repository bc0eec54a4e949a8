"""The control plane's HTTP API under ``/api/v1/``, with its OpenAPI document at ``/openapi.json``.

Every route but ``/healthz`` needs ``Authorization: Bearer <token>``: a user's API token
for chats, skills and workspaces, an agent's token for ``/api/v1/agent/*``. Errors are
``{"message", "detail"}``: 400 invalid, 401 no or unknown token, 403 the wrong kind of
token or not an administrator, 404 not found (another user's chat is not found either),
409 a conflict, 413 a body over 8 MiB, 501 context sync disabled, 503 unreachable; the request guard
(``control.edge``) answers 421 for a Host this server does not serve, 403 for another site's page,
401 before the body is read, 408 for a body that takes too long and 429 for too many event streams.
Chat tools answer 200 with ``is_error`` for their own failures, as a model expects.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Annotated, Any
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Body, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException

from agentcontext import __version__, dashboard
from agentcontext.control import chats
from agentcontext.control import edge as control_edge
from agentcontext.control.chat_mcp.endpoint import ChatMcpEndpoint
from agentcontext.control.identity import AgentPrincipal, Principal, UserPrincipal
from agentcontext.control.plane import SYNC_DISABLED, ControlPlane, SyncDisabled
from agentcontext.errors import (
    AgentContextError,
    AuthError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnavailableError,
)
from agentcontext.resource import Kind, Status
from agentcontext.resource import Scope as ResourceScope
from agentcontext.web.guard import Edge, RequestGuard

log = logging.getLogger("agentcontext.control.api")
MAX_BODY = 8 * 1024 * 1024

# --- wire models (documentation and request parsing only) ----------------------------


class ErrorBody(BaseModel):
    message: str
    detail: str | None = None


class PushedResource(BaseModel):
    """One resource of a push (``Resource.to_dict()``); documentation only: the server checks pushes itself."""

    id: str = Field(description='"<kind>:<path>"')
    kind: Kind
    path: str
    scope: ResourceScope
    status: Status
    size_bytes: int = 0
    content_hash: str = Field("", description="sha256 of the original bytes, lowercase hex")
    content: str | None = None
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)
    name: str | None = None
    description: str | None = None
    doc_order: int | None = None
    source: str | None = None
    servers: list[str] | None = None
    connect: bool | None = None
    tools: list[dict[str, Any]] | None = None


class PushBody(BaseModel):
    """A snapshot as the workspace agent publishes it (``Snapshot.to_dict()``), plus ``initial`` and ``agent``."""

    version: int
    aggregate_hash: str
    initial: bool = False
    error: str | None = None
    work_dir: str = ""
    project_root: str | None = None
    profile: str = "default"
    payload_bytes: int = 0
    resources: list[dict[str, Any]] = Field(
        default_factory=list,
        description="At most 1,000; 256 KiB each and 4 MiB in all (items: PushedResource).",
        json_schema_extra={"items": {"$ref": "#/components/schemas/PushedResource"}},
    )
    agent: dict[str, Any] | None = None


class PushResponse(BaseModel):
    accepted: bool
    version: int
    stored_version: int | None


class HeartbeatBody(BaseModel):
    agent: dict[str, Any] | None = None
    online: bool = True


class CreateChatBody(BaseModel):
    workspace: str | None = Field(default=None, description="Workspace name or id (inherited from the parent).")
    status: str = Field(default=chats.DEFAULT_STATUS, description=f"One of: {', '.join(chats.STATUSES)}.")
    parent_id: str | None = None
    title: str = ""
    plan_mode: bool = Field(default=False, description="propose_plan applies the plan-turn rules.")


class UpdateChatBody(BaseModel):
    status: str | None = None
    archived: bool | None = None
    title: str | None = None


class ResourceSummary(BaseModel):
    path: str
    kind: str
    status: str
    size_bytes: int
    error: str | None = None
    skill_name: str | None = None
    skill_description: str | None = None
    tools: list[dict[str, str]] | None = None


class ContextSummary(BaseModel):
    pinned_hash: str | None
    pinned_version: int | None
    pinned_at: str | None
    latest_hash: str | None
    dirty: bool
    dirty_since: str | None
    error: str | None
    resources: list[ResourceSummary]


class ChatResponse(BaseModel):
    id: str
    status: str
    title: str
    workspace_id: str
    agent_id: str | None
    parent_id: str | None
    plan_mode: bool
    archived: bool
    created_at: str
    updated_at: str
    context: ContextSummary


class DiffBody(BaseModel):
    added: list[str]
    removed: list[str]
    changed: list[str]


class RefreshResponse(ChatResponse):
    diff: DiffBody


class ToolSpecBody(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any]


class PromptResponse(BaseModel):
    system: str
    tools: list[ToolSpecBody]


class ToolResultBody(BaseModel):
    content: str
    is_error: bool
    attachments: list[dict[str, Any]] | None = None


class SkillBody(BaseModel):
    content: str = Field(description="The whole SKILL.md: frontmatter (name, description) and body.")


class SkillSummary(BaseModel):
    name: str
    description: str
    size_bytes: int
    created_at: str
    updated_at: str


class SkillDetail(SkillSummary):
    content: str


class CreateUserBody(BaseModel):
    name: str
    admin: bool = False


class CreateAgentBody(BaseModel):
    name: str
    parent: str | None = None


class IssuedResponse(BaseModel):
    id: str
    name: str
    token: str


class MeResponse(BaseModel):
    id: str
    name: str
    is_admin: bool


class OverviewSnapshot(BaseModel):
    version: int
    aggregate_hash: str
    received_at: str
    error: str | None
    resources: int
    by_status: dict[str, int] = Field(description="Resources by status.")


class OverviewMcp(BaseModel):
    name: str
    status: str
    tools: int
    error: str | None


class OverviewAgent(BaseModel):
    id: str
    name: str
    online: bool
    last_seen_at: str | None
    url: str | None
    snapshot: OverviewSnapshot | None
    mcp: list[OverviewMcp]


class OverviewWorkspace(BaseModel):
    id: str
    name: str
    agents: list[OverviewAgent]


class OverviewProblem(BaseModel):
    kind: str = Field(description="agent_offline, snapshot_error, resource or mcp_server.")
    where: str
    message: str


class OverviewResponse(BaseModel):
    server: dict[str, str] = Field(description='{"version", "database"}')
    workspaces: list[OverviewWorkspace]
    chats: dict[str, int] = Field(description='{"total", "out_of_date"}: this user\'s chats, archived left out.')
    problems: list[OverviewProblem]


# --- authentication ------------------------------------------------------------------


def _plane(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="A user's API token (acu_...) for chats, skills and workspaces; an agent's token (aca_...) to push.",
)


async def _principal(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Principal:
    token = credentials.credentials.strip() if credentials is not None else ""
    if not token:
        raise AuthError("a bearer token is required (Authorization: Bearer <token>)")
    return await _plane(request).authenticate(token)


async def _user(request: Request, principal: Annotated[Principal, Depends(_principal)]) -> UserPrincipal:
    if not isinstance(principal, UserPrincipal):
        raise ForbiddenError("this route needs a user's API token, not an agent token")
    await _check_text(request)
    return principal


async def _admin(user: Annotated[UserPrincipal, Depends(_user)]) -> UserPrincipal:
    """An administrator, refused before the body is looked at."""
    if not user.is_admin:
        raise ForbiddenError("only an administrator may do this")
    return user


async def _agent(request: Request, principal: Annotated[Principal, Depends(_principal)]) -> AgentPrincipal:
    """An agent token; with context sync switched off, every agent route answers 501 whatever the body."""
    if not isinstance(principal, AgentPrincipal):
        raise ForbiddenError("this route needs an agent token")
    if not _plane(request).settings.sync_enabled:
        raise SyncDisabled(SYNC_DISABLED)
    await _check_text(request)
    return principal


# A JSON escape of NUL or of a UTF-16 surrogate, or the raw UTF-8 bytes of a surrogate (which
# json.loads decodes with "surrogatepass"): only then is the parsed body walked.
_SUSPECT = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})|\xed[\xa0-\xbf]")


def _text_problem(value: str) -> str | None:
    """Why a string cannot be stored: PostgreSQL refuses NUL, and no database takes a lone surrogate."""
    if "\x00" in value:
        return "contains a NUL character (\\u0000)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def _bad_text(value: Any, where: str) -> str | None:
    """The first string in ``value`` (keys too) that cannot be stored, as ``where: problem``."""
    if isinstance(value, str):
        problem = _text_problem(value)
        return f"{where or 'body'}: {problem}" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _bad_text(key, where) or _bad_text(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _bad_text(item, f"{where}[{index}]")
            if found:
                return found
    return None


async def _check_text(request: Request) -> None:
    """Refuse text no database can store (NUL, lone surrogates) with 400 naming where it is, not a 500."""
    for name, value in [*request.path_params.items(), *request.query_params.multi_items()]:
        found = _bad_text(value, name) if isinstance(value, str) else None
        if found:
            raise InvalidRequestError(found)
    body = await request.body()
    if body and _SUSPECT.search(body):
        try:
            parsed = json.loads(body)
        except ValueError:
            return  # not JSON: the route's own parsing refuses it
        found = _bad_text(parsed, "")
        if found:
            raise InvalidRequestError(found)


Plane = Annotated[ControlPlane, Depends(_plane)]
User = Annotated[UserPrincipal, Depends(_user)]
Admin = Annotated[UserPrincipal, Depends(_admin)]
AgentToken = Annotated[AgentPrincipal, Depends(_agent)]
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 408, 409, 413, 421, 500, 503)
}


class _ToolName(Convertor[str]):
    """A tool name is the rest of the path, whatever it holds (``/``, a newline): MCP servers name their tools."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("tool", _ToolName())

agent_router = APIRouter(prefix="/api/v1/agent", tags=["agent"], responses=ERRORS)
router = APIRouter(prefix="/api/v1", responses=ERRORS)


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


# --- agent routes --------------------------------------------------------------------


@agent_router.post(
    "/context",
    summary="Push the agent's snapshot",
    response_model=PushResponse,
    responses={501: {"model": ErrorBody, "description": "Context sync is disabled: stop pushing."}},
)
async def push(plane: Plane, agent: AgentToken, body: PushBody) -> JSONResponse:
    outcome = await plane.push(agent, body.model_dump())
    return _json({"accepted": outcome.accepted, "version": outcome.version, "stored_version": outcome.stored_version})


@agent_router.post("/heartbeat", summary="The agent is alive (or, with online false, leaving)", status_code=204)
async def heartbeat(plane: Plane, agent: AgentToken, body: HeartbeatBody) -> Response:
    await plane.heartbeat(agent, body.model_dump())
    return Response(status_code=204)


# --- user routes ---------------------------------------------------------------------


@router.get("/users/me", summary="Who the token belongs to", response_model=MeResponse, tags=["users"])
async def me(user: User) -> JSONResponse:
    return _json({"id": user.user_id, "name": user.name, "is_admin": user.is_admin})


@router.post(
    "/users", summary="Create a user (administrators)", status_code=201, response_model=IssuedResponse, tags=["users"]
)
async def create_user(plane: Plane, user: Admin, body: CreateUserBody) -> JSONResponse:
    issued = await plane.create_user(user, body.name, admin=body.admin)
    return _json({"id": issued.id, "name": issued.name, "token": issued.token}, 201)


@router.get(
    "/overview",
    summary="Server, workspaces, agents, snapshots, MCP servers, chat counts and problems, in one read",
    response_model=OverviewResponse,
    tags=["workspaces"],
)
async def overview(plane: Plane, user: User) -> JSONResponse:
    return _json(await plane.overview(user))


@router.get("/workspaces", summary="Workspaces open to this user, with their agents", tags=["workspaces"])
async def workspaces(plane: Plane, user: User) -> JSONResponse:
    return _json(await plane.list_workspaces(user))


@router.post(
    "/workspaces/{workspace}/agents",
    summary="Create an agent and its token (administrators; creates the workspace)",
    status_code=201,
    response_model=IssuedResponse,
    tags=["workspaces"],
)
async def create_agent(plane: Plane, user: Admin, workspace: str, body: CreateAgentBody) -> JSONResponse:
    issued = await plane.create_agent(user, workspace, body.name, parent=body.parent)
    return _json({"id": issued.id, "name": issued.name, "token": issued.token}, 201)


@router.post(
    "/chats", summary="Create a chat, bound and pinned", status_code=201, response_model=ChatResponse, tags=["chats"]
)
async def create_chat(plane: Plane, user: User, body: CreateChatBody) -> JSONResponse:
    new = chats.NewChat(body.workspace, body.status, body.parent_id, body.title, body.plan_mode)
    return _json(await plane.create_chat(user, new), 201)


@router.get("/chats", summary="This user's chats, newest first", response_model=list[ChatResponse], tags=["chats"])
async def list_chats(plane: Plane, user: User, archived: bool = False) -> JSONResponse:
    return _json(await plane.list_chats(user, archived=archived))


@router.get("/chats/{chat_id}", summary="A chat with its context summary", response_model=ChatResponse, tags=["chats"])
async def get_chat(plane: Plane, user: User, chat_id: str) -> JSONResponse:
    return _json(await plane.get_chat(user, chat_id))


@router.patch(
    "/chats/{chat_id}",
    summary="Change a chat's status, title or archived flag",
    response_model=ChatResponse,
    tags=["chats"],
)
async def update_chat(plane: Plane, user: User, chat_id: str, body: UpdateChatBody) -> JSONResponse:
    return _json(await plane.update_chat(user, chat_id, status=body.status, archived=body.archived, title=body.title))


@router.put(
    "/chats/{chat_id}/context",
    summary="Refresh: re-pin to the latest snapshot and say what changed",
    response_model=RefreshResponse,
    tags=["chats"],
)
async def refresh(plane: Plane, user: User, chat_id: str) -> JSONResponse:
    return _json(await plane.refresh(user, chat_id))


@router.get(
    "/chats/{chat_id}/prompt",
    summary="This turn's system prompt and tools",
    response_model=PromptResponse,
    tags=["chats"],
)
async def chat_prompt(plane: Plane, user: User, chat_id: str) -> Response:
    return Response(await plane.prompt_json(user, chat_id), media_type="application/json")


@router.post(
    "/chats/{chat_id}/tools/{name:tool}",
    summary="Run a chat tool; failures are results with is_error",
    response_model=ToolResultBody,
    tags=["chats"],
)
async def call_tool(
    plane: Plane,
    user: User,
    chat_id: str,
    name: str,
    arguments: Annotated[Any, Body(description="The tool's arguments, a JSON object.")] = None,
) -> JSONResponse:
    result = await plane.call_tool(user, chat_id, name, {} if arguments is None else arguments)
    return _json(result.to_dict())


@router.get("/chats/{chat_id}/files", summary="The chat's attachments (proposed plans)", tags=["chats"])
async def chat_files(plane: Plane, user: User, chat_id: str) -> JSONResponse:
    return _json(await plane.chat_files(user, chat_id))


@router.get("/chats/{chat_id}/files/{file_id}", summary="One attachment's content", tags=["chats"])
async def chat_file(plane: Plane, user: User, chat_id: str, file_id: str) -> Response:
    file, text = await plane.chat_file(user, chat_id, file_id)
    return Response(text, media_type=file.media_type, headers={"Content-Disposition": _disposition(file.name)})


def _disposition(name: str) -> str:
    """``inline`` with the file's name: an ASCII fallback and the exact name (RFC 6266), whatever its script."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.get(
    "/chats/{chat_id}/events",
    summary="Server-sent events: state, pinned, out_of_date, up_to_date, refreshed, agent_online, agent_offline",
    tags=["chats"],
    response_class=EventSourceResponse,
    responses={429: {"model": ErrorBody, "description": "Too many event streams open with this token."}},
)
async def chat_events(plane: Plane, user: User, chat_id: str) -> EventSourceResponse:
    topics, _ = await plane.event_topics(user, chat_id)  # a 404 must come before the stream starts

    async def stream() -> AsyncIterator[dict[str, str]]:
        with plane.broker.subscribe(topics) as receive:
            _, state = await plane.event_topics(user, chat_id)  # read after subscribing: nothing falls between
            yield {"event": "state", "data": json.dumps(state)}
            async for event in receive:
                yield {"event": event.kind, "data": json.dumps(event.data)}

    return EventSourceResponse(stream(), ping=15)


@router.get("/users/me/skills", summary="Your personal skills", response_model=list[SkillSummary], tags=["skills"])
async def list_skills(plane: Plane, user: User) -> JSONResponse:
    return _json(await plane.list_personal_skills(user))


@router.post(
    "/users/me/skills", summary="Add a personal skill", status_code=201, response_model=SkillSummary, tags=["skills"]
)
async def create_skill(plane: Plane, user: User, body: SkillBody) -> JSONResponse:
    return _json(await plane.create_personal_skill(user, body.content), 201)


@router.get(
    "/users/me/skills/{name}",
    summary="One personal skill with its SKILL.md",
    response_model=SkillDetail,
    tags=["skills"],
)
async def get_skill(plane: Plane, user: User, name: str) -> JSONResponse:
    return _json(await plane.get_personal_skill(user, name))


@router.put("/users/me/skills/{name}", summary="Replace a personal skill", response_model=SkillSummary, tags=["skills"])
async def update_skill(plane: Plane, user: User, name: str, body: SkillBody) -> JSONResponse:
    return _json(await plane.update_personal_skill(user, name, body.content))


@router.delete("/users/me/skills/{name}", summary="Delete a personal skill", status_code=204, tags=["skills"])
async def delete_skill(plane: Plane, user: User, name: str) -> Response:
    await plane.delete_personal_skill(user, name)
    return Response(status_code=204)


# --- the application -----------------------------------------------------------------

_STATUS: list[tuple[type[AgentContextError], int, str]] = [
    (SyncDisabled, 501, "Context sync is disabled."),
    (AuthError, 401, "Unauthorized."),
    (ForbiddenError, 403, "Forbidden."),
    (NotFoundError, 404, "Not found."),
    (ConflictError, 409, "Conflict."),
    (InvalidRequestError, 400, "Invalid request."),
    (UnavailableError, 503, "Unavailable."),
]


async def _known_error(request: Request, exc: AgentContextError) -> JSONResponse:
    for kind, status, message in _STATUS:
        if isinstance(exc, kind):
            headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
            return JSONResponse({"message": message, "detail": str(exc)}, status_code=status, headers=headers)
    return JSONResponse({"message": "Invalid request.", "detail": str(exc)}, status_code=400)


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
    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return JSONResponse({"message": "Invalid request.", "detail": detail}, status_code=400)


def create_app(plane: ControlPlane, *, background: bool = True, edge: Edge | None = None) -> FastAPI:
    """The API over ``plane`` behind the request guard (``control.edge``; ``edge``: the names served and the
    limits, default loopback only); with ``background``, the event broker and the offline sweeper run alongside."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            await group.start(chat_mcp.run)  # each chat's MCP sessions live as long as the server
            if background:
                await group.start(plane.broker.run)
                group.start_soon(plane.run_sweeper)
            yield
            group.cancel_scope.cancel()

    app = FastAPI(
        title="agentcontext control plane",
        version=__version__,
        description="Snapshots pushed by workspace agents, chats that pin them, each turn's prompt and tools.",
        lifespan=lifespan,
    )
    chat_mcp = ChatMcpEndpoint(plane)
    app.state.plane = plane
    app.mount("/mcp", chat_mcp)
    app.add_exception_handler(AgentContextError, _known_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _internal)
    app.include_router(agent_router)
    app.include_router(router)

    @app.get("/healthz", summary="Liveness and the database in use", tags=["health"])
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__, "database": plane.db.dialect}

    dashboard.install(app)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    app.add_middleware(
        RequestGuard,
        edge=edge or Edge(max_body=MAX_BODY),
        authenticate=control_edge.authenticator(plane),
        streams=control_edge.is_stream,
        stream_key=control_edge.stream_key,
    )
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, saying what this API does: invalid requests are 400 ``ErrorBody``, never 422."""
    if app.openapi_schema is None:
        document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses.setdefault("400", {"description": "Bad Request", "content": _ERROR_CONTENT})
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        resource = PushedResource.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(resource.pop("$defs", {}))
        schemas["PushedResource"] = resource
        app.openapi_schema = document
    return app.openapi_schema


_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
