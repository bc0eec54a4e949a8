"""MCP config files as snapshot resources, and the servers the agent may connect to.

Files are taken in configured order; a missing file is no problem. The first file to
define a server name keeps it; a later definition is ignored with a warning on its
file. Only files that ``connect`` (the work dir's own) yield servers to start; configs
inside declared sources are listed with ``connect: false``. A resource carries the
file's size, hash and server names; never its contents, which may hold tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from agentcontext.errors import McpConfigError
from agentcontext.fs import text_links
from agentcontext.fs.files import EntryKind, Reader
from agentcontext.layout import Layout, McpFile
from agentcontext.resource import Kind as ResourceKind
from agentcontext.resource import Resource, Scope, Status
from agentcontext.settings.config import Config
from agentcontext.workspace_mcp.config import ParsedConfig, ServerSpec, parse


@dataclass(frozen=True, slots=True)
class McpDiscovery:
    resources: tuple[Resource, ...]
    servers: tuple[ServerSpec, ...]  # to connect, first definition of each name


def discover(layout: Layout, config: Config, reader: Reader, environ: Mapping[str, str]) -> McpDiscovery:
    strict = config.mcp.unset_variables == "strict"
    cap = config.snapshot.max_resource_bytes
    env_tag = hashlib.sha256(repr(sorted(environ.items())).encode()).hexdigest()[:16]
    resources: list[Resource] = []
    servers: list[ServerSpec] = []
    owners: dict[str, str] = {}
    for item in layout.mcp_files:
        found = _read(item, reader, environ, strict, cap, env_tag)
        if found is None:
            continue
        resource, parsed = found
        if parsed is not None:
            warnings = list(resource.warnings)
            names: list[str] = []
            for spec in parsed.servers:
                owner = owners.get(spec.name)
                if owner is not None:
                    warnings.append(f'server "{spec.name}" is already defined in {owner}; this definition is ignored')
                    continue
                owners[spec.name] = item.path
                names.append(spec.name)
                if item.connect:
                    servers.append(spec)
            resource = resource._replace(servers=tuple(names), warnings=tuple(warnings))
        resources.append(resource)
    return McpDiscovery(tuple(resources), tuple(servers))


def _read(
    item: McpFile, reader: Reader, environ: Mapping[str, str], strict: bool, cap: int, env_tag: str
) -> tuple[Resource, ParsedConfig | None] | None:
    entry = reader.probe(item.path, item.boundary)
    if entry.kind is EntryKind.MISSING:
        return None
    repository = item.boundary if item.scope is Scope.PROJECT else ""  # a project's server binds its files (mcp_launch)
    base = Resource(ResourceKind.MCP_CONFIG, item.path, item.scope, Status.OK, connect=item.connect, source=item.source)
    if entry.kind is EntryKind.DIRECTORY or entry.kind is EntryKind.SPECIAL:
        what = "a directory" if entry.kind is EntryKind.DIRECTORY else entry.special
        return base._replace(status=Status.INVALID, error=f"{what}, not a regular file"), None
    if entry.kind is not EntryKind.FILE:
        status = Status.INVALID if entry.kind is EntryKind.ESCAPE else Status.UNREADABLE
        return base._replace(status=status, error=entry.error), None

    def compute() -> tuple[Resource, ParsedConfig | None]:
        try:
            raw = reader.read(entry, cap + 1)
        except OSError as exc:
            return base._replace(status=Status.UNREADABLE, size_bytes=entry.size, error=exc.strerror or str(exc)), None
        done = base._replace(size_bytes=max(entry.size, len(raw)), content_hash=hashlib.sha256(raw[:cap]).hexdigest())
        if len(raw) > cap:
            error = f"file size {done.size_bytes} exceeds per-resource cap of {cap} bytes"
            return done._replace(status=Status.OVERSIZE, error=error), None
        try:
            parsed = parse(raw, item.path, environ, strict=strict, repository=repository)
        except McpConfigError as exc:
            return done._replace(status=Status.INVALID, error=str(exc)), None
        excluded = parsed.excluded_warning()
        warnings = (
            tuple(
                f"{name}: {message}" if not message.startswith("server") else message
                for name, message in parsed.entry_errors
            )
            + parsed.warnings
            + ((excluded,) if excluded else ())
        )
        return done._replace(warnings=warnings), parsed

    tag = f"mcp:{cap}:{strict}:{env_tag}:{repository}"
    result: tuple[Resource, ParsedConfig | None] = reader.cached(entry, tag, compute)
    resource = result[0]
    if resource.status is Status.INVALID and entry.size <= text_links.MAX_TARGET:  # a config linked, checked out
        text = text_links.named_target(reader, item.path, item.boundary, kinds=(EntryKind.FILE,))
        if text is not None:
            said = text_links.advice(text, item.path, "it is no JSON config")
            return resource._replace(error=f"{resource.error}; {said}"), None
    return result
