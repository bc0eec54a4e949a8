"""``@`` imports as Copilot CLI expands them in an AGENTS.md or CLAUDE.md (1.0.102, as observed).

An ``@path`` token (at a line's start or after whitespace, up to the next whitespace; not in a
fenced block or inline code, not ``@~/...``) naming a file inside the repository stays in the
text, and right after it comes ``\\n\\n<imported_custom_instruction source="<abs>">\\n<text>
</imported_custom_instruction>`` (a newline added when the text has none at its end), then the
rest of the line. The imported text's own imports are expanded too; a file already expanded for
the same top-level file gives ``\\n\\n<imported_custom_instruction source="<abs>"
skipped="already-loaded" />``. A missing file, a folder or a path out of the repository leave
the token as text. In an imported text, ``<imported_custom_instruction`` becomes
``&lt;imported_custom_instruction``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agentcontext.fs.files import is_within

_TOKEN = re.compile(r"(?:(?<=\s)|^)@(\S+)", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_INLINE = re.compile(r"`[^`\n]*`")
_TAG = "<imported_custom_instruction"

# what a path gives: its text, or None when it is no file to import (missing, a folder, refused)
Fetch = Callable[[str], str | None]


def _code_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    fences = [m.start() for m in _FENCE.finditer(text)]
    for opening, closing in zip(fences[::2], [*fences[1::2], len(text)], strict=False):
        spans.append((opening, closing + 3))
    spans += [(m.start(), m.end()) for m in _INLINE.finditer(text)]
    return spans


@dataclass
class Expansion:
    """One top-level file's expansion: each file imported once, in order."""

    top: str  # the file being expanded: it counts as loaded already
    allowed: str  # the repository: nothing outside it is imported
    fetch: Fetch
    loaded: list[tuple[str, str]] = field(default_factory=list)  # (importer, imported), first expansion order
    _done: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._done.add(self.top)

    def expand(self, text: str, base: str, importer: str) -> str:
        if "@" not in text:
            return text
        spans = _code_spans(text)
        out: list[str] = []
        last = 0
        for match in _TOKEN.finditer(text):
            spec = match.group(1)
            if spec.startswith("~") or any(a <= match.start() < b for a, b in spans):
                continue
            full = os.path.normpath(os.path.join(base, spec))
            if not is_within(full, self.allowed) or full == self.allowed:
                continue
            if full in self._done:
                addition = f'\n\n{_TAG} source="{full}" skipped="already-loaded" />'
            else:
                body = self.fetch(full)
                if body is None:
                    continue
                self._done.add(full)
                self.loaded.append((importer, full))
                inner = self.expand(body.replace(_TAG, "&lt;" + _TAG[1:]), os.path.dirname(full), full)
                tail = "" if inner.endswith("\n") else "\n"
                addition = f'\n\n{_TAG} source="{full}">\n{inner}{tail}</imported_custom_instruction>'
            out.append(text[last : match.end()])
            out.append(addition)
            last = match.end()
        out.append(text[last:])
        return "".join(out)
