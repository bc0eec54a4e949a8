"""A work dir's MCP servers as the user approves them: what each would run, and where it stands.

One answer for every place that shows or records an approval outside the running agent
(``agentcontext mcp trust``, ``up``'s question, ``audit``): each server of the work dir's
configs is resolved to its :class:`~agentcontext.workspace_mcp.launch.Launch` with the user's own
environment, exactly as the agent resolves it, so a digest printed here is the digest the
agent binds (:mod:`agentcontext.workspace_mcp.client.upstream`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentcontext.audit.findings import printable
from agentcontext.errors import ConflictError
from agentcontext.resource import Kind, Status, ToolChange
from agentcontext.scan import scan_full
from agentcontext.settings.config import Config
from agentcontext.workspace_mcp.launch import FileHashes, Launch, changes, describe, resolve
from agentcontext.workspace_mcp.tool_pins import compare
from agentcontext.workspace_mcp.trust import TrustStore


@dataclass(frozen=True, slots=True)
class Standing:
    """One server: what it would run, and ``pending``, ``approved`` or ``changed`` (its tools, since approval)."""

    launch: Launch
    state: str
    since: str = ""  # pending after an earlier approval: what changed in what it runs
    masked_since: str = ""  # ``since`` as a snapshot shows it (``launch.masked_view``)
    changes: tuple[ToolChange, ...] = ()  # changed: its tools, against the pins

    def lines(self) -> list[str]:
        """What a terminal shows of it: all it runs with its digest, what changed since approval, tool changes."""
        out = describe(self.launch.runs(), self.launch.digest)
        if self.since:
            out += ["changed since you approved it:", *(f"  {line}" for line in self.since.split("\n"))]
        for change in self.changes:
            out.append(f"tool {printable(change.tool)}: {change.change}")
            out += [f"  {printable(line)}" for line in change.diff.split("\n") if line]
        return out


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """What the scan said of one of the work dir's MCP configs that keeps a server of it from being approved:
    the file's ``status`` as ``scan`` shows it (``invalid``, ``unreadable``, ``oversize``: none of its servers
    is read) and its error, or (``warning``) one of its warnings: an entry that cannot be used, a name another
    file defined first, servers past the cap."""

    config: str
    status: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"config": self.config, "status": self.status, "message": self.message}


@dataclass(frozen=True, slots=True)
class Configured:
    """The work dir's servers as they would start, and what of its configs could not be used."""

    launches: tuple[Launch, ...]
    problems: tuple[ConfigProblem, ...]


def configured(
    work_dir: str | os.PathLike[str], config: Config, environ: Mapping[str, str] | None = None
) -> Configured:
    """Every server the work dir's configs would start, resolved as the agent resolves them, and every problem
    the scan reported on those configs (files that connect; a declared source's configs start nothing)."""
    env = dict(os.environ if environ is None else environ)
    result = scan_full(work_dir, config, environ=env)
    hashes = FileHashes()
    root = result.snapshot.work_dir
    inherit = config.mcp.inherit_env
    found = tuple(resolve(spec, work_dir=root, environ=env, inherit=inherit, hashes=hashes) for spec in result.servers)
    problems: list[ConfigProblem] = []
    for resource in result.snapshot.resources:
        if resource.kind is not Kind.MCP_CONFIG or not resource.connect:
            continue
        if resource.status in _UNREAD:
            problems.append(ConfigProblem(resource.path, str(resource.status), resource.error or ""))
        problems += [ConfigProblem(resource.path, "warning", warning) for warning in resource.warnings]
    return Configured(found, tuple(problems))


_UNREAD = frozenset({Status.INVALID, Status.UNREADABLE, Status.OVERSIZE})  # a config none of whose servers is read


def launches(
    work_dir: str | os.PathLike[str], config: Config, environ: Mapping[str, str] | None = None
) -> list[Launch]:
    """Every server the work dir's configs would start, resolved as the agent resolves them."""
    return list(configured(work_dir, config, environ).launches)


def standing(launch: Launch, store: TrustStore) -> Standing:
    """Where ``launch`` stands with the user's approvals (``mcp.trust = auto`` aside)."""
    last = store.last(launch)
    if last is None or last.digest != launch.digest or not last.approved:
        before = last.approved_runs() if last is not None else None
        texts = (last.texts if last else None) or {}
        masked = changes(before, texts, launch, masked=True)
        return Standing(launch, "pending", changes(before, texts, launch), masked_since=masked)
    if last.seen is not None and last.tools is not None:
        found = compare(last.tools, list(last.seen.values())).changes
        if found:
            return Standing(launch, "changed", changes=tuple(found))
    return Standing(launch, "approved")


def bind(chosen: Sequence[Launch], digests: Sequence[str]) -> None:
    """Check that ``digests`` name exactly the launches ``chosen`` as they are now (one each).

    Raises:
        ConflictError: the digests are more or fewer than the launches, a launch is not among them (it changed
            since it was shown, or was never shown), or a digest names none of them.
    """
    if len(digests) != len(chosen):
        names = ", ".join(f'"{printable(launch.name)}"' for launch in chosen)
        servers = f"{len(chosen)} {'server' if len(chosen) == 1 else 'servers'}" + (f" ({names})" if names else "")
        raise ConflictError(
            f"--digest given {len(digests)} times for {servers} to approve: give one --digest per server,"
            " as `agentcontext mcp trust --list` shows it"
        )
    wanted = {digest.strip().lower() for digest in digests}
    now = {launch.digest for launch in chosen}
    changed = [launch.name for launch in chosen if launch.digest not in wanted]
    if changed:
        names = ", ".join(f'"{name}"' for name in changed)
        raise ConflictError(
            f"what {names} would run is not what the given --digest names (it changed since it was shown, or"
            " was not shown): look at it again with `agentcontext mcp trust --list`"
        )
    extra = sorted(wanted - now)
    if extra:
        raise ConflictError(f"--digest {extra[0]} names none of the servers to approve")
