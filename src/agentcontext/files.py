"""Safe, bounded and cached access to the filesystem.

Every byte the engine reads goes through :class:`Reader`, which enforces three rules:

* a path is classified with ``lstat`` before it is opened, so FIFOs, sockets and
  devices are never opened (an open of a FIFO would hang the scan);
* a symlink is followed only when its target stays inside the boundary the caller
  names (the scan root it was found in); the target is opened with ``O_NOFOLLOW``
  and checked with ``fstat`` so a swap between the check and the read is refused;
* reads are bounded: at most the bytes the caller asks for, never the whole file.

Results are cached by path and ``(mtime_ns, size, inode, device, mode)``, so a rescan
of an unchanged tree costs about one ``stat`` per file. Files changed in the last two
seconds are never trusted to the cache, because two writes within one timestamp tick
can leave the same key behind (git's "racy clean" problem).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from enum import Enum
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

StatKey = tuple[int, int, int, int, int]

RACY_SECONDS = 2.0
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Kind(Enum):
    FILE = "file"
    DIRECTORY = "directory"
    SPECIAL = "special"  # FIFO, socket, device
    MISSING = "missing"
    ESCAPE = "escape"  # a symlink whose target leaves the boundary
    BROKEN = "broken"  # a dangling or looping symlink
    ERROR = "error"  # stat failed for another reason (permissions)


class Entry(NamedTuple):  # an immutable value, built per file: a NamedTuple is 3x cheaper than a frozen dataclass
    """One classified path. ``real_path`` is the symlink-resolved target to open."""

    path: str
    kind: Kind
    real_path: str = ""
    size: int = 0
    key: StatKey | None = None
    is_link: bool = False
    error: str | None = None
    special: str = ""  # what kind of special file, for messages

    @property
    def is_file(self) -> bool:
        return self.kind is Kind.FILE

    @property
    def is_dir(self) -> bool:
        return self.kind is Kind.DIRECTORY


class ListedEntry(NamedTuple):  # immutable, built per directory entry
    name: str
    is_dir: bool  # a real directory (not a symlink)
    is_symlink: bool


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode)


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` equals ``root`` or lies under it (both absolute and normalised)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def _describe_special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _os_error(exc: OSError) -> str:
    return exc.strerror or str(exc)


class Reader:
    """Classifies, lists and reads paths; remembers what it saw for cheap rescans."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], tuple[StatKey, Any]] = {}
        self._listings: dict[str, tuple[StatKey, tuple[ListedEntry, ...]]] = {}
        self._real_roots: dict[str, str] = {}
        # (path, key, followed): every stat this pass depended on, for the unchanged-tree check
        self.observed: list[tuple[str, StatKey | None, bool]] = []
        self.misses = 0
        self._now = time.time()

    def begin(self) -> None:
        """Start a new pass: forget what the last pass observed, keep the cache."""
        self.observed = []
        self.misses = 0
        self._now = time.time()
        self._real_roots = {}

    def _fresh(self, key: StatKey) -> bool:
        return self._now - key[0] / 1e9 >= RACY_SECONDS

    def real_root(self, root: str) -> str:
        """The symlink-resolved form of a boundary, computed once per pass."""
        real = self._real_roots.get(root)
        if real is None:
            real = os.path.realpath(root)
            self._real_roots[root] = real
        return real

    def probe(self, path: str, boundary: str) -> Entry:
        """Classify ``path``; symlinks are resolved and must stay inside ``boundary``."""
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            self.observed.append((path, None, False))
            return Entry(path, Kind.MISSING)
        except OSError as exc:
            self.observed.append((path, None, False))
            return Entry(path, Kind.ERROR, error=_os_error(exc))
        key = stat_key(st)
        self.observed.append((path, key, False))
        if not stat.S_ISLNK(st.st_mode):
            return self._classify(path, path, st, key, is_link=False)
        return self._probe_link(path, boundary)

    def _probe_link(self, path: str, boundary: str) -> Entry:
        try:
            target = os.path.realpath(path, strict=True)
        except OSError as exc:
            return Entry(path, Kind.BROKEN, is_link=True, error=f"symlink resolve: {_os_error(exc)}")
        root = self.real_root(boundary)
        if not is_within(target, root):
            return Entry(
                path,
                Kind.ESCAPE,
                real_path=target,
                is_link=True,
                error=f'symlink target "{target}" escapes scan root "{root}"',
            )
        try:
            st = os.stat(target)
        except OSError as exc:
            return Entry(path, Kind.BROKEN, real_path=target, is_link=True, error=_os_error(exc))
        key = stat_key(st)
        self.observed.append((target, key, True))
        return self._classify(path, target, st, key, is_link=True)

    @staticmethod
    def _classify(path: str, real: str, st: os.stat_result, key: StatKey, *, is_link: bool) -> Entry:
        if stat.S_ISREG(st.st_mode):
            return Entry(path, Kind.FILE, real, st.st_size, key, is_link)
        if stat.S_ISDIR(st.st_mode):
            return Entry(path, Kind.DIRECTORY, real, 0, key, is_link)
        return Entry(path, Kind.SPECIAL, real, 0, key, is_link, special=_describe_special(st.st_mode))

    def read(self, entry: Entry, limit: int) -> bytes:
        """Read at most ``limit`` bytes of a probed regular file.

        Raises:
            OSError: the file vanished, became something else, or cannot be read.
        """
        fd = os.open(entry.real_path, _OPEN_FLAGS)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_ino, st.st_dev) != (entry.key or (0, 0, 0, 0))[2:4]:
                raise OSError(errno.ESTALE, "file changed while it was being read")
            data = os.read(fd, limit)
            if len(data) >= limit or len(data) >= st.st_size:
                return data  # the common case: one read
            chunks = [data]
            remaining = limit - len(data)
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def observe(self, path: str) -> None:
        """Record that the pass depended on whether ``path`` exists (a root marker, say)."""
        try:
            self.observed.append((path, stat_key(os.lstat(path)), False))
        except OSError:
            self.observed.append((path, None, False))

    def unchanged(self, observed: list[tuple[str, StatKey | None, bool]]) -> bool:
        """Whether every stat of this reader's last pass would come out the same now (and none is racy).

        Racy means younger than ``RACY_SECONDS`` when the pass began: a second write in the
        same timestamp tick could have left that key behind, however old it looks now.
        """
        racy_after = int((self._now - RACY_SECONDS) * 1e9)
        lstat, follow_stat = os.lstat, os.stat
        for path, key, followed in observed:
            try:
                st = follow_stat(path) if followed else lstat(path)
            except OSError:
                if key is not None:
                    return False
                continue
            if key is None or key[0] > racy_after:
                return False
            if (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode) != key:
                return False
        return True

    def cached(self, entry: Entry, tag: str, compute: Callable[[], T]) -> T:
        """Return ``compute()`` for this file version, reusing an earlier result when unchanged."""
        key = entry.key
        slot = (entry.real_path or entry.path, tag)
        if key is not None:
            hit = self._values.get(slot)
            if hit is not None and hit[0] == key and self._fresh(key):
                value: T = hit[1]
                return value
        self.misses += 1
        value = compute()
        if key is not None and self._fresh(key):  # a young key may yet hide a second write
            self._values[slot] = (key, value)
        return value

    def list_dir(self, path: str, *, strict: bool = False) -> tuple[ListedEntry, ...]:
        """The entries of a directory, sorted by name; empty when it does not exist.

        Raises:
            OSError: with ``strict``, when the directory exists but cannot be listed.
        """
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self.observed.append((path, None, True))
            return ()
        key = stat_key(st)
        self.observed.append((path, key, True))
        if not stat.S_ISDIR(st.st_mode):
            return ()
        hit = self._listings.get(path)
        if hit is not None and hit[0] == key and self._fresh(key):
            return hit[1]
        self.misses += 1
        entries: list[ListedEntry] = []
        try:
            with os.scandir(path) as it:
                for item in it:
                    try:
                        is_link = item.is_symlink()
                        is_dir = not is_link and item.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    entries.append(ListedEntry(item.name, is_dir, is_link))
        except OSError:
            if strict:
                raise
            return ()
        listing = tuple(sorted(entries, key=lambda e: e.name))
        if self._fresh(key):
            self._listings[path] = (key, listing)
        return listing
