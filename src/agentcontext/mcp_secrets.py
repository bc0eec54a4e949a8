"""Literal credentials in MCP entries: how to spot them, and an entry shown with them masked.

A value counts as a credential when its key names one (token, secret, password, key,
auth, cookie...) or when it looks like one (a known token prefix, or 24+ characters of
high entropy). ``${VAR}`` references are not literal; a ``${VAR:-default}`` default is.
An entry is shown as written (``${VAR}`` left unexpanded), credential arguments, URL
parts and query values replaced by ``***``: that is what the user approves.
"""

from __future__ import annotations

import math
import re
import shlex
from collections import Counter
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agentcontext.findings import printable

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


def literal(value: str) -> str:
    """What a value holds besides ``${VAR}`` references and an auth scheme word."""
    # every reference ends with "}": searching only up to the last one keeps this linear on "${A:-${A:-..."
    end = value.rfind("}") + 1
    return _SCHEME.sub("", _VAR.sub(lambda m: m.group(1) or "", value[:end]) + value[end:]).strip()


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


def redact_url(url: str) -> str:
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


def entry_args(entry: Mapping[str, Any]) -> list[str]:
    args = entry.get("args")
    return [a for a in args if isinstance(a, str)] if isinstance(args, list) else []


def command_line(entry: Mapping[str, Any]) -> str:
    """A stdio entry's command line as written, shell-quoted, literal credential arguments as ``***``."""
    args = entry_args(entry)
    hidden = secret_args(args)
    words = [str(entry.get("command", "")), *args]
    return " ".join("***" if i - 1 in hidden else shlex.quote(w) for i, w in enumerate(words))


def shown(entry: Mapping[str, Any]) -> str:
    """What an entry runs or reaches, as written: a command line, or a URL with its transport.

    Control, format and private-use characters are shown as ``\\uXXXX``: this is the text a user
    approves, and a bidi override or an escape sequence in it must not hide or reorder the rest.
    """
    if entry.get("command") and entry.get("type", entry.get("transport", "stdio")) == "stdio":
        return printable(command_line(entry))
    transport = str(entry.get("type", entry.get("transport", "http")))
    return printable(f"{redact_url(str(entry.get('url', '')))} ({transport})")
