"""The ``paths:`` globs of Claude Code's rules, matched as its binary matches them (2.1.332, observed).

A rule's globs are ``.gitignore`` lines relative to the folder that holds its ``.claude``
(a user rule's: the work dir): a glob without a ``/`` (other than a trailing one) matches
at any depth (``*.py`` matches ``deep/code.py``), a leading ``/`` anchors it, ``**``
spans folders, a matching folder matches everything inside it, ``!`` re-includes, and a
file inside an excluded folder cannot be re-included. Letters match in either case
(``DEEP/CODE.PY`` matches ``deep/code.py``) and ``{a,b}`` alternatives are expanded
(``*.{py,ts}``). A ``./`` prefix matches nothing.

Every glob is matched segment by segment without backtracking: each segment through
:func:`fnmatch.translate` (atomic groups, linear), ``**`` by a table over the path's
segments, so ``**/**/…/*.zz`` or ``*a*a*a…b`` cost at most (pattern segments x path
segments) steps. Brace expansion stops at :data:`MAX_PATTERNS` patterns a rule; what
goes past is named in :attr:`RuleGlobs.problems`, never silently dropped.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_PATTERNS = 256  # patterns a rule may expand to (braces included)
MAX_GLOB_CHARS = 1024

Segment = Callable[[str], bool] | None  # None: ``**``
_ESCAPED = {"*": "[*]", "?": "[?]", "[": "[[]"}  # ``\x``: the character itself


@dataclass(frozen=True, slots=True)
class _Pattern:
    segments: tuple[Segment, ...]
    negated: bool
    dir_only: bool


@dataclass(frozen=True, slots=True)
class RuleGlobs:
    """One rule's compiled globs; ``problems`` says what could not be used, and why."""

    patterns: tuple[_Pattern, ...]
    problems: tuple[str, ...] = ()

    def matches(self, relative: str, *, is_dir: bool = False) -> bool:
        """Whether ``relative`` (``/``-separated, inside the base folder) is matched."""
        parts = [p for p in relative.lower().split("/") if p]
        count = len(parts)
        if not count or not self.patterns:
            return False
        reaches = [_reach(pattern.segments, parts) for pattern in self.patterns]
        for end in range(1, count + 1):  # a matched folder takes everything inside it
            as_dir = end < count or is_dir
            matched = False
            for pattern, reach in zip(self.patterns, reaches, strict=True):
                if pattern.negated != matched:
                    continue  # only a negation can undo a match, only a glob can make one
                if reach[end] and (as_dir or not pattern.dir_only):
                    matched = not pattern.negated
            if matched:
                return True
        return False


def compile_globs(globs: Sequence[str]) -> RuleGlobs:
    """Compile a rule's globs (already split and trimmed, trailing ``/**`` removed)."""
    patterns: list[_Pattern] = []
    problems: list[str] = []
    for glob in globs:
        if len(glob) > MAX_GLOB_CHARS:
            problems.append(f"glob of {len(glob)} characters is longer than {MAX_GLOB_CHARS}: not matched")
            continue
        expanded = _expand(glob, MAX_PATTERNS - len(patterns) + 1)
        if len(patterns) + len(expanded) > MAX_PATTERNS:
            problems.append(f"glob {glob[:80]!r} expands past {MAX_PATTERNS} patterns: not matched")
            continue
        patterns += [p for p in map(_compile, expanded) if p is not None]
    return RuleGlobs(tuple(patterns), tuple(problems))


def _compile(glob: str) -> _Pattern | None:
    text = glob.strip()
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    if not text or text.startswith("#") or text.startswith("./"):
        return None
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    text = text.lstrip("/")
    if not text:
        return None
    pieces = [p for p in text.lower().split("/") if p]
    segments: list[Segment] = [] if anchored else [None]
    for piece in pieces:
        if piece == "**":
            if not segments or segments[-1] is not None:  # ``**/**`` is one ``**``
                segments.append(None)
        else:
            segments.append(_segment(piece))
    return _Pattern(tuple(segments), negated, dir_only)


@functools.lru_cache(maxsize=4096)
def _segment(piece: str) -> Callable[[str], bool]:
    if not any(c in piece for c in "*?[\\"):
        return piece.__eq__
    piece = re.sub(r"\\(.)", lambda m: _ESCAPED.get(m.group(1), m.group(1)), piece.replace("[^", "[!"))
    return re.compile(fnmatch.translate(piece)).match  # type: ignore[return-value]


def _reach(segments: tuple[Segment, ...], parts: list[str]) -> list[bool]:
    """For each ``j``, whether the segments match ``parts[:j]`` exactly.

    ``**`` spans zero or more parts (one or more when it ends the pattern); a table over the
    parts, so the cost is (segments x parts) whatever the pattern.
    """
    count = len(parts)
    if None not in segments:  # no ``**``: one part per segment
        reach = [False] * (count + 1)
        size = len(segments)
        if size <= count and all(segment(part) for segment, part in zip(segments, parts, strict=False)):  # type: ignore[misc]
            reach[size] = True
        return reach
    last = len(segments) - 1
    reach = [True] + [False] * count
    for i, segment in enumerate(segments):
        step = [False] * (count + 1)
        if segment is None:
            seen = False
            for j in range(count + 1):
                if i == last:
                    step[j] = seen  # a trailing ``**`` needs something inside
                    seen = seen or reach[j]
                else:
                    seen = seen or reach[j]
                    step[j] = seen
        else:
            for j in range(count):
                if reach[j] and segment(parts[j]):
                    step[j + 1] = True
        reach = step
        if not any(reach):
            break
    return reach


def _expand(glob: str, limit: int) -> list[str]:
    """``{a,b}`` alternatives expanded, nested ones too; stops once past ``limit`` results."""
    start = glob.find("{")
    if start < 0:
        return [glob]
    depth = 0
    commas: list[int] = []
    for index in range(start, len(glob)):
        char = glob[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                if not commas:  # ``{x}`` is literal
                    return [glob[: index + 1] + rest for rest in _expand(glob[index + 1 :], limit)]
                bounds = [start, *commas, index]
                options = [glob[a + 1 : b] for a, b in zip(bounds, bounds[1:], strict=False)]
                out: list[str] = []
                for option in options:
                    for item in _expand(glob[:start] + option + glob[index + 1 :], limit - len(out)):
                        out.append(item)
                        if len(out) > limit:
                            return out
                return out
        elif char == "," and depth == 1:
            commas.append(index)
    return [glob]  # an unclosed brace is literal


def exact_segments(glob: str) -> tuple[Segment, ...]:
    """A ``/``-separated glob's segments, letters in their case (``**/**`` is one ``**``)."""
    segments: list[Segment] = []
    for piece in (p for p in glob.split("/") if p):
        if piece != "**":
            segments.append(_segment(piece))
        elif not segments or segments[-1] is not None:
            segments.append(None)
    return tuple(segments)


def matches_whole(segments: tuple[Segment, ...], parts: list[str]) -> bool:
    """Whether ``segments`` match all of ``parts`` (linear: see :func:`_reach`)."""
    return bool(parts) and _reach(segments, parts)[len(parts)]


def expand_braces(glob: str) -> list[str]:
    """``{a,b}`` alternatives expanded, at most :data:`MAX_PATTERNS` (and one more: the sign of too many)."""
    return _expand(glob, MAX_PATTERNS)
