"""Each turn's system prompt and tool list, from the chat's pin alone (coder.md 2.6, 3.5, 4.6).

The prompt is the ``<workspace-context>`` block of the pinned, sanitised instruction files
(in chain order), then the ``<discovered-context>`` block of the instruction files found on
demand for the paths the chat touched (``discovered``; shallower folders first, each with the
paths it was found for), the ``<available-skills>`` block of pinned workspace skills and the
user's personal skills, and the chat's plan path. The tools are the built-in chat tools
plus the workspace's MCP tools: the pinned servers overlaid, server by server, by the
agent's latest catalog, so MCP tools converge without a refresh while instructions and
skills stay pinned. The agent's catalog offers only tools the user approved; a tool whose
definition changed since (its server ``changed``) keeps, in a chat pinned before, the
definition it was pinned with: the model never sees the new text before the user approves
it (a call is refused by the agent until then). Nothing here needs the workspace to be
reachable.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcontext.control.skill_index import SkillRef, index, usable_skill_name
from agentcontext.fs.plans import PLAN_DIR
from agentcontext.peers.coder.render import available_skills, workspace_context
from agentcontext.resource import Kind, Resource, Status, Tool
from agentcontext.sanitize import sanitize
from agentcontext.workspace_mcp.tool_names import assign
from agentcontext.workspace_mcp.tool_text import for_prompt

READ_SKILL = "read_skill"
READ_SKILL_FILE = "read_skill_file"
PROPOSE_PLAN = "propose_plan"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def _schema(properties: dict[str, str], required: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": text} for name, text in properties.items()},
        "required": list(required),
    }


READ_SKILL_SPEC = ToolSpec(
    READ_SKILL,
    "Read the full instructions for a skill by name. Returns the skill meta file body and a list of supporting"
    " files. Use read_skill before following a skill's instructions.",
    _schema({"name": "The skill's name or qualified alias, as listed in <available-skills>."}, ["name"]),
)
READ_SKILL_FILE_SPEC = ToolSpec(
    READ_SKILL_FILE,
    "Read a supporting file of a workspace skill, by the skill's name and the file's path inside the skill's folder.",
    _schema(
        {
            "name": "The skill's name or qualified alias.",
            "path": "The file's path relative to the skill folder, for example roles/security-reviewer.md.",
        },
        ["name", "path"],
    ),
)
PROPOSE_PLAN_SPEC = ToolSpec(
    PROPOSE_PLAN,
    "Present a plan to the user. The plan file must already exist and end in .md: create it first with your file"
    " tools, then pass its absolute path. Use this chat's own plan path (given in your instructions), not a"
    " generic PLAN.md in the home directory.",
    _schema({"path": "Absolute path of the plan file (.md) in the workspace."}, ["path"]),
)


def plan_path(home: str | None, chat_id: str) -> str | None:
    """``<home>/.agentcontext/plans/PLAN-<chat id>.md``; None while the home is unknown."""
    if not home:
        return None
    return posixpath.join(home, PLAN_DIR, f"PLAN-{chat_id}.md")


@dataclass(frozen=True, slots=True)
class DiscoveredFile:
    """An instruction file pinned because the chat touched ``caused_by`` (its text with it, for the prompt)."""

    resource: Resource
    caused_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatContext:
    """Everything a turn's context is made of, read from the database in one go.

    ``pinned`` carries the texts of instruction files when the system prompt is to be
    rendered; skills and MCP servers never need theirs here.
    """

    chat_id: str
    root: bool
    pinned: tuple[Resource, ...]
    latest_mcp: tuple[Resource, ...]
    personal: tuple[tuple[str, str], ...]
    os_name: str = ""
    directory: str = ""
    home: str | None = None
    discovered: tuple[DiscoveredFile, ...] = ()  # with their texts when the prompt is to be rendered


@dataclass(frozen=True, slots=True)
class Toolset:
    """A turn's tools and what calling them needs: skill aliases, MCP routes, the pinned skills."""

    tools: tuple[ToolSpec, ...]
    skills: tuple[SkillRef, ...]
    mcp_routes: Mapping[str, tuple[str, str]]  # exposed name -> (server, tool)
    pinned_skills: Mapping[str, Resource]  # workspace skill name -> its pinned resource (text not loaded)
    pending: Mapping[str, str] = field(default_factory=dict)  # a server waiting for approval -> why, and how

    def offers(self, name: str) -> bool:
        return any(tool.name == name for tool in self.tools)


@dataclass(frozen=True, slots=True)
class TurnContext:
    system: str
    toolset: Toolset

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        return self.toolset.tools

    @property
    def skills(self) -> tuple[SkillRef, ...]:
        return self.toolset.skills

    @property
    def mcp_routes(self) -> Mapping[str, tuple[str, str]]:
        return self.toolset.mcp_routes

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "tools": [t.to_dict() for t in self.tools]}


def instruction_files(pinned: Sequence[Resource]) -> list[Resource]:
    """The files of ``<workspace-context>``: those loaded from the first turn. A file the profile loads only
    when the agent works near it (``on_demand``, ``path_scoped``) waits for ``touched`` (``discovered``)."""
    usable = [
        r
        for r in pinned
        if r.kind is Kind.INSTRUCTION_FILE
        and r.status.carries_content
        and r.content
        and (r.load is None or r.load.type.at_startup)
    ]
    usable.sort(key=lambda r: (r.doc_order if r.doc_order is not None else 1 << 30, r.path))
    return usable


DISCOVERED_INTRO = (
    "Instruction files found on demand for the paths this chat has worked on. Each applies to the paths named"
    " with it, in addition to the workspace context above."
)
_CAUSES_SHOWN = 3
_CAUSE_CHARS = 200


def _shown_path(path: str) -> str:
    """A touched path as the prompt names it: one line, printable, at most ``_CAUSE_CHARS`` characters."""
    shown = "".join(c if c.isprintable() else "?" for c in path)
    return shown if len(shown) <= _CAUSE_CHARS else shown[: _CAUSE_CHARS - 1] + "…"


def discovered_context(files: Sequence[DiscoveredFile]) -> str:
    """The ``<discovered-context>`` block, as ``<workspace-context>`` renders files ("" when none has text)."""
    ordered = sorted(files, key=lambda f: (f.resource.path.count("/"), f.resource.path))
    parts = [(f, sanitize(f.resource.content or "")) for f in ordered if f.resource.status.carries_content]
    parts = [(f, text) for f, text in parts if text]
    if not parts:
        return ""
    lines = ["<discovered-context>", DISCOVERED_INTRO]
    for file, text in parts:
        causes = ", ".join(_shown_path(path) for path in file.caused_by[:_CAUSES_SHOWN])
        more = len(file.caused_by) - _CAUSES_SHOWN
        causes += f" and {more} more" if more > 0 else ""
        truncated = " (truncated to 64KiB)" if file.resource.status is Status.TRUNCATED else ""
        lines.append("")
        lines.append(f"Source: {file.resource.path}{truncated} (for {causes})")
        lines.append(text)
    return "\n".join(lines) + "\n</discovered-context>"


def workspace_skills(pinned: Sequence[Resource]) -> list[Resource]:
    """Pinned ok skills with a usable name, the first of each name."""
    seen: set[str] = set()
    out = []
    for r in pinned:
        if r.kind is Kind.SKILL and r.status is Status.OK and usable_skill_name(r.name) and r.name not in seen:
            seen.add(r.name or "")
            out.append(r)
    return out


def mcp_servers(pinned: Sequence[Resource], latest: Sequence[Resource]) -> list[Resource]:
    """Pinned servers overlaid by the latest catalog, per server; an empty latest set keeps the pin."""
    servers = {r.path: r for r in pinned if r.kind is Kind.MCP_SERVER}
    for r in latest:
        if r.kind is Kind.MCP_SERVER:
            before = servers.get(r.path)
            servers[r.path] = _keep_changed_tools(before, r) if before is not None else r
    return [servers[name] for name in sorted(servers) if servers[name].status is Status.OK]


def pending_servers(pinned: Sequence[Resource], latest: Sequence[Resource]) -> dict[str, str]:
    """The servers waiting for the user's approval (their tools are not offered), each with the reason given."""
    servers = {r.path: r for r in (*pinned, *latest) if r.kind is Kind.MCP_SERVER}
    return {name: r.error or "pending approval" for name, r in sorted(servers.items()) if r.status is Status.DISABLED}


def _keep_changed_tools(before: Resource, after: Resource) -> Resource:
    """``after``, with the pinned definitions of the tools it withholds as changed since approval."""
    if after.approval is None or after.approval.state != "changed" or before.status is not Status.OK:
        return after
    changed = {c.tool for c in after.approval.changes if c.change == "changed"}
    offered = {t.name for t in after.tools}
    kept = [t for t in before.tools if t.name in changed and t.name not in offered]
    return after._replace(tools=tuple(sorted((*after.tools, *kept), key=lambda t: t.name))) if kept else after


def skill_refs(context: ChatContext) -> list[SkillRef]:
    return index([(r.name or "", r.description or "") for r in workspace_skills(context.pinned)], context.personal)


def toolset(context: ChatContext) -> Toolset:
    """The turn's tools: from the pinned rows' names and descriptions alone (no texts needed)."""
    refs = skill_refs(context)
    tools: list[ToolSpec] = []
    if refs:
        tools.append(READ_SKILL_SPEC)
    if any(not ref.personal for ref in refs):
        tools.append(READ_SKILL_FILE_SPEC)
    if context.root:
        tools.append(PROPOSE_PLAN_SPEC)
    routes: dict[str, tuple[str, str]] = {}
    for exposed, (route, tool) in sorted(mcp_tools(mcp_servers(context.pinned, context.latest_mcp)).items()):
        routes[exposed] = route
        clean = for_prompt(tool)  # the agent cleaned it; what reaches a model is cleaned here too, as files are
        tools.append(ToolSpec(exposed, clean.description, _object_schema(clean.input_schema)))
    pinned = {r.name or "": r for r in workspace_skills(context.pinned)}
    pending = pending_servers(context.pinned, context.latest_mcp)
    return Toolset(tuple(tools), tuple(refs), routes, pinned, pending)


def system_text(context: ChatContext, refs: Sequence[SkillRef]) -> str:
    """The system prompt: needs the pinned instruction files' texts."""
    return with_plan_file(shared_text(context, refs), plan_file(context.home, context.chat_id, root=context.root))


def shared_text(context: ChatContext, refs: Sequence[SkillRef]) -> str:
    """The system prompt but the chat's own plan file: what does not name the chat (``chat_id`` is not read)."""
    blocks = [
        workspace_context(instruction_files(context.pinned), os_name=context.os_name, directory=context.directory),
        discovered_context(context.discovered),
        available_skills([ref.entry for ref in refs]),
    ]
    return "\n\n".join(b for b in blocks if b)


def plan_file(home: str | None, chat_id: str, *, root: bool) -> str:
    """The ``<plan-file>`` block of a root chat whose home is known ("" otherwise): the one part naming the chat."""
    plan = plan_path(home, chat_id) if root else None
    if plan is None:
        return ""
    return (
        f"<plan-file>\nThis chat's plan file is {plan}. To propose a plan, write it there with your file tools,"
        " then call propose_plan with that path.\n</plan-file>"
    )


def with_plan_file(shared: str, plan: str) -> str:
    return "\n\n".join(b for b in (shared, plan) if b)


def build(context: ChatContext) -> TurnContext:
    tools = toolset(context)
    return TurnContext(system_text(context, tools.skills), tools)


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tools(servers: Sequence[Resource]) -> dict[str, tuple[tuple[str, str], Tool]]:
    """Exposed name -> ((server, tool) as the agent knows them, the tool), for every tool of ``servers``.

    Exposed names are what model APIs accept as function names (``[A-Za-z0-9_-]``, at most 64
    characters): other characters of a server's or tool's name become ``_`` before the names
    are assigned as ``tool_names`` does. A tool without a name is not offered, nor one whose
    safe name another tool already has (names that needed no change first, then by order).
    """
    found = [(server.path, tool) for server in servers for tool in server.tools if server.path and tool.name]
    found.sort(key=lambda item: bool(_UNSAFE.search(item[0] + item[1].name)))  # stable: order kept within
    safe: dict[tuple[str, str], tuple[tuple[str, str], Tool]] = {}
    for server, tool in found:
        safe.setdefault((_UNSAFE.sub("_", server), _UNSAFE.sub("_", tool.name)), ((server, tool.name), tool))
    return {exposed: safe[pair] for exposed, pair in assign(safe).routes.items()}


def _object_schema(schema: Any) -> dict[str, Any]:
    """The server's object schema as given (empty ``properties`` kept); anything else an empty object schema.

    Model APIs refuse a tool whose parameters are not an object schema, and with it the whole turn.
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    if "type" in schema and isinstance(schema.get("properties", {}), dict):
        return schema
    properties = schema.get("properties", {})
    return {**schema, "type": "object", "properties": properties if isinstance(properties, dict) else {}}
