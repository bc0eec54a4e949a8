"""The MCP server of a chat: everything comes from the chat's pin, through the chat service (``ChatService``).

* ``instructions``: the chat's pinned system prompt, exactly the ``system`` of ``/prompt``;
* tools: the chat's tools exactly as ``/prompt`` lists them (``read_skill``,
  ``read_skill_file``, ``propose_plan``, each workspace tool as ``server__tool``), each call
  run by ``ChatService.call_tool`` as ``/api/v1/chats/{id}/tools/{name}`` runs it; plus
  ``refresh_context``, which re-pins the chat and answers with the diff, and whose
  description says what changed while the chat is out of date;
* resources: the pinned instruction files, discovered ones too (``agentcontext://instructions/<path>``), and
  skills (``skill://<name>/SKILL.md``, other files through ``skill://<name>/<path>``),
  and the SEP-2640 ``skills/list`` and ``skills/get``, declared on both protocol eras;
* prompts: the chat's skills, each prompt being the skill's instructions.

Failures of a tool are results with ``isError``, as for a model; a chat the caller may not
see was refused by the endpoint before any handler ran, and each handler reaches its chat only
through the chat service, which checks the owner again. Our errors (a chat gone
since, the database unavailable) are JSON-RPC errors that say so, never a traceback.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar
from urllib.parse import quote, unquote

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentcontext import __version__
from agentcontext.control.chat_mcp.binding import OPENING, ChatBinding, from_request
from agentcontext.control.chat_mcp.notices import ChatNotices
from agentcontext.control.error_status import status_of
from agentcontext.control.prompt import READ_SKILL, READ_SKILL_FILE, ToolSpec
from agentcontext.control.services.chats import ChatService
from agentcontext.control.wire import ChatResponse
from agentcontext.errors import AgentContextError
from agentcontext.resource import Kind, Resource, Status
from agentcontext.skills.extension import frontmatter_json
from agentcontext.web.skills_server import SkillsServer

REFRESH = "refresh_context"
INSTRUCTIONS_SCHEME = "agentcontext://instructions"
SKILL_SCHEME = "skill://"
_REFRESH_TEXT = (
    "Re-pin this chat to the workspace's current instructions and skills, and say what changed. Call it when"
    " you are told the context is out of date; the new instructions apply from the next session."
)
_EMPTY_OBJECT = {"type": "object", "properties": {}}
P = ParamSpec("P")
R = TypeVar("R")


def _answered(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``handler`` with our errors as JSON-RPC errors that say what went wrong (the SDK answers any other
    exception with a bare -32603 and logs its traceback)."""

    @functools.wraps(handler)
    async def answered(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except AgentContextError as exc:
            code = types.INTERNAL_ERROR if status_of(exc)[0] >= 500 else types.INVALID_PARAMS
            raise MCPError(code=code, message=str(exc)) from None

    return answered


class SkillsListParams(types.RequestParams):
    cursor: str | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class ChatMcpServer(SkillsServer):
    """One SDK server for every chat; each request carries its chat binding."""

    def __init__(self, chats: ChatService, notices: ChatNotices) -> None:
        self.chats = chats
        self.notices = notices
        super().__init__(
            "agentcontext-chat",
            version=__version__,
            title="agentcontext chat",
            description="The context pinned to one agentcontext chat: instructions, skills and workspace tools.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_subscriptions_listen=self._listen,
        )
        self.add_request_handler("server/discover", types.RequestParams, self._discover)
        self.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)
        self.add_request_handler("skills/list", SkillsListParams, self._skills_list)
        self.add_request_handler("skills/get", SkillsGetParams, self._skills_get)
        self.declare_skills()

    # --- instructions --------------------------------------------------------------------

    @property
    def instructions(self) -> str | None:
        """The opening request's chat prompt, fetched by the endpoint (``initialize`` has no context)."""
        opening = OPENING.get()
        return opening.instructions if opening is not None else None

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """The base class assigns a fixed text here; ours is each chat's own."""

    @_answered
    async def _discover(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams | None) -> Any:
        binding = _binding(ctx)
        turn = await self.chats.prompt(binding.user, binding.chat_id)
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=self.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=turn.system,
        )

    async def _initialized(self, ctx: ServerRequestContext[Any, Any], params: types.NotificationParams) -> None:
        """A handshake-era session is open: it hears the chat's notices from now on, whatever it asks."""
        self._attach(ctx)

    # --- tools ---------------------------------------------------------------------------

    @_answered
    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        binding = self._attach(ctx)
        turn = await self.chats.prompt(binding.user, binding.chat_id)
        chat = await self.chats.get(binding.user, binding.chat_id)
        refresh = ToolSpec(REFRESH, await self._refresh_description(binding, chat), _EMPTY_OBJECT)
        return types.ListToolsResult(tools=[_tool(spec) for spec in (*turn.tools, refresh)])

    async def _refresh_description(self, binding: ChatBinding, chat: ChatResponse) -> str:
        if not chat.context.dirty:
            return _REFRESH_TEXT
        what = await self.chats.pending_changes(binding.chat_id)
        return f"THE CONTEXT OF THIS CHAT IS OUT OF DATE ({what}). " + _REFRESH_TEXT

    @_answered
    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        binding = self._attach(ctx)
        arguments: Any = params.arguments if params.arguments is not None else {}
        if params.name == REFRESH:
            return _text_result(await self._refresh(binding), is_error=False)
        result = await self.chats.call_tool(binding.user, binding.chat_id, params.name, arguments)
        structured = {"attachments": list(result.attachments)} if result.attachments else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)],
            structured_content=structured,
            is_error=result.is_error,
        )

    async def _refresh(self, binding: ChatBinding) -> str:
        done = await self.chats.refresh(binding.user, binding.chat_id)
        diff = done.diff
        lines = [f"Re-pinned to snapshot version {done.context.pinned_version}."]
        for label, paths in (("added", diff.added), ("removed", diff.removed), ("changed", diff.changed)):
            lines += [f"{label}: {path}" for path in paths]
        if len(lines) == 1:
            lines.append("Nothing changed.")
        lines.append("The instructions above are those of the old pin; reconnect to receive the new ones.")
        return "\n".join(lines)

    def _attach(self, ctx: ServerRequestContext[Any, Any]) -> ChatBinding:
        binding = _binding(ctx)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.notices.attach(binding.chat_id, ctx.session)
        return binding

    @_answered
    async def _listen(self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams) -> Any:
        binding = _binding(ctx)
        await self.chats.get(binding.user, binding.chat_id)  # the owner's only, as every other handler's chat
        return await self.notices.listen_handler(binding.chat_id)(ctx, params)

    # --- resources and prompts -------------------------------------------------------------

    async def _pinned(self, binding: ChatBinding) -> tuple[Resource, ...]:
        """The chat's pin: its snapshot's resources, then the instruction files discovered for paths it touched."""
        context = await self.chats.context(binding.user, binding.chat_id)
        return (*context.pinned, *(found.resource for found in context.discovered))

    @_answered
    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        binding = self._attach(ctx)
        pinned = await self._pinned(binding)
        turn = await self.chats.prompt(binding.user, binding.chat_id)
        resources = [
            types.Resource(
                uri=INSTRUCTIONS_SCHEME + quote(r.path),
                name=r.path,
                description="A pinned instruction file.",
                mime_type="text/markdown",
                size=r.payload_bytes,
            )
            for r in pinned
            if r.kind is Kind.INSTRUCTION_FILE and r.status.carries_content
        ]
        resources += [
            types.Resource(
                uri=_skill_uri(ref.alias), name=ref.alias, description=ref.description, mime_type="text/markdown"
            )
            for ref in turn.skills
        ]
        return types.ListResourcesResult(resources=resources)

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template="skill://{skill}/{path}",
            name="skill-file",
            description="A file of one of the chat's skills: its SKILL.md or a supporting file.",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    @_answered
    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        binding = self._attach(ctx)
        text = await self._resource_text(binding, params.uri)
        contents = types.TextResourceContents(uri=params.uri, mime_type="text/markdown", text=text)
        return types.ReadResourceResult(contents=[contents])

    async def _resource_text(self, binding: ChatBinding, uri: str) -> str:
        if uri.startswith(INSTRUCTIONS_SCHEME + "/"):
            path = unquote(uri[len(INSTRUCTIONS_SCHEME) :])
            for resource in await self._pinned(binding):
                if resource.kind is Kind.INSTRUCTION_FILE and resource.path == path and resource.content is not None:
                    return resource.content
            raise MCPError(code=types.INVALID_PARAMS, message=f"Not a pinned instruction file: {uri}")
        if not uri.startswith(SKILL_SCHEME) or "/" not in uri[len(SKILL_SCHEME) :]:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {uri}")
        name, path = (unquote(part) for part in uri[len(SKILL_SCHEME) :].split("/", 1))
        if path == "SKILL.md":
            return await self._skill_text(binding, name)
        data = await self._tool_json(binding, READ_SKILL_FILE, {"name": name, "path": path})
        return str(data.get("content", ""))

    async def _skill_text(self, binding: ChatBinding, name: str) -> str:
        """A skill's SKILL.md exactly as pinned (a personal skill's as stored)."""
        for resource in await self._pinned(binding):
            if resource.kind is Kind.SKILL and resource.status is Status.OK and resource.name == name:
                return resource.content or ""
        data = await self._tool_json(binding, READ_SKILL, {"name": name})
        return str(data.get("body", ""))

    async def _tool_json(self, binding: ChatBinding, tool: str, arguments: dict[str, str]) -> dict[str, Any]:
        result = await self.chats.call_tool(binding.user, binding.chat_id, tool, arguments)
        if result.is_error:
            raise MCPError(code=types.INVALID_PARAMS, message=result.content)
        data = json.loads(result.content)
        return data if isinstance(data, dict) else {}

    @_answered
    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        binding = self._attach(ctx)
        turn = await self.chats.prompt(binding.user, binding.chat_id)
        return types.ListPromptsResult(
            prompts=[types.Prompt(name=ref.alias, description=ref.description) for ref in turn.skills]
        )

    @_answered
    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        binding = self._attach(ctx)
        data = await self._tool_json(binding, READ_SKILL, {"name": params.name})
        text = str(data.get("body", ""))
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=f"The {params.name} skill.", messages=[message])

    # --- SEP-2640 ----------------------------------------------------------------------------

    @_answered
    async def _skills_list(self, ctx: ServerRequestContext[Any, Any], params: SkillsListParams) -> dict[str, Any]:
        binding = _binding(ctx)
        turn = await self.chats.prompt(binding.user, binding.chat_id)
        pinned = {r.name: r for r in await self._pinned(binding) if r.kind is Kind.SKILL and r.status is Status.OK}
        entries = [_entry(ref.alias, ref.description, pinned.get(ref.name)) for ref in turn.skills]
        return {"skills": entries, "ttlMs": 0, "cacheScope": "private"}

    @_answered
    async def _skills_get(self, ctx: ServerRequestContext[Any, Any], params: SkillsGetParams) -> dict[str, Any]:
        binding = _binding(ctx)
        listed = await self._skills_list(ctx, SkillsListParams())
        for entry in listed["skills"]:
            if entry["uri"] == params.uri:
                return {"skill": entry, "ttlMs": 0, "cacheScope": "private"}
        raise MCPError(code=types.INVALID_PARAMS, message=f"Not a skill of chat {binding.chat_id}: {params.uri}")


def _binding(ctx: ServerRequestContext[Any, Any]) -> ChatBinding:
    binding = from_request(ctx.request) or OPENING.get()
    if binding is None:  # the endpoint binds every request; only a misconfigured mount gets here
        raise MCPError(code=types.INTERNAL_ERROR, message="no chat is bound to this request")
    return binding


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)


def _text_result(text: str, *, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def _skill_uri(alias: str) -> str:
    return f"{SKILL_SCHEME}{quote(alias, safe='')}/SKILL.md"


def _entry(alias: str, description: str, pinned: Resource | None) -> dict[str, Any]:
    """A SEP-2640 entry; its SKILL.md digest is of the bytes ``resources/read`` serves (the pinned text)."""
    uri = _skill_uri(alias)
    resource: dict[str, Any] = {"uri": uri, "mimeType": "text/markdown"}
    frontmatter: dict[str, Any] = {"name": alias, "description": description}
    if pinned is not None and pinned.content is not None:
        served = pinned.content.encode("utf-8")
        resource |= {"digest": "sha256:" + hashlib.sha256(served).hexdigest(), "size": len(served)}
        frontmatter = {**frontmatter_json(pinned), "name": alias}
    return {"uri": uri, "frontmatter": frontmatter, "resources": [resource]}
