"""MCP server configs: ``.mcp.json`` in Claude Code's, the flat and VS Code's shapes.

Shapes: ``{"mcpServers": {name: entry}}`` (Claude Code, Cursor), ``{"servers": {...}}``
(VS Code), or a flat map of names to entries (many plugin files). An entry's transport
is its ``type`` when given (``stdio``, ``http``, ``streamable-http``, ``sse``), else
``stdio`` when it has a ``command``, else ``http`` when it has a ``url``.

``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``, ``args``, ``env``,
``url`` and ``headers`` only; as in the shell, the default also replaces an empty value.
An unset variable without a default fails that entry (``strict``) or expands to nothing
with a warning (``lenient``). Bare ``$VAR`` is left alone, as Claude Code does. A
variable of agentcontext's own (``AGENTCONTEXT_*``, ``CODER_AGENT_EXP_*``: the agent's
token among them) is never expanded: naming one fails the entry, strict or lenient.

A bad entry never drops its siblings: names containing ``__`` or starting or ending
with ``_`` (they would break ``server__tool`` routing), entries that are not objects,
and entries with neither ``command`` nor ``url`` are reported per name. The file as a
whole fails only when it is not JSON or not an object.

At most :data:`MAX_SERVERS` (64) entries are taken from one file, in file order; the rest
are listed as ``excluded`` and never started, so a generated 64 KiB config can start
neither hundreds of processes nor fill the inventory with errors.

Entries may hold tokens. Nothing here ends up in a snapshot except server names;
messages name variables and fields, never their values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcontext import storable
from agentcontext.errors import McpConfigError
from agentcontext.workspace_mcp.secrets import shown

Transport = Literal["stdio", "http", "sse"]
_TRANSPORTS: dict[str, Transport] = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# agentcontext's own variables (tokens, the database URL, Coder's aliases): never expanded in an entry, never
# handed to a server, whatever the entry or the user's config says
PRODUCT_PREFIXES = ("AGENTCONTEXT_", "CODER_AGENT_EXP_")
MAX_SERVERS = 64  # usable servers taken from one config file; the rest are excluded


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One MCP server entry, expanded and ready to connect. Holds secrets: never log it."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    config_path: str = ""
    written: Mapping[str, Any] = field(default_factory=dict, compare=False)  # the entry as written (secrets too)
    repository: str = ""  # the root of the repository whose config declares it ("" for the user's own configs)
    # what ``${VAR}`` took from the environment, wherever it went: masked in all a server or its errors say
    from_environment: tuple[str, ...] = field(default=(), compare=False)

    @property
    def shown(self) -> str:
        """What it runs or reaches, as written, credentials masked (a snapshot's line: ``Launch.runs``)."""
        return shown(self.written)

    def __repr__(self) -> str:  # keep env and header values out of tracebacks and logs
        return f"ServerSpec(name={self.name!r}, transport={self.transport!r}, config_path={self.config_path!r})"


@dataclass(frozen=True, slots=True)
class ParsedConfig:
    """What a config file yields: usable servers, per-entry errors and warnings."""

    servers: tuple[ServerSpec, ...]
    entry_errors: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()  # entries past MAX_SERVERS, in file order

    def excluded_warning(self) -> str | None:
        """The reason the excluded servers are not started, naming the first few."""
        if not self.excluded:
            return None
        names = ", ".join(_shown(n) for n in self.excluded[:10])
        more = f" and {len(self.excluded) - 10} more" if len(self.excluded) > 10 else ""
        return (
            f"{len(self.excluded)} servers excluded: at most {MAX_SERVERS} servers of one MCP config are used,"
            f" the rest are never started: {names}{more}"
        )


def parse(
    data: bytes, path: str, environ: Mapping[str, str], *, strict: bool = True, repository: str = ""
) -> ParsedConfig:
    """Parse one config file's bytes (``repository``: the root of the repository declaring it, for each spec).

    Raises:
        McpConfigError: the file is not JSON, not an object, or a server map is not an object.
    """
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except ValueError as exc:  # not UTF-8, not JSON, or an integer over Python's 4,300-digit limit
        raise McpConfigError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise McpConfigError("invalid JSON: nested too deeply") from None
    if not isinstance(document, dict):
        raise McpConfigError("invalid config: the top level must be a JSON object")
    entries = server_map(document)
    servers: list[ServerSpec] = []
    errors: list[tuple[str, str]] = []
    warnings: list[str] = []
    excluded: list[str] = []
    for index, name in enumerate(entries):  # file order: the first MAX_SERVERS entries are taken
        if index >= MAX_SERVERS:
            excluded.append(name)
            continue
        try:
            spec, entry_warnings = _entry(name, entries[name], path, environ, strict, repository)
        except McpConfigError as exc:
            errors.append((name, str(exc)))
            continue
        servers.append(spec)
        warnings += entry_warnings
    servers.sort(key=lambda spec: spec.name)
    errors.sort()
    return ParsedConfig(tuple(servers), tuple(errors), tuple(warnings), tuple(excluded))


def server_map(document: dict[str, Any]) -> dict[str, Any]:
    """The entries of a parsed config, by name, whichever of the three shapes it has.

    Raises:
        McpConfigError: ``mcpServers`` or ``servers`` is not an object.
    """
    for key in ("mcpServers", "servers"):
        if key in document:
            value = document[key]
            if value is None:
                return {}
            if not isinstance(value, dict):
                raise McpConfigError(f'invalid config: "{key}" must be a JSON object')
            return value
    if any(isinstance(v, dict) and ({"command", "url", "type"} & set(v)) for v in document.values()):
        return document  # the flat shape of plugin .mcp.json files; a bad entry is reported, not fatal
    return {}


def check_name(name: str) -> None:
    """Reject names that would break ``server__tool`` routing.

    Raises:
        McpConfigError: the name is empty, contains ``__`` or starts or ends with ``_``.
    """
    if storable.problem(name):  # the name goes into snapshots, which no database would store
        raise McpConfigError(f"server name {_shown(name)} contains a NUL character or a lone surrogate")
    if not name or "__" in name or name.startswith("_") or name.endswith("_"):
        raise McpConfigError(f'server name "{name}" contains reserved separator "__" or leading/trailing underscore')


def _shown(value: object) -> str:
    """``value`` in messages: JSON with every non-ASCII character escaped, so it can always be stored."""
    return json.dumps(value if isinstance(value, str) else str(value))


def _entry(
    name: str, raw: Any, path: str, environ: Mapping[str, str], strict: bool, repository: str
) -> tuple[ServerSpec, list[str]]:
    check_name(name)
    plain = _plain_command(name, raw, path, repository)
    if plain is not None:
        return plain, []
    if not isinstance(raw, dict):
        raise McpConfigError(f'server "{name}" must be a JSON object')
    warnings: list[str] = []
    expander = _Expander(name, environ, strict, warnings)
    expand = expander.text
    transport = _transport(name, raw)
    get = raw.get
    command = expand("command", get("command", ""))  # fields in this order: the first bad one is reported
    args = tuple([expand("args", a) for a in _strings(name, "args", get("args", _NO_LIST))])
    env = tuple([(k, expand("env", v)) for k, v in _string_map(name, "env", get("env", _NO_MAP))])
    url = expand("url", get("url", ""))
    headers = tuple([(k, expand("headers", v)) for k, v in _string_map(name, "headers", get("headers", _NO_MAP))])
    cwd = get("cwd")
    spec = ServerSpec(
        name,
        transport,
        command,
        args,
        env,
        url,
        headers,
        cwd if isinstance(cwd, str) else None,
        path,
        raw,
        repository,
        tuple(expander.taken),
    )
    if transport == "stdio" and not spec.command:
        raise McpConfigError(f'server "{name}" has no command')
    if transport != "stdio" and not spec.url:
        raise McpConfigError(f'server "{name}" has no url')
    return spec, warnings


def _plain_command(name: str, raw: Any, path: str, repository: str) -> ServerSpec | None:
    """The commonest entry, ``{"command": ..., "args": [...]}`` with nothing to expand, built directly.

    What the general path gives for it (a stdio server, its texts as written); None for any
    other entry, which the general path reads, checks and reports.
    """
    if type(raw) is not dict or not raw.keys() <= _COMMAND_KEYS:
        return None
    command = raw.get("command")
    args = raw.get("args", _NO_LIST)
    if type(command) is not str or not command or "${" in command or type(args) is not list:
        return None
    for arg in args:
        if type(arg) is not str or "${" in arg:
            return None
    return ServerSpec(name, "stdio", command, tuple(args), (), "", (), None, path, raw, repository)


_COMMAND_KEYS = frozenset({"command", "args"})


def _transport(name: str, raw: dict[str, Any]) -> Transport:
    declared = raw.get("type", raw.get("transport"))
    if declared is not None:
        if not isinstance(declared, str) or declared not in _TRANSPORTS:
            raise McpConfigError(f'server "{name}": unsupported transport {_shown(declared)}')
        return _TRANSPORTS[declared]
    if raw.get("command"):
        return "stdio"
    if raw.get("url"):
        return "http"
    raise McpConfigError(f'server "{name}" has no command or url')


_NO_LIST: list[str] = []  # an absent "args" (never changed)
_NO_MAP: dict[str, str] = {}  # an absent "env" or "headers" (never changed)


def _strings(name: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f'server "{name}": "{key}" must be a list of strings')
    return value


def _string_map(name: str, key: str, value: Any) -> list[tuple[str, str]]:
    if value is _NO_MAP:
        return []
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f'server "{name}": "{key}" must map names to strings')
    return sorted(value.items())


class _Expander:
    """``${VAR}`` / ``${VAR:-default}`` against the environment, strict or lenient."""

    def __init__(self, server: str, environ: Mapping[str, str], strict: bool, warnings: list[str]) -> None:
        self.server = server
        self.environ = environ
        self.strict = strict
        self.warnings = warnings
        self.taken: list[str] = []  # the environment's values put in

    def text(self, field_name: str, value: Any) -> str:
        if type(value) is str and "${" not in value:  # most values: nothing to expand
            return value
        if not isinstance(value, str):
            raise McpConfigError(f'server "{self.server}": "{field_name}" must be a string')
        if "${" not in value:
            return value
        # every match ends with "}", so none starts after the last one; searching only up to it keeps
        # the search linear (an unclosed "${A:-" would otherwise be scanned to the end from each "${")
        end = value.rfind("}") + 1
        return _VAR.sub(lambda m: self._one(field_name, m), value[:end]) + value[end:]

    def _one(self, field_name: str, match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        if variable.startswith(PRODUCT_PREFIXES):  # an entry naming our token would hand it to whoever it reaches
            raise McpConfigError(
                f'server "{self.server}": environment variable "{variable}" (in {field_name}) is agentcontext\'s own:'
                " it is never expanded in an MCP entry"
            )
        value = self.environ.get(variable)
        if value:
            self.taken.append(value)
            return value
        if default is not None:  # as in the shell, ``:-`` also replaces an empty value
            return default
        if value is not None:
            return value
        message = f'server "{self.server}": environment variable "{variable}" (in {field_name}) is not set'
        if self.strict:
            raise McpConfigError(message)
        self.warnings.append(message + "; expanded to an empty string")
        return ""
