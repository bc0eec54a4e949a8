"""Literal credentials in MCP entries: how to spot them, and an entry shown with them masked.

A value counts as a credential when its key names one (token, secret, password, key,
auth, cookie...) or when it looks like one (a known token prefix, or 24+ characters of
high entropy). ``${VAR}`` references are not literal; a ``${VAR:-default}`` default is.

Only the credential part of a text is masked, so what a server runs and where its code
comes from stay readable: the value after a credential flag (``--token X``,
``--api-key=X``), the value of a credential header (``Authorization: Bearer ***``, after
``--header`` or anywhere), ``NAME=value`` assignments under a credential name (a
``sh -c 'API_KEY=... exec x'`` string, a ``host=db password=...`` connection string), a
URL's userinfo and credential query values (``git+https://github.com/org/repo@<sha>``
stays whole), and token-shaped words. What was masked is said too (:attr:`Masked.found`),
for the audit's ``mcp-secret-inline`` findings.
"""

from __future__ import annotations

import math
import re
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agentcontext.audit.findings import printable

MASK = "***"
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
_HEADER_FLAGS = frozenset({"-H", "--header", "--headers"})
# "Name: value" as curl and most MCP bridges take a header; the name as HTTP allows it
_HEADER = re.compile(r"^(\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*:\s*)(\S.*)$", re.DOTALL)
# NAME=value in a shell string or a connection string; the value quoted or up to a separator
# the same inside a longer text (a ``sh -c`` string): the name, a scheme word, one word of value
_INLINE_HEADER = re.compile(
    r"(?<![\w-])([A-Za-z][A-Za-z0-9-]*)(\s*:\s*)((?:bearer|basic|token|bot)\s+)?([^\s'\"]+)", re.IGNORECASE
)
_ASSIGNMENT = re.compile(r"(?<![\w-])([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)('[^']*'|\"[^\"]*\"|[^\s;&'\"]+)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_WORD = re.compile(r"[^\s'\"=:;,&()<>|]+")


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


def _prefixed_token(value: str) -> bool:
    """A known token prefix: a credential wherever it stands (a URL path included)."""
    return value.startswith(_TOKEN_PREFIXES) and len(value) >= 12


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
    """What in a URL is a literal credential: ``"password"``, ``"user"``, ``"path"`` or query parameter names.

    A path segment counts only with a known token prefix: commit hashes and ids in a path are
    where the code comes from, and masking them would hide it.
    """
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
    if any(_prefixed_token(segment) for segment in parts.path.split("/")):
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
        netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{key}={MASK if is_secret(key, value) else value}" for key, value in parse_qsl(parts.query, True))
    path = "/".join(MASK if _prefixed_token(segment) else segment for segment in parts.path.split("/"))
    return parts._replace(netloc=netloc, path=path, query=query).geturl()


@dataclass(frozen=True, slots=True)
class Masked:
    """A text with its credential parts as ``***``, what each was, and the values masked."""

    text: str
    found: tuple[str, ...] = ()  # "the value of --token", "an Authorization header", ...
    values: tuple[str, ...] = ()  # what was masked (to mask again wherever a server echoes it)


class _Masking:
    """One text masked step by step; each step sees what the earlier ones left."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[str] = []
        self.values: list[str] = []

    def done(self) -> Masked:
        return Masked(self.text, tuple(self.found), tuple(self.values))

    def whole(self, what: str) -> None:
        scheme = _SCHEME.match(self.text)
        kept = scheme.group(0) if scheme else ""
        self.values.append(self.text[len(kept) :])
        self.text, self.found = kept + MASK, [*self.found, what]

    def urls(self) -> None:
        def one(match: re.Match[str]) -> str:
            url = match.group(0)
            found = url_credentials(url)
            if not found:
                return url
            self.found.append(f"a URL's {', '.join(found)}")
            self.values.append(url)
            return redact_url(url)

        self.text = _URL.sub(one, self.text)

    def headers(self) -> None:
        """A credential header: all of its value when the text is one header, else its one word after the name."""
        match = _HEADER.match(self.text)
        name = match.group(1).strip(" :") if match else ""
        if match and is_secret(name, match.group(2)):
            rest = _Masking(match.group(2))
            rest.whole(f'the header "{name}"')
            self.text = match.group(1) + rest.text
            self.found += rest.found
            self.values += rest.values
            return

        def one(found: re.Match[str]) -> str:
            name, colon, scheme, value = found.group(1), found.group(2), found.group(3) or "", found.group(4)
            if not secret_name(name) or not is_secret(name, value):
                return found.group(0)
            self.found.append(f'the header "{name}"')
            self.values.append(value)
            return f"{name}{colon}{scheme}{MASK}"

        self.text = _INLINE_HEADER.sub(one, self.text)

    def assignments(self) -> None:
        def one(match: re.Match[str]) -> str:
            name, equals, value = match.groups()
            bare = value.strip("'\"")
            if bare == MASK or not is_secret(name, bare):
                return match.group(0)
            self.found.append(f"{name}= in a shell or connection string")
            self.values.append(bare)
            quote = value[0] if value[:1] in "'\"" and len(value) > 1 else ""
            return f"{name}{equals}{quote}{MASK}{quote}"

        self.text = _ASSIGNMENT.sub(one, self.text)

    def tokens(self) -> None:
        def one(match: re.Match[str]) -> str:
            word = match.group(0)
            if not _prefixed_token(word):
                return word
            self.found.append("a token")
            self.values.append(word)
            return MASK

        self.text = _WORD.sub(one, self.text)


def mask_text(text: str) -> Masked:
    """``text`` with each credential part masked (see the module's rules)."""
    masking = _Masking(text)
    if looks_like_token(literal(text)):
        masking.whole("a token-shaped value")
        return masking.done()
    masking.urls()
    masking.headers()
    masking.assignments()
    masking.tokens()
    return masking.done()


def mask_value(key: str, value: str) -> Masked:
    """An ``env`` or ``headers`` value: all of it under a credential key, else its credential parts."""
    if is_secret(key, value):
        masking = _Masking(value)
        masking.whole(f'the value of "{key}"')
        return masking.done()
    return mask_text(value)


def mask_args(args: Sequence[str]) -> list[Masked]:
    """Each argument with its credential parts masked: a flag's value, a header, assignments, URLs, tokens."""
    out: list[Masked] = []
    for index, arg in enumerate(args):
        before = args[index - 1] if index else ""
        flag, eq, value = arg.partition("=")
        if before in _HEADER_FLAGS:
            masked = mask_text(arg)
        elif _flag_without_value(before) and is_secret(before.lstrip("-"), arg) and "://" not in arg:
            masked = mask_value(before.lstrip("-"), arg)
            masked = Masked(masked.text, (f"the value of {before}",), masked.values)
        elif eq and flag.startswith("-") and is_secret(flag.lstrip("-"), value) and "://" not in value:
            rest = mask_value(flag.lstrip("-"), value)
            masked = Masked(f"{flag}={rest.text}", (f"the value of {flag}",), rest.values)
        else:
            masked = mask_text(arg)
        out.append(masked)
    return out


def _flag_without_value(word: str) -> bool:
    return word.startswith("-") and "=" not in word and word != "-"


def entry_args(entry: Mapping[str, Any]) -> list[str]:
    args = entry.get("args")
    return [a for a in args if isinstance(a, str)] if isinstance(args, list) else []


def quoted(word: str) -> str:
    """A word for a shown command line: bare when the shell would read it so (``***`` too), else quoted."""
    return word if re.fullmatch(r"[\w@%+=:,./*-]+", word) else shlex.quote(word)


def command_line(entry: Mapping[str, Any], *, masked: bool = True) -> str:
    """A stdio entry's command line as written, shell-quoted; with ``masked``, credential parts as ``***``."""
    args = [m.text for m in mask_args(entry_args(entry))] if masked else entry_args(entry)
    return " ".join(quoted(word) for word in (str(entry.get("command", "")), *args))


def shown(entry: Mapping[str, Any], *, masked: bool = True) -> str:
    """What an entry runs or reaches, as written: a command line, or a URL with its transport.

    Control, format and private-use characters are shown as ``\\uXXXX``: this is the text a user
    approves, and a bidi override or an escape sequence in it must not hide or reorder the rest.
    ``masked=False`` for an approval: anything masked there could be code (a token-shaped word is
    one of ``node -e``'s too), and what a user approves is shown whole.
    """
    if entry.get("command") and entry.get("type", entry.get("transport", "stdio")) == "stdio":
        return printable(command_line(entry, masked=masked))
    transport = str(entry.get("type", entry.get("transport", "http")))
    return printable(f"{redact_url(str(entry.get('url', '')))} ({transport})")
