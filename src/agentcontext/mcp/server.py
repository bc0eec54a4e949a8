"""Our MCP server: the project doc and skills for any MCP client, built per session.

Built on the SDK's low-level ``Server``: the tool list, resources and prompts are data
from the scan, not decorated functions. ``get_instructions_for`` remembers, per session,
what it already returned (:mod:`agentcontext.mcp.nested`). ``instructions`` is computed when a session starts
(``initialize`` or ``server/discover``), from a fresh scan, so editing AGENTS.md or a
skill takes effect on the next connection without a restart. Scans run in a worker thread
and reuse an unchanged tree's cache, so tool calls always see the current files.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Mapping
from typing import Any

import anyio.to_thread
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentcontext import __version__
from agentcontext.errors import AgentContextError
from agentcontext.mcp import nested, skills_ext
from agentcontext.mcp.spec import Outcome
from agentcontext.mcp.tools import HANDLERS, SPECS, Limits
from agentcontext.mcp.workspace import Project, Workspace, session_key
from agentcontext.scan import ScanResult
from agentcontext.skills import files as skill_files
from agentcontext.views.brief import instructions, selection_brief
from agentcontext.web.skills_server import SkillsServer


class SkillsListParams(types.RequestParams):
    cursor: str | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class ContextServer(SkillsServer):
    """An MCP server over one :class:`Workspace`."""

    def __init__(self, workspace: Workspace, limits: Limits | None = None) -> None:
        self.workspace = workspace
        self.limits = limits or Limits()
        self._connections: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._given = nested.Given()  # what each session already got from get_instructions_for
        super().__init__(
            "agentcontext",
            version=__version__,
            title="agentcontext",
            description="AGENTS.md instructions and Agent Skills of the project, found the way Codex finds them.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        self.add_request_handler("skills/list", SkillsListParams, self._skills_list)
        self.add_request_handler("skills/get", SkillsGetParams, self._skills_get)
        self.declare_skills()

    # --- instructions, computed for each session ---------------------------------------

    @property
    def instructions(self) -> str:
        if self.workspace.single is None:
            return selection_brief(self.workspace.root)
        return self._brief(self.workspace.single.scan())

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """The base class assigns a fixed text here; ours is built per session instead."""

    def _brief(self, scan: ScanResult) -> str:
        offered = scan.skills
        return instructions(scan.project_doc(), offered, catalog_chars=self.limits.catalog_chars)

    # --- sessions ----------------------------------------------------------------------

    def _session(self, ctx: ServerRequestContext[Any, Any]) -> tuple[str | None, str]:
        """Who is asking: a conversation id from ``_meta``, else the transport session.

        On the 2026-07-28 era every request stands alone, so over stdio the process is the
        session (one client per process) and over HTTP only a conversation id can carry a
        binding from one request to the next.
        """
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if ctx.request is not None:
            transport = getattr(ctx.request, "headers", {}).get("mcp-session-id")
        else:
            transport = "process" if modern else self._connection_token(ctx)
        return session_key(ctx.meta, transport)

    def _connection_token(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """A stable name for the connection a request came on (stdio and in-memory, 2025 era).

        The SDK keeps the connection private; its identity is what a transport session is.
        """
        connection = getattr(ctx.session, "_connection", None)
        if connection is None:
            return "process"
        token = self._connections.get(connection)
        if token is None:
            token = uuid.uuid4().hex
            self._connections[connection] = token
        return token

    async def _scan_for(self, ctx: ServerRequestContext[Any, Any]) -> ScanResult | None:
        project = self.workspace.project_for(self._session(ctx)[0])
        return None if project is None else await _scan(project)

    # --- tools -------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        multi = self.workspace.multi_project
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=spec.input_schema,
                    output_schema=spec.output_schema,
                    annotations=types.ToolAnnotations(read_only_hint=spec.read_only, open_world_hint=False),
                )
                for spec in SPECS
                if multi or not spec.multi_only
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args: Mapping[str, Any] = params.arguments if isinstance(params.arguments, dict) else {}
        try:
            outcome = await self._run_tool(ctx, params.name, args)
        except AgentContextError as exc:
            outcome = Outcome(str(exc), error=True)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=outcome.text)]
        structured = None if outcome.error else outcome.structured
        return types.CallToolResult(content=content, structured_content=structured, is_error=outcome.error)

    async def _run_tool(self, ctx: ServerRequestContext[Any, Any], name: str, args: Mapping[str, Any]) -> Outcome:
        spec = next((s for s in SPECS if s.name == name), None)
        if spec is None or (spec.multi_only and not self.workspace.multi_project):
            return Outcome(f"Unknown tool: {name}", error=True)
        if name == "list_projects":
            return self._list_projects(args)
        if name == "set_project_root":
            return await self._set_project_root(ctx, args)
        if name == nested.SPEC.name:
            return await self._instructions_for(ctx, args)
        scan = await self._scan_for(ctx)
        if scan is None:
            return Outcome(self._unbound_message(ctx), error=True)
        return HANDLERS[name](scan, args, self.limits)  # small, bounded reads: no thread hop needed

    async def _instructions_for(self, ctx: ServerRequestContext[Any, Any], args: Mapping[str, Any]) -> Outcome:
        session = self._session(ctx)[0]
        project = self.workspace.project_for(session)
        if project is None:
            return Outcome(self._unbound_message(ctx), error=True)
        paths = nested.paths_argument(args)
        if isinstance(paths, str):
            return Outcome(paths, error=True)
        answer = await anyio.to_thread.run_sync(project.applicable, paths, TOOL_SCAN_MAX_AGE)
        given = self._given.of(None if session is None else f"{session}:{project.root}")
        return nested.outcome(answer, given, sanitized=project.config.project_doc.sanitize)

    def _unbound_message(self, ctx: ServerRequestContext[Any, Any]) -> str:
        scope = self._session(ctx)[1]
        return (
            f"No project is selected for this {scope}. Call `list_projects` to see the projects, then "
            f"`set_project_root` with a folder relative to the access root `{self.workspace.root}`, then "
            "`get_agent_brief` before using the other tools."
        )

    def _list_projects(self, args: Mapping[str, Any]) -> Outcome:
        limit = args.get("limit", 50)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 200:
            return Outcome("limit must be an integer between 1 and 200", error=True)
        query = str(args.get("query") or "").strip()
        projects = self.workspace.list_projects(query, limit)
        if not projects:
            text = f"No project folders matched under the access root `{self.workspace.root}`."
        else:
            text = f"Project folders under `{self.workspace.root}`:\n" + "\n".join(
                f"- `{selector}`" for selector, _ in projects
            )
        data = [{"selector": s, "path": p} for s, p in projects]
        return Outcome(text, {"access_root": self.workspace.root, "projects": data, "content": text})

    async def _set_project_root(self, ctx: ServerRequestContext[Any, Any], args: Mapping[str, Any]) -> Outcome:
        path = args.get("path")
        if not isinstance(path, str):
            return Outcome("path must be a string", error=True)
        key, scope = self._session(ctx)
        project, new = self.workspace.bind(key, path, scope)
        head = "Project root selected" if new else "Project root was already selected"
        text = (
            f"{head}: {project.root}\nAccess root: {self.workspace.root}\n"
            f"This {scope} is bound to that project for good; start a new one for another project.\n"
            "Call `get_agent_brief` now to load the project's instructions and skills."
        )
        data = {"access_root": self.workspace.root, "project_root": project.root, "newly_selected": new}
        return Outcome(text, {**data, "binding_scope": scope, "content": text})

    # --- resources and prompts -----------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        scan = await self._scan_for(ctx)
        resources: list[types.Resource] = []
        if scan is None:
            return types.ListResourcesResult(resources=resources)
        for skill in scan.skills:
            files = await anyio.to_thread.run_sync(skills_ext.files_of, skill, scan.layout)
            resources.extend(
                types.Resource(
                    uri=item.uri,
                    name=f"{skill.name}/{item.relative}",
                    description=skill.description if item.path == skill.path else None,
                    mime_type=item.mime_type,
                    size=item.size,
                )
                for item in files
            )
        return types.ListResourcesResult(resources=resources)

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template="skill://{skill}/{path}",
            name="skill-file",
            description="A file of an offered skill: its SKILL.md or any file in its folder.",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        scan = await self._require_scan(ctx)
        try:
            text, data, mime = await anyio.to_thread.run_sync(skills_ext.read, scan, params.uri)
        except AgentContextError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        contents: types.TextResourceContents | types.BlobResourceContents
        if text is not None:
            contents = types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)
        else:
            contents = types.BlobResourceContents(uri=params.uri, mime_type=mime, blob=skills_ext.blob(data or b""))
        return types.ReadResourceResult(contents=[contents])

    async def _require_scan(self, ctx: ServerRequestContext[Any, Any]) -> ScanResult:
        scan = await self._scan_for(ctx)
        if scan is None:
            raise MCPError(code=types.INVALID_PARAMS, message=self._unbound_message(ctx))
        return scan

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        scan = await self._scan_for(ctx)
        skills = scan.skills if scan else []
        prompts = [types.Prompt(name=s.name or "", description=s.description) for s in skills]
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        scan = await self._require_scan(ctx)
        try:
            skill = skill_files.find(scan.skills, params.name)
        except AgentContextError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        text = await anyio.to_thread.run_sync(skills_ext.prompt_text, skill, scan.layout)
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=skill.description, messages=[message])

    # --- SEP-2640 ------------------------------------------------------------------------

    async def _skills_list(self, ctx: ServerRequestContext[Any, Any], params: SkillsListParams) -> dict[str, Any]:
        scan = await self._scan_for(ctx)
        skills = [s for s in scan.skills if skills_ext.servable(s)] if scan else []
        entries = [await anyio.to_thread.run_sync(skills_ext.entry, s, scan.layout) for s in skills] if scan else []
        return {"skills": entries, "ttlMs": 0, "cacheScope": "private"}

    async def _skills_get(self, ctx: ServerRequestContext[Any, Any], params: SkillsGetParams) -> dict[str, Any]:
        scan = await self._require_scan(ctx)
        try:
            skill, path = skills_ext.find(scan, params.uri)
        except AgentContextError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        if path != skill.path:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Not a skill's SKILL.md: {params.uri}")
        if not skills_ext.servable(skill):
            message = f"{params.uri}: its frontmatter is not valid YAML as written, so it cannot be verified"
            raise MCPError(code=types.INVALID_PARAMS, message=message)
        entry = await anyio.to_thread.run_sync(skills_ext.entry, skill, scan.layout)
        return {"skill": entry, "ttlMs": 0, "cacheScope": "private"}


TOOL_SCAN_MAX_AGE = 1.0  # seconds: tool calls see edits within a second


async def _scan(project: Project) -> ScanResult:
    recent = project.recent(TOOL_SCAN_MAX_AGE)
    if recent is not None:
        return recent
    return await anyio.to_thread.run_sync(project.scan, TOOL_SCAN_MAX_AGE)
