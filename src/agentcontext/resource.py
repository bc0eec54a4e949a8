"""What a scan found: one value per file or server it looked at.

A resource is a pure value. Every candidate the scan examined is one, used or not:
the status says what happened to it and ``error`` says why, so nothing is ever
dropped silently. Content travels only with the statuses that carry it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple


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
    AGENT_REQUESTED = "agent_requested"  # when the model asks for it by its description (Cursor)
    MANUAL = "manual"  # only when the user mentions it (Cursor's ``@rule``)
    NOT_LOADED = "not_loaded"  # never, and ``reason`` says why

    @property
    def automatic(self) -> bool:
        """Brought in by the agent itself once its condition holds (not only when the model or the user asks)."""
        return self not in (LoadType.NOT_LOADED, LoadType.AGENT_REQUESTED, LoadType.MANUAL)

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
    def from_dict(cls, data: Mapping[str, Any]) -> Load:
        get = data.get
        return cls(
            LoadType(data["type"]),
            tuple(map(str, get("globs", ()))),
            get("importer"),
            tuple(map(str, get("chain", ()))),
            get("reason"),
            get("root"),
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
    def from_dict(cls, data: Mapping[str, Any]) -> Tool:
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
    def from_dict(cls, data: Mapping[str, Any]) -> RunsFile:
        return cls(str(data["path"]), str(data["role"]), str(data["sha256"]), int(data["size"]))


MASKED_NOTE = (
    "parts that look like credentials are shown as *** here: approve it on the machine that runs it, which shows"
    " it whole (agentcontext mcp trust)"
)


@dataclass(frozen=True, slots=True)
class Runs:
    """What an MCP server runs or reaches, whole, as the user approves it (:mod:`agentcontext.workspace_mcp.launch`).

    ``${VAR}`` references as written; ``executable`` is the program as resolved (the absolute
    path started), ``files`` the repository files bound by content, ``notes`` what to weigh
    (environment keys that change what loads, links, folders). ``executable`` is the path started
    and ``target`` its real path when it is a link. Where it is shown on the machine that runs it,
    nothing is masked; in a snapshot (the agent's API, the control plane) parts that look like
    credentials are ``***`` and ``masked`` says so: such a view is not approved from there.
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
    # parts of it are shown as ``***`` (a snapshot's view, not the one approved); on the wire, its note says so (a
    # field would be refused by a control plane older than the agent)
    masked: bool = False

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
    def from_dict(cls, data: Mapping[str, Any]) -> Runs:
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
            MASKED_NOTE in (data.get("notes") or ()),
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
    def from_dict(cls, data: Mapping[str, Any]) -> McpApproval:
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


class Resource(NamedTuple):
    """One file or server the scan looked at.

    ``path`` is absolute (for ``mcp_server`` it is the server's name). ``content_hash``
    is the sha256 of the original bytes (of the first ``max_resource_bytes`` bytes when
    the file is larger); empty when nothing could be read.

    Its fields are declared here once; :meth:`to_dict` and :meth:`from_dict` are its one codec: the
    snapshot's JSON, the push contract (``wire.sync``) and the control plane's rows (``control.rows``)
    all write and read a resource through them.

    A named tuple where the other values are frozen dataclasses, for the scan's cost: it builds one or
    two per file, and a tuple is built in one call where a frozen dataclass's ``__init__`` sets each of
    the 18 fields through ``object.__setattr__`` (0.6 us a resource against 2.5 to 5.5; a cold scan of
    ``bench/workspace.py`` took 13% more CPU as a frozen slots dataclass, 7% more with an ``__init__``
    that sets the slots directly). Change one with ``_replace``. It is a value, not a sequence: it equals
    only a resource (never a plain tuple of the same fields), has no order, and is never written as a
    JSON array (every encoder goes through :meth:`to_dict`); nothing reads it by position but the
    named tuple's own ``_replace``, copy and pickle.
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

    def __eq__(self, other: object) -> bool:  # (its hash stays the tuple's)
        return type(other) is Resource and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __lt__(self, other: object) -> bool:
        raise TypeError("resources have no order: sort them by a key")

    def __le__(self, other: object) -> bool:
        return self.__lt__(other)

    def __gt__(self, other: object) -> bool:
        return self.__lt__(other)

    def __ge__(self, other: object) -> bool:
        return self.__lt__(other)

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
        """The same resource with another status and reason, its content and tools dropped unless ``keep_content``;
        a load it had becomes ``not_loaded`` for that reason when the status carries no content (an excluded file)."""
        load = self.load
        if load is not None and not status.carries_content:
            load = _not_loaded(error, load.root)
        content, tools = (self.content, self.tools) if keep_content else (None, ())
        # positionally: the caps exclude hundreds of resources of a large workspace, and ``_replace`` costs 3x
        return make(
            self.kind,
            self.path,
            self.scope,
            status,
            self.size_bytes,
            self.content_hash,
            content,
            error,
            self.warnings,
            self.name,
            self.description,
            self.doc_order,
            self.source,
            self.servers,
            self.connect,
            tools,
            load,
            self.approval,
        )

    def to_dict(self) -> dict[str, Any]:
        """The resource as JSON values: the snapshot's form, what is pushed, and a stored row's columns and meta.

        Each kind writes its own fields (and ``content`` only with a status that carries it), in this order.
        """
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
    def from_dict(cls, data: Mapping[str, Any]) -> Resource:
        """The resource of :meth:`to_dict`'s form (a snapshot's JSON, a validated push, a stored row): a key
        it lacks takes the field's default, a key it does not know (a newer core's field) is left alone."""
        get = data.get
        load, approval = get("load"), get("approval")
        return make(  # in the fields' order: a call by keyword costs 3x (a push or a read builds hundreds)
            Kind(data["kind"]),
            str(data["path"]),
            Scope(data["scope"]),
            Status(data["status"]),
            int(get("size_bytes", 0)),
            str(get("content_hash", "")),
            get("content"),
            get("error"),
            tuple(get("warnings", ())),
            get("name"),
            get("description"),
            get("doc_order"),
            get("source"),
            tuple(get("servers", ())),
            bool(get("connect", True)),
            tuple(map(Tool.from_dict, get("tools", ()))),
            Load.from_dict(load) if load else None,
            McpApproval.from_dict(approval) if approval else None,
        )


@functools.lru_cache(maxsize=256)
def _not_loaded(reason: str | None, root: str | None) -> Load:
    """One value per reason: the snapshot caps exclude hundreds of resources for the same one."""
    return Load(LoadType.NOT_LOADED, reason=reason, root=root)


if TYPE_CHECKING:
    make = Resource
else:
    # ``Resource(...)`` without ``type.__call__``'s detour (which passes keyword arguments as a dict): 0.4 us
    # where that takes 1, for the scan's per-file paths
    make = functools.partial(Resource.__new__, Resource)
