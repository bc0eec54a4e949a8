"""The MCP tools, with Codex Free's names, arguments, texts and structured results.

Each tool is a plain function from a project scan and arguments to an :class:`Outcome`;
the server turns outcomes into ``CallToolResult``. Errors are outcomes with ``error=True``
(``isError`` on the wire), never protocol failures.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentcontext.errors import AgentContextError, UnsafePathError
from agentcontext.mcp import nested
from agentcontext.mcp.spec import Outcome, ToolSpec, object_schema
from agentcontext.resource import Kind, Status
from agentcontext.scan import ScanResult
from agentcontext.skills import files as skill_files
from agentcontext.skills.commands import is_command
from agentcontext.skills.folder import LeavesFolderError, SkillFile, open_folder
from agentcontext.views.brief import HIDDEN_NAME, instructions
from agentcontext.views.render import model_visible_name, plain_description, shown

SKILLS_DISABLED = "Skills are disabled by the server configuration. Nothing was searched."


@dataclass(frozen=True, slots=True)
class Limits:
    """Output budgets of the tools (``[mcp_server]`` in the config file)."""

    catalog_chars: int = 8_000
    max_lines: int = skill_files.MAX_LINES
    max_bytes: int = skill_files.MAX_WINDOW_BYTES


_FILES_SCHEMA = {
    "type": "array",
    "items": object_schema({"path": {"type": "string"}, "truncated": {"type": "boolean"}}, ["path", "truncated"]),
}

SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "get_project_doc",
        "Read the project's AGENTS.md instructions: the conventions, build and test commands and house rules "
        "this repository expects an agent to follow. Codex loads these before every task; treat them as the "
        "user's own instructions. Call this once before starting work if they are not already in the "
        "conversation. Returns every AGENTS.md from the project root down to the working directory, outermost "
        "first, and the files they came from.",
        object_schema({}),
        object_schema({"files": _FILES_SCHEMA, "content": {"type": "string"}}, ["files", "content"]),
    ),
    ToolSpec(
        "skills_list",
        "List the skills available for this project. A skill is a set of instructions stored in a SKILL.md, "
        "covering a task the user or the repository has already worked out how to do well. Each entry gives a "
        "name and a description of when it applies; call skills_read with the name to get the instructions. "
        "Skills that were found but are not offered are listed with the reason.",
        object_schema({}),
        object_schema(
            {
                "skills": {
                    "type": "array",
                    "items": object_schema(
                        {k: {"type": "string"} for k in ("name", "description", "scope", "path")},
                        ["name", "description", "scope", "path"],
                    ),
                },
                "not_offered": {
                    "type": "array",
                    "items": object_schema(
                        {"path": {"type": "string"}, "reason": {"type": "string"}}, ["path", "reason"]
                    ),
                },
                "content": {"type": "string"},
            },
            ["skills", "not_offered", "content"],
        ),
    ),
    ToolSpec(
        "skills_read",
        "Read a skill's instructions. Pass the name from skills_list and this returns its SKILL.md: follow it "
        "for the rest of the task, and read it completely before acting on it. When the body points at another "
        "file of the skill (references, scripts, assets), call this again with the same name and that file's "
        "path as 'resource'; paths are relative to the skill's own folder. Long files come back a window at a "
        "time; when the result says so, call again with the offset it names.",
        object_schema(
            {
                "name": {"type": "string", "description": "Skill name, as listed by skills_list."},
                "resource": {
                    "type": "string",
                    "description": "File inside the skill's folder, relative to it (e.g. 'references/api.md'). "
                    "Defaults to SKILL.md.",
                },
                "offset": {"type": "integer", "minimum": 0, "description": "First line to return (0-based)."},
                "limit": {"type": "integer", "minimum": 0, "description": "Maximum number of lines to return."},
            },
            ["name"],
        ),
    ),
    ToolSpec(
        "get_agent_brief",
        "Read this first. Returns the same text this server sends as its MCP instructions: what it offers, "
        "the skills catalog and the project's AGENTS.md instructions. Skip it if you already have them.",
        object_schema({}),
        object_schema({"content": {"type": "string"}}, ["content"]),
    ),
    nested.SPEC,
    ToolSpec(
        "list_projects",
        "List the project folders this server can serve, directly under its access root. Pass a folder to "
        "set_project_root to work in it.",
        object_schema(
            {
                "query": {"type": "string", "description": "Keep folders whose name contains this text."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many."},
            }
        ),
        needs_project=False,
        multi_only=True,
    ),
    ToolSpec(
        "set_project_root",
        "Bind this conversation to one project folder under the server's access root. The folder is the exact "
        "project root: nothing above it is read. A conversation is bound once and cannot switch; start a new "
        "one for another project. Call get_agent_brief afterwards.",
        object_schema({"path": {"type": "string", "description": "Folder relative to the access root."}}, ["path"]),
        needs_project=False,
        multi_only=True,
        read_only=False,
    ),
)


def project_doc(scan: ScanResult, args: Mapping[str, Any], limits: Limits) -> Outcome:
    doc = scan.project_doc()
    data = doc.to_dict()
    if doc.empty:
        text = (
            "No AGENTS.md found between the project root and the working directory. The project states no "
            "conventions of its own; follow the ones already in the conversation."
        )
        return Outcome(text, {"files": data["files"], "content": ""})
    header = "\n".join(f.path + (" (truncated at the byte budget)" if f.truncated else "") for f in doc.files)
    return Outcome(f"Project instructions from:\n{header}\n\n{doc.content}", data)


def skills_list(scan: ScanResult, args: Mapping[str, Any], limits: Limits) -> Outcome:
    if not scan.config.skills.enabled:
        return Outcome(SKILLS_DISABLED, {"skills": [], "not_offered": [], "content": SKILLS_DISABLED})
    offered = [s for s in scan.skills if model_visible_name(s.name)]
    not_offered = [
        {"path": shown(r.path), "reason": shown(r.error or str(r.status))}
        for r in scan.snapshot.resources
        if r.kind is Kind.SKILL and r.status is not Status.OK
    ] + [{"path": shown(s.path), "reason": HIDDEN_NAME} for s in scan.skills if not model_visible_name(s.name)]
    lines: list[str] = []
    if not offered:
        lines += [
            "No skills found. A skill is a directory holding a SKILL.md whose frontmatter carries a name and a "
            "description.",
            "",
            "Searched:",
        ]
        lines += [f"- {c.path} ({c.scope})" for c in scan.layout.skill_containers]
        if scan.layout.plugin_cache:
            lines.append(f"- {scan.layout.plugin_cache} (plugin)")
    else:
        count = len(offered)
        lines.append(
            f"{count} skill{'' if count == 1 else 's'} available. Read one with skills_read before acting on it "
            "— the description says when a skill applies, the body says what to do."
        )
        lines.append("")
        for skill in offered:
            lines.append(f"- {skill.name} ({skill.scope}) — {plain_description(skill.description or '')}".rstrip())
            lines.append(f"  {shown(skill.path)}")
    if not_offered:
        lines += ["", "Not offered:"] + [f"- {n['path']}: {n['reason']}" for n in not_offered]
    text = "\n".join(lines)
    skills = [
        {
            "name": s.name or "",
            "description": plain_description(s.description or ""),
            "scope": str(s.scope),
            "path": shown(s.path),
        }
        for s in offered
    ]
    return Outcome(text, {"skills": skills, "not_offered": not_offered, "content": text})


def skills_read(scan: ScanResult, args: Mapping[str, Any], limits: Limits) -> Outcome:
    if not scan.config.skills.enabled:
        return Outcome("Skills are disabled by the server configuration.", error=True)
    name = str(args.get("name") or "").strip()
    if not name:
        return Outcome("A skill name is required.", error=True)
    try:
        skill = skill_files.find(scan.skills, name)
        given = args.get("resource")  # absent means SKILL.md; "" is refused, as Codex Free refuses it
        meta_file = os.path.basename(skill.path)  # SKILL.md, or a custom command's own file
        resource = meta_file if given is None else str(given)
        folder = skill_files.skill_dir(skill)
        path = skill_files.resolve_resource(folder, resource)
    except AgentContextError as exc:
        return Outcome(str(exc), error=True)
    is_meta = resource == meta_file
    lone = is_command(skill)
    if lone and not is_meta:
        return Outcome(f"{skill.name} is a custom command: one file ({meta_file}), with no other files.", error=True)
    boundary = scan.layout.boundary_of(folder)
    if is_meta and skill.content is not None:
        text, cut = skill.content, False
    else:
        try:
            with open_folder(folder, boundary) as opened:
                text, cut = opened.read_text(skill_files.resource_parts(resource), skill_files.MAX_FILE_BYTES)
        except LeavesFolderError:
            return Outcome(f"Resource must be a path inside the skill: {resource}", error=True)
        except (OSError, AgentContextError) as exc:
            missing = isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError)
            reason = f"{skill.name} has no file at {resource}." if missing else f"{skill.name}: {resource}: {exc}"
            return Outcome(reason, error=True)
    offset, limit = _int(args.get("offset"), 0) or 0, _int(args.get("limit"), None)
    window = skill_files.window(text, offset, limit, max_lines=limits.max_lines, max_bytes=limits.max_bytes)
    parts = [f"{skill.name} — {path}", "", window.text]
    if window.notice:
        parts += ["", window.notice]
    if cut:
        parts += ["", f"(the file is larger than {skill_files.MAX_FILE_BYTES} bytes; only its start can be read)"]
    files: list[str] = []
    if is_meta and window.notice is None and not lone:
        listed, more = _package(folder, boundary)
        files = [f.path for f in listed]
        if files:
            tail = f" (and {more} more)" if more else ""
            parts += ["", f"Other files in this skill, readable with resource=<path>: {', '.join(files)}{tail}"]
    content = "\n".join(parts)
    return Outcome(content, {"name": skill.name, "path": path, "content": content, "files": files})


def _package(folder: str, boundary: str | None) -> tuple[list[SkillFile], int]:
    """The skill's other files, or none when its folder cannot be reached beneath its root."""
    try:
        with open_folder(folder, boundary) as opened:
            return opened.files(limit=skill_files.MAX_PACKAGE_FILES)
    except (OSError, UnsafePathError):
        return [], 0


def _int(value: Any, default: int | None) -> int | None:
    """A non-negative whole number, else ``default`` (Codex Free's ``arg_u64``, plus digit strings)."""
    if isinstance(value, bool) or value is None:
        return default
    if isinstance(value, int):
        return value if value >= 0 else default
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value >= 0 and value.is_integer() else default
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdigit() and len(text) <= 18:  # int() refuses "²" and 4300+ digits
        return int(text)
    return default


def agent_brief(scan: ScanResult, args: Mapping[str, Any], limits: Limits) -> Outcome:
    text = instructions(scan.project_doc(), scan.skills, catalog_chars=limits.catalog_chars)
    return Outcome(text, {"content": text})


HANDLERS: dict[str, Callable[[ScanResult, Mapping[str, Any], Limits], Outcome]] = {
    "get_project_doc": project_doc,
    "skills_list": skills_list,
    "skills_read": skills_read,
    "get_agent_brief": agent_brief,
}
