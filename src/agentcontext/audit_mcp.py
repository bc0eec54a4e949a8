"""The audit's MCP rules: which servers would run, and which secrets are committed.

* ``mcp-spawn`` [info]: a stdio server of a config the agent connects to: the command line
  as written (``${VAR}`` left unexpanded, credential arguments shown as ``***``), its cwd,
  its env keys, and whether it starts without approval (``mcp.trust``).
* ``mcp-remote`` [info]: a remote server: its URL (credentials shown as ``***``) and its
  header names.
* ``mcp-secret-inline`` [error]: a literal credential in ``env``, ``headers``, ``args`` or
  the ``url`` rather than a ``${VAR}`` reference (a ``${VAR:-default}`` default is
  literal). A value counts when its key names a credential (token, secret, password,
  key, auth, cookie...) or when it looks like one (a known token prefix, or 24+
  characters of high entropy). Findings name the key, never the value.
* ``mcp-invalid-entry`` [warning]: an entry that cannot be used (no command, bad type...).
* ``mcp-duplicate-server`` [info]: a name already defined by an earlier config file.

Entries are judged as written, without the environment, so an audit in CI sees the
servers a developer's machine would start.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agentcontext.errors import McpConfigError
from agentcontext.files import Kind as FileKind
from agentcontext.files import Reader
from agentcontext.findings import Finding, Severity, printable
from agentcontext.layout import McpFile
from agentcontext.mcp_config import parse, server_map
from agentcontext.resource import Kind, Status
from agentcontext.scan import ScanResult

_VAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-([^}]*))?\}")
_SCHEME = re.compile(r"^\s*(bearer|basic|token|bot)\s+", re.IGNORECASE)
_KEY_PARTS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])")
_SECRET_PARTS = frozenset((
    "token", "tokens", "secret", "secrets", "password", "passwd", "pwd", "pass", "key", "apikey", "auth",
    "authorization", "credential", "credentials", "cookie", "session", "bearer", "pat", "jwt", "private",
))  # fmt: skip
_SECRET_WORDS = ("token", "secret", "password", "apikey", "accesskey", "privatekey", "credential")
_TOKEN_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_live_", "sk_test_", "rk_live_",
    "xoxb-", "xoxp-", "xoxa-", "xapp-", "AKIA", "ASIA", "AIza", "eyJ", "npm_", "hf_", "pypi-", "dop_v1_", "shpat_",
)  # fmt: skip
_PLAIN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "0", "1"})


def findings(result: ScanResult, reader: Reader) -> list[Finding]:
    """MCP findings for every config the scan read whole, in the scan's file order."""
    usable = {r.path for r in result.snapshot.resources if r.kind is Kind.MCP_CONFIG and r.status is Status.OK}
    cap = result.config.snapshot.max_resource_bytes
    trust = result.config.mcp.trust
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
                out += _secrets(item.path, name, entry, locate)
        parsed = parse(raw, item.path, {}, strict=False)
        for name, message in parsed.entry_errors:
            out.append(Finding("mcp-invalid-entry", Severity.WARNING, item.path, printable(message), *locate(name)))
        for spec in parsed.servers:
            owner = owners.setdefault(spec.name, item.path)
            where = locate(spec.name)
            if owner != item.path:
                message = f'server "{spec.name}" is already defined in {owner}; this definition is ignored'
                out.append(Finding("mcp-duplicate-server", Severity.INFO, item.path, message, *where))
            elif item.connect:
                entry = entries[spec.name]
                message = _spawn(spec.name, entry, trust) if spec.transport == "stdio" else _remote(spec.name, entry)
                code = "mcp-spawn" if spec.transport == "stdio" else "mcp-remote"
                out.append(Finding(code, Severity.INFO, item.path, message, *where))
    return out


def _load(item: McpFile, reader: Reader, cap: int) -> tuple[bytes, str, dict[str, Any]] | None:
    entry = reader.probe(item.path, item.boundary)
    if entry.kind is not FileKind.FILE:
        return None
    try:
        raw = reader.read(entry, cap + 1)
        text = raw.decode("utf-8-sig")
        document = json.loads(text)
        entries = server_map(document) if isinstance(document, dict) and len(raw) <= cap else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, McpConfigError):
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


def literal(value: str) -> str:
    """What a value holds besides ``${VAR}`` references and an auth scheme word."""
    return _SCHEME.sub("", _VAR.sub(lambda m: m.group(1) or "", value)).strip()


def secret_name(key: str) -> bool:
    folded = key.casefold()
    parts = {p.casefold() for p in _KEY_PARTS.split(key) if p}
    return bool(parts & _SECRET_PARTS) or any(word in folded for word in _SECRET_WORDS)


def looks_like_token(value: str) -> bool:
    if value.startswith(_TOKEN_PREFIXES) and len(value) >= 12:
        return True
    if len(value) < 24 or any(c.isspace() for c in value) or "://" in value or value.startswith(("/", ".", "~")):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 4.0


def is_secret(key: str, value: str) -> bool:
    """Whether ``value`` (as written) commits a credential under ``key``."""
    text = literal(value)
    if not text:
        return False
    if looks_like_token(text):
        return True
    if not secret_name(key) or text.casefold() in _PLAIN_WORDS or (text.isdigit() and len(text) < 6):
        return False
    if "://" in text:
        return bool(url_credentials(text))
    return not text.startswith(("/", "./", "~/"))


def url_credentials(url: str) -> list[str]:
    """What in a URL is a literal credential: ``"password"``, ``"user"``, ``"path"`` or query parameter names."""
    try:
        parts = urlsplit(url)
        password, username = parts.password, parts.username
    except ValueError:
        return []
    found = []
    if password and literal(password):
        found.append("password")
    elif username and looks_like_token(literal(username)):
        found.append("user")
    if any(looks_like_token(segment) for segment in parts.path.split("/")):
        found.append("path")
    found += [key for key, value in parse_qsl(parts.query) if is_secret(key, value)]
    return found


def _redact_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        return "(an unparsable URL)"
    if "@" in netloc and url_credentials(url):
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(
        f"{key}={'***' if is_secret(key, value) else value}" for key, value in parse_qsl(parts.query, True)
    )
    path = "/".join("***" if looks_like_token(segment) else segment for segment in parts.path.split("/"))
    return parts._replace(netloc=netloc, path=path, query=query).geturl()


def secret_args(args: list[str]) -> set[int]:
    """Indexes of arguments that are literal credentials: ``--token=X``, ``--api-key X`` or token-shaped."""
    flagged: set[int] = set()
    for index, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        credential = looks_like_token(literal(arg)) or ("://" in arg and bool(url_credentials(arg)))
        if credential or (eq and flag.startswith("-") and is_secret(flag.lstrip("-"), value)):
            flagged.add(index)
            continue
        following = args[index + 1] if index + 1 < len(args) else "-"
        if arg.startswith("-") and not eq and not following.startswith("-") and is_secret(arg.lstrip("-"), following):
            flagged.add(index + 1)
    return flagged


def _strings(value: Any) -> dict[str, str]:
    return {str(k): v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _args(entry: dict[str, Any]) -> list[str]:
    args = entry.get("args")
    return [a for a in args if isinstance(a, str)] if isinstance(args, list) else []


def _secrets(path: str, name: str, entry: dict[str, Any], locate: _Locator) -> list[Finding]:
    server = f'server "{printable(name)}"'
    why = "a credential committed with the file; reference it as ${VAR} and set it in the environment"
    out: list[Finding] = []
    for field in ("env", "headers"):
        for key, value in sorted(_strings(entry.get(field)).items()):
            if is_secret(key, value):
                label = "env" if field == "env" else "header"
                message = f'{label} "{printable(key)}" of {server} is a literal value, not a ${{VAR}} reference: {why}'
                out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, field, key)))
    for index in sorted(secret_args(_args(entry))):
        message = f"argument {index + 1} of {server} is a literal credential: {why}"
        out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, "args")))
    url = entry.get("url")
    if isinstance(url, str) and (found := url_credentials(url)):
        message = f"url of {server} holds a literal credential ({', '.join(map(printable, found))}): {why}"
        out.append(Finding("mcp-secret-inline", Severity.ERROR, path, message, *locate(name, "url")))
    return out


def _spawn(name: str, entry: dict[str, Any], trust: str) -> str:
    args = _args(entry)
    hidden = secret_args(args)
    words = [str(entry.get("command", "")), *args]
    command_line = " ".join("***" if i - 1 in hidden else shlex.quote(w) for i, w in enumerate(words))
    cwd = entry.get("cwd") if isinstance(entry.get("cwd"), str) else None
    env = ", ".join(sorted(_strings(entry.get("env")))) or "none"
    when = "starts without asking (mcp.trust = auto)" if trust == "auto" else "starts once approved (mcp trust)"
    return printable(f'server "{name}" runs `{command_line}` in {cwd or "the work dir"}; env keys: {env}; {when}')


def _remote(name: str, entry: dict[str, Any]) -> str:
    url = str(entry.get("url", ""))
    transport = str(entry.get("type", entry.get("transport", "http")))
    headers = ", ".join(sorted(_strings(entry.get("headers")))) or "none"
    return printable(f'server "{name}" connects to {_redact_url(url)} ({transport}); header keys: {headers}')
