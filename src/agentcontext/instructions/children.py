"""Child projects: a work dir holding several checkouts (its immediate children with ``.git``).

A folder of checkouts (``~/src`` holding ``api/.git`` and ``web/.git``) is read as the
profile reads a work dir, plus, for each child (real folders, not hidden, by name, at
most ``project_doc.child_projects``; one ``excluded`` entry names what is past the cap):

* its root instruction files (the profile's names at the child's top; Claude Code's
  CLAUDE.md family and rules there), listed ``on_demand`` with the child as their
  ``root``: they apply when the agent works in the child (see :mod:`ondemand`);
* its skills (each container of ``skills.containers``, one level) and MCP configs
  (``mcp.config_files``), listed ``disabled`` with the reason and never read: a checkout
  the user did not open must not widen what runs or what the model is offered.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from agentcontext.fs.files import EntryKind, Reader
from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import whole
from agentcontext.layout import Layout
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.settings.config import Config, ProjectDocSettings

# the agent's reading of a child's root (its peer's ``child_instructions``)
ChildInstructions = Callable[[str, Layout, Config, Reader], list[Found]]

MARKER = ".git"


def find(work_dir: str, reader: Reader, limit: int) -> tuple[list[str], list[str]]:
    """The child checkouts (absolute, by name), and those past ``limit``."""
    if limit <= 0:
        return [], []
    children: list[str] = []
    for item in reader.list_dir(work_dir):
        if not item.is_dir or item.name.startswith("."):
            continue
        path = os.path.join(work_dir, item.name)
        if reader.probe(os.path.join(path, MARKER), path).kind is not EntryKind.MISSING:
            children.append(path)
    return children[:limit], children[limit:]


def discover(
    layout: Layout, config: Config, reader: Reader, instructions: ChildInstructions
) -> tuple[list[Found], list[Resource]]:
    """The children's instruction files (``on_demand``, as ``instructions`` reads a child's root) and their
    skills and MCP configs (``disabled``)."""
    limit = config.project_doc.child_projects
    children, more = find(layout.work_dir, reader, limit)
    found: list[Found] = []
    others: list[Resource] = []
    for child in children:
        found += instructions(child, layout, config, reader)
        others += _skills(child, config, reader) + _mcp_configs(child, config, reader)
    if more:
        reason = f"{len(more)} more child projects past the first {limit} (project_doc.child_projects): not read"
        stopped = Resource(Kind.INSTRUCTION_FILE, more[0], Scope.PROJECT, Status.EXCLUDED, error=reason)
        found.append(Found(stopped._replace(load=Load(LoadType.NOT_LOADED, reason=reason))))
    return found, others


def reason_of(child: str) -> str:
    return f"the root instruction file of child project {child}: loaded when the agent works in it"


def picked(items: list[Found], child: str, doc: ProjectDocSettings) -> list[Found]:
    """A child's root read as a folder of the chain: the winners ``on_demand``, the others ``not_loaded``."""
    out: list[Found] = []
    for item in items:
        resource = item.resource
        candidate = item.candidate and resource.status is not Status.SHADOWED and item.data is not None
        resource = resource._replace(doc_order=None)
        if not candidate:
            why = resource.error or "not used"
            out.append(Found(resource._replace(load=Load(LoadType.NOT_LOADED, reason=why, root=child))))
            continue
        loaded = whole(Found(resource, item.data), keep_bytes=doc.keep_bytes)
        out.append(rooted(Found(loaded, item.data), child, reason_of(child)))
    return out


def rooted(item: Found, child: str, reason: str) -> Found:
    load = item.resource.load
    if load is not None and load.type is not LoadType.ON_DEMAND:
        return Found(item.resource._replace(load=replace(load, root=child)), item.data)
    on_demand = Load(LoadType.ON_DEMAND, globs=load.globs if load else (), reason=reason, root=child)
    return Found(item.resource._replace(load=on_demand), item.data)


def _refusal(child: str, what: str) -> str:
    return (
        f"in child project {child}: a checkout the work dir holds adds no {what} "
        f"(an untrusted checkout must not widen what runs); start the agent in {child} to use them"
    )


def _skills(child: str, config: Config, reader: Reader) -> list[Resource]:
    if not config.skills.enabled:
        return []
    out: list[Resource] = []
    reason = _refusal(child, "skills")
    for container in config.skills.containers:
        folder = os.path.join(child, container)
        for item in reader.list_dir(folder)[: config.skills.max_dirs_per_root]:
            if not item.is_dir or item.name.startswith("."):
                continue
            meta = os.path.join(folder, item.name, config.skills.meta_file)
            entry = reader.probe(meta, child)
            if entry.kind is EntryKind.MISSING:
                continue
            skill = Resource(Kind.SKILL, meta, Scope.REPO, Status.DISABLED, size_bytes=entry.size, error=reason)
            out.append(skill._replace(name=item.name, load=Load(LoadType.NOT_LOADED, reason=reason, root=child)))
    return out


def _mcp_configs(child: str, config: Config, reader: Reader) -> list[Resource]:
    out: list[Resource] = []
    reason = _refusal(child, "MCP servers")
    for name in config.mcp.config_files:
        if os.path.isabs(name) or name.startswith(("~", "$")):
            continue  # the user's own file, not the child's
        path = os.path.normpath(os.path.join(child, name))
        entry = reader.probe(path, child)
        if entry.kind is EntryKind.MISSING:
            continue
        out.append(
            Resource(
                Kind.MCP_CONFIG,
                path,
                Scope.PROJECT,
                Status.DISABLED,
                size_bytes=entry.size,
                error=reason,
                connect=False,
            )
        )
    return out
