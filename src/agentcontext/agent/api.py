"""The workspace agent's HTTP API under ``/api/v0/`` (coder.md 6.1-6.2), with its OpenAPI document.

Errors have Coder's shape, ``{"message": ..., "detail": ...}``. When the agent has a token,
every route needs ``Authorization: Bearer <token>`` (the agent refuses to listen on a
non-loopback address without one); the per-run secret it gives its control plane is
accepted as well, since the control plane keeps only a hash of the agent's token.
"""

from __future__ import annotations

import errno
import hmac
import json
import os
import platform
import stat
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.exceptions import HTTPException

from agentcontext import __version__, skill_files
from agentcontext.agent import instructions
from agentcontext.agent.context import ContextAgent, SourceError
from agentcontext.errors import AgentContextError, NotFoundError, UnsafePathError
from agentcontext.mcp.upstream import UpstreamError
from agentcontext.resource import Kind, Status
from agentcontext.sanitize import sanitize
from agentcontext.snapshot import Snapshot
from agentcontext.tool_names import InvalidToolName, UnknownServer


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


class ToolsResponse(BaseModel):
    tools: list[ToolEntry]


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


PLAN_FILE_LIMIT = 32 * 1024 + 1  # propose_plan's cap plus one byte, so "too large" can be told


class ContextConfigResponse(BaseModel):
    parts: list[dict[str, Any]]
    working_dir: str


ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 404, 500, 502, 503, 504)}


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


def _token_ok(request: Request, authorization: str | None) -> bool:
    tokens: tuple[str, ...] = request.app.state.tokens
    if not tokens:
        return True
    presented = (authorization or "").encode()
    # every candidate compared, so the time taken does not tell which one nearly matched
    matches = [hmac.compare_digest(presented, f"Bearer {token}".encode()) for token in tokens]
    return any(matches)


def _unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized.", "A valid bearer token is required.")


async def _authorized(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    if not _token_ok(request, authorization):
        raise _unauthorized()


Agent = Annotated[ContextAgent, Depends(_agent)]
router = APIRouter(prefix="/api/v0", dependencies=[Depends(_authorized)], responses=ERRORS)


def create_app(
    agent: ContextAgent, *, token: str | None = None, peer_token: str | None = None, startup_wait: float = 35.0
) -> FastAPI:
    """The agent's API over ``agent``; ``token`` and ``peer_token`` make every route require one of them."""
    app = FastAPI(
        title="agentcontext workspace agent",
        version=__version__,
        description="The live context of one workspace: snapshot, sources, skills and the workspace's MCP tools.",
    )
    app.state.agent, app.state.startup_wait = agent, startup_wait
    # an empty token is no token: it must never let "Bearer " in
    app.state.tokens = tuple(t for t in (token, peer_token) if t)
    app.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.include_router(router)
    app.include_router(instructions.router, dependencies=[Depends(_authorized)], responses=ERRORS)
    return app


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse({"message": exc.message, "detail": exc.detail}, status_code=exc.status, headers=headers)


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (no such route, wrong method, a body it cannot parse) in the same shape as ours."""
    if exc.status_code not in (404, 405) and not _token_ok(request, request.headers.get("authorization")):
        return await _api_error(request, _unauthorized())  # a route matched: its body is nobody's business
    detail = f"{request.method} {request.url.path}: {exc.detail}"
    return JSONResponse(
        {"message": f"{exc.detail}.", "detail": detail}, status_code=exc.status_code, headers=exc.headers
    )


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    if not _token_ok(request, request.headers.get("authorization")):  # a body that is not JSON fails before auth
        return await _api_error(request, _unauthorized())
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
    parts = _parts(snapshot, agent.config.skills.meta_file)
    return ContextConfigResponse(parts=parts, working_dir=agent.work_dir)


@router.get("/skills/{name}", summary="A skill's body, folder and supporting files")
async def skill(agent: Agent, name: str) -> SkillResponse:
    found = _skill(agent, name)
    folder = skill_files.skill_dir(found)
    files = skill_files.listing(folder, agent.config.skills.meta_file)
    return SkillResponse(name=name, dir=folder, body=skill_files.body(found.content or ""), files=files)


@router.get("/skills/{name}/files/{path:path}", summary="A supporting file of a skill (read_skill_file)")
async def skill_file(agent: Agent, name: str, path: str) -> SkillFileResponse:
    found = _skill(agent, name)
    try:
        skill_files.check_file_path(path)
        text, cut = await anyio.to_thread.run_sync(skill_files.read_skill_file, skill_files.skill_dir(found), path)
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
async def plan_file(path: str) -> PlanFileResponse:
    if not path.endswith(".md") or not os.path.isabs(path):
        raise ApiError(400, "Invalid plan path.", "plan files are absolute paths ending in .md")
    try:
        resolved, data = await anyio.to_thread.run_sync(_read_plan, path)
    except ValueError:  # a NUL byte: no file system can name it
        raise ApiError(400, "Could not read the plan file.", f"open {path}: invalid argument") from None
    except FileNotFoundError:
        raise ApiError(404, "Plan file not found.", f"open {path}: no such file or directory") from None
    except OSError as exc:
        raise ApiError(400, "Could not read the plan file.", f"read {path}: {exc.strerror or exc}") from None
    return PlanFileResponse(
        path=path, resolved=resolved, content=data.decode("utf-8", errors="replace"), size_bytes=len(data)
    )


def _read_plan(path: str) -> tuple[str, bytes]:
    """The resolved path and at most ``PLAN_FILE_LIMIT`` bytes of a regular file.

    Raises:
        OSError: it cannot be opened, or is not a regular file (a FIFO, a directory, a device).
    """
    # O_NONBLOCK: a FIFO planted at the path must not hang the open; checked on the descriptor, so
    # what is read is what was checked; the descriptor is closed whatever happens
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        remaining = PLAN_FILE_LIMIT
        while remaining > 0 and (chunk := os.read(fd, remaining)):
            chunks.append(chunk)
            remaining -= len(chunk)
        resolved = _opened_path(fd, path)
    finally:
        os.close(fd)
    return resolved, b"".join(chunks)


def _opened_path(fd: int, path: str) -> str:
    """Where the open descriptor leads: the file that was read, even if a link at ``path`` changed since."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")  # Linux
    except OSError:
        return os.path.realpath(path)
    return opened if os.path.isabs(opened) else os.path.realpath(path)


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
    return ToolsResponse(tools=entries)


@router.post("/mcp/call-tool", summary="Call a workspace MCP tool", response_model=CallToolResponse)
async def call_tool(agent: Agent, body: CallToolBody) -> Response:
    try:
        outcome = await agent.mcp.call_tool(body.tool_name, body.arguments)
    except InvalidToolName as exc:
        raise ApiError(400, "Invalid tool name.", str(exc)) from None
    except UnknownServer as exc:
        raise ApiError(404, "Unknown MCP server.", str(exc)) from None
    except UpstreamError as exc:
        raise ApiError(502, "MCP tool call failed.", str(exc)) from None
    return JSONResponse(outcome.to_dict())  # already in the response's shape: skip a second validation


@router.get("/events", summary="Server-sent events: each published snapshot and MCP catalog change")
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


def _parts(snapshot: Snapshot, meta_file: str) -> list[dict[str, Any]]:
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
            "skill_meta_file": meta_file,
        }
        for skill in skill_files.offered(snapshot.resources)
    )
    return parts
