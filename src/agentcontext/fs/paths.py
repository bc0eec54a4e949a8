"""Where a scan may look: the project root, the chain below it, configured paths.

Project root (Codex): the nearest ancestor of the work dir, the work dir included,
holding any root marker (a file or a directory: ``.git`` may be either). With no
marker anywhere, or with an empty marker list, the work dir alone is the project.

The chain: every directory from the project root down to the work dir, outermost
first; it never goes above the root.

Configured paths (Coder, coder.md 1.6): entries are trimmed; ``~`` and ``~/x`` expand
to the home directory; absolute paths are kept; relative ones are joined to the work
dir; empty entries are dropped.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence

Accept = Callable[[str, os.stat_result], bool]  # whether a marker found at a path makes its folder the root
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def absolute(path: str | os.PathLike[str]) -> str:
    """An absolute, normalised path without resolving symlinks (Codex keeps a symlinked cwd)."""
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def find_project_root(
    work_dir: str,
    markers: Sequence[str],
    seen: list[tuple[str, os.stat_result | None]] | None = None,
    accept: Accept | None = None,
) -> str | None:
    """The nearest ancestor of ``work_dir`` (inclusive) holding a marker, or None.

    ``seen`` receives each marker path looked at with its ``lstat`` (None: missing), in
    order: what the answer was decided on, for a scan to recheck later. ``accept``: a marker
    counts only when it says so (:func:`git_repository`); by default any marker does.
    """
    if not markers:
        return None
    current = work_dir
    while True:
        for marker in markers:
            if not marker:
                continue
            path = os.path.join(current, marker)
            try:
                st: os.stat_result | None = os.lstat(path)
            except (OSError, ValueError):  # missing, not searchable, a NUL: no marker here (as os.path.lexists says)
                st = None
            if seen is not None:
                seen.append((path, st))
            if st is not None and (accept is None or accept(path, st)):
                return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_repository(path: str, st: os.stat_result) -> bool:
    """Whether ``.git`` at ``path`` makes a repository as git tells one (Copilot CLI's rule): a ``.git`` file
    (a worktree's, whatever it says), or a folder holding ``objects/``, ``refs/`` and a ``HEAD`` naming a ref
    or an object id (``HEAD`` alone, or an empty folder, is no repository)."""
    if not stat.S_ISDIR(st.st_mode):
        return True
    if not (os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(os.path.join(path, "refs"))):
        return False
    try:  # a regular file, not followed if a link: 256 bytes are plenty for a ref
        fd = os.open(os.path.join(path, "HEAD"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        head = os.read(fd, 256) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        head = b""
    finally:
        os.close(fd)
    text = head.decode("ascii", "replace").strip()
    if text.startswith("ref:"):
        return text[4:].strip().startswith("refs/")
    return _OBJECT_ID.fullmatch(text) is not None


def chain(project_root: str, work_dir: str) -> tuple[str, ...]:
    """Directories from ``project_root`` down to ``work_dir``, outermost first."""
    dirs = [work_dir]
    current = work_dir
    while current != project_root:
        parent = os.path.dirname(current)
        if parent == current:  # work_dir is not below project_root: search it alone
            return (work_dir,)
        current = parent
        dirs.append(current)
    return tuple(reversed(dirs))


def resolve_configured(entry: str, *, home: str, work_dir: str | None) -> str | None:
    """Resolve one configured path the way Coder resolves ``CODER_AGENT_EXP_*`` entries."""
    entry = entry.strip()
    if not entry:
        return None
    if entry == "~":
        return absolute(home)
    if entry.startswith("~/"):
        return absolute(os.path.join(home, entry[2:]))
    if os.path.isabs(entry):
        return absolute(entry)
    if not work_dir:
        return None
    return absolute(os.path.join(work_dir, entry))


def resolve_all(entries: Iterable[str], *, home: str, work_dir: str | None) -> tuple[str, ...]:
    """Resolve configured paths, dropping empty entries and duplicates (first wins)."""
    seen: dict[str, None] = {}
    for entry in entries:
        resolved = resolve_configured(entry, home=home, work_dir=work_dir)
        if resolved is not None:
            seen.setdefault(resolved, None)
    return tuple(seen)


def boundary_for(path: str, candidates: Sequence[str]) -> str:
    """The outermost candidate boundary containing ``path``, else ``path`` itself.

    A user's skill dir under the home directory may hold symlinks to anywhere in home;
    a dir outside home is its own boundary.
    """
    for candidate in candidates:
        prefix = candidate if candidate.endswith(os.sep) else candidate + os.sep
        if path == candidate or path.startswith(prefix):
            return candidate
    return path
