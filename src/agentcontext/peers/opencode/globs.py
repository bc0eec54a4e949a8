"""The globs of OpenCode's ``instructions`` (node-glob with minimatch, as its binary runs them), beneath a boundary.

``*`` and ``?`` stay within a name, ``[...]`` is a class, ``{a,b}`` alternatives, ``**`` any
number of folders; ``.`` and ``..`` are steps. With ``dot`` a wildcard matches a name starting
with ``.``. Only files match. node-glob promises no order within a folder (OpenCode was seen to
send ``two.md`` before ``one.md`` for ``{one,two}.md``, ``a.md`` before ``b.md`` for ``*.md`` in the
same run): ours is name order, a folder's files before its subfolders' (as it was seen to send
``**`` matches). A step that leaves the boundary is refused, never taken, and said.

A repository writes these patterns, so they are bounded as Claude Code's rule globs are
(:mod:`agentcontext.instructions.globs`): at most ``MAX_GLOB_CHARS`` characters and ``MAX_PATTERNS``
brace alternatives a pattern, each name matched through :func:`fnmatch.translate` (atomic groups,
linear: ``*a*a*a…b`` costs no backtracking), and a pattern past a bound is said, not matched.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

from agentcontext.fs.files import EntryKind, Reader, is_within
from agentcontext.instructions.globs import MAX_GLOB_CHARS, MAX_PATTERNS
from agentcontext.instructions.globs import expand_braces as _bounded_braces

_MAGIC = re.compile(r"[*?\[{]")
_MAX_DIRS = 2000  # folders one pattern may visit


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``abd``, ``acd`` (nested, in order); an unclosed brace, or ``{x}``, stays text. At most
    ``MAX_PATTERNS`` (and one more: the sign of too many)."""
    return _bounded_braces(pattern)


def _segment(segment: str) -> re.Pattern[str]:
    """One name's pattern; its ``{a,b}`` alternatives match in place (the listing's order is kept)."""
    alternatives = (fnmatch.translate(one.replace("[^", "[!")) for one in expand_braces(segment))
    return re.compile("|".join(f"(?:{one})" for one in alternatives))


def _split_braces(pattern: str) -> list[str]:
    """The pattern as whole patterns: only alternatives holding a ``/`` split it (the rest match in place)."""
    if "/" not in "".join(re.findall(r"\{[^{}]*\}", pattern)):
        return [pattern]
    return expand_braces(pattern)


@dataclass
class Matches:
    """What one pattern found: files, and the steps refused for leaving the boundary."""

    files: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    visited: int = 0
    problem: str | None = None  # why the pattern was not matched at all


def glob(reader: Reader, base: str, pattern: str, boundary: str, *, dot: bool) -> Matches:
    """The files ``pattern`` matches below ``base``, each read beneath ``boundary``."""
    found = Matches()
    if len(pattern) > MAX_GLOB_CHARS:
        found.problem = f"a pattern of {len(pattern)} characters is longer than {MAX_GLOB_CHARS}: not matched"
        return found
    if len(expand_braces(pattern)) > MAX_PATTERNS:
        found.problem = f"the pattern's {{a,b}} alternatives come to more than {MAX_PATTERNS}: not matched"
        return found
    for one in _split_braces(pattern):
        segments = [s for s in one.split("/") if s]
        if segments:
            _walk(reader, base, segments, boundary, dot, found)
    found.files = list(dict.fromkeys(found.files))
    return found


def _walk(reader: Reader, directory: str, segments: list[str], boundary: str, dot: bool, found: Matches) -> None:
    found.visited += 1
    if found.visited > _MAX_DIRS:
        return
    segment, rest = segments[0], segments[1:]
    if segment in (".", ".."):
        _step(reader, directory, segment, rest, boundary, dot, found)
        return
    if segment == "**":
        if rest:
            _walk(reader, directory, rest, boundary, dot, found)
        for child in reader.list_dir(directory, boundary=boundary):
            if child.name.startswith(".") and not dot:
                continue
            path = f"{directory}/{child.name}"
            if reader.probe(path, boundary).kind is EntryKind.DIRECTORY:
                _walk(reader, path, segments, boundary, dot, found)
        return
    if _MAGIC.search(segment) is None:
        _take(reader, f"{directory}/{segment}", rest, boundary, dot, found)
        return
    matcher = _segment(segment)
    for child in reader.list_dir(directory, boundary=boundary):
        name = child.name
        if (name.startswith(".") and not dot and not segment.startswith(".")) or not matcher.fullmatch(name):
            continue
        _take(reader, f"{directory}/{name}", rest, boundary, dot, found)


def _take(reader: Reader, path: str, rest: list[str], boundary: str, dot: bool, found: Matches) -> None:
    """A name the segment matched: a folder to go on in, the file it names, or a link out (refused)."""
    kind = reader.probe(path, boundary).kind
    if rest and kind is EntryKind.DIRECTORY:
        _walk(reader, path, rest, boundary, dot, found)
    elif not rest and kind is EntryKind.FILE:
        found.files.append(path)
    elif kind is EntryKind.ESCAPE:  # a link out of the boundary: said, never followed
        found.refused.append(path)


def _step(
    reader: Reader, directory: str, segment: str, rest: list[str], boundary: str, dot: bool, found: Matches
) -> None:
    """``.`` or ``..``: taken while it stays beneath the boundary, refused (and said) when it leaves."""
    step = os.path.normpath(os.path.join(directory, segment))
    if not is_within(step, boundary):
        found.refused.append(os.path.normpath(os.path.join(step, *rest)) if rest else step)
    elif rest:
        _walk(reader, step, rest, boundary, dot, found)
