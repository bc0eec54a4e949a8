"""Reading Cursor's files: a folder's rules (``.cursor/rules/**``) and its named files, each with its ``load``.

Everything is read beneath a boundary (a link leaving it is listed ``invalid``, never
followed) through the scan's :class:`~agentcontext.instructions.chain.InstructionFiles`, so the
per-file cap, the statuses and the hidden-text warnings are the other profiles'.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from agentcontext.fs.files import EntryKind, Reader
from agentcontext.instructions.chain import Found, InstructionFiles
from agentcontext.peers.cursor.rules import RULE_SUFFIXES, RULES_DIR, parse
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status

MAX_RULE_DEPTH = 8  # folders below .cursor/rules: deeper ones are said, not walked

_HOW = {
    LoadType.STARTUP: "alwaysApply: true: Cursor sends it with every request",
    LoadType.AGENT_REQUESTED: "description only: the model asks for it when its description fits the task",
    LoadType.MANUAL: "no alwaysApply, globs or description: only when mentioned as @{name}",
}


def rules(reader: Reader, files: InstructionFiles, directory: str, boundary: str) -> list[Found]:
    """``directory``'s ``.cursor/rules`` files, sorted by path, each labelled as its frontmatter says."""
    out: list[Found] = []
    for path, problem in _rule_paths(reader, os.path.join(directory, RULES_DIR), boundary, 0):
        if problem is not None:
            out.append(Found(_refused(path, problem), candidate=False))
            continue
        out.append(rule(files, reader, path, boundary))
    return out


def rule(files: InstructionFiles, reader: Reader, path: str, boundary: str) -> Found:
    """One rule file: its body (the frontmatter removed) as the text it gives, its load from the frontmatter."""
    item = files.read(reader.probe(path, boundary), Scope.PROJECT, None)
    resource = item.resource
    if item.data is None or resource.status is not Status.OK:
        reason = resource.error or "not readable"
        return Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=reason)), candidate=False)
    parsed = parse(item.data.decode("utf-8", errors="replace"))
    name = os.path.splitext(os.path.basename(path))[0]
    if parsed.load is LoadType.PATH_SCOPED:
        how = f"globs: Cursor attaches it when a file matching {', '.join(parsed.globs)} is in context"
    else:
        how = _HOW[parsed.load].format(name=name)
    load = Load(parsed.load, globs=parsed.globs, reason=how)
    described = parsed.description or resource.description
    resource = resource._replace(load=load, warnings=(*resource.warnings, *parsed.warnings), description=described)
    if not parsed.body.strip():
        reason = "empty once its frontmatter is removed: nothing to send"
        return Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=reason)), candidate=False)
    return Found(resource, parsed.body.encode("utf-8"), candidate=parsed.load is LoadType.STARTUP)


def named(files: InstructionFiles, reader: Reader, path: str, boundary: str, load: Load) -> Found | None:
    """A file Cursor reads by name (AGENTS.md, CLAUDE.md, .cursorrules) with ``load``; None when absent."""
    entry = reader.probe(path, boundary)
    if entry.kind is EntryKind.MISSING:
        return None
    item = files.read(entry, Scope.PROJECT, None)
    resource = item.resource
    if item.data is None or resource.status is not Status.OK:
        reason = resource.error or "not readable"
        return Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=reason)), candidate=False)
    if not item.data.decode("utf-8", errors="replace").strip():
        reason = "empty or whitespace only: nothing to load"
        return Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=reason)), candidate=False)
    return Found(resource._replace(load=load), item.data, candidate=load.type is LoadType.STARTUP)


def _rule_paths(reader: Reader, directory: str, boundary: str, depth: int) -> Iterator[tuple[str, str | None]]:
    """Every rule file under ``directory`` in path order; a path with a problem carries it (listed, not read)."""
    try:
        listing = reader.list_dir(directory, boundary=boundary, strict=True)
    except OSError as exc:
        yield directory, f"rules folder not read: {exc.strerror or exc}"
        return
    for item in listing:
        path = f"{directory}/{item.name}"
        is_dir = item.is_dir
        if item.is_symlink:
            entry = reader.probe(path, boundary)
            if entry.kind is EntryKind.ESCAPE:
                yield path, entry.error or "a link leaving the workspace: not followed"
                continue
            is_dir = entry.kind is EntryKind.DIRECTORY
        if is_dir:
            if depth >= MAX_RULE_DEPTH:
                yield path, f"more than {MAX_RULE_DEPTH} folders deep below {RULES_DIR}: not read"
                continue
            yield from _rule_paths(reader, path, boundary, depth + 1)
        elif item.name.endswith(RULE_SUFFIXES):
            yield path, None


def _refused(path: str, problem: str) -> Resource:
    return Resource(
        Kind.INSTRUCTION_FILE,
        path,
        Scope.PROJECT,
        Status.INVALID,
        error=problem,
        load=Load(LoadType.NOT_LOADED, reason=problem),
    )
