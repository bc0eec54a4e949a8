"""Each agent's own view of one work dir, side by side: what loads, what does not and why.

A view is built from one scan under that agent's profile. ``opened(result, path)`` answers
"what else loads when the agent opens this file": for Claude Code, what it sends after
reading the file (:mod:`agentcontext.claude_nested`). Codex and Coder load nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcontext.ondemand import Resolver
from agentcontext.resource import Kind, LoadType, Resource
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
    """What loads when the agent opens ``path`` (absolute), beyond what loaded at startup.

    Claude Code's files sent after a read (:mod:`agentcontext.claude_nested`); the other
    agents load nothing more (our MCP tool ``get_instructions_for`` fills that gap).
    """
    if result.config.project_doc.discovery != "claude":
        return []
    return [applied.resource for applied in Resolver().resolve(result, [path]).files]
