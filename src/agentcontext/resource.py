"""What a scan found: one value per file or server it looked at.

A resource is a pure value. Every candidate the scan examined is one, used or not:
the status says what happened to it and ``error`` says why, so nothing is ever
dropped silently. Content travels only with the statuses that carry it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    INSTRUCTION_FILE = "instruction_file"
    SKILL = "skill"
    MCP_CONFIG = "mcp_config"
    MCP_SERVER = "mcp_server"

    @property
    def rank(self) -> int:
        """Coder's enum order: caps are applied instruction files first."""
        return _KIND_RANK[self]

    @property
    def drifts(self) -> bool:
        """Whether a change of this kind marks pinned chats out of date (MCP never does)."""
        return self in DRIFTING


_KIND_RANK = {Kind.INSTRUCTION_FILE: 0, Kind.SKILL: 1, Kind.MCP_CONFIG: 2, Kind.MCP_SERVER: 3}
DRIFTING = frozenset({Kind.INSTRUCTION_FILE, Kind.SKILL})  # the kinds whose changes mark chats out of date


class Status(StrEnum):
    OK = "ok"
    TRUNCATED = "truncated"
    OVERSIZE = "oversize"
    UNREADABLE = "unreadable"
    INVALID = "invalid"
    EXCLUDED = "excluded"
    SHADOWED = "shadowed"
    DISABLED = "disabled"

    @property
    def carries_content(self) -> bool:
        return self in _CARRYING

    @property
    def needs_fixing(self) -> bool:
        """Something a user must fix to get what they wrote (``scan --check``): not ``ok``, and not a file another
        one wins over (``shadowed``) or one their own configuration or approval turned off (``disabled``)."""
        return self not in _INFORMATION


_CARRYING = frozenset({Status.OK, Status.TRUNCATED})
_INFORMATION = frozenset({Status.OK, Status.SHADOWED, Status.DISABLED})


class Scope(StrEnum):
    PROJECT = "project"  # the work dir's chain or the work dir root
    HOME = "home"  # home instruction dirs (~/.codex, ~/.coder)
    SOURCE = "source"  # a declared source directory
    REPO = "repo"  # skills found in the project
    USER = "user"  # skills in the user's skill dirs
    PLUGIN = "plugin"  # skills of installed Claude Code plugins
    PERSONAL = "personal"  # skills stored by the control plane for one user
    LOCAL = "local"  # personal instruction files not checked in (CLAUDE.local.md and its imports)
    SYSTEM = "system"  # skills an agent ships itself (Codex's $CODEX_HOME/skills/.system)


# what is read from the user's home rather than the workspace (``agent.push_home_files``)
HOME_SCOPES = frozenset({Scope.HOME, Scope.USER, Scope.PLUGIN, Scope.SYSTEM})


class LoadType(StrEnum):
    """How a resource reaches the model."""

    STARTUP = "startup"  # in the prompt from the first turn
    PATH_SCOPED = "path_scoped"  # when a file matching ``globs`` is read
    IMPORT = "import"  # pulled in by an ``@path`` line of ``importer``
    ON_DEMAND = "on_demand"  # nested below the work dir: when the agent works there
    NOT_LOADED = "not_loaded"  # never, and ``reason`` says why

    @property
    def at_startup(self) -> bool:
        """In the model's context from the first turn: loaded at start, or imported by a file that is."""
        return self in (LoadType.STARTUP, LoadType.IMPORT)


@dataclass(frozen=True, slots=True)
class Load:
    """How (and whether) a resource is loaded, and for imports the chain that led to it."""

    type: LoadType
    globs: tuple[str, ...] = ()
    importer: str | None = None
    chain: tuple[str, ...] = ()  # the importing files, outermost first
    reason: str | None = None
    root: str | None = None  # a child project's folder: the root the file belongs to

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": str(self.type)}
        if self.globs:
            data["globs"] = list(self.globs)
        if self.importer is not None:
            data["importer"] = self.importer
        if self.chain:
            data["chain"] = list(self.chain)
        if self.reason is not None:
            data["reason"] = self.reason
        if self.root is not None:
            data["root"] = self.root
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Load:
        return cls(
            LoadType(data["type"]),
            tuple(str(g) for g in data.get("globs", ())),
            data.get("importer"),
            tuple(str(c) for c in data.get("chain", ())),
            data.get("reason"),
            data.get("root"),
        )


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool of a connected MCP server, as offered (sanitised; see :mod:`agentcontext.workspace_mcp.tool_text`)."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    annotations: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def to_dict(self) -> dict[str, Any]:
        data = {"name": self.name, "description": self.description, "input_schema": self.input_schema}
        if self.annotations:
            data["annotations"] = self.annotations
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tool:
        annotations = data.get("annotations")
        return cls(
            str(data["name"]),
            str(data.get("description") or ""),
            dict(data.get("input_schema") or {}),
            dict(annotations) if isinstance(annotations, dict) else {},
        )


@dataclass(frozen=True, slots=True)
class ToolChange:
    """A tool whose definition differs from the one approved: ``added``, ``changed`` or ``removed``."""

    tool: str
    change: str
    diff: str  # unified diff of the approved and the current definition

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "change": self.change, "diff": self.diff}


@dataclass(frozen=True, slots=True)
class RunsFile:
    """A file of the repository a server runs or is handed: its content is part of the approval."""

    path: str
    role: str  # "program" or "argument N"
    sha256: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "sha256": self.sha256, "size": self.size}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunsFile:
        return cls(str(data["path"]), str(data["role"]), str(data["sha256"]), int(data["size"]))


@dataclass(frozen=True, slots=True)
class Runs:
    """What an MCP server runs or reaches, whole, as the user approves it (:mod:`agentcontext.workspace_mcp.launch`).

    ``${VAR}`` references as written, credential parts as ``***``; ``executable`` is the
    program as resolved (the absolute path started), ``files`` the repository files bound by
    content, ``notes`` what to weigh (environment keys that change what loads, links, folders).
    ``executable`` is the path started and ``target`` its real path when it is a link.
    """

    transport: str
    command: str = ""
    executable: str = ""
    target: str = ""  # the executable's real path, when it is a link
    args: tuple[str, ...] = ()
    cwd: str = ""
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    files: tuple[RunsFile, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "transport": self.transport,
            "command": self.command,
            "executable": self.executable,
            "target": self.target,
            "args": list(self.args),
            "cwd": self.cwd,
            "env": [[k, v] for k, v in self.env],
            "url": self.url,
            "headers": [[k, v] for k, v in self.headers],
            "files": [f.to_dict() for f in self.files],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Runs:
        return cls(
            str(data["transport"]),
            str(data.get("command") or ""),
            str(data.get("executable") or ""),
            str(data.get("target") or ""),
            tuple(str(a) for a in data.get("args") or ()),
            str(data.get("cwd") or ""),
            tuple((str(k), str(v)) for k, v in data.get("env") or ()),
            str(data.get("url") or ""),
            tuple((str(k), str(v)) for k, v in data.get("headers") or ()),
            tuple(RunsFile.from_dict(f) for f in data.get("files") or ()),
            tuple(str(n) for n in data.get("notes") or ()),
        )


@dataclass(frozen=True, slots=True)
class McpApproval:
    """Where an ``mcp_server`` stands with the user's approval, and what approving it would allow.

    ``state``: ``pending`` (never started: what it would run is not approved), ``approved``,
    ``auto`` (the operator set ``mcp.trust = auto``), ``changed`` (its tools differ from those
    approved: the changed and added ones are withheld until approved again).
    """

    state: str
    config_path: str
    digest: str  # sha256 of everything that decides what runs (mcp_launch.Launch.digest): what an approval binds to
    command: str  # what it runs or reaches in one line, as written, credentials masked
    changes: tuple[ToolChange, ...] = ()
    tool_set: str = ""  # fingerprint of the tools as listed now (for ``changed``: what re-approval pins)
    runs: Runs | None = None  # what it runs, whole
    since: str = ""  # pending after an approval: what changed in what it runs since then (a diff)

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "config_path": self.config_path,
            "digest": self.digest,
            "command": self.command,
            "changes": [c.to_dict() for c in self.changes],
            "tool_set": self.tool_set,
            "runs": self.runs.to_dict() if self.runs is not None else None,
            "since": self.since,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> McpApproval:
        runs = data.get("runs")
        return cls(
            str(data["state"]),
            str(data.get("config_path") or ""),
            str(data.get("digest") or ""),
            str(data.get("command") or ""),
            tuple(
                ToolChange(str(c["tool"]), str(c["change"]), str(c.get("diff") or "")) for c in data.get("changes", ())
            ),
            str(data.get("tool_set") or ""),
            Runs.from_dict(runs) if isinstance(runs, dict) else None,
            str(data.get("since") or ""),
        )


@dataclass(frozen=True, slots=True, init=False)
class Resource:
    """One file or server the scan looked at.

    ``path`` is absolute (for ``mcp_server`` it is the server's name). ``content_hash``
    is the sha256 of the original bytes (of the first ``max_resource_bytes`` bytes when
    the file is larger); empty when nothing could be read.
    """

    kind: Kind
    path: str
    scope: Scope
    status: Status
    size_bytes: int = 0
    content_hash: str = ""
    content: str | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    name: str | None = None
    description: str | None = None
    doc_order: int | None = None  # position in the project doc, for the doc's candidates
    source: str | None = None  # the declared source that contributed it
    servers: tuple[str, ...] = ()  # mcp_config: usable server names, in file order
    connect: bool = True  # mcp_config: whether the agent connects to its servers
    tools: tuple[Tool, ...] = ()  # mcp_server
    load: Load | None = None  # instruction files and skills: how the model gets it
    approval: McpApproval | None = None  # mcp_server

    def __init__(
        self,
        kind: Kind,
        path: str,
        scope: Scope,
        status: Status,
        size_bytes: int = 0,
        content_hash: str = "",
        content: str | None = None,
        error: str | None = None,
        warnings: tuple[str, ...] = (),
        name: str | None = None,
        description: str | None = None,
        doc_order: int | None = None,
        source: str | None = None,
        servers: tuple[str, ...] = (),
        connect: bool = True,
        tools: tuple[Tool, ...] = (),
        load: Load | None = None,
        approval: McpApproval | None = None,
    ) -> None:
        # A scan builds one or two of these per file, and a frozen dataclass's own __init__ sets each
        # of the 18 fields through object.__setattr__ (about 2.5 us a resource, a third of a cold
        # scan's floor per skill). The fields are stored instead while the object wears _Unfrozen, a
        # class with the same slots and no __setattr__ (3x cheaper), then it becomes a Resource again.
        # tests/test_resource.py checks this signature against the fields.
        frozen = type(self)
        _set_class(self, "__class__", _Unfrozen)
        unfrozen: Any = self
        unfrozen.kind = kind
        unfrozen.path = path
        unfrozen.scope = scope
        unfrozen.status = status
        unfrozen.size_bytes = size_bytes
        unfrozen.content_hash = content_hash
        unfrozen.content = content
        unfrozen.error = error
        unfrozen.warnings = warnings
        unfrozen.name = name
        unfrozen.description = description
        unfrozen.doc_order = doc_order
        unfrozen.source = source
        unfrozen.servers = servers
        unfrozen.connect = connect
        unfrozen.tools = tools
        unfrozen.load = load
        unfrozen.approval = approval
        unfrozen.__class__ = frozen

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.path}"

    @property
    def payload_bytes(self) -> int:
        content = self.content
        if content is None:
            return 0
        return len(content) if content.isascii() else len(content.encode("utf-8"))

    def with_status(self, status: Status, error: str | None, *, keep_content: bool = False) -> Resource:
        """The same resource with another status and reason (a fast ``dataclasses.replace``); a load it had
        becomes ``not_loaded`` for that reason when the new status carries no content (an excluded file)."""
        load = self.load
        if load is not None and not status.carries_content:
            load = _not_loaded(error, load.root)
        return make(
            self.kind,
            self.path,
            self.scope,
            status,
            self.size_bytes,
            self.content_hash,
            self.content if keep_content else None,
            error,
            self.warnings,
            self.name,
            self.description,
            self.doc_order,
            self.source,
            self.servers,
            self.connect,
            self.tools if keep_content else (),
            load,
            self.approval,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": str(self.kind),
            "path": self.path,
            "scope": str(self.scope),
            "status": str(self.status),
            "size_bytes": self.size_bytes,
            "content_hash": self.content_hash,
            "error": self.error,
            "warnings": list(self.warnings),
        }
        if self.status.carries_content and self.content is not None:
            data["content"] = self.content
        if self.kind is Kind.INSTRUCTION_FILE:
            data["doc_order"] = self.doc_order
        if self.kind in (Kind.SKILL, Kind.INSTRUCTION_FILE, Kind.MCP_SERVER):
            data["name"] = self.name
            data["description"] = self.description
        if self.kind is Kind.MCP_CONFIG:
            data["servers"] = list(self.servers)
            data["connect"] = self.connect
        if self.kind is Kind.MCP_SERVER:
            data["tools"] = [tool.to_dict() for tool in self.tools]
            if self.approval is not None:
                data["approval"] = self.approval.to_dict()
        if self.source is not None:
            data["source"] = self.source
        if self.load is not None:
            data["load"] = self.load.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Resource:
        """Rebuild a resource from :meth:`to_dict` output (the wire and the database)."""
        return cls(
            kind=Kind(data["kind"]),
            path=str(data["path"]),
            scope=Scope(data["scope"]),
            status=Status(data["status"]),
            size_bytes=int(data.get("size_bytes", 0)),
            content_hash=str(data.get("content_hash", "")),
            content=data.get("content"),
            error=data.get("error"),
            warnings=tuple(data.get("warnings", ())),
            name=data.get("name"),
            description=data.get("description"),
            doc_order=data.get("doc_order"),
            source=data.get("source"),
            servers=tuple(data.get("servers", ())),
            connect=bool(data.get("connect", True)),
            tools=tuple(Tool.from_dict(t) for t in data.get("tools", ())),
            load=Load.from_dict(data["load"]) if data.get("load") else None,
            approval=McpApproval.from_dict(data["approval"]) if data.get("approval") else None,
        )


@functools.lru_cache(maxsize=256)
def _not_loaded(reason: str | None, root: str | None) -> Load:
    """One value per reason: the snapshot caps exclude hundreds of resources for the same one."""
    return Load(LoadType.NOT_LOADED, reason=reason, root=root)


_set_class = object.__setattr__  # Resource's own __setattr__ refuses every name, __class__ included
_Unfrozen = type("_Unfrozen", (), {"__slots__": Resource.__slots__, "__module__": __name__})


def make(
    kind: Kind,
    path: str,
    scope: Scope,
    status: Status,
    size_bytes: int = 0,
    content_hash: str = "",
    content: str | None = None,
    error: str | None = None,
    warnings: tuple[str, ...] = (),
    name: str | None = None,
    description: str | None = None,
    doc_order: int | None = None,
    source: str | None = None,
    servers: tuple[str, ...] = (),
    connect: bool = True,
    tools: tuple[Tool, ...] = (),
    load: Load | None = None,
    approval: McpApproval | None = None,
) -> Resource:
    """``Resource(...)`` at two thirds of the cost, for the scan's per-file paths.

    Built as an ``_Unfrozen`` from the start, so its class changes once, not twice, and no
    ``type.__call__`` runs; tests/test_resource.py checks it against the constructor.
    """
    built: Any = _Unfrozen()
    built.kind = kind
    built.path = path
    built.scope = scope
    built.status = status
    built.size_bytes = size_bytes
    built.content_hash = content_hash
    built.content = content
    built.error = error
    built.warnings = warnings
    built.name = name
    built.description = description
    built.doc_order = doc_order
    built.source = source
    built.servers = servers
    built.connect = connect
    built.tools = tools
    built.load = load
    built.approval = approval
    built.__class__ = Resource
    resource: Resource = built
    return resource
