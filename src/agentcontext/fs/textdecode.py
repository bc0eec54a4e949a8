"""Bytes to text, the same way for every file the engine reads.

UTF-8 with or without a BOM, UTF-16 announced by its BOM, CRLF or lone CR line ends:
all decode to the same LF text. Invalid UTF-8 is replaced (U+FFFD) with a warning, as
Codex does; a file with NUL bytes that is not UTF-16 is binary and is refused.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

UTF8_BOM = codecs.BOM_UTF8
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
UTF16_WARNING = "decoded from UTF-16 (byte order mark)"


@dataclass(frozen=True, slots=True)
class Prepared:
    """Raw bytes made ready for byte budgets: UTF-16 transcoded, BOM removed."""

    data: bytes
    warnings: tuple[str, ...] = ()
    binary: bool = False


def prepare(raw: bytes) -> Prepared:
    """Turn a file's raw bytes into UTF-8 bytes that byte budgets can cut."""
    if raw.startswith(UTF16_BOMS):
        text = raw.decode("utf-16", errors="replace")
        if "\x00" in text:  # U+0000 itself, which no snapshot can hold: binary, as in UTF-8
            return Prepared(raw, binary=True)
        warnings = [UTF16_WARNING]
        if "\ufffd" in text:
            warnings.append("invalid UTF-16 sequences were replaced")
        return Prepared(text.encode("utf-8"), tuple(warnings))
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    if b"\x00" in raw:
        return Prepared(raw, binary=True)
    return Prepared(raw)


def decode(data: bytes, *, cut: bool = False, keep_line_ends: bool = False) -> tuple[str, tuple[str, ...]]:
    """Decode prepared bytes as lossy UTF-8 and normalise line ends to LF.

    ``cut`` says the bytes were cut by a budget: a character split at the end is then
    replaced quietly (Codex does the same), since the file itself is not at fault.
    ``keep_line_ends`` leaves CRLF and CR as they are (what Codex and Claude Code send).
    """
    try:
        text = data.decode("utf-8")
        warnings: tuple[str, ...] = ()
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        split_at_end = cut and exc.reason == "unexpected end of data" and exc.end == len(data)
        warnings = (
            ()
            if split_at_end
            else (f"contains invalid UTF-8 ({exc.reason} at byte {exc.start}); invalid sequences were replaced",)
        )
    if "\r" in text and not keep_line_ends:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, warnings


def decode_file(raw: bytes) -> tuple[str | None, tuple[str, ...]]:
    """Whole-file decode: ``(None, warnings)`` when the bytes are binary."""
    try:  # most files: straight UTF-8, in one step (UTF-16 BOMs are not UTF-8; NUL is U+0000 decoded)
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if "\x00" not in text and text[:1] != "\ufeff":  # searching the text is 10x faster than the bytes
            return (text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text), ()
    prepared = prepare(raw)
    if prepared.binary:
        return None, prepared.warnings
    text, warnings = decode(prepared.data)
    return text, prepared.warnings + warnings


def sent_as_text(raw: bytes, agent: str) -> str | None:
    """Why a file holding NUL bytes is not loaded where ``agent`` would send it as text (None: it holds none): no
    database stores a NUL in text, so a snapshot holding one could never reach the control plane."""
    if b"\x00" not in raw:
        return None
    if raw.startswith(UTF16_BOMS):
        return garbled_utf16(agent)
    return f"binary file (contains NUL bytes); not loaded ({agent} would send it as text)"


def garbled_utf16(agent: str) -> str:
    """Why a UTF-16 file is not loaded where ``agent`` reads every file as UTF-8 (its BOM two U+FFFD, its NUL bytes
    kept, as the agents' binaries were seen to send one)."""
    return (
        f"UTF-16 (byte order mark): {agent} reads it as UTF-8, NUL bytes and all, so its text arrives garbled;"
        " not loaded: save it as UTF-8"
    )
