"""The control plane's HTTP API under ``/api/v1/``, with its OpenAPI document at ``/openapi.json``.

Every route but ``/healthz`` needs ``Authorization: Bearer <token>``: a user's API token
for chats, skills and workspaces, an agent's token for ``/api/v1/agent/*``. Errors are
``{"message", "detail"}``: 400 invalid, 401 no or unknown token, 403 the wrong kind of
token or not an administrator, 404 not found (another user's chat is not found either),
409 a conflict, 413 a body over 8 MiB, 501 context sync disabled, 503 unreachable.
Chat tools answer 200 with ``is_error`` for their own failures, as a model expects.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentcontext import __version__
from agentcontext.control import chats
from agentcontext.control.identity import AgentPrincipal, Principal, UserPrincipal
from agentcontext.control.plane import ControlPlane, SyncDisabled
from agentcontext.errors import (
    AgentContextError,
    AuthError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    UnavailableError,
)

MAX_BODY = 8 * 1024 * 1024

# --- wire models (documentation and request parsing only) ----------------------------


class ErrorBody(BaseModel):
    message: str
    detail: str | None = None


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
    resources: list[dict[str, Any]] = Field(default_factory=list)
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


# --- authentication ------------------------------------------------------------------


def _plane(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


async def _principal(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("a bearer token is required (Authorization: Bearer <token>)")
    return await _plane(request).authenticate(token.strip())


async def _user(principal: Annotated[Principal, Depends(_principal)]) -> UserPrincipal:
    if not isinstance(principal, UserPrincipal):
        raise ForbiddenError("this route needs a user's API token, not an agent token")
    return principal


async def _agent(principal: Annotated[Principal, Depends(_principal)]) -> AgentPrincipal:
    if not isinstance(principal, AgentPrincipal):
        raise ForbiddenError("this route needs an agent token")
    return principal


Plane = Annotated[ControlPlane, Depends(_plane)]
User = Annotated[UserPrincipal, Depends(_user)]
AgentToken = Annotated[AgentPrincipal, Depends(_agent)]
ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 503)}

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
async def create_user(plane: Plane, user: User, body: CreateUserBody) -> JSONResponse:
    issued = await plane.create_user(user, body.name, admin=body.admin)
    return _json({"id": issued.id, "name": issued.name, "token": issued.token}, 201)


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
async def create_agent(plane: Plane, user: User, workspace: str, body: CreateAgentBody) -> JSONResponse:
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
async def chat_prompt(plane: Plane, user: User, chat_id: str) -> JSONResponse:
    return _json((await plane.prompt(user, chat_id)).to_dict())


@router.post(
    "/chats/{chat_id}/tools/{name}",
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
    return Response(
        text, media_type=file.media_type, headers={"Content-Disposition": f'inline; filename="{file.name}"'}
    )


@router.get(
    "/chats/{chat_id}/events",
    summary="Server-sent events: state, pinned, out_of_date, up_to_date, refreshed, agent_online, agent_offline",
    tags=["chats"],
    response_class=EventSourceResponse,
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


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return JSONResponse({"message": "Invalid request.", "detail": detail}, status_code=400)


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, before anything parses them."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"message": "Request body too large.", "detail": f"at most {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def create_app(plane: ControlPlane, *, background: bool = True) -> FastAPI:
    """The API over ``plane``; with ``background``, the event broker and the offline sweeper run alongside."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not background:
            yield
            return
        async with anyio.create_task_group() as group:
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
    app.state.plane = plane
    app.add_exception_handler(AgentContextError, _known_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.include_router(agent_router)
    app.include_router(router)

    @app.get("/healthz", summary="Liveness and the database in use", tags=["health"])
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__, "database": plane.db.dialect}

    app.add_middleware(BodyLimit)
    return app
