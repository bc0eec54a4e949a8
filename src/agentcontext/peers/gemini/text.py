"""Gemini CLI's handling of a context file's text (0.61.0, ``memoryImportProcessor.js`` as its binary runs it).

* A file is read as UTF-8 (invalid bytes become U+FFFD), its BOM and CRLF kept; the text
  sent is the file with its ``@`` imports expanded, trimmed by JavaScript's ``trim`` (which
  takes a leading BOM and trailing whitespace); a file empty after the trim is not sent.
* An import is ``@path`` at the text's start or after a space, tab, CR or LF, running to the
  next one of them, whose path starts with ``.``, ``/`` or an ASCII letter (so ``@~/x`` and
  ``a@b.md`` stay text). Inside a run of backticks closed by the same run (inline code, a
  fence) it stays text. Nothing else of Markdown counts: a heading, a list item, a quote.
* ``@path`` is replaced by ``<!-- Imported from: path -->\\n<text>\\n<!-- End of import from:
  path -->`` (the imported text untrimmed, its own imports expanded), relative to the
  importing file's folder, at most 5 imports deep (deeper, the text stays as written); a
  file already on the chain of importers gives ``<!-- File already processed: path -->``
  (a file imported twice by one importer is expanded twice); a path that resolves outside
  the importer's project root (the nearest folder above it holding ``.git``, else its own
  folder) gives ``<!-- Import failed: path - Path traversal attempt -->``; a missing one
  ``<!-- Import failed: path - ENOENT: no such file or directory, access '<abs>' -->``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agentcontext.peers.claude.text import js_trim

MAX_IMPORT_DEPTH = 5
_WHITESPACE = frozenset(" \t\n\r")
_CODE = re.compile(r"(`+)([\s\S]*?)\1")
_REMOTE = re.compile(r"^(file|https?)://")


class Spec(NamedTuple):
    """One ``@path`` of a text: where it starts (the ``@``), where it ends, and the path."""

    start: int
    end: int
    path: str


def find_imports(content: str) -> list[Spec]:
    """Every ``@path`` Gemini CLI considers, in order (``findImports``)."""
    found: list[Spec] = []
    at = 0
    size = len(content)
    while at < size:
        at = content.find("@", at)
        if at == -1:
            break
        if at > 0 and content[at - 1] not in _WHITESPACE:
            at += 1
            continue
        end = at + 1
        while end < size and content[end] not in _WHITESPACE:
            end += 1
        path = content[at + 1 : end]
        if path and (path[0] in "./" or ("A" <= path[0] <= "Z") or ("a" <= path[0] <= "z")):
            found.append(Spec(at, end, path))
        at = end + 1
    return found


def code_regions(content: str) -> list[tuple[int, int]]:
    """The spans of backtick runs closed by the same run (``findCodeRegions``)."""
    return [(match.start(), match.end()) for match in _CODE.finditer(content)]


def in_code(start: int, regions: list[tuple[int, int]]) -> bool:
    return any(first <= start < last for first, last in regions)


def remote(path: str) -> bool:
    """A ``file://`` or web address: never imported (it fails as a traversal attempt)."""
    return _REMOTE.match(path) is not None


def imported(path: str, text: str) -> str:
    return f"<!-- Imported from: {path} -->\n{text}\n<!-- End of import from: {path} -->"


def already(path: str) -> str:
    return f"<!-- File already processed: {path} -->"


def failed(path: str, message: str) -> str:
    return f"<!-- Import failed: {path} - {message} -->"


TRAVERSAL = "Path traversal attempt"


def missing(absolute: str) -> str:
    """Node's message for an ``access`` of a path that does not exist."""
    return f"ENOENT: no such file or directory, access '{absolute}'"


IS_A_DIRECTORY = "EISDIR: illegal operation on a directory, read"


def section(path: str, text: str) -> str | None:
    """A loaded file as Gemini CLI concatenates it; None when its trimmed text is empty."""
    trimmed = js_trim(text)
    if not trimmed:
        return None
    return f"--- Context from: {path} ---\n{trimmed}\n--- End of Context from: {path} ---"


def sort_key(path: str) -> bytes:
    """JavaScript's default ``sort``: UTF-16 code units compared in order."""
    return path.encode("utf-16-be", "surrogatepass")
