"""An instruction file's text as the Node-based agents (Gemini CLI, OpenCode, Copilot CLI) read it.

The bytes, up to the per-resource cap, decoded as Node decodes UTF-8 (invalid sequences
replaced, a BOM and CRLF kept), with the hidden-text warnings every profile gives; each peer
adds what is its own (its text handling, its warnings).

A file holding NUL bytes (a UTF-16 file, a binary) is the one departure: these agents send it as
text, but no database stores a NUL in text (PostgreSQL refuses one), so a snapshot holding it could
never reach the control plane and every chat of the workspace would keep what it had. It is listed
``invalid`` with what the agent would do (:func:`sent_as_text`), as Claude Code's is.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from agentcontext.fs.files import Entry, Reader
from agentcontext.fs.textdecode import sent_as_text
from agentcontext.resource import Status
from agentcontext.sanitize import hidden_text_warnings

INVALID_UTF8 = "contains invalid UTF-8; invalid sequences were replaced"


class FileText(NamedTuple):
    """One file as read (cached per file version by the peers that read it again)."""

    status: Status
    error: str | None = None
    size: int = 0
    content_hash: str = ""
    warnings: tuple[str, ...] = ()
    text: str | None = None  # None unless ``ok``


def read_text(entry: Entry, reader: Reader, cap: int, agent: str, *, strip_bom: bool = False) -> FileText:
    """``entry``'s text as ``agent`` reads it; ``strip_bom``: without a leading BOM (before the warnings are
    looked for)."""
    try:
        raw = reader.read(entry, cap + 1)
    except OSError as exc:
        return FileText(Status.UNREADABLE, exc.strerror or str(exc), entry.size)
    size = max(entry.size, len(raw))
    digest = hashlib.sha256(raw[:cap]).hexdigest()
    if len(raw) > cap:
        return FileText(Status.OVERSIZE, f"file size {size} exceeds per-resource cap of {cap} bytes", size, digest)
    if (refused := sent_as_text(raw, agent)) is not None:
        return FileText(Status.INVALID, refused, size, digest)
    text = raw.decode("utf-8", errors="replace")
    if strip_bom and text.startswith("\ufeff"):
        text = text[1:]
    warnings = hidden_text_warnings(text)
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        warnings = (INVALID_UTF8, *warnings)
    return FileText(Status.OK, None, size, digest, warnings, text)
