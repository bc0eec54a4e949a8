"""``POST /api/v0/context/instructions``: the instruction files that apply in some folders, on demand.

A control plane (or any client with the agent's token) asks which instruction files apply
when a chat works in up to ``ondemand.max_paths`` folders (files stand for their folder's
chain and match path-scoped rules). Only instruction files are answered, never skills or
``.mcp.json``: those stay an execution surface that only the work dir's own config may add.

Answer: ``files`` (each ``path``, ``scope``, ``status``, ``load``, ``reason``, ``bytes``,
``content``, ``content_hash``, ``for``), ``excluded`` (past the cap, without content),
``not_loaded`` (found and not used, with the reason), ``refused`` (folders not looked at:
outside the work dir and every declared source, ``..``, links leaving the roots...). The
serialised answer stays under ``ondemand.max_bytes`` (1 MiB): files that would push it
over move to ``excluded``. The lookup answers within ``ondemand.timeout`` (3 s) or says it
gave up (504). Before the first scan it answers 503.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from agentcontext.agent.context import ContextAgent
from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.instructions.applied import Applicable

router = APIRouter(prefix="/api/v0")


class InstructionsBody(BaseModel):
    dirs: list[str] = Field(description="Folders (or files) the chat works in: absolute, or relative to the work dir.")


class InstructionFile(BaseModel):
    path: str
    scope: str
    status: str
    load: dict[str, Any] | None
    reason: str
    bytes: int
    size_bytes: int
    content_hash: str
    warnings: list[str]
    for_: list[str] = Field(alias="for", serialization_alias="for")
    hook: bool = Field(description="claude: sent inside Claude Code's AGENTS.md hook context, not as a reminder")
    content: str | None = None


class Refusal(BaseModel):
    path: str
    reason: str


class InstructionsResponse(BaseModel):
    work_dir: str
    profile: str
    paths: list[str]
    bytes: int
    files: list[InstructionFile]
    excluded: list[InstructionFile]
    not_loaded: list[InstructionFile]
    refused: list[Refusal]
    startup: list[str]


def _error(status: int, message: str, detail: str) -> JSONResponse:
    return JSONResponse({"message": message, "detail": detail}, status_code=status)


@router.post(
    "/context/instructions",
    summary="Instruction files that apply in these folders (on demand; never skills or MCP configs)",
    response_model=InstructionsResponse,
)
async def instructions(request: Request, body: InstructionsBody) -> Response:
    agent: ContextAgent = request.app.state.agent
    limit = agent.config.ondemand.max_paths
    if len(body.dirs) > limit:
        detail = f"{len(body.dirs)} folders in one request: at most {limit} (ondemand.max_paths)"
        return _error(400, "Too many folders.", detail)
    if any(len(d) > 4096 for d in body.dirs):
        return _error(400, "Invalid request.", "a folder path is longer than 4096 characters")
    if agent.last is None:
        return _error(503, "Not ready.", "the workspace has not been scanned yet: ask again once it is ready")
    timeout = agent.config.ondemand.timeout
    try:
        with anyio.fail_after(timeout + 0.5):  # the lookup keeps its own deadline; this one is a backstop
            answer = await anyio.to_thread.run_sync(agent.applicable, body.dirs, abandon_on_cancel=True)
    except TimeoutError:
        return _error(504, "Gave up.", f"the lookup did not finish within {timeout:g} s (ondemand.timeout)")
    except UnavailableError as exc:
        return _error(504, "Gave up.", str(exc))
    except InvalidRequestError as exc:
        return _error(400, "Invalid request.", str(exc))
    agent.discovered.learn(answer.watch)  # where a change would change this answer: watched from now on
    return Response(capped(answer, agent.config.ondemand.max_bytes), media_type="application/json")


def capped(answer: Applicable, max_bytes: int) -> bytes:
    """The answer as JSON within ``max_bytes``: the last files move to ``excluded`` until it fits."""
    data = answer.to_dict()
    body = json.dumps(data, ensure_ascii=False).encode()
    while len(body) > max_bytes and data["files"]:
        row = data["files"].pop()
        row.pop("content", None)
        row["status"] = "excluded"
        row["reason"] = f"left out: the answer is capped at {max_bytes} bytes (ondemand.max_bytes)"
        data["excluded"].insert(0, row)
        data["bytes"] = sum(f["bytes"] for f in data["files"])
        body = json.dumps(data, ensure_ascii=False).encode()
    return body
