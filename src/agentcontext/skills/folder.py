"""A skill's folder, reached beneath the boundary its scan used; every file of it is read through it.

A skill folder sits in a repository, which is hostile: between the scan and a read, any
component of its path, or any file in it, may become a symlink to somewhere else. So the
folder is walked from the scan's boundary (the project root, the home directory, the
plugin cache, a source) with :class:`~agentcontext.fs.beneath.Walker`, and each file, listing
and digest is walked from the folder's own descriptor: a link is followed only while its
target stays inside the folder (as the scan follows one only inside its boundary), and
what is read is the regular file that walk found, checked by inode. A file or folder
swapped for a link that leaves is refused (``path escapes the skill directory``).

Listings skip hidden names, links that leave the folder and anything that is not a regular
file or a directory; a folder reached twice (a link cycle) is listed once.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from agentcontext.errors import UnsafePathError
from agentcontext.fs.beneath import EscapeError, Found, Walker, read_at_most, realpath
from agentcontext.fs.textdecode import decode_file

_DIGEST_CHUNK = 1 << 20


class LeavesFolderError(UnsafePathError):
    """The file (or the folder itself) now leads outside where it may be read."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill package, for listings and SEP-2640 digests."""

    path: str  # relative, with "/" separators
    size: int
    absolute: str  # the folder's path as given, joined with ``path`` (for messages; never opened)
    executable: bool = False


class SkillFolder:
    """An open skill folder; use :func:`open_folder`."""

    def __init__(self, path: str, real: str, walker: Walker) -> None:
        self.path = path  # as the snapshot names it
        self.real = real  # where the walk found it
        self._walker = walker

    def find(self, parts: Sequence[str]) -> Found:
        """Where ``parts`` (a relative path, split) leads inside the folder.

        Raises:
            LeavesFolderError: a symlink on the way leaves the folder.
            OSError: it does not exist or cannot be looked at.
        """
        try:
            return self._walker.walk(self.real, list(parts))
        except EscapeError:
            raise LeavesFolderError("path escapes the skill directory") from None

    def read(self, parts: Sequence[str], limit: int) -> bytes:
        """At most ``limit`` bytes of the regular file ``parts`` names.

        Raises:
            UnsafePathError: a symlink on the way leaves the folder.
            IsADirectoryError: it is a directory, a FIFO, a device or a socket.
            OSError: it cannot be read, or changed while it was opened.
        """
        found = self.find(parts)
        if not stat.S_ISREG(found.st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        return self._walker.read(found, limit)

    def read_text(self, parts: Sequence[str], limit: int) -> tuple[str, bool]:
        """A file's text (lossy UTF-8, LF line ends) and whether it was cut at ``limit`` bytes.

        Raises:
            UnsafePathError: it leaves the folder, or is binary.
            OSError: as :meth:`read`.
        """
        raw = self.read(parts, limit + 1)
        text, _ = decode_file(raw[:limit])
        if text is None:
            raise UnsafePathError("binary file: it cannot be shown as text")
        return text, len(raw) > limit

    def digest(self, parts: Sequence[str]) -> str:
        """``sha256:<hex>`` of the whole regular file ``parts`` names.

        Raises:
            UnsafePathError, OSError: as :meth:`read`.
        """
        found = self.find(parts)
        if not stat.S_ISREG(found.st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        fd, _ = self._walker.open_file(found.real, (found.st.st_ino, found.st.st_dev))
        try:
            digest = hashlib.sha256()
            while chunk := read_at_most(fd, _DIGEST_CHUNK):
                digest.update(chunk)
        finally:
            os.close(fd)
        return "sha256:" + digest.hexdigest()

    def listing(self, meta_file: str) -> list[str]:
        """Coder's supporting-file list: one level, the meta file left out, folders with a trailing ``/``."""
        try:
            entries = self._walker.entries(self.real)
        except OSError:
            return []
        out: list[str] = []
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name == meta_file:
                continue
            is_dir = entry.is_dir
            if entry.is_symlink:
                try:
                    is_dir = stat.S_ISDIR(self.find([entry.name]).st.st_mode)
                except (OSError, UnsafePathError):
                    is_dir = False
            out.append(entry.name + ("/" if is_dir else ""))
        return out

    def files(self, *, limit: int | None = None, meta_file: str = "SKILL.md") -> tuple[list[SkillFile], int]:
        """Regular files below the folder (by path), without hidden names or links out.

        Returns the files (at most ``limit``, the top-level meta file left out) and how many
        more there were.
        """
        found: list[SkillFile] = []
        stack: list[tuple[str, str]] = [(self.real, "")]
        seen = {self.real}
        while stack:
            directory, prefix = stack.pop()
            try:
                entries = self._walker.entries(directory)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                relative = f"{prefix}{entry.name}"
                where = self._look(directory, entry.name, entry.is_symlink)
                if where is None:
                    continue
                real, st = where
                if stat.S_ISDIR(st.st_mode):
                    if real not in seen:
                        seen.add(real)
                        stack.append((real, relative + "/"))
                    continue
                if stat.S_ISREG(st.st_mode) and relative != meta_file:
                    executable = bool(st.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
                    found.append(SkillFile(relative, st.st_size, f"{self.path}/{relative}", executable))
        found.sort(key=lambda f: f.path)
        more = 0
        if limit is not None and len(found) > limit:
            more = len(found) - limit
            del found[limit:]
        return found, more

    def _look(self, directory: str, name: str, is_link: bool) -> tuple[str, os.stat_result] | None:
        """The real path and status of one listed entry; None for a link that leaves or breaks."""
        try:
            if is_link:
                inside = directory[len(self.real) :].split("/")
                where = self.find([*(p for p in inside if p), name])
                return where.real, where.st
            return f"{directory}/{name}", os.stat(name, dir_fd=self._walker.dir_fd(directory), follow_symlinks=False)
        except (OSError, UnsafePathError):
            return None


@contextmanager
def open_folder(folder: str, boundary: str | None) -> Iterator[SkillFolder]:
    """The skill folder ``folder``, walked from ``boundary`` (the root its scan used).

    Raises:
        LeavesFolderError: no boundary is known for it, or it now leads outside the boundary.
        OSError: it is missing or not a directory.
    """
    if boundary is None:
        raise LeavesFolderError("the skill folder is outside every root the scan used")
    with Walker(limit=64) as walker:
        try:
            found = walker.resolve(folder, boundary, realpath(boundary))
        except EscapeError:
            raise LeavesFolderError("the skill folder now leads outside its root") from None
        if not stat.S_ISDIR(found.st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "the skill folder is not a directory")
        yield SkillFolder(folder, found.real, walker)
