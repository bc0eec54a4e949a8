"""Reaching paths beneath a root without the kernel following a symlink at any component.

Checking a path (``realpath``, ``lstat``) and then opening it by name is a race: a file or
a directory component swapped for a symlink in between sends the open anywhere. A
:class:`Walker` instead walks a path one component at a time with
``openat(O_NOFOLLOW | O_DIRECTORY)`` from descriptors of directories reached the same way,
looks at the last component with ``fstatat`` without following it, and opens it with
``O_NOFOLLOW | O_NONBLOCK`` from its directory's descriptor; what was opened is checked
with ``fstat`` (a regular file, and the inode the caller saw, when it saw one).

A symlink met on the way is resolved here, never by the kernel: its target (``realpath``
of that one link, a hint only) must lie inside the root, and the walk starts again from
the root along the target, at most ``MAX_HOPS`` times. So the rule "a link is followed
while its target stays inside the boundary" holds, and a swap at any moment can only make
a walk fail or reach another file beneath the root, never one outside it.

Directory descriptors are ``O_PATH`` (search permission suffices, as for a kernel walk)
and cached by real path: each was reached from ``/`` without following a link, along a
path inside a root the caller trusts. The cache is bounded and emptied only between
operations, so a descriptor in use is never closed under a walk. A walker belongs to one
thread (a scan pass, a request).

Every descriptor opened to read (a file's bytes, a directory's entries) is announced as the
audit event ``agentcontext.open`` (PEP 578) with the descriptor, so a test harness can see
where reads land.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import weakref
from typing import NamedTuple

MAX_HOPS = 40  # the kernel's own limit on symlinks in one resolution
AUDIT_EVENT = "agentcontext.open"
_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # O_PATH is Linux's; elsewhere search needs read permission
DIR_FLAGS = _PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1 << 20


class EscapeError(OSError):
    """A symlink on the way leads outside the root."""

    def __init__(self, target: str, root: str) -> None:
        super().__init__(errno.EXDEV, f'symlink target "{target}" escapes "{root}"')
        self.target, self.root = target, root


class BrokenLinkError(OSError):
    """A symlink on the way cannot be resolved: dangling, looping or unreadable."""


class Found(NamedTuple):  # built per probed path: a NamedTuple is cheap
    """Where a path led: its real path (no symlink in it when walked) and what is there."""

    real: str
    st: os.stat_result  # never a symlink
    first: os.stat_result  # the last component as first met: the link itself when it was one
    linked: bool  # a symlink was followed on the way


class ListedEntry(NamedTuple):  # immutable, built per directory entry
    name: str
    is_dir: bool  # a real directory (not a symlink)
    is_symlink: bool
    is_file: bool = False  # a regular file (not a symlink, FIFO, socket or device), as the listing says


_new_listed = tuple.__new__  # a ListedEntry from all its fields, without the Python-level __new__ (half the cost)


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` equals ``root`` or lies under it (both absolute and normalised)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def realpath(path: str) -> str:
    """``os.path.realpath``, which can raise while a component changes (a link becoming a
    folder between its ``lstat`` and ``readlink``): then a retry, then the path itself, which
    a walk then refuses at the component that is still a link."""
    for _ in range(3):
        try:
            return os.path.realpath(path)
        except OSError:
            continue
    return os.path.abspath(path)


def _child(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent != "/" else f"/{name}"


def _parts(text: str) -> list[str]:
    return [p for p in text.split("/") if p and p != "."]


def _close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        with contextlib.suppress(OSError):  # already closed: nothing to release
            os.close(fd)
    fds.clear()


def read_at_most(fd: int, limit: int, size: int = -1) -> bytes:
    """At most ``limit`` bytes from ``fd``; one ``read`` when ``size`` (from ``fstat``) is still true."""
    first = min(limit, size + 1 if size >= 0 else _CHUNK)  # size + 1: no buffer larger than the file
    data = os.read(fd, first)
    if len(data) >= limit or 0 <= size <= len(data) or not data:
        return data
    chunks = [data]
    remaining = limit - len(data)
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class Walker:
    """Resolves, opens and lists paths beneath trusted roots; see the module docstring."""

    def __init__(self, limit: int = 64) -> None:
        self.fds: dict[str, int] = {}  # real directory path -> O_PATH descriptor
        self.limit = limit
        self._finalizer = weakref.finalize(self, _close_all, self.fds)

    def close(self) -> None:
        """Close every cached descriptor (the walker stays usable)."""
        _close_all(self.fds)

    def __enter__(self) -> Walker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def trim(self) -> None:
        """Keep the cache bounded; called only between operations, never under a walk.

        The oldest half stays: directories are cached parents first, so those are the
        ancestors most walks start from; the newer ones are mostly leaves done with.
        """
        fds = self.fds
        if len(fds) > self.limit:
            for real in list(fds)[self.limit // 2 :]:
                os.close(fds.pop(real))

    def dir_fd(self, real: str) -> int:
        """The descriptor of the directory at ``real``, a real path inside a trusted root.

        Raises:
            OSError: a component is missing, not a directory, or a symlink (``ENOTDIR``).
        """
        fd = self.fds.get(real)
        if fd is None:
            if real == "/":
                fd = os.open("/", _PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            else:
                parent, _, name = real.rpartition("/")
                if name in ("", ".", ".."):
                    raise OSError(errno.EINVAL, f"not a normalised path: {real}")
                fd = os.open(name, DIR_FLAGS, dir_fd=self.dir_fd(parent or "/"))
            self.fds[real] = fd
        return fd

    def resolve(self, path: str, root: str, real_root: str) -> Found:
        """Where ``path`` leads, walked from ``real_root`` (the real form of ``root``).

        ``path`` lies inside ``root`` as written; otherwise its ``realpath`` is used as a hint
        and must lie inside ``real_root``.

        Raises:
            EscapeError: a symlink on the way (or the hint) leads outside the root.
            BrokenLinkError: a symlink on the way cannot be resolved.
            OSError: a component is missing, not a directory, or cannot be searched.
        """
        self.trim()
        if is_within(path, root):
            parts = _parts(path[len(root) :])
        else:
            hint = realpath(path)
            if not is_within(hint, real_root):
                raise EscapeError(hint, real_root)
            parts = _parts(hint[len(real_root) :])
        return self.walk(real_root, parts)

    def walk(self, root: str, parts: list[str]) -> Found:
        """Follow ``parts`` from the real directory ``root``; see :meth:`resolve`."""
        cur, i, hops, linked = root, 0, 0, False
        first: os.stat_result | None = None
        while True:
            if i == len(parts):  # the root itself (a directory or a file), or a walk that ended with ".."
                st = self._lstat(cur)
                return Found(cur, st, first or st, linked)
            name = parts[i]
            if name == "..":
                if cur == root:
                    raise EscapeError(os.path.normpath(_child(cur, "/".join(parts[i:]))), root)
                cur = cur.rpartition("/")[0] or "/"
                i += 1
                continue
            dfd = self.dir_fd(cur)
            child = _child(cur, name)
            if i + 1 < len(parts):
                if child in self.fds:
                    cur, i = child, i + 1
                    continue
                try:
                    self.fds[child] = os.open(name, DIR_FLAGS, dir_fd=dfd)
                    cur, i = child, i + 1
                    continue
                except NotADirectoryError:  # a file, or a symlink (O_NOFOLLOW)
                    if not stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                        raise
            else:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if first is None:
                    first = st
                if not stat.S_ISLNK(st.st_mode):
                    return Found(child, st, first, linked)
            hops += 1
            parts = self._through_link(child, root, parts[i + 1 :], hops)
            cur, i, linked = root, 0, True

    def _lstat(self, real: str) -> os.stat_result:
        """What is at the real path ``real``, looked up from its parent's descriptor."""
        if real == "/":
            return os.stat("/")
        parent, _, name = real.rpartition("/")
        st = os.stat(name, dir_fd=self.dir_fd(parent or "/"), follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):  # a real path has no link in it: this one changed under us
            raise BrokenLinkError(errno.ELOOP, "a symlink appeared where a real path was")
        return st

    @staticmethod
    def _through_link(link: str, root: str, rest: list[str], hops: int) -> list[str]:
        """The components, from ``root``, of the link's target followed by ``rest``."""
        if hops > MAX_HOPS:
            raise BrokenLinkError(errno.ELOOP, os.strerror(errno.ELOOP))
        try:
            target = os.path.realpath(link, strict=True)
        except OSError as exc:
            raise BrokenLinkError(exc.errno, exc.strerror) from None
        if not is_within(target, root):
            raise EscapeError(os.path.normpath(os.path.join(target, *rest)), root)
        return _parts(target[len(root) :]) + rest

    def open_file(self, real: str, expect: tuple[int, int] | None = None) -> tuple[int, os.stat_result]:
        """Open the regular file at ``real`` (a path this walker found) for reading.

        Raises:
            OSError: ``ESTALE`` when it is not a regular file or not the inode ``expect``
                names; ``ELOOP`` when it became a symlink; others from the open.
        """
        parent, _, name = real.rpartition("/")
        dfd = self.fds.get(parent)
        fd = os.open(name, FILE_FLAGS, dir_fd=self.dir_fd(parent or "/") if dfd is None else dfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (expect is not None and (st.st_ino, st.st_dev) != expect):
                raise OSError(errno.ESTALE, "file changed while it was being read")
        except BaseException:
            os.close(fd)
            raise
        sys.audit(AUDIT_EVENT, fd)
        return fd, st

    def read(self, found: Found, limit: int) -> bytes:
        """At most ``limit`` bytes of the regular file ``found`` names (the same inode).

        Raises:
            OSError: as :meth:`open_file`, or from the read.
        """
        fd, st = self.open_file(found.real, (found.st.st_ino, found.st.st_dev))
        try:
            return read_at_most(fd, limit, st.st_size)
        finally:
            os.close(fd)

    def entries(self, real: str) -> list[ListedEntry]:
        """The entries of the directory at ``real`` (a path this walker found), unsorted.

        Raises:
            OSError: it cannot be opened or listed.
        """
        fd = os.open(".", _LIST_FLAGS, dir_fd=self.dir_fd(real))
        try:
            sys.audit(AUDIT_EVENT, fd)
            entries: list[ListedEntry] = []
            with os.scandir(fd) as it:
                for item in it:
                    try:
                        is_link = item.is_symlink()
                        is_dir = not is_link and item.is_dir(follow_symlinks=False)
                        is_file = not is_link and not is_dir and item.is_file(follow_symlinks=False)
                    except OSError:
                        continue
                    entries.append(_new_listed(ListedEntry, (item.name, is_dir, is_link, is_file)))
            return entries
        finally:
            os.close(fd)
