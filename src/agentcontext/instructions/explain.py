"""Answers to "why is my CLAUDE.md ignored?": what a scan did with one path, and why.

A path the scan looked at is explained from its resource (status, reason, what won
instead). An instruction file below the work dir that loads when the agent works there is
explained from the on-demand answer (:mod:`agentcontext.instructions.ondemand`). A path it never
looked at is explained from the rules: which names are read where under the active
profile, and what setting or work dir would bring it in. Any other path (a source file,
a folder) is answered with what applies when the agent works on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agentcontext.fs.files import is_within
from agentcontext.fs.paths import absolute
from agentcontext.instructions.applied import Applicable
from agentcontext.resource import Kind, LoadType, Resource, Status
from agentcontext.scan import ScanResult

_ROLE = {
    Status.OK: "is used",
    Status.TRUNCATED: "is used, but not all of it",
    Status.OVERSIZE: "is too large to use",
    Status.UNREADABLE: "could not be read",
    Status.INVALID: "is not usable",
    Status.EXCLUDED: "was left out by a snapshot cap",
    Status.SHADOWED: "is ignored because another file wins",
    Status.DISABLED: "is turned off by configuration",
}


@dataclass(frozen=True, slots=True)
class Explanation:
    path: str
    resource: Resource | None
    summary: str
    details: tuple[str, ...] = ()

    @property
    def used(self) -> bool:
        resource = self.resource
        if resource is None or not resource.status.carries_content:
            return False
        return resource.load is None or resource.load.type is not LoadType.NOT_LOADED


def explain(path: str, result: ScanResult, answer: Applicable | None = None) -> Explanation:
    """Explain what the scan in ``result`` (and the on-demand ``answer`` for ``path``) did with ``path``."""
    target = absolute(path)
    snapshot = result.snapshot
    resource = snapshot.find(target)
    if resource is None and os.path.isdir(target):
        meta = os.path.join(target, result.config.skills.meta_file)
        resource = snapshot.find(meta)
        if resource is None and os.path.lexists(meta):
            target = meta  # a skill folder the scan passed over is explained by its SKILL.md
    if resource is not None:
        return _from_resource(resource, result)
    on_demand = next((a for a in (answer.files if answer else ()) if a.resource.path == target), None)
    if on_demand is not None:
        details = (f"reason: {on_demand.reason}", f"{on_demand.bytes} bytes, not in the startup doc")
        return Explanation(target, on_demand.resource, "is loaded on demand", details)
    if not os.path.lexists(target):
        return Explanation(target, None, "does not exist")
    return _from_rules(target, result)


def applies(answer: Applicable) -> list[str]:
    """What applies when the agent works on the answer's paths, one line each."""
    lines = [f"startup    {r.path}" for r in answer.startup]
    lines += [f"{_label(f.resource)}  {f.resource.path}: {f.reason} ({f.bytes} bytes)" for f in answer.files]
    lines += [f"excluded   {f.resource.path}: {f.reason}" for f in answer.excluded]
    lines += [f"not used   {f.resource.path}: {f.reason}" for f in answer.not_loaded]
    lines += [f"refused    {r.path}: {r.reason}" for r in answer.refused]
    return lines


_LABELS = {LoadType.PATH_SCOPED: "path scoped", LoadType.IMPORT: "import   "}


def _label(resource: Resource) -> str:
    """How an applied file comes in, in a column as wide as ``on demand``."""
    load = resource.load
    return _LABELS.get(load.type, "on demand") if load is not None else "on demand"


_ASKED = {
    LoadType.AGENT_REQUESTED: "is loaded only when the model asks for it",
    LoadType.MANUAL: "is loaded only when the user mentions it",
    LoadType.PATH_SCOPED: "is loaded for matching files",
}


def _from_resource(resource: Resource, result: ScanResult) -> Explanation:
    what = {Kind.INSTRUCTION_FILE: "instruction file", Kind.SKILL: "skill", Kind.MCP_CONFIG: "MCP config"}.get(
        resource.kind, str(resource.kind)
    )
    load = resource.load
    if load is not None and load.type is LoadType.ON_DEMAND and resource.status.carries_content:
        later = (f"reason: {load.reason}", f"{resource.payload_bytes} bytes, not in the startup doc")
        return Explanation(resource.path, resource, "is loaded on demand", later)
    summary = f"{what} ({resource.scope}) {_ROLE[resource.status]}: {resource.status}"
    if load is not None and load.type in _ASKED and resource.status is Status.OK:
        summary = f"{what} ({resource.scope}) {_ASKED[load.type]} ({load.type}): {load.reason}"
    if load is not None and load.type is LoadType.NOT_LOADED and resource.status.carries_content:
        summary = f"{what} ({resource.scope}) is read but not loaded: {load.reason}"
    details: list[str] = []
    if resource.error:
        details.append(f"reason: {resource.error}")
    if resource.kind is Kind.INSTRUCTION_FILE and resource.doc_order is not None and resource.status.carries_content:
        details.append(f"position {resource.doc_order + 1} in the project doc")
    if resource.kind is Kind.SKILL and resource.name:
        details.append(f"skill name: {resource.name}")
    if resource.kind is Kind.MCP_CONFIG:
        servers = ", ".join(resource.servers) or "none"
        details.append(f"servers: {servers}" + ("" if resource.connect else " (listed only: not connected)"))
    details += [f"warning: {w}" for w in resource.warnings]
    return Explanation(resource.path, resource, summary, tuple(details))


def _from_rules(target: str, result: ScanResult) -> Explanation:
    name = os.path.basename(target)
    directory = os.path.dirname(target)
    config = result.config
    layout = result.layout
    peer = result.peer
    known = peer.read_names(config.project_doc)
    if name == config.skills.meta_file:
        return _skill_rules(target, result)
    spelled = [n for n in known if n.lower() == name.lower()]
    if spelled and name not in known:
        return Explanation(
            target, None, "is not read: instruction file names are case-sensitive", (f"read: {spelled[0]!r}",)
        )
    if name in known:
        own = peer.unread_here(directory, layout)
        if own is not None:
            return Explanation(target, None, own[0], own[1])
        chain = layout.chain
        hint = f"run from inside {directory} or pass --work-dir {directory}"
        if not is_within(directory, layout.project_root or layout.work_dir):
            hint = f"it is outside the project root {layout.project_root or layout.work_dir}"
        return Explanation(
            target,
            None,
            "is not read: it is not in a directory between the project root and the work dir",
            (f"chain: {' -> '.join(chain)}", hint),
        )
    if name in ("AGENTS.md", "AGENTS.override.md", "CLAUDE.md", ".cursorrules", "GEMINI.md"):
        return Explanation(
            target,
            None,
            f"is not read: {name} is not an instruction file name in the {config.profile} profile",
            (f"names read: {', '.join(known)}", "add it to project_doc.fallback_filenames to read it"),
        )
    if name == ".mcp.json":
        files = ", ".join(f.path for f in layout.mcp_files) or "none"
        return Explanation(target, None, "is not read: it is not one of the MCP config files", (f"read: {files}",))
    return Explanation(target, None, "is not something agentcontext reads")


def _skill_rules(target: str, result: ScanResult) -> Explanation:
    folder = os.path.dirname(target)
    containers = [c.path for c in result.layout.skill_containers]
    if not result.config.skills.enabled:
        return Explanation(target, None, "is not read: skills are disabled (skills.enabled = false)")
    inside = [c for c in containers if is_within(folder, c)]
    if not inside:
        return Explanation(
            target,
            None,
            "is not read: the skill is not in a skills container",
            ("containers: " + ", ".join(containers), "add its parent to skills.dirs to read it"),
        )
    depth = len(os.path.relpath(folder, inside[-1]).split(os.sep))
    if depth > result.config.skills.max_depth:
        return Explanation(
            target,
            None,
            f"is not read: it is {depth} levels below {inside[-1]} "
            f"(skills.max_depth is {result.config.skills.max_depth})",
        )
    return Explanation(
        target, None, "is not read: a hidden folder, a node_modules folder or an enclosing skill is in its path"
    )
