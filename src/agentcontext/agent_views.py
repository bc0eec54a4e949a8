"""Each agent's own view of one work dir, side by side: what loads, what does not and why.

A view is built from one scan under that agent's profile. ``opened(result, path)`` answers
"what else loads when the agent opens this file": for Claude Code, the instruction files
of the folders between the work dir and the file (listed ``on_demand``) and the rules
whose ``paths:`` globs match it (``path_scoped``, matched like ``.gitignore`` lines,
relative to the folder holding ``.claude``). Codex and Coder load nothing more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pathspec import GitIgnoreSpec

from agentcontext.files import is_within
from agentcontext.resource import Kind, LoadType, Resource, Status
from agentcontext.scan import ScanResult

AGENTS = {"codex": "Codex", "claude": "Claude Code", "coder": "Coder", "default": "agentcontext default"}
VERIFIED = {"codex": "0.169.0", "claude": "2.1.328"}


@dataclass(frozen=True, slots=True)
class AgentView:
    profile: str
    result: ScanResult
    opened: tuple[Resource, ...] | None = None

    @property
    def budget(self) -> int | None:
        budget = self.result.config.project_doc.max_bytes
        return None if budget < 0 else budget

    def loads(self) -> list[Resource]:
        files = {f.path for f in self.result.project_doc().files}
        ordered = sorted(
            (r for r in self.result.snapshot.resources if r.kind is Kind.INSTRUCTION_FILE and r.path in files),
            key=lambda r: r.doc_order or 0,
        )
        return ordered

    def not_loaded(self) -> list[Resource]:
        files = {f.path for f in self.result.project_doc().files}
        return [r for r in self.result.snapshot.resources if r.kind is Kind.INSTRUCTION_FILE and r.path not in files]

    def skills_not_offered(self) -> list[Resource]:
        offered = {s.path for s in self.result.skills}
        return [r for r in self.result.snapshot.resources if r.kind is Kind.SKILL and r.path not in offered]

    def doc_bytes(self) -> int:
        return len(self.result.project_doc().content.encode("utf-8"))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "profile": self.profile,
            "agent": AGENTS.get(self.profile, self.profile),
            "verified_version": VERIFIED.get(self.profile),
            "doc_bytes": self.doc_bytes(),
            "budget_bytes": self.budget,
            "loads": [_row(r) for r in self.loads()],
            "not_loaded": [_row(r) for r in self.not_loaded()],
            "skills": [{"name": s.name, "scope": str(s.scope), "path": s.path} for s in self.result.skills],
            "skills_not_offered": [_row(r) for r in self.skills_not_offered()],
        }
        if self.opened is not None:
            data["when_opened"] = [_row(r) for r in self.opened]
        return data


def _row(resource: Resource) -> dict[str, Any]:
    load = resource.load
    return {
        "path": resource.path,
        "scope": str(resource.scope),
        "status": str(resource.status),
        "bytes": resource.size_bytes,
        "load": load.to_dict() if load else None,
        "reason": why(resource),
    }


def why(resource: Resource) -> str | None:
    """The one reason to show for a resource: its error, else how it loads."""
    if resource.error:
        return resource.error
    load = resource.load
    if load is None:
        return None
    if load.type is LoadType.IMPORT and load.importer:
        return f"imported by {load.importer}"
    if load.type is LoadType.PATH_SCOPED:
        return f"when a file matching {', '.join(load.globs)} is read"
    return load.reason


def opened(result: ScanResult, path: str) -> list[Resource]:
    """What loads when the agent opens ``path`` (absolute), beyond what loaded at startup."""
    out: list[Resource] = []
    work = result.snapshot.work_dir
    folder = os.path.dirname(path)
    for resource in result.snapshot.resources:
        load = resource.load
        if load is None or resource.status is not Status.OK or resource.kind is not Kind.INSTRUCTION_FILE:
            continue
        base = _project_dir(resource.path)
        if load.type is LoadType.ON_DEMAND:
            inside = is_within(folder, base) and base != work
            if inside and (not load.globs or _matches(load.globs, path, base)):
                out.append(resource)
        elif load.type is LoadType.PATH_SCOPED and _matches(load.globs, path, base):
            out.append(resource)
    return out


def _project_dir(path: str) -> str:
    marker = f"{os.sep}.claude{os.sep}"
    cut = path.rfind(marker)
    return path[:cut] if cut != -1 else os.path.dirname(path)


def _matches(globs: tuple[str, ...], path: str, base: str) -> bool:
    if not is_within(path, base):
        return False
    relative = os.path.relpath(path, base)
    return GitIgnoreSpec.from_lines(globs).match_file(relative)
