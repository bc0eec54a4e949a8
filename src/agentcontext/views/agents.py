"""Each agent's own view of one work dir, side by side: what loads, what does not and why.

A view is built from one scan under that agent's profile (:meth:`AgentView.of_scan`), or,
for the profile a snapshot was taken under, from the snapshot's stored resources
(:meth:`AgentView.of_snapshot`: the budget is then the profile's default, since a snapshot
does not carry its settings). ``config_for`` gives the settings another profile scans with:
the same user file, environment, flags and declared sources. Asked about a path, a view
says what else loads when the agent works on it: for Claude Code, what it sends once it reads
the file (:mod:`agentcontext.peers.claude.nested`); for the others, which send nothing more in
the session, what a session started in its folder loads (what ``doc --for`` and ``explain`` show).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentcontext import peers
from agentcontext.instructions.ondemand import Resolver
from agentcontext.instructions.project_doc import ProjectDoc
from agentcontext.resource import Kind, LoadType, Resource
from agentcontext.scan import ScanResult
from agentcontext.settings.config import Config, load_config
from agentcontext.settings.profiles import profile_defaults
from agentcontext.skills.files import offered

AGENTS = {
    "codex": "Codex",
    "claude": "Claude Code",
    "gemini": "Gemini CLI",
    "cursor": "Cursor",
    "opencode": "OpenCode",
    "copilot": "GitHub Copilot CLI",
    "coder": "Coder",
    "default": "agentcontext default",
}
VERIFIED = {"codex": "0.171.0", "claude": "2.1.332", "gemini": "0.61.0", "opencode": "1.18.33", "copilot": "1.0.102"}
DOCUMENTED = frozenset({"cursor"})  # followed from the agent's documentation: no binary of it could be checked
# the order views are shown in
VIEW_PROFILES = ("codex", "claude", "gemini", "opencode", "copilot", "cursor", "coder", "default")
AI_AGENTS = tuple(p for p in VIEW_PROFILES if p != "default")  # the agents themselves (not our own default)


@dataclass(frozen=True, slots=True)
class AgentView:
    profile: str
    resources: tuple[Resource, ...]
    doc: ProjectDoc
    skills: tuple[Resource, ...]  # the skills offered
    budget: int | None  # the doc budget in bytes; None: no budget
    opened: tuple[Resource, ...] | None = None  # sent once the agent reads the path (None: no path asked about)
    # loaded by a session started in the path's folder, though reading the path sends nothing (Codex, Coder)
    started_there: tuple[Resource, ...] = ()
    stored: bool = False  # from a stored snapshot: the budget is the profile's default

    @classmethod
    def of_scan(cls, profile: str, result: ScanResult, path: str | None = None) -> AgentView:
        """The view of a scan; with ``path`` (absolute), also what loads when the agent works on it."""
        budget = result.config.project_doc.max_bytes
        doc = result.project_doc()
        later = None if path is None else Resolver().resolve(result, [path]).files
        found = () if later is None else tuple(applied.resource for applied in later)
        sent = result.peer.sends_on_read
        opened = None if path is None else (found if sent else ())
        started_there = () if sent else found
        resources, skills = result.snapshot.resources, result.skills
        return cls(profile, resources, doc, skills, None if budget < 0 else budget, opened, started_there)

    @classmethod
    def of_snapshot(cls, profile: str, resources: Iterable[Resource]) -> AgentView:
        """The view of the profile a snapshot was taken under, from its resources (instruction files with content)."""
        kept = tuple(resources)
        defaults = profile_defaults(profile)
        peer = peers.named(str(defaults["project_doc.discovery"]))
        doc = peer.project_doc(kept, bool(defaults["project_doc.sanitize"]))
        budget = int(defaults["project_doc.max_bytes"])
        return cls(profile, kept, doc, tuple(offered(kept)), None if budget < 0 else budget, stored=True)

    def loads(self) -> list[Resource]:
        files = {f.path for f in self.doc.files}
        return sorted(
            (r for r in self.resources if r.kind is Kind.INSTRUCTION_FILE and _in_doc(r, files)),
            key=lambda r: r.doc_order or 0,
        )

    def not_loaded(self) -> list[Resource]:
        files = {f.path for f in self.doc.files}
        return [r for r in self.resources if r.kind is Kind.INSTRUCTION_FILE and not _in_doc(r, files)]

    def skills_not_offered(self) -> list[Resource]:
        offered_paths = {s.path for s in self.skills}
        return [r for r in self.resources if r.kind is Kind.SKILL and r.path not in offered_paths]

    def doc_bytes(self) -> int:
        return len(self.doc.content.encode("utf-8"))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "profile": self.profile,
            "agent": AGENTS.get(self.profile, self.profile),
            "verified_version": VERIFIED.get(self.profile),
            "checked_against": _checked_against(self.profile),
            "doc_bytes": self.doc_bytes(),
            "budget_bytes": self.budget,
            "loads": [_row(r) for r in self.loads()],
            "not_loaded": [_row(r) for r in self.not_loaded()],
            "skills": [{"name": s.name, "scope": str(s.scope), "path": s.path} for s in self.skills],
            "skills_not_offered": [_row(r) for r in self.skills_not_offered()],
        }
        if self.opened is not None:
            data["when_opened"] = [_row(r) for r in self.opened]
            data["when_started_there"] = [_row(r) for r in self.started_there]
        return data


def _checked_against(profile: str) -> str | None:
    """What a profile's rules were checked against: the agent's binary, its documentation, or nothing."""
    if profile in VERIFIED:
        return "binary"
    return "documentation" if profile in DOCUMENTED else None


def _in_doc(resource: Resource, files: set[str]) -> bool:
    """Whether the resource is the one its path's doc text came from: a path can also be listed apart
    (Claude Code's AGENTS.md, shadowed as the fallback, yet loaded because a CLAUDE.md imports it)."""
    return resource.doc_order is not None and resource.path in files


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


def config_for(config: Config, profile: str, work_dir: str, environ: Mapping[str, str]) -> Config:
    """``config`` under another profile: the same user file (or none), environment, flags and declared sources.

    Raises:
        ConfigError: the user's file or the environment no longer makes a valid config.
    """
    if profile == config.profile:
        return config
    flags = {key: config.value(key) for key, origin in config.origins if origin == "flag" and key != "profile"}
    flags = {key: list(value) if isinstance(value, tuple) else value for key, value in flags.items()}
    # Neither file known: the config was built without files (--config /dev/null) or found none; both stay so.
    files_off = config.user_file is None and config.project_file is None
    config_file = config.user_file or (os.devnull if files_off else None)
    other = load_config(work_dir, config_file=config_file, environ=environ, overrides={**flags, "profile": profile})
    return dataclasses.replace(other, sources=config.sources)
