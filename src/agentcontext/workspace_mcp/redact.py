"""Secrets kept out of what we report: values an MCP entry declares, masked wherever they show up.

A server's stderr tail and connection errors are shown to users and stored with snapshots;
a server that prints its own token, or an error that quotes a URL, must not carry the
token along. We know the values (the entry's env and header values, the URL's credentials
and query values, after ``${VAR}`` expansion), so we mask them literally.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
MIN_SECRET = 8  # shorter values ("1", "true", "Bearer") are settings or words; masking them would garble the text


def secret_values(values: Iterable[str], url: str | None = None) -> tuple[str, ...]:
    """Every value worth masking, longest first (so a value is masked before any part of it).

    A value's whitespace-separated parts count too: ``Bearer TOKEN`` masks ``TOKEN`` alone.
    """
    found: set[str] = set()
    for value in values:
        found.add(value)
        found.update(value.split())
    if url:
        parts = urlsplit(url)
        found.update(v for v in (parts.username, parts.password) if v)
        found.update(v for _, v in parse_qsl(parts.query, keep_blank_values=False))
    return tuple(sorted((v for v in found if len(v) >= MIN_SECRET), key=lambda v: (-len(v), v)))


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text
