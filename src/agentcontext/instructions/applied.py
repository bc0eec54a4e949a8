"""The answer to "what applies to these paths": the files, in order, and the text an agent gets.

Values only (built by :mod:`agentcontext.instructions.ondemand`). ``files`` load, in the profile's
order; ``excluded`` would load but are past the answer's cap; ``not_loaded`` were found
and are not used (shadowed, empty, invalid, oversize...), each with its reason;
``refused`` are asked-about paths that were not looked at, with the reason; ``startup``
are the files the agent already has from its start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentcontext.resource import Resource
from agentcontext.sanitize import sanitize


@dataclass(frozen=True, slots=True)
class Applied:
    """One instruction file of an answer; ``paths``: the asked-about paths it applies to."""

    resource: Resource
    paths: tuple[str, ...] = ()
    hook: bool = False  # claude: sent inside the AGENTS.md hook's context

    @property
    def reason(self) -> str:
        load = self.resource.load
        return self.resource.error or (load.reason if load and load.reason else "") or str(self.resource.status)

    @property
    def bytes(self) -> int:
        return self.resource.payload_bytes

    def to_dict(self) -> dict[str, Any]:
        r = self.resource
        data: dict[str, Any] = {
            "path": r.path,
            "scope": str(r.scope),
            "status": str(r.status),
            "load": r.load.to_dict() if r.load else None,
            "reason": self.reason,
            "bytes": self.bytes,
            "size_bytes": r.size_bytes,
            "content_hash": r.content_hash,
            "warnings": list(r.warnings),
            "for": list(self.paths),
            "hook": self.hook,
        }
        if r.status.carries_content and r.content is not None:
            data["content"] = r.content
        return data


@dataclass(frozen=True, slots=True)
class Refused:
    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


class Interest(NamedTuple):
    """A folder an answer depends on: a change of one of ``names`` in it (of any name: None) may change it."""

    folder: str
    names: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class Applicable:
    """The answer: what loads (in the profile's order), what is over the cap, what is not used, what was refused."""

    work_dir: str
    profile: str
    paths: tuple[str, ...]
    files: tuple[Applied, ...] = ()
    excluded: tuple[Applied, ...] = ()
    not_loaded: tuple[Applied, ...] = ()
    refused: tuple[Refused, ...] = ()
    startup: tuple[Resource, ...] = ()
    watch: tuple[Interest, ...] = field(default=(), compare=False)  # not part of the answer: what it depends on

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "work_dir": self.work_dir,
            "profile": self.profile,
            "paths": list(self.paths),
            "bytes": self.bytes,
            "files": [f.to_dict() for f in self.files],
            "excluded": [f.to_dict() for f in self.excluded],
            "not_loaded": [f.to_dict() for f in self.not_loaded],
            "refused": [r.to_dict() for r in self.refused],
            "startup": [r.path for r in self.startup],
        }


def text(answer: Applicable, *, sanitized: bool = False, skip: frozenset[str] = frozenset()) -> str:
    """The files' texts for a model: one ``Contents of <path> (<why>):`` section each ("" when none).

    ``skip``: paths already given (an MCP session's earlier answers).
    """
    sections: list[str] = []
    for applied in answer.files:
        resource = applied.resource
        if resource.path in skip or resource.content is None:
            continue
        body = sanitize(resource.content) if sanitized else resource.content
        if body.strip():
            sections.append(f"Contents of {resource.path} ({applied.reason}):\n\n{body.strip()}")
    return "\n\n".join(sections)
