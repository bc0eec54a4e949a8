"""The project doc: the instruction text an agent receives, under one byte budget.

Codex's rule (``project_doc_max_bytes``, 32 KiB by default): project files are taken
root first; each is cut at the bytes left in the shared budget (a cut may split a
character, which decodes to U+FFFD); a file that is empty or whitespace-only after the
cut is skipped without spending budget; kept texts are joined with a blank line,
untrimmed. A budget of 0 disables project docs. Home and source files are not budgeted;
their trimmed texts come first, and ``--- project-doc ---`` marks where project text
begins.

With ``project_doc.keep_bytes`` (Codex) a file's bytes are kept as they are: a BOM and
CRLF line ends reach the doc. A UTF-16 file, which Codex reads as UTF-8 (its NUL bytes and all: a
garbled text that no database stores), is ``invalid`` with that said. A budget of -1 (Claude
Code) means no budget at all.
Claude Code's doc (:func:`assemble_claude`) is one ``Contents of <path> (<kind>):``
section per loaded file, in load order, each text trimmed.

Unlike Codex, nothing is silent: the file that was cut is ``truncated`` and says how
many bytes were kept, and every file left out by the budget is ``truncated`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentcontext.fs.textdecode import UTF8_BOM, UTF16_WARNING, decode, garbled_utf16
from agentcontext.instructions.chain import BOM_WARNING, Found, relabelled
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.sanitize import sanitize

SEPARATOR = "\n\n--- project-doc ---\n\n"
_GLOBAL_SCOPES = (Scope.HOME, Scope.SOURCE)


@dataclass(frozen=True, slots=True)
class DocFile:
    path: str
    truncated: bool
    scope: Scope

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class ProjectDoc:
    """The assembled doc: the files it came from, the global part and the project part."""

    files: tuple[DocFile, ...]
    global_text: str
    project_text: str

    @property
    def content(self) -> str:
        if self.global_text and self.project_text:
            return self.global_text + SEPARATOR + self.project_text
        return self.global_text or self.project_text

    @property
    def empty(self) -> bool:
        return not self.content.strip()

    def to_dict(self) -> dict[str, Any]:
        return {"files": [f.to_dict() for f in self.files], "content": self.content}


def apply_budget(found: list[Found], max_bytes: int, *, keep_bytes: bool = False) -> list[Resource]:
    """Give each instruction resource its doc status and the content it contributes."""
    remaining = max_bytes
    out: list[Resource] = []
    for item in found:
        resource = item.resource
        if keep_bytes and item.data is not None:
            if _utf16(resource):
                out.append(_garbled(resource))
                continue
            item = Found(resource, _raw(item, resource))
        if item.data is None or resource.doc_order is None or resource.scope in _GLOBAL_SCOPES or max_bytes < 0:
            out.append(_whole(item, keep_line_ends=keep_bytes or max_bytes < 0))
            continue
        if max_bytes == 0:
            out.append(_disabled(resource))
            continue
        budgeted, remaining = _cut(item, remaining, max_bytes, keep_line_ends=keep_bytes)
        out.append(budgeted)
    return out


def whole(item: Found, *, keep_bytes: bool = False) -> Resource:
    """A file outside any budget (an on-demand file): all its text, its bytes as they are with ``keep_bytes``."""
    if keep_bytes and item.data is not None:
        if _utf16(item.resource):
            return _garbled(item.resource)
        item = Found(item.resource, _raw(item, item.resource))
    return _whole(item, keep_line_ends=keep_bytes)


def _raw(item: Found, resource: Resource) -> bytes | None:
    """The bytes as read (a UTF-8 BOM put back), for ``keep_bytes``."""
    data = item.data
    if data is None:
        return data
    return UTF8_BOM + data if BOM_WARNING in resource.warnings else data


def _utf16(resource: Resource) -> bool:
    return any(warning.startswith(UTF16_WARNING) for warning in resource.warnings)


def _garbled(resource: Resource) -> Resource:
    """A UTF-16 file where the bytes are kept: Codex reads it as UTF-8, which no snapshot could hold."""
    error = garbled_utf16("Codex")
    warnings = tuple(warning for warning in resource.warnings if not warning.startswith(UTF16_WARNING))
    return resource._replace(status=Status.INVALID, content=None, error=error, warnings=warnings)


def _whole(item: Found, *, keep_line_ends: bool = False) -> Resource:
    """A file outside the budget keeps all its text (within the per-resource cap)."""
    resource = item.resource
    if item.data is None or resource.status is not Status.OK:
        return resource
    text, _ = decode(item.data, keep_line_ends=keep_line_ends)
    return relabelled(resource, text, resource.load, resource.doc_order)


def _disabled(resource: Resource) -> Resource:
    error = "project docs are disabled (project_doc.max_bytes = 0)"
    return resource._replace(status=Status.DISABLED, content=None, error=error)


def _cut(item: Found, remaining: int, max_bytes: int, *, keep_line_ends: bool = False) -> tuple[Resource, int]:
    resource = item.resource
    data = item.data or b""
    if resource.status is Status.OVERSIZE and remaining >= len(data):
        return resource, remaining  # the per-resource cap is the tighter limit: no content
    if not decode(data)[0].strip(" \t\n\r\ufeff"):  # nothing to lose: skipped without spending budget
        warning = "empty or whitespace only; skipped without spending the doc budget"
        return resource._replace(content="", warnings=(*resource.warnings, warning)), remaining
    if remaining == 0:
        error = f"left out: the project doc budget of {max_bytes} bytes was used up by earlier files"
        return resource._replace(status=Status.TRUNCATED, content="", error=error), 0
    kept = data[:remaining]
    text, _ = decode(kept, cut=len(kept) < len(data), keep_line_ends=keep_line_ends)
    if not text.strip():  # Codex skips a cut that is only whitespace, so the rest is lost
        error = f"left out: the {len(kept)} bytes that fit the project doc budget are whitespace only"
        return resource._replace(status=Status.TRUNCATED, content="", error=error), remaining
    if len(kept) < len(data) or resource.status is Status.OVERSIZE:
        error = f"cut to {len(kept)} of {resource.size_bytes} bytes by the project doc budget of {max_bytes} bytes"
        return resource._replace(status=Status.TRUNCATED, content=text, error=error), remaining - len(kept)
    return resource._replace(content=text), remaining - len(kept)


def in_doc_order(resources: Sequence[Resource]) -> list[Resource]:
    """The instruction files that have a place in the doc, in its order."""
    return sorted(
        (r for r in resources if r.kind is Kind.INSTRUCTION_FILE and r.doc_order is not None),
        key=lambda r: r.doc_order or 0,
    )


def assemble(resources: tuple[Resource, ...] | list[Resource], *, sanitized: bool = False) -> ProjectDoc:
    """The doc from a snapshot's instruction resources (works on a pinned copy too)."""
    ordered = in_doc_order(resources)
    files: list[DocFile] = []
    global_parts: list[str] = []
    project_parts: list[str] = []
    for resource in ordered:
        text = resource.content if resource.status.carries_content else None
        if text is not None and not text.strip() and resource.status is Status.OK:
            continue
        if resource.status not in (Status.OK, Status.TRUNCATED, Status.EXCLUDED):
            continue
        files.append(DocFile(resource.path, resource.status is not Status.OK, resource.scope))
        if not text or not text.strip():
            continue
        if sanitized:
            text = sanitize(text)
            if not text:  # only hidden text: nothing to join, not even a blank part
                continue
        if resource.scope in _GLOBAL_SCOPES:
            global_parts.append(text.strip())
        else:
            project_parts.append(text)
    return ProjectDoc(tuple(files), "\n\n".join(global_parts), "\n\n".join(project_parts))
