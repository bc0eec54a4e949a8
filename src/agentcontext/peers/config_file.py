"""An agent's own JSON settings file (comments allowed), read beneath a boundary: the data, or why not."""

from __future__ import annotations

import json
from typing import Any

from agentcontext.fs.files import EntryKind, Reader

CAP = 1024 * 1024  # a settings file larger than this is not read


def read_json(path: str, boundary: str, reader: Reader, what: str, clean: Any) -> tuple[Any, str | None]:
    """The file's JSON (``clean`` turns its text into JSON text); ``...`` when absent or unusable, with why.

    ``what`` names the file in a problem ("Gemini CLI's settings").
    """
    entry = reader.probe(path, boundary)
    if entry.kind is EntryKind.MISSING:
        return ..., None
    if entry.kind is not EntryKind.FILE:
        return ..., f"{what}, not read: {entry.error or entry.kind.value}"
    try:
        raw = reader.read(entry, CAP + 1)
    except OSError as exc:
        return ..., f"{what}, not read: {exc.strerror or exc}"
    if len(raw) > CAP:
        return ..., f"{what}, not read: over {CAP} bytes"
    try:
        return json.loads(clean(raw.decode("utf-8", errors="replace").lstrip("\ufeff"))), None
    except ValueError as exc:
        return ..., f"{what}, not valid JSON ({exc})"
    except RecursionError:
        return ..., f"{what}, not valid JSON (nested too deeply)"


def strip_comments(text: str, *, trailing_commas: bool = False) -> str:
    """JSON without ``//`` and ``/* */`` comments outside strings (``strip-json-comments``, whitespace kept);
    with ``trailing_commas``, also without a comma before a closing ``}`` or ``]`` (JSONC), comments and
    blanks between them or not. One pass: a comma is dropped when the next thing that is neither a blank nor
    a comment closes (a file of commas costs no rescans)."""
    out: list[str] = []
    at, size = 0, len(text)
    in_string = False
    comma: int | None = None  # where in ``out`` the last comma went, while only blanks and comments follow it
    while at < size:
        char = text[at]
        if in_string:
            out.append(char)
            if char == "\\" and at + 1 < size:
                out.append(text[at + 1])
                at += 1
            elif char == '"':
                in_string = False
        elif text.startswith("//", at):
            end = text.find("\n", at)
            at = size if end == -1 else end
            continue
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            skipped = text[at : size if end == -1 else end + 2]
            out.append("".join(c if c in "\r\n" else " " for c in skipped))
            at = size if end == -1 else end + 2
            continue
        else:
            if comma is not None and char in "}]":
                out[comma] = ""
            if not char.isspace():
                comma = len(out) if trailing_commas and char == "," else None
            in_string = char == '"'
            out.append(char)
        at += 1
    return "".join(out)
