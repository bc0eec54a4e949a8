"""The control plane's API on the wire: every request body and every answer, as pydantic models.

Requests are validated once, strictly: no value is coerced (a string is not a number, a
number is not a boolean) and a field the model does not know is refused, with 422 naming
it. Answers are built from these models and serialised by them, so what a route answers is
what ``/openapi.json`` documents (the fuzz run checks every route). The services return the
answers (``services``), the routes serialise them, and ``ControlClient`` reads them back into the
same models. The agent's push and heartbeat are the shared contract of ``agentcontext.wire.sync``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from agentcontext.control.discovered_answer import MAX_PATH_CHARS, MAX_PATHS
from agentcontext.wire.sync import HeartbeatRequest, PushedResource, PushRequest, PushResponse

__all__ = ["HeartbeatRequest", "PushRequest", "PushResponse", "PushedResource"]

STATUSES = ("pending", "waiting", "running", "paused", "requires_action", "completed", "error")  # a chat's
DEFAULT_STATUS = "pending"
STRICT = ConfigDict(strict=True, extra="forbid")
ANSWER = ConfigDict(from_attributes=True)  # answers are read from the plane's values (dataclasses)


class ErrorBody(BaseModel):
    message: str
    detail: str | None = None


# --- requests ----------------------------------------------------------------------------------


class CreateChatBody(BaseModel):
    model_config = STRICT

    workspace: str | None = Field(default=None, description="Workspace name or id (inherited from the parent).")
    status: str = Field(default=DEFAULT_STATUS, description=f"One of: {', '.join(STATUSES)}.")
    parent_id: str | None = None
    title: str = ""
    plan_mode: bool = Field(default=False, description="propose_plan applies the plan-turn rules.")


class UpdateChatBody(BaseModel):
    model_config = STRICT

    status: str | None = None
    archived: bool | None = None
    title: str | None = None


class SkillBody(BaseModel):
    model_config = STRICT

    content: str = Field(description="The whole SKILL.md: frontmatter (name, description) and body.")


class TouchedBody(BaseModel):
    model_config = STRICT

    paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]] = Field(
        min_length=1,
        max_length=MAX_PATHS,
        description=f"Paths the chat's tools read, wrote or ran in (files or folders; absolute, or relative to the"
        f" agent's work dir): at most {MAX_PATHS}.",
    )


class CreateUserBody(BaseModel):
    model_config = STRICT

    name: str
    admin: bool = False


class CreateAgentBody(BaseModel):
    model_config = STRICT

    name: str
    parent: str | None = None


# --- answers ------------------------------------------------------------------------------------


class HealthResponse(BaseModel):
    ok: bool
    version: str
    database: str


class ToolSummary(BaseModel):
    model_config = ANSWER

    name: str
    description: str


class ResourceSummary(BaseModel):
    """One pinned resource; ``skill_*`` only for skills, ``tools`` only for MCP servers (absent otherwise)."""

    model_config = ANSWER

    path: str
    kind: str
    status: str
    size_bytes: int
    error: str | None = None
    origin: str = Field(default="snapshot", description="snapshot, or discovered (for paths the chat touched)")
    caused_by: list[str] | None = Field(default=None, description="discovered: the touched paths it was found for")
    skill_name: str | None = None
    skill_description: str | None = None
    tools: list[ToolSummary] | None = None


class ContextSummary(BaseModel):
    model_config = ANSWER

    pinned_hash: str | None
    pinned_version: int | None
    pinned_at: str | None
    latest_hash: str | None
    dirty: bool
    dirty_since: str | None
    error: str | None
    resources: list[ResourceSummary]


class ChatResponse(BaseModel):
    model_config = ANSWER

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
    model_config = ANSWER

    added: list[str]
    removed: list[str]
    changed: list[str]


class RefreshResponse(ChatResponse):
    diff: DiffBody
    discovered_error: str | None = Field(
        default=None, description="Why the discovered files were kept as pinned (the agent could not be asked)."
    )


class AddedFile(BaseModel):
    model_config = ANSWER

    path: str
    bytes: int
    caused_by: list[str]


class PathReason(BaseModel):
    model_config = ANSWER

    path: str
    reason: str


class TouchedResponse(BaseModel):
    """What a touched call found: files added to the pin, files it had, files whose text changed since."""

    model_config = ANSWER

    chat_id: str
    added: list[AddedFile]
    bytes_added: int
    already_pinned: list[str]
    changed: list[str] = Field(description="Discovered files whose text changed since pinned: the chat is out of date.")
    excluded: list[PathReason]
    refused: list[PathReason] = Field(description="Paths the workspace agent would not look at, and why.")
    dirty: bool


class ToolSpecBody(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any]


class PromptResponse(BaseModel):
    system: str
    tools: list[ToolSpecBody]


class Attachment(BaseModel):
    type: str | None
    media_type: str | None
    data: str


class ToolResultBody(BaseModel):
    content: str
    is_error: bool
    attachments: list[Attachment] | None = Field(
        default=None, description="A binary-only MCP result (absent otherwise)."
    )


class ChatFileEntry(BaseModel):
    model_config = ANSWER

    id: str
    name: str
    kind: str
    media_type: str
    path: str
    size_bytes: int
    created_at: str


class SkillSummary(BaseModel):
    name: str
    description: str
    size_bytes: int
    created_at: str
    updated_at: str


class SkillDetail(SkillSummary):
    content: str


class IssuedResponse(BaseModel):
    model_config = ANSWER

    id: str
    name: str
    token: str


class MeResponse(BaseModel):
    id: str
    name: str
    is_admin: bool


class WorkspaceAgent(BaseModel):
    id: str
    name: str
    online: bool
    last_seen_at: str | None
    url: str | None
    os: str | None


class WorkspaceEntry(BaseModel):
    id: str
    name: str
    agents: list[WorkspaceAgent]


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


class OverviewServer(BaseModel):
    version: str
    database: str


class OverviewChats(BaseModel):
    total: int
    out_of_date: int


class OverviewResponse(BaseModel):
    server: OverviewServer
    workspaces: list[OverviewWorkspace]
    chats: OverviewChats = Field(description="This user's chats, archived left out.")
    problems: list[OverviewProblem]
