"""``agent-blind-spot``: a repository's instruction file or skill that some of a team's agents never load.

Each agent named (``audit --agents``, else the setting ``audit.agents``, else every agent) scans
the work dir under its own profile. A file of the repository (not the user's home) that one of
them loads at startup, on demand, for matching paths or when asked, and another never does,
is a finding naming who misses it and why: the reason that agent's own scan gave, else what it
reads instead. A file below the work dir that an agent's scan does not list is looked up the way
a chat working in its folder would (:meth:`agentcontext.scan.Scanner.applicable`) before it is
called missed: Codex reads a nested ``AGENTS.md`` only when started there, and that counts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentcontext import peers
from agentcontext.audit.findings import Finding, Severity, printable
from agentcontext.errors import AgentContextError
from agentcontext.fs.files import is_within
from agentcontext.resource import HOME_SCOPES, Kind, LoadType, Resource
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config
from agentcontext.views.agents import AGENTS, config_for, why

MAX_LOOKUPS = 200  # folders looked up per agent: past it, a file an agent does not list counts as missed


@dataclass(frozen=True, slots=True)
class Seen:
    """One agent's scan of the work dir, and what it loads there."""

    profile: str
    scanner: Scanner
    result: ScanResult
    loads: frozenset[str]  # instruction files and SKILL.md paths it loads in some way
    listed: Mapping[str, Resource]  # every instruction file and skill its scan looked at


def findings(
    result: ScanResult, agents: Sequence[str], environ: Mapping[str, str], severity: Severity = Severity.WARNING
) -> list[Finding]:
    """The blind spots among ``agents`` (profile names) in the work dir of ``result``, each at ``severity``."""
    if len(agents) < 2:
        return []
    work_dir = result.snapshot.work_dir
    seen = [_seen(profile, result.config, work_dir, environ, result) for profile in agents]
    root = result.snapshot.project_root or work_dir
    loaded_by: dict[str, list[Seen]] = {}
    for agent in seen:
        for path in agent.loads:
            if is_within(path, root) and _in_repository(agent.listed.get(path)):
                loaded_by.setdefault(path, []).append(agent)
    out: list[Finding] = []
    lookups: dict[str, int] = {}
    for path, loaders in sorted(loaded_by.items()):
        missing = [a for a in seen if a not in loaders and not _later(a, path, work_dir, lookups)]
        if not missing:
            continue
        kind = "skill" if _is_skill(loaders[0].listed[path]) else "instruction file"
        who = ", ".join(AGENTS.get(a.profile, a.profile) for a in loaders)
        reasons = "; ".join(f"{AGENTS.get(a.profile, a.profile)}: {_why_not(a, path, kind)}" for a in missing)
        message = f"{who} load{'s' if len(loaders) == 1 else ''} this {kind}; never loaded by {reasons}"
        out.append(Finding("agent-blind-spot", severity, path, printable(message)))
    return out


def _seen(profile: str, config: Config, work_dir: str, environ: Mapping[str, str], result: ScanResult) -> Seen:
    if profile == result.config.profile:
        scanner = Scanner(work_dir, result.config, environ=environ)
    else:
        scanner = Scanner(work_dir, config_for(config, profile, work_dir, environ), environ=environ)
    scanned = scanner.run()
    listed: dict[str, Resource] = {}
    loads: set[str] = set()
    for resource in scanned.snapshot.resources:
        if resource.kind not in (Kind.INSTRUCTION_FILE, Kind.SKILL):
            continue
        listed.setdefault(resource.path, resource)
        if resource.kind is Kind.INSTRUCTION_FILE and _loads(resource):
            loads.add(resource.path)
            listed[resource.path] = resource
    loads.update(skill.path for skill in scanned.skills)
    return Seen(profile, scanner, scanned, frozenset(loads), listed)


def _loads(resource: Resource) -> bool:
    load = resource.load
    return resource.status.carries_content and load is not None and load.type is not LoadType.NOT_LOADED


def _is_skill(resource: Resource) -> bool:
    return resource.kind is Kind.SKILL


def _in_repository(resource: Resource | None) -> bool:
    return resource is not None and resource.scope not in HOME_SCOPES


def _later(agent: Seen, path: str, work_dir: str, lookups: dict[str, int]) -> bool:
    """Whether the agent loads the instruction file ``path`` when it works in its folder (below the work dir)."""
    folder = os.path.dirname(path)
    if path in agent.listed and agent.listed[path].kind is Kind.SKILL:
        return False
    if folder == work_dir or not is_within(folder, work_dir):
        return False
    count = lookups.get(agent.profile, 0)
    if count >= MAX_LOOKUPS:
        return False
    lookups[agent.profile] = count + 1
    try:
        answer = agent.scanner.applicable([folder], result=agent.result)
    except AgentContextError:  # a lookup that fails (too slow, too many paths) proves nothing: counted as missed
        return False
    return any(applied.resource.path == path for applied in answer.files)


def _why_not(agent: Seen, path: str, kind: str) -> str:
    listed = agent.listed.get(path)
    if listed is not None:
        return why(listed) or str(listed.status)
    config = agent.result.config
    if kind == "skill":
        folders = ", ".join(config.skills.containers) or "none"
        return f"its skill folders are {folders}"
    names = ", ".join(peers.of(config).read_names(config.project_doc))
    return f"it reads only {names}"
