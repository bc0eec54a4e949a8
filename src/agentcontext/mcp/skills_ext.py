"""Skills as MCP resources, prompts and the SEP-2640 skills extension.

Every file of an offered skill is a resource ``skill://<skill-path>/<file>`` where the last
segment of the skill path is the skill's name (a plugin skill ``p:x`` lives at
``skill://p/x/``). ``skills/list`` and ``skills/get`` (extension
``io.modelcontextprotocol/skills``) return each skill's frontmatter as JSON and every file
with its sha256 digest and size. Resources are served as the exact bytes on disk (text when
they are UTF-8, base64 otherwise) so their digests verify. Each offered skill is also a
prompt, for clients that surface prompts but not resources.
"""

from __future__ import annotations

import base64
import contextlib
import mimetypes
import os
import stat
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from agentcontext.errors import AgentContextError, FrontmatterError, NotFoundError, UnsafePathError
from agentcontext.layout import Layout
from agentcontext.resource import Resource
from agentcontext.scan import ScanResult
from agentcontext.skills import files as skill_files
from agentcontext.skills.commands import is_command
from agentcontext.skills.extension import frontmatter_json
from agentcontext.skills.folder import LeavesFolderError, SkillFolder, open_folder
from agentcontext.skills.frontmatter import parse

SCHEME = "skill://"
MAX_FILES_PER_SKILL = 500
MAX_RESOURCE_BYTES = skill_files.MAX_FILE_BYTES


@dataclass(frozen=True, slots=True)
class SkillResource:
    uri: str
    path: str  # absolute
    relative: str  # inside the skill folder, "/"-separated
    size: int
    mime_type: str


def skill_path(skill: Resource) -> str:
    """The ``<skill-path>`` of a skill's URIs, each segment escaped."""
    return "/".join(quote(part, safe="") for part in (skill.name or "").split(":"))


def files_of(skill: Resource, layout: Layout) -> list[SkillResource]:
    """SKILL.md and every other file of the skill (hidden names and links out left aside)."""
    try:
        with _opened(skill, layout) as opened:
            return _files(skill, opened)
    except (OSError, UnsafePathError):  # the folder is gone, or now leads out of its root
        return []


def _opened(skill: Resource, layout: Layout) -> AbstractContextManager[SkillFolder]:
    folder = skill_files.skill_dir(skill)
    return open_folder(folder, layout.boundary_of(folder))


def _files(skill: Resource, opened: SkillFolder) -> list[SkillResource]:
    base = SCHEME + skill_path(skill) + "/"
    meta_name = os.path.basename(skill.path)
    meta = opened.find([meta_name])
    if not stat.S_ISREG(meta.st.st_mode):
        return []
    out = [SkillResource(base + meta_name, skill.path, meta_name, meta.st.st_size, "text/markdown")]
    if is_command(skill):  # one file: what lies beside it is not its own
        return out
    listed, _ = opened.files(limit=MAX_FILES_PER_SKILL, meta_file=meta_name)
    for item in listed:
        if item.size > MAX_RESOURCE_BYTES:
            continue  # too large to serve whole, so its digest could never verify
        uri = base + "/".join(quote(part) for part in item.path.split("/"))
        mime = mimetypes.guess_type(item.path)[0] or "text/plain"
        out.append(SkillResource(uri, item.absolute, item.path, item.size, mime))
    return out


def entry(skill: Resource, layout: Layout) -> dict[str, Any]:
    """A ``skills/list`` entry: uri, frontmatter as JSON, and every file with digest and size."""
    resources: list[dict[str, Any]] = []
    try:
        with _opened(skill, layout) as opened:
            for f in _files(skill, opened):
                digest = opened.digest(f.relative.split("/"))
                resources.append({"uri": f.uri, "digest": digest, "size": f.size, "mimeType": f.mime_type})
    except (OSError, UnsafePathError):
        resources = []
    uri = resources[0]["uri"] if resources else SCHEME + skill_path(skill) + "/" + os.path.basename(skill.path)
    return {"uri": uri, "frontmatter": frontmatter_json(skill), "resources": resources}


def servable(skill: Resource) -> bool:
    """Whether a host can verify the skill: its frontmatter must be YAML as written.

    A skill we read only after repairing its YAML (an unquoted ``: ``) is still offered by
    the tools, but a host comparing the served SKILL.md with its listing entry would reject
    it, so the extension leaves it out.
    """
    try:
        return skill.content is not None and not parse(skill.content).repaired
    except FrontmatterError:
        return False


def find(scan: ScanResult, uri: str) -> tuple[Resource, str]:
    """The skill and absolute file path a ``skill://`` URI names.

    Raises:
        NotFoundError: no offered skill has that path, or the file is not one of its files.
        UnsafePathError: the file part would leave the skill's folder.
    """
    if not uri.startswith(SCHEME):
        raise NotFoundError(f"Unknown resource: {uri}")
    rest = uri[len(SCHEME) :]
    for skill in sorted(skill_files.offered(scan.snapshot.resources), key=lambda s: -len(skill_path(s))):
        prefix = skill_path(skill) + "/"
        if rest.startswith(prefix):
            relative = unquote(rest[len(prefix) :])
            return skill, skill_files.resolve_resource(skill_files.skill_dir(skill), relative)
    raise NotFoundError(f"Unknown resource: {uri}")


def read(scan: ScanResult, uri: str) -> tuple[str | None, bytes | None, str]:
    """``(text, None, mime)`` for a UTF-8 file, ``(None, bytes, mime)`` otherwise.

    Raises:
        NotFoundError, UnsafePathError: as :func:`find`; NotFoundError also when it cannot be read.
    """
    skill, path = find(scan, uri)
    try:
        with _opened(skill, scan.layout) as opened:
            served = {f.path: f.relative for f in _files(skill, opened)}
            if path not in served:
                raise NotFoundError(f"Unknown resource: {uri}")
            data = opened.read(served[path].split("/"), MAX_RESOURCE_BYTES + 1)
    except LeavesFolderError:
        raise UnsafePathError(f"Resource must be a path inside the skill: {uri}") from None
    except OSError as exc:
        raise NotFoundError(f"Cannot read {uri}: {exc.strerror or exc}") from None
    mime = "text/markdown" if path == skill.path else (mimetypes.guess_type(path)[0] or "text/plain")
    try:
        return data.decode("utf-8"), None, mime
    except UnicodeDecodeError:
        return None, data, mime


def blob(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def prompt_text(skill: Resource, layout: Layout) -> str:
    """A skill as a prompt: its body, where it lives, and its other files (not read ahead)."""
    body = skill.content or ""
    with contextlib.suppress(AgentContextError):
        body = parse(body).body.strip()
    lines = [f'<skill_content name="{skill.name}">', body]
    if is_command(skill):  # one file, with no folder of its own
        return "\n".join([*lines, "</skill_content>"])
    folder = skill_files.skill_dir(skill)
    try:
        with _opened(skill, layout) as opened:
            listed, more = opened.files(limit=skill_files.MAX_PACKAGE_FILES)
    except (OSError, UnsafePathError):
        listed, more = [], 0
    lines += ["", f"Skill directory: {folder}", "Relative paths in this skill are relative to the skill directory."]
    if listed:
        lines.append("<skill_resources>")
        lines += [f"<file>{f.path}</file>" for f in listed]
        if more:
            lines.append(f"<!-- and {more} more files -->")
        lines.append("</skill_resources>")
    lines.append("</skill_content>")
    return "\n".join(lines)
