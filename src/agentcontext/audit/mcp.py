"""The audit's MCP rules: which servers would run, and which secrets are committed.

* ``mcp-spawn`` [info; error when it starts without approval]: a stdio server of a config
  the agent connects to: the command line as written (``${VAR}`` left unexpanded,
  credential parts shown as ``***``), its cwd, its env keys, the repository's own programs
  and scripts it runs, and how it starts: without approval (``mcp.trust = auto``: an
  error), approved (the user's trust store holds what it runs now:
  :mod:`agentcontext.workspace_mcp.launch`), or pending (not started until approved, with the
  command that approves it).
* ``mcp-loader-env`` [warning]: an entry's ``env`` sets a key that changes which program
  runs or what it loads (``PATH``, ``LD_PRELOAD``, ``NODE_OPTIONS``, ``PYTHONPATH``, a
  package index...): the command shown is then not the whole story.
* ``mcp-remote`` [info; error when it connects without approval]: a remote server: its URL
  (credentials shown as ``***``), its header names, and how it starts, as above.
* ``mcp-excluded-server`` [warning]: entries past the 64 servers one config may start.
* ``mcp-secret-inline`` [error]: a literal credential in ``env``, ``headers``, ``args`` or
  the ``url`` rather than a ``${VAR}`` reference (a ``${VAR:-default}`` default is
  literal). A value counts when its key names a credential (token, secret, password,
  key, auth, cookie...) or when it looks like one (a known token prefix, or 24+
  characters of high entropy); in ``args``, a credential flag's value, an
  ``Authorization:`` header, ``KEY=value`` in a ``sh -c`` or connection string and a URL's
  userinfo each count (:mod:`agentcontext.workspace_mcp.secrets`). One finding per credential; each
  names where it is, never the value.
* ``mcp-invalid-entry`` [warning]: an entry that cannot be used (no command, bad type...).
* ``mcp-duplicate-server`` [info]: a name already defined by an earlier config file.

Entries are judged as written, without the environment, so an audit in CI sees the
servers a developer's machine would start; only whether one is approved is judged as the
agent judges it, with the user's environment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from agentcontext.audit.findings import Finding, Severity, printable
from agentcontext.errors import McpConfigError
from agentcontext.fs.files import EntryKind, Reader
from agentcontext.layout import McpFile
from agentcontext.resource import Kind, Status
from agentcontext.scan import ScanResult
from agentcontext.workspace_mcp.config import parse, server_map
from agentcontext.workspace_mcp.launch import FileHashes, Launch, approve_command, loader_reason, resolve
from agentcontext.workspace_mcp.secrets import (
    command_line,
    entry_args,
    is_secret,
    mask_args,
    mask_value,
    redact_url,
    url_credentials,
)
from agentcontext.workspace_mcp.trust import TrustStore

__all__ = ["findings", "is_secret", "url_credentials"]


def findings(
    result: ScanResult, reader: Reader, store: TrustStore | None = None, environ: Mapping[str, str] | None = None
) -> list[Finding]:
    """MCP findings for every config the scan read whole, in the scan's file order.

    ``store`` holds the user's approvals (default: the user's own trust store), judged against
    what each server would run for a user whose environment is ``environ`` (default: ours).
    """
    usable = {r.path for r in result.snapshot.resources if r.kind is Kind.MCP_CONFIG and r.status is Status.OK}
    cap = result.config.snapshot.max_resource_bytes
    trust = result.config.mcp.trust
    store = store or TrustStore.default()
    launch = _Launcher(result, dict(os.environ if environ is None else environ))
    owners: dict[str, str] = {}
    out: list[Finding] = []
    for item in result.layout.mcp_files:
        loaded = _load(item, reader, cap) if item.path in usable else None
        if loaded is None:
            continue
        raw, text, entries = loaded
        locate = _Locator(text)
        for name, entry in entries.items():
            if isinstance(entry, dict):
                out += _secrets(item.path, name, entry, locate) + _loaders(item.path, name, entry, locate)
        parsed = parse(raw, item.path, {}, strict=False)
        for name, message in parsed.entry_errors:
            out.append(Finding("mcp-invalid-entry", Severity.WARNING, item.path, printable(message), *locate(name)))
        if excluded := parsed.excluded_warning():
            where = locate(parsed.excluded[0])
            out.append(Finding("mcp-excluded-server", Severity.WARNING, item.path, printable(excluded), *where))
        for spec in parsed.servers:
            owner = owners.setdefault(spec.name, item.path)
            where = locate(spec.name)
            if owner != item.path:
                message = f'server "{spec.name}" is already defined in {owner}; this definition is ignored'
                out.append(Finding("mcp-duplicate-server", Severity.INFO, item.path, message, *where))
            elif item.connect:
                entry = entries[spec.name]
                launched = launch(spec.name)
                severity, when = _approval(launched, result.snapshot.work_dir, trust, store)
                stdio = spec.transport == "stdio"
                message = _spawn(spec.name, entry, launched, when) if stdio else _remote(spec.name, entry, when)
                out.append(Finding("mcp-spawn" if stdio else "mcp-remote", severity, item.path, message, *where))
    return out


def _load(item: McpFile, reader: Reader, cap: int) -> tuple[bytes, str, dict[str, Any]] | None:
    entry = reader.probe(item.path, item.boundary)
    if entry.kind is not EntryKind.FILE:
        return None
    try:
        raw = reader.read(entry, cap + 1)
        text = raw.decode("utf-8-sig")
        document = json.loads(text)
        entries = server_map(document) if isinstance(document, dict) and len(raw) <= cap else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, McpConfigError):
        return None  # changed since the scan read it; the next audit sees it again
    return (raw, text, entries) if entries is not None else None


class _Locator:
    """Line and column of a server's key (and a key inside it) in the JSON text, when found."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __call__(self, *keys: str) -> tuple[int | None, int | None]:
        position, found = 0, None
        for key in keys:
            match = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:").search(self.text, position)
            if match is None:
                break
            position = found = match.start()
        if found is None:
            return None, None
        line_start = self.text.rfind("\n", 0, found) + 1
        return self.text.count("\n", 0, found) + 1, found - line_start + 1


def _strings(value: Any) -> dict[str, str]:
    return {str(k): v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _secrets(path: str, name: str, entry: dict[str, Any], locate: _Locator) -> list[Finding]:
    server = f'server "{printable(name)}"'
    why = "a credential committed with the file; reference it as ${VAR} and set it in the environment"
    out: list[Finding] = []
    for field in ("env", "headers"):
        for key, value in sorted(_strings(entry.get(field)).items()):
            label = "env" if field == "env" else "header"
            for what in mask_value(key, value).found:
                detail = "" if what == f'the value of "{key}"' else f" ({what})"
                message = f'{label} "{printable(key)}" of {server} holds a literal credential{detail}: {why}'
                out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, field, key)))
    for index, masked in enumerate(mask_args(entry_args(entry)), start=1):
        for what in masked.found:
            message = f"argument {index} of {server} holds a literal credential ({printable(what)}): {why}"
            out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, "args")))
    url = entry.get("url")
    if isinstance(url, str) and (found := url_credentials(url)):
        message = f"url of {server} holds a literal credential ({', '.join(map(printable, found))}): {why}"
        out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, "url")))
    return out


def _loaders(path: str, name: str, entry: dict[str, Any], locate: _Locator) -> list[Finding]:
    out: list[Finding] = []
    for key in sorted(_strings(entry.get("env"))):
        why = loader_reason(key)
        if why is not None:
            message = (
                f'server "{printable(name)}" sets {printable(key)} in its env, which {why}: what runs is more than'
                " its command line; approve it only if you trust that"
            )
            out.append(Finding("mcp-loader-env", Severity.WARNING, path, message, *locate(name, "env", key)))
    return out


class _Launcher:
    """What each server of the scan would run, resolved as the agent resolves it."""

    def __init__(self, result: ScanResult, environ: dict[str, str]) -> None:
        self.servers = {spec.name: spec for spec in result.servers}
        self.work_dir = result.snapshot.work_dir
        self.environ = environ
        self.inherit = result.config.mcp.inherit_env
        self.hashes = FileHashes()

    def __call__(self, name: str) -> Launch | None:
        spec = self.servers.get(name)
        if spec is None:  # its variables are unset here: the agent would not start it either
            return None
        return resolve(spec, work_dir=self.work_dir, environ=self.environ, inherit=self.inherit, hashes=self.hashes)


def _approval(launch: Launch | None, work_dir: str, trust: str, store: TrustStore) -> tuple[Severity, str]:
    """How the server would start: without approval (an error), approved, or pending approval."""
    if trust == "auto":
        return Severity.ERROR, "starts without approval (mcp.trust = auto)"
    if launch is None:
        return Severity.INFO, "pending: it cannot start here (a ${VAR} it names is not set)"
    if store.approved(launch):
        return Severity.INFO, f"approved ({launch.digest[:12]}): starts"
    return (
        Severity.INFO,
        f"pending: not started until you approve it (`{approve_command(work_dir, [launch])}` or the dashboard)",
    )


def _spawn(name: str, entry: dict[str, Any], launch: Launch | None, when: str) -> str:
    cwd = entry.get("cwd") if isinstance(entry.get("cwd"), str) else None
    env = ", ".join(sorted(_strings(entry.get("env")))) or "none"
    files = launch.files if launch is not None else ()
    runs = "".join(f"; runs the repository's {f.path} ({f.role}, sha256 {f.sha256[:12]})" for f in files)
    return printable(
        f'server "{name}" runs `{command_line(entry)}` in {cwd or "the work dir"}; env keys: {env}{runs}; {when}'
    )


def _remote(name: str, entry: dict[str, Any], when: str) -> str:
    url = str(entry.get("url", ""))
    transport = str(entry.get("type", entry.get("transport", "http")))
    headers = ", ".join(sorted(_strings(entry.get("headers")))) or "none"
    return printable(f'server "{name}" connects to {redact_url(url)} ({transport}); header keys: {headers}; {when}')
