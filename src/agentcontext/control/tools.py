"""The chat tools: ``read_skill``, ``read_skill_file``, ``propose_plan`` and the workspace's MCP tools.

Every failure is a tool result with ``is_error`` and the reference's text (coder.md 2.4,
2.5, 3.5, 7); what went wrong inside the control plane is logged, never shown. Checks that
need no workspace (names, paths) run before the agent is contacted, so a bad call costs
nothing and works while the workspace is down.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import posixpath
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentcontext.control.agent_link import AgentAddress, AgentLink, AgentReplyError
from agentcontext.control.prepared import CommitOutcomeUnknown
from agentcontext.control.prompt import PROPOSE_PLAN, READ_SKILL, READ_SKILL_FILE, Toolset, plan_path
from agentcontext.control.skill_index import AmbiguousSkill, SkillRef, resolve
from agentcontext.errors import AgentContextError, FrontmatterError, NotFoundError, UnavailableError, UnsafePathError
from agentcontext.resource import Resource
from agentcontext.skills import files as skill_files
from agentcontext.skills.frontmatter import split
from agentcontext.storable import scrub
from agentcontext.workspace_mcp.tool_names import SEPARATOR

log = logging.getLogger("agentcontext.control.tools")
SKILL_BODY_CAP = 64 * 1024
PLAN_CAP = 32 * 1024
PLAN_MEDIA_TYPE = "text/markdown"
TOO_DEEP = "the arguments are nested too deeply"
AGENT_OFFLINE = "the workspace agent is offline (no heartbeat lately): try again once it is back"


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False
    attachments: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"content": self.content, "is_error": self.is_error}
        if self.attachments:
            data["attachments"] = list(self.attachments)
        return data


def error(text: str) -> ToolResult:
    return ToolResult(text, is_error=True)


def ok(data: Mapping[str, Any]) -> ToolResult:
    return ToolResult(json.dumps(data, ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call, with everything it may need, read in one go (``wanted_skill`` says which text to read)."""

    chat_id: str
    root: bool
    plan_mode: bool
    home: str | None  # the home the agent last reported
    toolset: Toolset
    address: AgentAddress | None
    store_plan: Callable[[str, str, str], Awaitable[str]] = field(repr=False)  # (name, path, text) -> file id
    skill_text: str | None = field(default=None, repr=False)  # the text of the skill ``wanted_skill`` named
    skill_unreadable: bool = False  # reading that text failed inside the control plane (logged there)


def wanted_skill(toolset: Toolset, name: str, arguments: Any) -> SkillRef | None:
    """The skill whose text a call will read (``read_skill`` of a skill this turn offers), so it is read up front."""
    if name != READ_SKILL or not toolset.offers(READ_SKILL) or not isinstance(arguments, Mapping):
        return None
    requested = arguments.get("name")
    if not isinstance(requested, str) or not requested:
        return None
    try:
        return resolve(toolset.skills, scrub(requested))
    except AgentContextError:
        return None  # the call itself says why


def _text_arg(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    return value if isinstance(value, str) else ""


async def run(link: AgentLink, call: ToolCall, name: str, arguments: Mapping[str, Any]) -> ToolResult:
    try:
        name, arguments = scrub(name), scrub(arguments)
    except RecursionError:
        return error(f"invalid JSON input: {TOO_DEEP}")
    if name == READ_SKILL and call.toolset.offers(READ_SKILL):
        return await read_skill(link, call, arguments)
    if name == READ_SKILL_FILE and call.toolset.offers(READ_SKILL_FILE):
        return await read_skill_file(link, call, arguments)
    if name == PROPOSE_PLAN and call.root:
        return await propose_plan(link, call, arguments)
    route = call.toolset.mcp_routes.get(name)
    if route is not None:
        return await call_mcp_tool(link, call, route, arguments)
    server = name.split("__", 1)[0] if "__" in name else None
    if server is not None and server in call.toolset.pending:
        return error(f'MCP server "{server}" is {call.toolset.pending[server]}')
    return error(f'tool "{name}" is not available in this chat')


def _resolve(call: ToolCall, requested: str) -> SkillRef | ToolResult:
    try:
        return resolve(call.toolset.skills, requested)
    except NotFoundError:
        return error(f'skill "{requested}" not found')
    except AmbiguousSkill as exc:
        return error(str(exc))
    except AgentContextError:
        log.exception("resolving skill %r", requested)
        return error(f'failed to resolve skill "{requested}"')


def _pinned_skill(call: ToolCall, name: str) -> Resource | None:
    return call.toolset.pinned_skills.get(name)


async def read_skill(link: AgentLink, call: ToolCall, arguments: Mapping[str, Any]) -> ToolResult:
    requested = _text_arg(arguments, "name")
    if not requested:
        return error("name is required")
    ref = _resolve(call, requested)
    if isinstance(ref, ToolResult):
        return ref
    if ref.personal:
        if call.skill_unreadable:
            return error(f'failed to load personal skill "{requested}"')
        if call.skill_text is None:  # deleted since the turn began
            return error(f'skill "{requested}" not found')
        return ok({"name": requested, "body": skill_files.body(call.skill_text), "files": []})
    pinned = _pinned_skill(call, ref.name)
    if pinned is None:
        return error(f'skill "{requested}" not found')
    meta = (call.skill_text or "")[:SKILL_BODY_CAP]
    try:
        split(meta)
    except FrontmatterError as exc:
        return error(f"parse skill frontmatter: {exc}")
    files: list[str] = []
    if call.address is not None:
        try:  # best effort: the pinned body is served even when the workspace is unreachable
            files = await link.skill_files(call.address, ref.name)
        except AgentContextError as exc:
            log.info("listing files of skill %r: %s", ref.name, exc)
    return ok({"name": requested, "dir": skill_files.skill_dir(pinned), "body": skill_files.body(meta), "files": files})


async def read_skill_file(link: AgentLink, call: ToolCall, arguments: Mapping[str, Any]) -> ToolResult:
    requested = _text_arg(arguments, "name")
    path = _text_arg(arguments, "path")
    if not requested:
        return error("name is required")
    if not path:
        return error("path is required")
    ref = _resolve(call, requested)
    if isinstance(ref, ToolResult):
        return ref
    if ref.personal:
        return error("read_skill_file is not supported for personal skills (no supporting files)")
    if _pinned_skill(call, ref.name) is None:
        return error(f'skill "{requested}" not found')
    try:
        skill_files.check_file_path(path)
    except UnsafePathError as exc:
        return error(str(exc))
    if "\0" in path:  # no file can be named so; as Go's ReadFile answers
        return error("read skill file: invalid argument")
    if call.address is None:
        return error("workspace connection failed: the workspace agent has not connected")
    try:
        content = await link.skill_file(call.address, ref.name, path)
    except UnavailableError as exc:
        return error(f"workspace connection failed: {exc}")
    except AgentReplyError as exc:
        return error(exc.detail or exc.message)
    return ok({"content": content})


async def _home(link: AgentLink, call: ToolCall) -> str:
    """The workspace's home directory. Raises: UnavailableError, AgentReplyError."""
    if call.address is None:
        raise UnavailableError("the workspace agent has not connected")
    info = await link.workspace(call.address)
    return str(info.get("home") or "")


def _looks_like_home(directory: str) -> bool:
    """``/root`` or ``/home/<user>`` (case-folded, normalised)."""
    parts = directory.split("/")
    return directory == "/root" or (len(parts) == 3 and parts[1] == "home" and bool(parts[2]))


async def _check_plan_md(link: AgentLink, call: ToolCall, path: str) -> ToolResult | None:
    """A file named plan.md must be absolute and not sit in the home root (the old shared plan path)."""
    if not posixpath.isabs(path):
        return error("plan files must use absolute paths; use the chat-specific absolute plan path")
    directory = _folded(posixpath.dirname(path))
    try:
        home = await _home(link, call)
    except (UnavailableError, AgentReplyError):
        home = ""
    if not home:
        # unverifiable: refuse what is, or may be, a home root (the home last reported, or one by its shape)
        known = call.home
        if _looks_like_home(directory) or (known and directory == _folded(known)):
            return error(
                f"the plan path {path} could not be verified because the workspace is currently unavailable to"
                " resolve the chat-specific plan path, try again shortly"
            )
        return None
    if directory == _folded(home):
        chat_path = plan_path(home, call.chat_id)
        return error(
            f"the plan path {path} is no longer supported at the home root; use the chat-specific plan path:"
            f" {chat_path}"
        )
    return None


def _folded(directory: str) -> str:
    """A directory normalised and case-folded, for comparing with a home directory."""
    return posixpath.normpath(directory).lower()


async def propose_plan(link: AgentLink, call: ToolCall, arguments: Mapping[str, Any]) -> ToolResult:
    path = _text_arg(arguments, "path").strip()
    if call.plan_mode:
        checked = await _plan_turn_path(link, call, path)
        if isinstance(checked, ToolResult):
            return checked
        path = checked
    if not path:
        return error("path is required (use the chat-specific absolute plan path)")
    if not path.endswith(".md"):
        return error("path must end with .md")
    if posixpath.basename(path).lower() == "plan.md":
        refused = await _check_plan_md(link, call, path)
        if refused is not None:
            return refused
    return await _read_and_store_plan(link, call, path)


async def _plan_turn_path(link: AgentLink, call: ToolCall, path: str) -> str | ToolResult:
    """During plan turns the only plan path is the chat's own (an empty argument means it)."""
    try:
        chat_path = plan_path(await _home(link, call), call.chat_id)
    except (UnavailableError, AgentReplyError) as exc:
        return error(f"resolve chat-specific plan path: {exc}")
    if not chat_path:
        return error("chat-specific plan path is empty")
    if path and path != chat_path:
        return error(f"during plan turns, propose_plan path must be {chat_path}")
    return chat_path


async def _read_and_store_plan(link: AgentLink, call: ToolCall, path: str) -> ToolResult:
    if call.address is None:
        return error("workspace connection failed: the workspace agent has not connected")
    try:
        found = await link.plan_file(call.address, path)
    except UnavailableError as exc:
        return error(f"workspace connection failed: {exc}")
    except AgentReplyError as exc:
        return error(exc.detail or exc.message)
    resolved = str(found.get("resolved") or path)
    if call.plan_mode and resolved != path:
        return error(
            f"the chat-specific plan path {path} resolves to {resolved}; symlinked plan paths are not allowed"
            " during plan turns"
        )
    text = str(found.get("content") or "")
    if not text.strip():
        return error(f"plan file is empty; write your plan to {path} before proposing")
    if len(text.encode("utf-8", "surrogatepass")) > PLAN_CAP:  # the text itself, whatever size the agent says
        return error("plan file exceeds 32 KiB size limit")
    try:
        file_id = await call.store_plan(posixpath.basename(path), path, text)
    except CommitOutcomeUnknown as exc:  # it may have been stored: "try again" alone could store it twice
        return error(f"storing the plan file: {exc}")
    except Exception:  # what went wrong inside the control plane is logged, never shown
        log.exception("storing the plan of chat %s", call.chat_id)
        return error("failed to store plan file: the control plane could not save it, try again shortly")
    return ok({"ok": True, "path": path, "kind": "plan", "file_id": file_id, "media_type": PLAN_MEDIA_TYPE})


async def call_mcp_tool(
    link: AgentLink, call: ToolCall, route: tuple[str, str], arguments: Mapping[str, Any]
) -> ToolResult:
    if call.address is None:
        return error("workspace connection failed: the workspace agent has not connected")
    server, tool = route
    try:  # what the agent must be sent: JSON proper (no NaN or Infinity)
        json.dumps(arguments, allow_nan=False)
    except ValueError as exc:
        return error(f"invalid JSON input: {exc}")
    except RecursionError:
        return error(f"invalid JSON input: {TOO_DEEP}")
    try:
        # the full name routes on the agent even when the exposed one was shortened
        body = await link.call_tool(call.address, f"{server}{SEPARATOR}{tool}", dict(arguments))
    except UnavailableError as exc:
        return error(f"workspace connection failed: {exc}")
    except AgentReplyError as exc:
        return error(f"{exc.message.rstrip('.')}: {exc.detail}" if exc.detail else exc.message)
    return tool_output(body)


def tool_output(body: Mapping[str, Any]) -> ToolResult:
    """The agent's content blocks as one result: the texts joined (preferred), else the first binary block.

    A binary block whose data is not base64 becomes the text ``[binary decode error: ...]``.
    """
    blocks = [b for b in body.get("content") or [] if isinstance(b, Mapping)]
    is_error = bool(body.get("is_error"))
    texts = [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]
    if texts:
        return ToolResult("\n".join(texts), is_error)
    for block in blocks:
        data = block.get("data")
        if isinstance(data, str):
            try:
                base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError) as exc:
                return ToolResult(f"[binary decode error: {exc}]", is_error)
            kind, media = block.get("type"), block.get("media_type")
            # what the agent says of it is text or nothing: anything else would fail the answer's model
            attachment = {
                "type": kind if isinstance(kind, str) else None,
                "media_type": media if isinstance(media, str) else None,
                "data": data,
            }
            return ToolResult("", is_error, (attachment,))
    return ToolResult("", is_error)
