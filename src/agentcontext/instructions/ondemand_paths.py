"""Where the paths of an on-demand lookup lie, checked before anything under them is read.

:func:`place` decides from the text alone (cached per text by the resolver): a relative
path is joined to the work dir; ``..``, ``~``, NUL, a lone surrogate, a place outside the
work dir and every declared source, or more than ``ondemand.max_depth`` levels below its
base are refused with the reason. :func:`locate` then looks at the path itself (one
``lstat``): a folder stands for its own chain, a file (or a name not there yet) for its
folder's; a link leaving the base is refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentcontext.fs.files import is_within
from agentcontext.instructions.applied import Refused

if TYPE_CHECKING:
    from agentcontext.scan import ScanResult


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    base: str  # the work dir or a declared source holding it
    is_dir: bool
    dirs: tuple[str, ...]  # folders strictly below ``base`` down to the path's folder


@dataclass(frozen=True, slots=True)
class Place:
    """Where a requested path lies, from its text alone (cached per lookup text)."""

    path: str
    base: str
    parents: tuple[str, ...]  # folders strictly below ``base`` down to the path's parent


def place(raw: object, result: ScanResult) -> Place | Refused:
    """Where a requested path lies, or why it is refused (nothing is read to decide it)."""
    layout = result.layout
    shown = raw.encode("utf-8", "backslashreplace").decode() if isinstance(raw, str) else repr(raw)
    if not isinstance(raw, str) or not raw.strip():
        return Refused(shown, "not a path: a non-empty string is needed")
    if "\0" in raw:
        return Refused(shown, "contains a NUL byte")
    try:
        os.fsencode(raw)
    except UnicodeError:  # a lone surrogate: no file system can name it
        return Refused(shown, "not a valid file name (lone surrogate)")
    if raw.startswith("~"):
        return Refused(raw, "~ is not expanded: give a path inside the work dir")
    if ".." in raw.replace("\\", "/").split("/"):
        return Refused(raw, "contains parent traversal segments (..)")
    path = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(layout.work_dir, raw))
    bases = (layout.work_dir, *(r.path for r in layout.source_roots))
    base = next((b for b in bases if is_within(path, b)), None)
    if base is None:
        return Refused(raw, f"outside the work dir {layout.work_dir} and every declared source: never read")
    if path == base:
        return Place(path, base, ())
    parts = path[len(base.rstrip(os.sep)) + 1 :].split(os.sep)[:-1]
    depth = result.config.ondemand.max_depth
    if len(parts) >= depth:
        return Refused(raw, f"{len(parts) + 1} levels below {base}: deeper than {depth} (ondemand.max_depth)")
    parents: list[str] = []
    current = base.rstrip(os.sep)
    for part in parts:
        current = current + os.sep + part
        parents.append(current)
    return Place(path, base, tuple(parents))


def locate(place: Place) -> Target | Refused:
    """The target: a folder (its own chain) or a file (its folder's chain); links must stay inside the base."""
    path, base = place.path, place.base
    try:
        st = os.lstat(path)
    except OSError:
        return Target(path, base, False, place.parents)  # a file about to be written: its folder's chain
    is_dir = stat.S_ISDIR(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        try:
            real = os.path.realpath(path, strict=True)
        except OSError:
            return Target(path, base, False, place.parents)  # a dangling link: its folder's chain
        if not is_within(real, os.path.realpath(base)):
            return Refused(path, f"a symlink leaving {base}: not followed")
        is_dir = os.path.isdir(real)
    if is_dir and path != base:
        return Target(path, base, True, (*place.parents, path))
    return Target(path, base, is_dir, place.parents)
