"""The workspace agent's HTTP API under ``/api/v0/`` (coder.md 6.1-6.2), with its OpenAPI document.

Errors have Coder's shape, ``{"message": ..., "detail": ...}``. The agent always has a token
(generated when none is given): every route needs ``Authorization: Bearer <token>``; the
per-run secret it gives its control plane is accepted as well, since the control plane keeps
only a hash of the agent's token. The request guard (``web.guard``) checks Host, Origin, the
token and the body's size before any route runs, so nothing is read for a caller without one.
"""

from __future__ import annotations

import errno
import hmac
import json
import logging
import os
import platform
from collections.abc import AsyncIterator, Mapping
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.exceptions import HTTPException

from agentcontext import __version__
from agentcontext.agent import instructions, views
from agentcontext.agent.context import ContextAgent, SourceError
from agentcontext.errors import AgentContextError, ConflictError, NotFoundError, UnsafePathError
from agentcontext.fs import plans
from agentcontext.resource import Kind, Status
from agentcontext.sanitize import sanitize
from agentcontext.skills import files as skill_files
from agentcontext.skills.commands import is_command
from agentcontext.skills.folder import open_folder
from agentcontext.snapshot import Snapshot
from agentcontext.web.guard import Edge, Refusal, RequestGuard, Verdict, unauthorized
from agentcontext.workspace_mcp.client.upstream import UpstreamError
from agentcontext.workspace_mcp.tool_names import InvalidToolName, PendingApproval, UnknownServer

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error answered as ``{"message", "detail"}`` with a status code."""

    def __init__(self, status: int, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.detail = status, message, detail


class ErrorBody(BaseModel):
    message: str
    detail: str | None = None


class SourceBody(BaseModel):
    path: str = Field(max_length=4096)


class CallToolBody(BaseModel):
    tool_name: str = Field(max_length=1024)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ApproveBody(BaseModel):
    server: str = Field(max_length=1024)
    digest: str = Field(max_length=64, description="sha256 of the entry as shown (approval.digest)")
    tool_set: str = Field(
        default="", max_length=64, description="for a changed server: the listing's fingerprint as shown"
    )


class ApproveResponse(BaseModel):
    message: str


class ContentBlock(BaseModel):
    type: str
    text: str | None = None
    data: str | None = None
    media_type: str | None = None


class CallToolResponse(BaseModel):
    content: list[ContentBlock]
    is_error: bool


class ToolEntry(BaseModel):
    server_name: str
    name: str
    description: str
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema")
    required: list[str]
    input_schema: dict[str, Any]


class PendingServer(BaseModel):
    server_name: str
    reason: str  # "pending approval: ..." with the command that approves it


class ToolsResponse(BaseModel):
    tools: list[ToolEntry]
    pending: list[PendingServer] = []  # servers whose tools are not offered until the user approves them


class SkillResponse(BaseModel):
    name: str
    dir: str
    body: str
    files: list[str]


class SkillFileResponse(BaseModel):
    content: str
    truncated: bool


class WorkspaceResponse(BaseModel):
    os: str
    home: str
    work_dir: str


class PlanFileResponse(BaseModel):
    path: str
    resolved: str
    content: str
    size_bytes: int


class ContextConfigResponse(BaseModel):
    parts: list[dict[str, Any]]
    working_dir: str


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 408, 409, 413, 421, 500, 502, 503, 504)
}
PUBLIC_PATHS = frozenset({"/openapi.json"})  # no data in it


def snapshot_json(snapshot: Snapshot, *, payloads: bool) -> dict[str, Any]:
    data = snapshot.to_dict()
    data["schema_version"] = 1
    if not payloads:
        for resource in data["resources"]:
            resource.pop("content", None)
    return data


async def _agent(request: Request) -> ContextAgent:
    agent: ContextAgent = request.app.state.agent
    return agent


UNAUTHORIZED = "A valid bearer token is required."


def _token_ok(tokens: tuple[str, ...], authorization: str | None) -> bool:
    presented = (authorization or "").encode()
    # every candidate compared, so the time taken does not tell which one nearly matched
    matches = [hmac.compare_digest(presented, f"Bearer {token}".encode()) for token in tokens]
    return any(matches)


async def _authorized(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    """The guard checked already; the route checks again, so a router mounted without it is not open."""
    if not _token_ok(request.app.state.tokens, authorization):
        raise ApiError(401, "Unauthorized.", UNAUTHORIZED)


Agent = Annotated[ContextAgent, Depends(_agent)]
router = APIRouter(prefix="/api/v0", dependencies=[Depends(_authorized)], responses=ERRORS)


def create_app(
    agent: ContextAgent,
    *,
    token: str,
    peer_token: str | None = None,
    startup_wait: float = 35.0,
    edge: Edge | None = None,
) -> FastAPI:
    """The agent's API over ``agent``: every route requires ``token`` or ``peer_token``, behind the request guard.

    Raises:
        ValueError: an empty ``token``: it must never let ``Bearer `` in.
    """
    if not token:
        raise ValueError("the agent's API needs a token")
    app = FastAPI(
        title="agentcontext workspace agent",
        version=__version__,
        description="The live context of one workspace: snapshot, sources, skills and the workspace's MCP tools.",
        docs_url=None,  # Swagger UI and ReDoc load their scripts from a CDN: programs read /openapi.json
        redoc_url=None,
    )
    app.state.agent, app.state.startup_wait = agent, startup_wait
    app.state.views = views.ViewCache(agent)
    # an empty peer token is no token: it must never let "Bearer " in
    tokens = app.state.tokens = tuple(t for t in (token, peer_token) if t)
    app.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
    app.include_router(router)
    app.include_router(instructions.router, dependencies=[Depends(_authorized)], responses=ERRORS)
    app.include_router(views.router, dependencies=[Depends(_authorized)], responses=ERRORS)

    async def authenticate(headers: Mapping[str, str], path: str) -> Verdict | Refusal:
        if path in PUBLIC_PATHS:
            return Verdict.PUBLIC
        return Verdict.AUTHENTICATED if _token_ok(tokens, headers.get("authorization")) else unauthorized(UNAUTHORIZED)

    app.add_middleware(
        RequestGuard, edge=edge or Edge(), authenticate=authenticate, streams=lambda path: path == "/api/v0/events"
    )
    return app


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse({"message": exc.message, "detail": exc.detail}, status_code=exc.status, headers=headers)


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    """In the API's own shape, never a plain-text 500: a full disk (an approval or a token the agent writes) is
    said as such; anything else is a bug, logged with its traceback and not described to the caller."""
    if isinstance(exc, OSError) and exc.errno in _FULL:
        detail = f"the agent's disk is full ({exc.strerror}): nothing was changed; retry when space is freed"
        return JSONResponse({"message": "Could not write.", "detail": detail}, status_code=503)
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"message": "Internal error.", "detail": None}, status_code=500)


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (no such route, wrong method, a body it cannot parse) in the same shape as ours."""
    detail = f"{request.method} {request.url.path}: {exc.detail}"
    return JSONResponse(
        {"message": f"{exc.detail}.", "detail": detail}, status_code=exc.status_code, headers=exc.headers
    )


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return JSONResponse({"message": "Invalid request.", "detail": detail}, status_code=400)


@router.get("/context", summary="The current snapshot")
async def context(agent: Agent, payloads: bool = False) -> dict[str, Any]:
    return snapshot_json(agent.snapshot, payloads=payloads)


@router.post("/context/resync", summary="Scan now and return the snapshot")
async def resync(agent: Agent) -> dict[str, Any]:
    try:
        with anyio.fail_after(60):
            return snapshot_json(await agent.resync(), payloads=False)
    except TimeoutError:
        raise ApiError(504, "Resync failed.", "the scan did not finish within 60 seconds") from None
    except AgentContextError as exc:
        raise ApiError(500, "Resync failed.", str(exc)) from None


@router.post("/ready", summary="Mark the workspace ready: the agent starts publishing")
async def ready(agent: Agent) -> dict[str, bool]:
    agent.set_ready()
    return {"ready": True}


@router.get("/context/sources", summary="Declared sources")
async def sources(agent: Agent) -> list[SourceBody]:
    return [SourceBody(path=p) for p in agent.sources]


@router.post("/context/sources", status_code=201, summary="Declare a source (idempotent)")
async def add_source(agent: Agent, body: SourceBody) -> SourceBody:
    try:
        return SourceBody(path=agent.add_source(body.path))
    except SourceError as exc:
        raise ApiError(400, "Could not add context source.", str(exc)) from None


@router.get("/context/sources/{path:path}", summary="One declared source")
async def get_source(agent: Agent, path: str) -> SourceBody:
    try:
        return SourceBody(path=agent.find_source(path))
    except NotFoundError as exc:
        raise ApiError(404, "Context source not found.", str(exc)) from None


@router.delete("/context/sources/{path:path}", status_code=204, summary="Remove a declared source")
async def remove_source(agent: Agent, path: str) -> Response:
    try:
        agent.remove_source(path)
    except NotFoundError as exc:
        raise ApiError(404, "Context source not found.", str(exc)) from None
    return Response(status_code=204)


@router.get("/context-config", summary="Instruction files and skills as chat message parts")
async def context_config(agent: Agent, request: Request) -> ContextConfigResponse:
    if not agent.ready.is_set():
        with anyio.move_on_after(request.app.state.startup_wait):
            await agent.ready.wait()
    # Ready: the first scan may not have run yet, so scan (a no-op when it has). Still not
    # ready after the wait: Coder answers with the files as they are on disk now.
    snapshot = await agent.resync() if agent.ready.is_set() else await agent.disk_snapshot()
    parts = _parts(snapshot)
    return ContextConfigResponse(parts=parts, working_dir=agent.work_dir)


@router.get("/skills/{name}", summary="A skill's body, folder and supporting files")
async def skill(agent: Agent, name: str) -> SkillResponse:
    found = _skill(agent, name)
    folder = skill_files.skill_dir(found)
    files: list[str] = []
    if not is_command(found):  # a custom command is one file: nothing beside it is its own
        meta_file = agent.config.skills.meta_file
        files = await anyio.to_thread.run_sync(_listing, folder, _boundary(agent, folder), meta_file)
    return SkillResponse(name=name, dir=folder, body=skill_files.body(found.content or ""), files=files)


def _listing(folder: str, boundary: str | None, meta_file: str) -> list[str]:
    try:
        with open_folder(folder, boundary) as opened:
            return opened.listing(meta_file)
    except (OSError, UnsafePathError):  # the body is served even when the folder cannot be listed
        return []


def _boundary(agent: ContextAgent, folder: str) -> str | None:
    """The root the last scan reached ``folder`` from: skill files are read beneath it."""
    return agent.last.layout.boundary_of(folder) if agent.last is not None else None


@router.get("/skills/{name}/files/{path:path}", summary="A supporting file of a skill (read_skill_file)")
async def skill_file(agent: Agent, name: str, path: str) -> SkillFileResponse:
    found = _skill(agent, name)
    folder = skill_files.skill_dir(found)
    if is_command(found):
        raise ApiError(404, f'read skill file: "{name}" is a custom command, one file with no other files')
    try:
        skill_files.check_file_path(path)
        text, cut = await anyio.to_thread.run_sync(
            partial(skill_files.read_skill_file, folder, path, boundary=_boundary(agent, folder))
        )
    except UnsafePathError as exc:
        raise ApiError(400, str(exc)) from None
    except OSError as exc:
        raise ApiError(404, "read skill file: " + (exc.strerror or str(exc))) from None
    except ValueError:  # a NUL byte: no file system can name it
        raise ApiError(400, "read skill file: invalid argument") from None
    return SkillFileResponse(content=text, truncated=cut)


@router.get("/workspace", summary="The workspace's OS, home and working directory")
async def workspace(agent: Agent) -> WorkspaceResponse:
    return WorkspaceResponse(os=platform.system().lower(), home=agent.config.home, work_dir=agent.work_dir)


@router.get("/plan-file", summary="A markdown plan file, for propose_plan (at most 32 KiB + 1 byte)")
async def plan_file(agent: Agent, path: str) -> PlanFileResponse:
    if not path.endswith(".md") or not os.path.isabs(path):
        raise ApiError(400, "Invalid plan path.", "plan files are absolute paths ending in .md")
    roots = plans.plan_roots(agent.config.home, agent.work_dir)
    try:
        resolved, data = await anyio.to_thread.run_sync(plans.read_plan, path, roots)
    except ValueError:  # a NUL byte: no file system can name it
        raise ApiError(400, "Could not read the plan file.", f"open {path}: invalid argument") from None
    except UnsafePathError as exc:
        raise ApiError(400, "Invalid plan path.", str(exc)) from None
    except FileNotFoundError:
        raise ApiError(404, "Plan file not found.", f"open {path}: no such file or directory") from None
    except OSError as exc:
        raise ApiError(400, "Could not read the plan file.", f"read {path}: {exc.strerror or exc}") from None
    return PlanFileResponse(
        path=path, resolved=resolved, content=data.decode("utf-8", errors="replace"), size_bytes=len(data)
    )


@router.get("/mcp/tools", summary="The workspace's MCP tools, named server__tool")
async def tools(agent: Agent, refresh: bool = False) -> ToolsResponse:
    if refresh:
        with anyio.move_on_after(agent.config.mcp.connect_timeout):
            await agent.mcp.refresh()
    entries = [
        ToolEntry(
            server_name=server,
            name=name,
            description=tool.description,
            schema=dict(tool.input_schema.get("properties") or {}),
            required=list(tool.input_schema.get("required") or []),
            input_schema=tool.input_schema,
        )
        for name, server, tool in agent.mcp.tools()
    ]
    pending = [PendingServer(server_name=server, reason=reason) for server, reason in agent.mcp.pending()]
    return ToolsResponse(tools=entries, pending=pending)


@router.post("/mcp/call-tool", summary="Call a workspace MCP tool", response_model=CallToolResponse)
async def call_tool(agent: Agent, body: CallToolBody) -> Response:
    try:
        outcome = await agent.mcp.call_tool(body.tool_name, body.arguments)
    except InvalidToolName as exc:
        raise ApiError(400, "Invalid tool name.", str(exc)) from None
    except UnknownServer as exc:
        raise ApiError(404, "Unknown MCP server.", str(exc)) from None
    except PendingApproval as exc:
        raise ApiError(409, "MCP server pending approval.", str(exc)) from None
    except UpstreamError as exc:
        raise ApiError(502, "MCP tool call failed.", str(exc)) from None
    return JSONResponse(outcome.to_dict())  # already in the response's shape: skip a second validation


@router.post("/mcp/approve", summary="Approve a pending MCP server, or a changed one's tools, as shown")
async def approve_mcp(agent: Agent, body: ApproveBody) -> ApproveResponse:
    """The approval is written to the trust store of the user the agent runs as; it binds to the entry's
    digest (and for a changed server to the listing's fingerprint), so a change since it was shown is refused."""
    try:
        return ApproveResponse(message=await agent.approve_mcp(body.server, body.digest, body.tool_set))
    except NotFoundError as exc:
        raise ApiError(404, "Unknown MCP server.", str(exc)) from None
    except ConflictError as exc:
        raise ApiError(409, "Nothing to approve as shown.", str(exc)) from None


@router.get(
    "/events",
    summary="Server-sent events: each published snapshot and MCP catalog change",
    responses={429: {"model": ErrorBody, "description": "Too many event streams open with this token."}},
)
async def events(agent: Agent, request: Request) -> EventSourceResponse:
    return EventSourceResponse(_event_stream(agent, request))


async def _event_stream(agent: ContextAgent, request: Request) -> AsyncIterator[dict[str, str]]:
    with agent.subscription() as stream:
        snapshot = agent.snapshot
        first = {"version": snapshot.version, "aggregate_hash": snapshot.aggregate_hash, "error": snapshot.error}
        yield {"event": "snapshot", "data": json.dumps(first)}
        async for event in stream:
            if await request.is_disconnected():
                break
            yield {"event": event.kind, "data": json.dumps(event.data)}


def _skill(agent: ContextAgent, name: str) -> Any:
    skills = skill_files.offered(agent.snapshot.resources)
    for skill in skills:
        if skill.name == name:
            return skill
    raise ApiError(404, f'skill "{name}" not found')


def _parts(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Coder's G2 parts: sanitized context files, then skills."""
    parts: list[dict[str, Any]] = []
    ordered = sorted(
        (r for r in snapshot.resources if r.kind is Kind.INSTRUCTION_FILE and r.status.carries_content),
        key=lambda r: r.doc_order if r.doc_order is not None else 1 << 30,
    )
    for resource in ordered:
        text = sanitize(resource.content or "")
        if text:
            parts.append(
                {
                    "type": "context-file",
                    "context_file_path": resource.path,
                    "context_file_content": text,
                    "context_file_truncated": resource.status is Status.TRUNCATED,
                }
            )
    parts.extend(
        {
            "type": "skill",
            "skill_name": skill.name,
            "skill_description": skill.description or "",
            "skill_dir": skill_files.skill_dir(skill),
            "skill_meta_file": os.path.basename(skill.path),  # a custom command's own file name
        }
        for skill in skill_files.offered(snapshot.resources)
    )
    return parts
