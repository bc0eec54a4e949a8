"""Context sync on the wire: what a workspace agent sends the control plane, and what it answers.

One definition for both sides: the agent's pusher builds its pushes and heartbeats from
these models and reads the answers with them; the control plane validates every body
against the same models, once, strictly. Nothing is coerced (``"version": true`` or
``"7"`` is refused, not read as 1 or 7), a field the contract does not know is refused, and
a refusal names the field (``resources[3].status: ...``). The checks are Coder's (coder.md
4.5): at most 1,000 resources, 256 KiB of text a resource and 4 MiB in all, bounded
strings, known kinds, statuses and scopes, unique sources, and an aggregate hash that
matches the resources. Text no database can store (NUL, a lone surrogate) is refused too.

A resource's parts (a tool, a load, an approval) are validated as the dicts ``Resource.to_dict``
writes, and every resource is then read by :meth:`Resource.from_dict`, the core's own codec. One
exception to the strictness: a resource (and an MCP tool) may carry fields this version does not
know, which that codec leaves alone, so an agent that knows more (a new field of the core) is not
refused by an older server.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from typing_extensions import TypedDict  # pydantic reads a TypedDict's config from this one alone before 3.12

from agentcontext import storable as carried
from agentcontext.errors import InvalidRequestError
from agentcontext.resource import Kind, LoadType, Resource, Scope, Status
from agentcontext.snapshot import Snapshot, aggregate_hash, sort_key

M = TypeVar("M", bound=BaseModel)

MAX_RESOURCES = carried.MAX_RESOURCES
MAX_RESOURCE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MAX_PATH_BYTES = carried.MAX_PATH_BYTES  # what a snapshot holds (agentcontext.storable), and no more
MAX_ERROR_BYTES = carried.MAX_TEXT_BYTES
MAX_HASH_CHARS = 64
MAX_INT64 = 2**63 - 1
MAX_CHANGES = 512  # tool changes reported for one MCP server
MAX_DIFF_BYTES = 16 * 1024  # one tool's diff (the agent cuts them at 4,096 characters)
MAX_LOAD_ITEMS = carried.MAX_LOAD_ITEMS
MAX_RUNS_ITEMS = 256  # arguments, env and header entries, files and notes of what one MCP server runs
_HEX64 = re.compile(r"[0-9a-f]{64}")


def storable(value: str) -> str:
    """Raises ValueError for text no database stores: PostgreSQL refuses NUL; no database a lone surrogate."""
    found = carried.problem(value)
    if found is not None:
        raise ValueError(f"contains {found}")
    return value


def _utf8_bytes(value: str) -> int:
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def _at_most(limit: int) -> AfterValidator:
    def check(value: str) -> str:
        if value.isascii() and "\x00" not in value:  # the common case, in two C calls
            if len(value) > limit:
                raise ValueError(f"is longer than {limit} bytes")
            return value
        storable(value)
        if _utf8_bytes(value) > limit:
            raise ValueError(f"is longer than {limit} bytes")
        return value

    return AfterValidator(check)


# strings of at most so many UTF-8 bytes that a database can store
PathText = Annotated[str, _at_most(MAX_PATH_BYTES)]
ErrorText = Annotated[str, _at_most(MAX_ERROR_BYTES)]
BodyText = Annotated[str, _at_most(MAX_RESOURCE_BYTES)]
HashText = Annotated[str, _at_most(MAX_HASH_CHARS)]
IdText = Annotated[str, _at_most(MAX_PATH_BYTES + 32)]
UrlText = Annotated[str, _at_most(2048)]
TokenText = Annotated[str, _at_most(256)]
ShortText = Annotated[str, _at_most(64)]
ProfileText = Annotated[str, _at_most(32)]
Count = Annotated[int, Field(ge=0, le=MAX_INT64)]

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)
# a resource is the core's: fields this version does not know go on to Resource.from_dict
_OPEN = ConfigDict(strict=True, extra="allow", frozen=True)


def agent_url_problem(url: str) -> str | None:
    """Why ``url`` is not where an agent's API may be: a scheme, a host and a port, nothing more (None: it is).

    The control plane adds the API's own paths to it; a path, query or fragment of the agent's choosing would
    send its calls (with the agent's secret, the answer going to a chat) somewhere else on that host.
    """
    said = "must be the agent API's scheme, host and port (http://HOST:PORT), with no path, query or fragment"
    if not url.startswith(("http://", "https://")):
        return "must be an http:// or https:// URL"
    if any(c in url for c in "?#@\\") or not url.isprintable() or any(c.isspace() for c in url):
        return said
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is no number or out of range, a bracket left open
        return said
    host = parts.hostname or ""
    authority = (f"[{host}]" if ":" in host else host) + ("" if port is None else f":{port}")
    if not host or port == 0 or parts.path not in ("", "/") or parts.netloc.lower() != authority:
        return said
    return None


class AgentInfo(BaseModel):
    """How the control plane reaches the agent, sent with every push and heartbeat."""

    model_config = _STRICT

    url: UrlText | None = Field(
        default=None, description="The agent's API: http:// or https://, a host and a port, no path or query."
    )
    api_token: TokenText | None = Field(default=None, description="A per-run secret the agent's API accepts.")
    run_id: ShortText | None = None
    os: ShortText | None = None
    home: PathText | None = None

    @field_validator("url")
    @classmethod
    def _agent_url(cls, url: str | None) -> str | None:
        problem = agent_url_problem(url) if url is not None else None
        if problem:
            raise ValueError(problem)
        return url

    def to_dict(self) -> dict[str, str]:
        """What the agent sends: the fields it knows."""
        return self.model_dump(exclude_none=True)


def _sha256_or_empty(value: str) -> str:
    if value and not _HEX64.fullmatch(value):  # the aggregate hash reads its 32 raw bytes
        raise ValueError("must be empty or 64 lowercase hex digits (a sha256)")
    return value


Sha256Text = Annotated[str, AfterValidator(_sha256_or_empty)]
DiffText = Annotated[str, _at_most(MAX_DIFF_BYTES)]


class PushedTool(TypedDict):
    """One tool of an MCP server resource (``Tool.to_dict()``)."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]

    name: PathText
    description: NotRequired[BodyText | None]
    input_schema: NotRequired[dict[str, Any]]
    annotations: NotRequired[dict[str, Any] | None]


class PushedLoad(TypedDict):
    """How a resource reaches the model (``Load.to_dict()``)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    type: Annotated[LoadType, Field(strict=False)]
    globs: NotRequired[Annotated[list[PathText], Field(max_length=MAX_LOAD_ITEMS)]]
    importer: NotRequired[PathText | None]
    chain: NotRequired[Annotated[list[PathText], Field(max_length=MAX_LOAD_ITEMS)]]
    reason: NotRequired[ErrorText | None]
    root: NotRequired[PathText | None]


class PushedToolChange(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]

    tool: PathText
    change: Literal["added", "changed", "removed"]
    diff: NotRequired[DiffText]


class PushedRunsFile(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]

    path: PathText
    role: ShortText
    sha256: Sha256Text
    size: Count


Pair = Annotated[list[ErrorText], Field(min_length=2, max_length=2)]
Items = Field(max_length=MAX_RUNS_ITEMS)


class PushedRuns(TypedDict):
    """What an MCP server runs or reaches, whole (``Runs.to_dict()``), each part bounded."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    transport: Literal["stdio", "http", "sse"]
    command: NotRequired[ErrorText]
    executable: NotRequired[PathText]
    target: NotRequired[PathText]
    args: NotRequired[Annotated[list[ErrorText], Items]]
    cwd: NotRequired[PathText]
    env: NotRequired[Annotated[list[Pair], Items]]
    url: NotRequired[ErrorText]
    headers: NotRequired[Annotated[list[Pair], Items]]
    files: NotRequired[Annotated[list[PushedRunsFile], Items]]
    notes: NotRequired[Annotated[list[ErrorText], Items]]


class PushedApproval(TypedDict):
    """An MCP server's approval (``McpApproval.to_dict()``): its state, what it runs, and what changed (each diff
    bounded)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    state: Literal["pending", "approved", "auto", "changed"]
    config_path: NotRequired[PathText]
    digest: NotRequired[Sha256Text]
    command: NotRequired[ErrorText]
    changes: NotRequired[Annotated[list[PushedToolChange], Field(max_length=MAX_CHANGES)]]
    tool_set: NotRequired[Sha256Text]
    runs: NotRequired[PushedRuns | None]
    since: NotRequired[DiffText]


class PushedResource(BaseModel):
    """One resource of a push: ``Resource.to_dict()``."""

    model_config = _OPEN

    id: IdText | None = Field(default=None, description='"<kind>:<path>"')
    kind: Annotated[Kind, Field(strict=False)]  # an enum from its JSON string
    path: Annotated[PathText, Field(min_length=1)]
    scope: Annotated[Scope, Field(strict=False)]
    status: Annotated[Status, Field(strict=False)]
    size_bytes: Count = 0
    content_hash: HashText = Field(default="", description="sha256 of the original bytes, lowercase hex, or empty")
    content: BodyText | None = None
    error: ErrorText | None = None
    warnings: list[ErrorText] = Field(default_factory=list)
    name: ErrorText | None = None
    # a skill's description is bounded by the resource's cap only: the prompt cuts it at 1,024
    description: BodyText | None = None
    doc_order: Count | None = Field(default=None, description="Position in the project doc (instruction files).")
    source: PathText | None = Field(default=None, description="The declared source that contributed it.")
    servers: list[PathText] = Field(default_factory=list)
    connect: bool = True
    tools: list[PushedTool] = Field(default_factory=list)
    load: PushedLoad | None = None
    approval: PushedApproval | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PushedResource:
        if self.id is not None and self.id != f"{self.kind}:{self.path}":
            raise ValueError(f'id must be "{self.kind}:{self.path}"')
        return self

    @field_validator("content_hash")
    @classmethod
    def _sha256(cls, value: str) -> str:
        if value and not _HEX64.fullmatch(value):  # the aggregate hash reads its 32 raw bytes
            raise ValueError("must be empty or 64 lowercase hex digits (a sha256)")
        return value

    def json_bytes(self) -> int:
        """What the resource weighs as Coder counts it: its compact JSON, as pushed."""
        return len(self.__pydantic_serializer__.to_json(self, exclude_unset=True))

    def json_bytes_within_cap(self) -> int:
        """``json_bytes``, or a bound on it when that is within ``MAX_RESOURCE_BYTES`` (no JSON written then)."""
        bound = self.json_bytes_at_most()
        return bound if bound is not None and bound <= MAX_RESOURCE_BYTES else self.json_bytes()

    def json_bytes_at_most(self) -> int | None:
        """A bound on ``json_bytes`` without writing the JSON (``None``: tools or unknown fields, write it).

        A character takes at most 6 bytes in JSON (``\\u001f``); the keys, numbers and enums fit in 512.
        """
        if self.tools or self.model_extra or self.load is not None or self.approval is not None:
            return None
        texts = (self.id, self.path, self.content_hash, self.content, self.error, self.name, self.description,
                 self.source)  # fmt: skip
        chars = sum(len(text) for text in texts if text) + sum(map(len, self.warnings)) + sum(map(len, self.servers))
        return 6 * chars + 512 + 8 * (len(self.warnings) + len(self.servers))

    def to_resource(self) -> Resource:
        """The core's resource: its fields as validated (the parts of it in ``to_dict``'s form), read by the
        core's own codec (a field this version does not know is left alone).

        Raises ValueError: a field the core reads and this version does not check is malformed."""
        try:
            return Resource.from_dict(self.__dict__)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed: {exc}") from None


class PushRequest(BaseModel):
    """A snapshot as the workspace agent publishes it (``Snapshot.to_dict()``), plus ``initial`` and ``agent``."""

    model_config = _STRICT

    version: Annotated[int, Field(ge=1, le=MAX_INT64)]
    aggregate_hash: HashText
    initial: bool = Field(
        default=False, description="The first push of the agent's run: accepted whatever its version."
    )
    error: ErrorText | None = None
    work_dir: PathText = ""
    project_root: PathText | None = None
    profile: ProfileText = "default"
    payload_bytes: Count = 0
    resources: list[PushedResource] = Field(
        default_factory=list, max_length=MAX_RESOURCES, description="At most 1,000; 256 KiB each and 4 MiB in all."
    )
    agent: AgentInfo | None = None
    _checked: tuple[Resource, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _whole(self) -> PushRequest:
        if self._checked is not None:  # an instance validated already, passed through again (``web.json_body``)
            return self
        checked: list[Resource] = []
        seen: set[str] = set()
        total = 0
        sizes = [pushed.json_bytes_within_cap() for pushed in self.resources]
        if sum(sizes) > MAX_TOTAL_BYTES:  # bounds, some of them: the sizes themselves decide
            sizes = [pushed.json_bytes() for pushed in self.resources]
        for index, pushed in enumerate(self.resources):
            try:
                resource = pushed.to_resource()
            except ValueError as exc:
                raise ValueError(f"resources[{index}] is {exc}") from None
            if resource.id in seen:
                raise ValueError(f'resources[{index}]: duplicate source "{resource.id}"')
            seen.add(resource.id)
            size = sizes[index]
            if size > MAX_RESOURCE_BYTES:
                raise ValueError(f"resources[{index}] is larger than {MAX_RESOURCE_BYTES} bytes")
            total += size
            if total > MAX_TOTAL_BYTES:
                raise ValueError(f"resources are larger than {MAX_TOTAL_BYTES} bytes in all")
            checked.append(resource)
        expected = aggregate_hash(checked)
        if self.aggregate_hash != expected:
            raise ValueError(f"aggregate_hash {self.aggregate_hash!r} does not match the resources ({expected})")
        self._checked = tuple(checked)
        return self

    @property
    def checked_resources(self) -> tuple[Resource, ...]:
        """The resources as the core's values, built while validating."""
        return self._checked or ()


def fitted(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` as one push holds it: at most :data:`MAX_RESOURCES` resources (:meth:`Snapshot.within`), each
    within :data:`MAX_RESOURCE_BYTES` of JSON and all within :data:`MAX_TOTAL_BYTES`, which the control plane would
    otherwise refuse whole. The caps count a text's UTF-8 bytes, JSON escapes a control character in six: a
    resource whose text does not fit is pushed ``excluded`` without it (then the last in cap order, until the whole
    fits), the reason said; its hash recomputed. The same snapshot when nothing had to change.

    Raises:
        ContractError: a resource breaks the contract in another way (what fitting cannot mend).
    """
    snapshot = snapshot.within(MAX_RESOURCES)
    out = list(snapshot.resources)
    sizes = [_json_bytes(resource) for resource in out]
    changed = False
    for index, size in enumerate(sizes):
        if size > MAX_RESOURCE_BYTES:
            why = f"as JSON its text takes {size:,} bytes, over the {MAX_RESOURCE_BYTES:,} one resource of a push holds"
            out[index], changed = _without_text(out[index], why), True
            sizes[index] = _json_bytes(out[index])
    total = sum(sizes)
    for index in sorted(range(len(out)), key=lambda at: sort_key(out[at]), reverse=True):
        if total <= MAX_TOTAL_BYTES:
            break
        if out[index].content:
            why = f"left out of the push to fit the {MAX_TOTAL_BYTES:,} bytes of JSON one push holds"
            out[index], changed = _without_text(out[index], why), True
            smaller = _json_bytes(out[index])
            total -= sizes[index] - smaller
            sizes[index] = smaller
    if not changed:
        return snapshot
    kept = tuple(out)
    digest, payload = aggregate_hash(kept, sorted_by_id=True), sum(r.payload_bytes for r in kept)
    return dataclasses.replace(snapshot, resources=kept, aggregate_hash=digest, payload_bytes=payload)


def _without_text(resource: Resource, why: str) -> Resource:
    """``resource`` pushed ``excluded``: no text, and no description as long as one (an instruction file's first
    line can be the whole file)."""
    excluded = resource.with_status(Status.EXCLUDED, why)
    description = excluded.description
    if description is not None and len(description.encode("utf-8")) > MAX_ERROR_BYTES:
        excluded = excluded._replace(description=None)
    return excluded


def _json_bytes(resource: Resource) -> int:
    """The resource's JSON as the contract measures it (:meth:`PushedResource.json_bytes`)."""
    return validated(PushedResource, resource.to_dict()).json_bytes()


class PushResponse(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)  # an answer may grow: what a client does not know it skips

    accepted: bool = Field(description="False: the version gate refused it (nothing was written).")
    version: int = Field(description="The version pushed.")
    stored_version: int | None = Field(description="The version the control plane now holds for the agent.")


class DiscoveredWatchInfo(BaseModel):
    """What the agent's watch of its chats' discovered files says (``agent/discovered.py``)."""

    model_config = _STRICT

    watching: bool = Field(
        description="Every folder an on-demand answer of this run depended on is watched (none dropped past"
        " agent.discovered_watch_cap, the watch up): the control plane need not recheck on each heartbeat."
    )
    changed: bool = Field(
        default=False, description="A watched discovered file changed since the last heartbeat answered."
    )


class HeartbeatRequest(BaseModel):
    model_config = _STRICT

    agent: AgentInfo | None = None
    online: bool = Field(default=True, description="False: the agent is stopping (it goes offline now).")
    discovered: DiscoveredWatchInfo | None = Field(
        default=None, description="The agent's watch of its chats' discovered files; absent: not watched."
    )


class ContractError(InvalidRequestError):
    """A body that breaks the contract (HTTP 422); the message names each field."""


def describe(errors: Sequence[Mapping[str, Any]]) -> str:
    """Pydantic's errors as one line naming each field: ``version must be an integer; resources[3].status ...``."""
    said = []
    for error in errors:
        where, message = _where(error["loc"]), _message(error)
        predicate = message.startswith(("is ", "must ", "has ")) or message.startswith(repr(error.get("input")))
        if predicate:
            said.append(f"{where or 'body'} {message}")
        else:
            said.append(f"{where}: {message}" if where else message)
    return "; ".join(said)


def _where(loc: Sequence[str | int]) -> str:
    text = ""
    for part in loc:
        if part == "body" and not text:
            continue  # FastAPI's: the whole body
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


_SAID = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is required",
    "extra_forbidden": "is not a field of this body",
    "string_too_short": "is empty",
    "too_short": "is empty",
}


def _message(error: Mapping[str, Any]) -> str:
    kind, context = error.get("type", ""), error.get("ctx") or {}
    if kind in _SAID:
        return _SAID[kind]
    if kind == "greater_than_equal":
        return f"must be at least {context.get('ge')}"
    if kind == "less_than_equal":
        return f"must be at most {context.get('le')}"
    if kind in ("enum", "literal_error"):
        return f"{error.get('input')!r} is not one of {context.get('expected')}"
    if kind == "too_long":
        return f"has {context.get('actual_length')} items (at most {context.get('max_length')})"
    return str(error["msg"]).removeprefix("Value error, ")


def validated(model: type[M], raw: Any) -> M:
    """``raw`` (JSON-like values) as ``model``.

    Raises:
        ContractError: naming each field that breaks the contract.
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ContractError(describe(exc.errors())) from None
