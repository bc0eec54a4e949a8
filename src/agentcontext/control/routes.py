"""The API's routes under ``/api/v1/``: each reads its body as a wire model and answers one.

A route authenticates (``auth``), hands the work to a service of the plane (``services``: one
worker-thread hop for its database work, or none) and serialises the wire model the service
returns, the one its OpenAPI entry names, so an answer is exactly what the document says. Chat tools answer 200 with
``is_error`` for their own failures, as a model expects.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import quote

from anyio.streams.memory import MemoryObjectReceiveStream
from fastapi import APIRouter, Body
from fastapi.responses import Response
from pydantic import BaseModel, TypeAdapter
from starlette.convertors import Convertor, register_url_convertor

from agentcontext.control import chats, wire
from agentcontext.control.auth import Admin, AgentToken, User
from agentcontext.control.event_stream import EventStream, frame
from agentcontext.control.events import Event
from agentcontext.control.tools import ToolResult
from agentcontext.errors import AgentContextError
from agentcontext.web.direct_route import DirectRoute
from agentcontext.web.recheck import Recheck
from agentcontext.wire.views import AgentViewsBody

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": wire.ErrorBody} for code in (400, 401, 403, 404, 408, 409, 413, 421, 422, 500, 503)
}
JSON = "application/json"


class _ToolName(Convertor[str]):
    """A tool name is the rest of the path, whatever it holds (``/``, a newline): MCP servers name their tools."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("tool", _ToolName())

# a plain route is answered without FastAPI's per-request solving (``web.direct_route``); bodies of one model are
# parsed and validated in one pass (``web.json_body``)
agent_router = APIRouter(prefix="/api/v1/agent", tags=["agent"], responses=ERRORS, route_class=DirectRoute)
router = APIRouter(prefix="/api/v1", responses=ERRORS, route_class=DirectRoute)


def answer(model: BaseModel, status: int = 200) -> Response:
    """The model as the response body, serialised by pydantic (what it omits stays unset)."""
    return Response(model.__pydantic_serializer__.to_json(model, exclude_unset=True), status, media_type=JSON)


_CHATS = TypeAdapter(list[wire.ChatResponse])
_SKILLS = TypeAdapter(list[wire.SkillSummary])
_FILES = TypeAdapter(list[wire.ChatFileEntry])
_WORKSPACES = TypeAdapter(list[wire.WorkspaceEntry])


def _answer_list(adapter: TypeAdapter[Any], items: list[Any]) -> Response:
    """Models as a JSON list, every field of each written (what is unset too, as lists always answered)."""
    return Response(adapter.dump_json(items), media_type=JSON)


# --- agent routes --------------------------------------------------------------------


@agent_router.post(
    "/context",
    summary="Push the agent's snapshot",
    response_model=wire.PushResponse,
    responses={501: {"model": wire.ErrorBody, "description": "Context sync is disabled: stop pushing."}},
)
async def push(call: AgentToken, body: wire.PushRequest) -> Response:
    return answer(await call.plane.sync.push(call.agent, body))


@agent_router.post("/heartbeat", summary="The agent is alive (or, with online false, leaving)", status_code=204)
async def heartbeat(call: AgentToken, body: wire.HeartbeatRequest) -> Response:
    await call.plane.sync.heartbeat(call.agent, body)
    return Response(status_code=204)


# --- user routes ---------------------------------------------------------------------


@router.get("/users/me", summary="Who the token belongs to", response_model=wire.MeResponse, tags=["users"])
async def me(call: User) -> Response:
    return answer(wire.MeResponse(id=call.user.user_id, name=call.user.name, is_admin=call.user.is_admin))


@router.post(
    "/users",
    summary="Create a user (administrators)",
    status_code=201,
    response_model=wire.IssuedResponse,
    tags=["users"],
)
async def create_user(call: Admin, body: wire.CreateUserBody) -> Response:
    return answer(await call.plane.admin.create_user(call.user, body.name, admin=body.admin), 201)


@router.get(
    "/overview",
    summary="Server, workspaces, agents, snapshots, MCP servers, chat counts and problems, in one read",
    response_model=wire.OverviewResponse,
    tags=["workspaces"],
)
async def overview(call: User) -> Response:
    return answer(await call.plane.views.overview(call.user))


@router.get(
    "/workspaces",
    summary="Workspaces open to this user, with their agents",
    response_model=list[wire.WorkspaceEntry],
    tags=["workspaces"],
)
async def workspaces(call: User) -> Response:
    return _answer_list(_WORKSPACES, await call.plane.views.workspaces(call.user))


@router.post(
    "/workspaces/{workspace}/agents",
    summary="Create an agent and its token (administrators; creates the workspace)",
    status_code=201,
    response_model=wire.IssuedResponse,
    tags=["workspaces"],
)
async def create_agent(call: Admin, workspace: str, body: wire.CreateAgentBody) -> Response:
    return answer(await call.plane.admin.create_agent(call.user, workspace, body.name, parent=body.parent), 201)


@router.get(
    "/agents/{agent_id}/views",
    summary="What each agent (and our default profile) loads in the agent's work dir, and why not",
    description="Relayed from the workspace agent, which scans its work dir under each profile: 503 when it is"
    " offline or cannot answer.",
    response_model=AgentViewsBody,
    tags=["workspaces"],
)
async def agent_views(call: User, agent_id: str) -> Response:
    return answer(await call.plane.views.agent_views(call.user, agent_id))


@router.post(
    "/chats",
    summary="Create a chat, bound and pinned",
    status_code=201,
    response_model=wire.ChatResponse,
    tags=["chats"],
)
async def create_chat(call: User, body: wire.CreateChatBody) -> Response:
    new = chats.NewChat(body.workspace, body.status, body.parent_id, body.title, body.plan_mode)
    return answer(await call.plane.chats.create(call.user, new), 201)


@router.get("/chats", summary="This user's chats, newest first", response_model=list[wire.ChatResponse], tags=["chats"])
async def list_chats(call: User, archived: bool = False) -> Response:
    return _answer_list(_CHATS, await call.plane.chats.listing(call.user, archived=archived))


@router.get(
    "/chats/{chat_id}", summary="A chat with its context summary", response_model=wire.ChatResponse, tags=["chats"]
)
async def get_chat(call: User, chat_id: str) -> Response:
    return answer(await call.plane.chats.get(call.user, chat_id))


@router.patch(
    "/chats/{chat_id}",
    summary="Change a chat's status, title or archived flag",
    response_model=wire.ChatResponse,
    tags=["chats"],
)
async def update_chat(call: User, chat_id: str, body: wire.UpdateChatBody) -> Response:
    chat = await call.plane.chats.update(
        call.user, chat_id, status=body.status, archived=body.archived, title=body.title
    )
    return answer(chat)


@router.put(
    "/chats/{chat_id}/context",
    summary="Refresh: re-pin to the latest snapshot and say what changed",
    response_model=wire.RefreshResponse,
    tags=["chats"],
)
async def refresh(call: User, chat_id: str) -> Response:
    return answer(await call.plane.chats.refresh(call.user, chat_id))


@router.post(
    "/chats/{chat_id}/touched",
    summary="Pin the instruction files that apply to paths the chat touched (asks its workspace agent)",
    response_model=wire.TouchedResponse,
    tags=["chats"],
)
async def touched(call: User, chat_id: str, body: wire.TouchedBody) -> Response:
    return answer(await call.plane.chats.touched(call.user, chat_id, body.paths))


@router.get(
    "/chats/{chat_id}/prompt",
    summary="This turn's system prompt and tools",
    response_model=wire.PromptResponse,
    responses={200: {"headers": {"X-Prompt-Cache": {"description": "hit: served as built before; miss: built now"}}}},
    tags=["chats"],
)
async def chat_prompt(call: User, chat_id: str) -> Response:
    prompt = await call.plane.chats.prompt_json(call.user, chat_id)
    return Response(prompt.body, media_type=JSON, headers={"X-Prompt-Cache": "hit" if prompt.cached else "miss"})


@router.post(
    "/chats/{chat_id}/tools/{name:tool}",
    summary="Run a chat tool; failures are results with is_error",
    response_model=wire.ToolResultBody,
    tags=["chats"],
)
async def call_tool(
    call: User,
    chat_id: str,
    name: str,
    arguments: Annotated[Any, Body(description="The tool's arguments, a JSON object.")] = None,
) -> Response:
    return answer(
        _tool_result(await call.plane.chats.call_tool(call.user, chat_id, name, {} if arguments is None else arguments))
    )


def _tool_result(result: ToolResult) -> wire.ToolResultBody:
    if not result.attachments:
        return wire.ToolResultBody(content=result.content, is_error=result.is_error)
    attachments = [wire.Attachment.model_validate(a) for a in result.attachments]
    return wire.ToolResultBody(content=result.content, is_error=result.is_error, attachments=attachments)


@router.get(
    "/chats/{chat_id}/files",
    summary="The chat's attachments (proposed plans)",
    response_model=list[wire.ChatFileEntry],
    tags=["chats"],
)
async def chat_files(call: User, chat_id: str) -> Response:
    return _answer_list(_FILES, await call.plane.chats.files(call.user, chat_id))


@router.get(
    "/chats/{chat_id}/files/{file_id}",
    summary="One attachment's content",
    response_class=Response,
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}},
    tags=["chats"],
)
async def chat_file(call: User, chat_id: str, file_id: str) -> Response:
    file = await call.plane.chats.file(call.user, chat_id, file_id)
    return Response(file.text, media_type=file.media_type, headers={"Content-Disposition": _disposition(file.name)})


def _disposition(name: str) -> str:
    """``inline`` with the file's name: an ASCII fallback and the exact name (RFC 6266), whatever its script."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.get(
    "/chats/{chat_id}/events",
    summary="Server-sent events: state, pinned, out_of_date, up_to_date, refreshed, agent_online, agent_offline",
    tags=["chats"],
    status_code=200,
    response_class=EventStream,
    responses={
        200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}},
        429: {"model": wire.ErrorBody, "description": "Too many event streams open with this token."},
    },
)
async def chat_events(call: User, chat_id: str) -> EventStream:
    broker = call.plane.broker
    mark = broker.mark()
    start = await call.plane.chats.event_start(call.user, chat_id)  # a 404 must come before the stream starts

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[tuple[bytes, MemoryObjectReceiveStream[Event]]]:
        with broker.subscribe(start.topics) as receive:
            current = start.state
            if broker.delivered_since(start.topics, mark):  # an event fell between the read and the subscription
                current = (await call.plane.chats.event_start(call.user, chat_id)).state
            yield frame("state", current), receive

    async def still() -> bool:  # the same token, naming the same user, who still has the chat
        try:
            return await call.still_the_user() and bool(await call.plane.chats.event_start(call.user, chat_id))
        except AgentContextError:  # the chat gone, or the database: the client opens it again
            return False

    return EventStream(opened, Recheck(still), ping=15)


@router.get("/users/me/skills", summary="Your personal skills", response_model=list[wire.SkillSummary], tags=["skills"])
async def list_skills(call: User) -> Response:
    return _answer_list(_SKILLS, await call.plane.skills.listing(call.user))


@router.post(
    "/users/me/skills",
    summary="Add a personal skill",
    status_code=201,
    response_model=wire.SkillSummary,
    tags=["skills"],
)
async def create_skill(call: User, body: wire.SkillBody) -> Response:
    return answer(await call.plane.skills.create(call.user, body.content), 201)


@router.get(
    "/users/me/skills/{name}",
    summary="One personal skill with its SKILL.md",
    response_model=wire.SkillDetail,
    tags=["skills"],
)
async def get_skill(call: User, name: str) -> Response:
    return answer(await call.plane.skills.get(call.user, name))


@router.put(
    "/users/me/skills/{name}", summary="Replace a personal skill", response_model=wire.SkillSummary, tags=["skills"]
)
async def update_skill(call: User, name: str, body: wire.SkillBody) -> Response:
    return answer(await call.plane.skills.update(call.user, name, body.content))


@router.delete("/users/me/skills/{name}", summary="Delete a personal skill", status_code=204, tags=["skills"])
async def delete_skill(call: User, name: str) -> Response:
    await call.plane.skills.delete(call.user, name)
    return Response(status_code=204)
