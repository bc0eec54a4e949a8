"""Safe, bounded and cached access to the filesystem.

Every byte the scan reads goes through :class:`Reader`, which enforces three rules:

* a path is classified before it is opened (``fstatat`` without following it), so FIFOs,
  sockets and devices are never opened (an open of a FIFO would hang the scan);
* a path is walked from its boundary (the scan root it was found in) by a
  :class:`~agentcontext.fs.beneath.Walker`: no component is followed by the kernel, a symlink
  is followed only when its target stays inside the boundary, and the file is opened with
  ``O_NOFOLLOW`` from its directory's descriptor and checked with ``fstat`` to be the inode
  the probe saw, so a file or directory swapped for a link at any moment is refused;
* reads are bounded: at most the bytes the caller asks for, never the whole file.

Results are cached by path and ``(mtime_ns, size, inode, device, mode)``, so a rescan
of an unchanged tree costs about one ``stat`` per file. Files changed in the last two
seconds are never trusted to the cache, because two writes within one timestamp tick
can leave the same key behind (git's "racy clean" problem). Directory descriptors are
held for one pass: :meth:`Reader.release` closes them.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Sequence
from enum import Enum
from operator import itemgetter
from stat import S_ISDIR, S_ISLNK, S_ISREG
from sys import audit
from typing import Any, NamedTuple, TypeVar

from agentcontext.fs.beneath import (
    AUDIT_EVENT,
    DIR_FLAGS,
    FILE_FLAGS,
    BrokenLinkError,
    EscapeError,
    Found,
    ListedEntry,
    Walker,
    is_within,
    read_at_most,
    realpath,
)

__all__ = ["Entry", "EntryKind", "ListedEntry", "Names", "Reader", "StatKey", "is_within", "stat_key"]

T = TypeVar("T")

StatKey = tuple[int, int, int, int, int]

RACY_SECONDS = 2.0
_CHANGED = "file changed while it was being read"


class EntryKind(Enum):
    FILE = "file"
    DIRECTORY = "directory"
    SPECIAL = "special"  # FIFO, socket, device
    MISSING = "missing"
    ESCAPE = "escape"  # a symlink whose target leaves the boundary
    BROKEN = "broken"  # a dangling or looping symlink
    ERROR = "error"  # stat failed for another reason (permissions)


class Entry(NamedTuple):  # an immutable value, built per file: a NamedTuple is 3x cheaper than a frozen dataclass
    """One classified path. ``real_path`` is where it really is: the file a read opens."""

    path: str
    kind: EntryKind
    real_path: str = ""
    size: int = 0
    key: StatKey | None = None
    is_link: bool = False  # the path itself is a symlink
    error: str | None = None
    special: str = ""  # what kind of special file, for messages

    @property
    def is_file(self) -> bool:
        return self.kind is _FILE

    @property
    def is_dir(self) -> bool:
        return self.kind is _DIRECTORY


# Enum members read in the hot paths, bound once: a class attribute of an enum costs about
# 0.2 us on Python 3.11 (its metaclass defines __getattr__), a module global a few ns.
_FILE, _DIRECTORY, _MISSING = EntryKind.FILE, EntryKind.DIRECTORY, EntryKind.MISSING
_BY_NAME = itemgetter(0)  # a ListedEntry's name
_new_entry = tuple.__new__  # an Entry from all its fields, without the Python-level __new__ (a fifth of the cost)


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode)


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


def _read_or_error(dfd: int, name: str, key: StatKey, limit: int) -> bytes | OSError:
    """:func:`_read_in`, its error as the value (a skill's build says why it could not be read)."""
    try:
        return _read_in(dfd, name, key, limit)
    except OSError as exc:
        return exc


def _read_in(dfd: int, name: str, key: StatKey, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``name`` in ``dfd``, the inode ``key`` saw.

    Walker.open_file's steps, inlined: this runs once per file of every scan.
    """
    fd = os.open(name, FILE_FLAGS, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode) or st.st_ino != key[2] or st.st_dev != key[3]:
            raise OSError(errno.ESTALE, _CHANGED)
        audit(AUDIT_EVENT, fd)
        return _read_sized(fd, st.st_size, limit)
    finally:
        os.close(fd)


def _read_sized(fd: int, size: int, limit: int) -> bytes:
    """At most ``limit`` bytes of the open file ``fd``, which ``fstat`` said holds ``size``."""
    data = os.read(fd, limit if size >= limit else size + 1)  # one read, no buffer larger than the file
    if len(data) >= limit or len(data) >= size:
        return data
    return data + read_at_most(fd, limit - len(data))  # it grew since the fstat


def _answered(path: str, names: dict[str, Names], missing: set[str]) -> bool:
    """Whether a missing folder above ``path``, or the nearest listed one lacking its next component,
    shows ``path`` missing."""
    head, _, name = path.rpartition("/")
    while head:
        if head in missing:
            return True
        held = names.get(head)
        if held is not None:
            return name not in held.all
        head, _, name = head.rpartition("/")
    return False


class Names(NamedTuple):
    """A folder's entries by name, as one listing showed them."""

    all: frozenset[str]
    files: frozenset[str]  # the regular files among them (no link, FIFO, socket or device)


class _Root(NamedTuple):
    real: str  # the boundary's real path
    prefix: str  # ``real`` with a trailing separator
    aliased: bool  # the boundary as written is not its real path


class Reader:
    """Classifies, lists and reads paths; remembers what it saw for cheap rescans."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], tuple[StatKey, Any]] = {}
        # path -> (its key, entries sorted by name, their names, entries in the folder's own order)
        self._listings: dict[str, tuple[StatKey, tuple[ListedEntry, ...], Names, tuple[ListedEntry, ...]]] = {}
        self._roots: dict[str, _Root] = {}
        self._reals: dict[str, str] = {}  # realpath of the folders met this pass, built one component at a time
        # The names of the folders listed this pass that were quiet (unchanged since two seconds before it
        # began), by real path: a name such a folder lacks stays missing while the folder's stat is unchanged.
        self._names: dict[str, Names] = {}
        self._walker = Walker()
        self._fds = self._walker.fds  # the directories open in this pass, by real path
        self._limit = self._walker.limit
        self._probed = ("", "", "")  # (real path, its folder, its name) of the last probe's file
        # (path, key, followed): every stat this pass depended on, for the unchanged-tree check
        self.observed: list[tuple[str, StatKey | None, bool]] = []
        self.misses = 0
        self._now = time.time()

    def begin(self) -> None:
        """Start a new pass: forget what the last pass observed, keep the cache."""
        self.observed = []
        self.misses = 0
        self._now = time.time()
        self._roots = {}
        self._reals = {}
        self._names = {}
        self._walker.close()

    def release(self) -> None:
        """Close the directory descriptors the pass holds (reading again reopens them); forget its listings."""
        self._walker.close()
        self._names = {}

    def _fresh(self, key: StatKey) -> bool:
        return self._now - key[0] / 1e9 >= RACY_SECONDS

    def _root(self, boundary: str) -> _Root:
        root = self._roots.get(boundary)  # about one boundary per root: a dict lookup per probe
        if root is None:
            real = self._real(boundary)
            root = _Root(real, real if real.endswith(os.sep) else real + os.sep, real != boundary)
            self._roots[boundary] = root
        return root

    def _real(self, path: str) -> str:
        """``realpath(path)`` for a normalised absolute path, one ``lstat`` per folder not met yet this pass.

        Boundaries nest (the project, the folders above it, home): each is its parent's real
        path plus one component, which ``realpath`` only resolves further when it is a link.
        """
        real = self._reals.get(path)
        if real is None:
            head, _, leaf = path.rpartition("/")
            if leaf in ("", ".", "..") or not path.startswith("/") or path.count("/") > 256:
                return realpath(path)  # "/", a path not normalised or very deep: the library's way
            base = self._real(head) if head else ""
            real = f"{base}/{leaf}" if base != "/" else f"/{leaf}"
            fd = self._fds.get(base or "/")
            try:  # from the parent's descriptor when it is open: the kernel then looks up one name, not the path
                st = os.lstat(real) if fd is None else os.stat(leaf, dir_fd=fd, follow_symlinks=False)
                linked = S_ISLNK(st.st_mode)
            except (OSError, ValueError):
                linked = False  # missing: realpath keeps the rest as written
            if linked:
                real = realpath(real)
            self._reals[path] = real
        return real

    def real_root(self, root: str) -> str:
        """The symlink-resolved form of a boundary, computed once per pass."""
        return self._root(root).real

    def probe(self, path: str, boundary: str) -> Entry:
        """Classify ``path``; symlinks are resolved and must stay inside ``boundary``."""
        folder, _, name = path.rpartition("/")
        return self.probe_in(folder or "/", name, boundary, path)

    def probe_in(self, folder: str, name: str, boundary: str, path: str | None = None) -> Entry:
        """Classify ``name`` in ``folder`` (a caller that has both saves splitting the path)."""
        if path is None:
            path = f"{folder}/{name}" if folder != "/" else f"/{name}"
        root = self._roots.get(boundary) or self._root(boundary)
        real, prefix, aliased = root
        translated = aliased and is_within(folder, boundary)
        if translated:  # the boundary as written goes through a symlink: look where it leads
            folder = real + folder[len(boundary) :]
        # The hot path of every scan: a path straight below its real boundary, no symlink on the way.
        if (folder.startswith(prefix) or folder == real) and name and name != "..":
            if self._names and self._lacks(folder, name):  # a quiet folder listed this pass answers
                return _new_entry(Entry, (path, _MISSING, "", 0, None, False, None, ""))
            fds = self._fds
            dfd = fds.get(folder)
            try:
                if dfd is None:  # most often a folder just listed: one openat from its parent
                    above, _, leaf = folder.rpartition("/")
                    dfd = fds.get(above)
                    if dfd is None or leaf == ".." or len(fds) >= self._limit:
                        self._walker.trim()
                        dfd = self._walker.dir_fd(folder)
                    else:
                        dfd = fds[folder] = os.open(leaf, DIR_FLAGS, dir_fd=dfd)
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:  # every component was looked up without following a link
                self.observed.append((path, None, False))
                return _new_entry(Entry, (path, _MISSING, "", 0, None, False, None, ""))
            except OSError:  # a symlink on the way (ENOTDIR), or an error the walk will name
                return self._probe_walk(path, boundary, root)
            mode = st.st_mode
            if not S_ISLNK(mode):
                key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, mode)
                self.observed.append((path, key, False))
                located = f"{folder}/{name}" if translated else path
                self._probed = (located, folder, name)  # read() of this entry needs no splitting
                if S_ISREG(mode):
                    return _new_entry(Entry, (path, _FILE, located, st.st_size, key, False, None, ""))
                if S_ISDIR(mode):
                    return _new_entry(Entry, (path, _DIRECTORY, located, 0, key, False, None, ""))
                return self._classify(path, located, st, key, is_link=False)
        return self._probe_walk(path, boundary, root)

    def _lacks(self, folder: str, name: str) -> bool:
        """Whether a quiet folder listed this pass shows ``name`` missing from the real folder ``folder``
        (``folder`` itself missing from its listed parent too): see :meth:`names`."""
        names = self._names
        held = names.get(folder)
        if held is not None:
            return name not in held.all
        above, _, leaf = folder.rpartition("/")
        held = names.get(above)
        return held is not None and leaf not in held.all

    def _probe_walk(self, path: str, boundary: str, root: _Root) -> Entry:
        """Classify ``path`` by walking it from its boundary, resolving symlinks on the way."""
        try:
            found = self._walker.resolve(path, boundary, root.real)
        except EscapeError as exc:
            self.observe(path)
            try:  # the message names the target as realpath sees it, like the kernel would
                target = os.path.realpath(path, strict=True)
            except OSError as err:
                return Entry(path, EntryKind.BROKEN, is_link=True, error=f"symlink resolve: {_os_error(err)}")
            if is_within(target, root.real):
                target = exc.target  # moved since the walk: name what the walk met
            error = f'symlink target "{target}" escapes scan root "{root.real}"'
            return Entry(path, EntryKind.ESCAPE, real_path=target, is_link=True, error=error)
        except BrokenLinkError as exc:
            self.observe(path)
            return Entry(path, EntryKind.BROKEN, is_link=True, error=f"symlink resolve: {_os_error(exc)}")
        except (FileNotFoundError, NotADirectoryError):
            self.observed.append((path, None, False))
            return Entry(path, EntryKind.MISSING)
        except OSError as exc:
            self.observed.append((path, None, False))
            return Entry(path, EntryKind.ERROR, error=_os_error(exc))
        return self._found(path, found)

    def _found(self, path: str, found: Found) -> Entry:
        self.observed.append((path, stat_key(found.first), False))
        key = stat_key(found.st)
        if found.linked:
            self.observed.append((found.real, key, True))
        return self._classify(path, found.real, found.st, key, is_link=stat.S_ISLNK(found.first.st_mode))

    @staticmethod
    def _classify(path: str, real: str, st: os.stat_result, key: StatKey, *, is_link: bool) -> Entry:
        if stat.S_ISREG(st.st_mode):
            return Entry(path, EntryKind.FILE, real, st.st_size, key, is_link)
        if stat.S_ISDIR(st.st_mode):
            return Entry(path, EntryKind.DIRECTORY, real, 0, key, is_link)
        return Entry(path, EntryKind.SPECIAL, real, 0, key, is_link, special=_describe_special(st.st_mode))

    def read(self, entry: Entry, limit: int) -> bytes:
        """Read at most ``limit`` bytes of a probed regular file.

        Raises:
            OSError: the file vanished, became something else, or cannot be read.
        """
        key, real = entry.key, entry.real_path
        if key is None or not real:
            raise OSError(errno.ESTALE, _CHANGED)
        located, parent, name = self._probed
        if real is not located:
            parent, _, name = real.rpartition("/")
        dfd = self._fds.get(parent)
        return _read_in(self._walker.dir_fd(parent or "/") if dfd is None else dfd, name, key, limit)

    def load_each(
        self,
        parent: str,
        leaves: Sequence[str],
        name: str,
        boundary: str,
        tag: str,
        limit: int,
        build: Callable[[Entry, bytes | OSError, str], T],
    ) -> list[tuple[Entry, T | None]]:
        """For each folder ``parent/leaf``: :meth:`probe_in` of ``name`` in it, then for a regular file
        ``build(entry, its first limit bytes or the read's error, leaf)``, cached as :meth:`cached` does
        under ``tag + leaf``; the value is None for anything else, which the entry says.

        The hot path of a skills scan, one call per listing (a file in each folder just listed):
        each folder is opened from its parent's descriptor, used and closed at once, and nothing
        is looked at twice.
        """
        out: list[tuple[Entry, T | None]] = []
        append, fds, values, observed = out.append, self._fds, self._values, self.observed.append
        open_at, stat_at, close, now, misses = os.open, os.stat, os.close, self._now, 0  # bound once per listing
        root = self._roots.get(boundary) or self._root(boundary)
        direct = not root.aliased and parent.startswith(root.prefix)
        pfd = fds.get(parent) if direct else None
        for leaf in leaves:
            if pfd is None or leaf in ("", ".", ".."):
                append(self._load_walked(parent, leaf, name, boundary, tag, limit, build))
                pfd = fds.get(parent) if direct else None  # the walk may have trimmed the open folders
                continue
            try:  # O_NOFOLLOW: a folder swapped for a link fails here (ENOTDIR, ELOOP) and goes the long way
                dfd = open_at(leaf, DIR_FLAGS, dir_fd=pfd)
            except OSError:
                append(self._load_walked(parent, leaf, name, boundary, tag, limit, build))
                pfd = fds.get(parent)
                continue
            try:
                try:
                    st = stat_at(name, dir_fd=dfd, follow_symlinks=False)
                except FileNotFoundError:  # a folder holding none (Codex looks inside skills): as probe_in answers
                    append(self._missing(f"{parent}/{leaf}", name))
                    continue
                except OSError:
                    st = None
                if st is None or not S_ISREG(st.st_mode):  # a link, a folder, a FIFO: classified as usual
                    append(self._load_walked(parent, leaf, name, boundary, tag, limit, build))
                    pfd = fds.get(parent)
                    continue
                path = f"{parent}/{leaf}/{name}"
                size = st.st_size
                key = (st.st_mtime_ns, size, st.st_ino, st.st_dev, st.st_mode)
                observed((path, key, False))
                entry = _new_entry(Entry, (path, _FILE, path, size, key, False, None, ""))
                slot = (path, tag + leaf)
                hit = values.get(slot)
                fresh = now - key[0] / 1e9 >= RACY_SECONDS
                if hit is not None and hit[0] == key and fresh:
                    append((entry, hit[1]))
                    continue
                misses += 1
                raw = _read_or_error(dfd, name, key, limit)
            finally:
                close(dfd)
            value = build(entry, raw, leaf)
            if fresh:  # a young key may yet hide a second write
                values[slot] = (key, value)
            append((entry, value))
        self.misses += misses
        return out

    def read_listed(
        self,
        folder: str,
        name: str,
        boundary: str,
        tag: str,
        limit: int,
        build: Callable[[Entry, bytes | OSError], T],
    ) -> tuple[Entry, T] | None:
        """For ``name``, a regular file the listing of ``folder`` just showed: ``build(entry, its first limit
        bytes or the read's error)``, kept as :meth:`cached` keeps it under ``tag``. None: not taken, probe
        and read it the usual way (a file known from an earlier pass, an aliased boundary, a folder not open).

        The listing classified it, so it is opened at once from the folder's descriptor with
        ``O_NOFOLLOW | O_NONBLOCK`` (no probe first) and ``fstat`` must show a regular file: one
        that became anything else since the listing is closed unread and takes the usual way.
        """
        path = f"{folder}/{name}"
        values = self._values
        slot = (path, tag)
        if slot in values:
            return None  # a probe's stat tells whether the value kept is still good, without opening it
        root = self._roots.get(boundary) or self._root(boundary)
        dfd = self._fds.get(folder)
        if dfd is None or root.aliased or not (folder.startswith(root.prefix) or folder == root.real):
            return None
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=dfd)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not S_ISREG(st.st_mode):
                return None
            audit(AUDIT_EVENT, fd)
            size = st.st_size
            key = (st.st_mtime_ns, size, st.st_ino, st.st_dev, st.st_mode)
            self.observed.append((path, key, False))
            self.misses += 1
            raw: bytes | OSError
            try:
                raw = _read_sized(fd, size, limit)
            except OSError as exc:
                raw = exc
        finally:
            os.close(fd)
        entry: Entry = _new_entry(Entry, (path, _FILE, path, size, key, False, None, ""))
        value = build(entry, raw)
        if self._fresh(key):
            values[slot] = (key, value)
        return entry, value

    def _missing(self, folder: str, name: str) -> tuple[Entry, None]:
        """:meth:`probe_in`'s answer for ``name`` missing from ``folder`` (opened without following a link):
        recorded, unless a quiet folder listed this pass answers for it."""
        path = f"{folder}/{name}"
        if not (self._names and self._lacks(folder, name)):
            self.observed.append((path, None, False))
        return _new_entry(Entry, (path, _MISSING, "", 0, None, False, None, "")), None

    def _load_walked(
        self,
        parent: str,
        leaf: str,
        name: str,
        boundary: str,
        tag: str,
        limit: int,
        build: Callable[[Entry, bytes | OSError, str], T],
    ) -> tuple[Entry, T | None]:
        entry = self.probe_in(f"{parent}/{leaf}", name, boundary)
        if entry.kind is not _FILE:
            return entry, None
        return entry, self.cached(entry, tag + leaf, lambda: build(entry, self._read_or_error(entry, limit), leaf))

    def _read_or_error(self, entry: Entry, limit: int) -> bytes | OSError:
        try:
            return self.read(entry, limit)
        except OSError as exc:
            return exc

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
        lstat, follow_stat, exists, f_ok = os.lstat, os.stat, os.access, os.F_OK
        for path, key, followed in observed:
            if key is None:  # still missing: asked with a call that returns False, not a stat that raises
                if exists(path, f_ok, follow_symlinks=followed):
                    return False
                continue
            try:
                st = follow_stat(path) if followed else lstat(path)
            except OSError:
                return False
            if key[0] > racy_after:
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
        if key is not None and self._now - key[0] / 1e9 >= RACY_SECONDS:  # a young key may yet hide a second write
            self._values[slot] = (key, value)
        return value

    def list_dir(
        self, path: str, *, strict: bool = False, boundary: str | None = None, as_listed: bool = False
    ) -> tuple[ListedEntry, ...]:
        """The entries of a directory, sorted by name (``as_listed``: in the folder's own order); empty
        when it does not exist.

        The directory is walked from ``boundary`` (by default it is its own boundary) like a
        probed path, and listed through its descriptor.

        Raises:
            OSError: with ``strict``, when the directory exists but cannot be listed (or a
                symlink on the way leaves the boundary).
        """
        boundary = path if boundary is None else boundary
        try:
            found = self._walker.resolve(path, boundary, self._root(boundary).real)
        except (FileNotFoundError, NotADirectoryError):
            self.observed.append((path, None, True))
            return ()
        except OSError:
            self.observed.append((path, None, True))
            if strict:
                raise
            return ()
        key = stat_key(found.st)
        self.observed.append((path, key, True))
        if not stat.S_ISDIR(found.st.st_mode):
            return ()
        listing = self._listing(path, found.real, key, strict)
        return () if listing is None else listing[3] if as_listed else listing[1]

    def _listing(
        self, path: str, real: str, key: StatKey, strict: bool
    ) -> tuple[StatKey, tuple[ListedEntry, ...], Names, tuple[ListedEntry, ...]] | None:
        """The listing of the folder ``path`` (at ``real``, whose stat gave ``key``), cached while unchanged;
        None when it cannot be listed (raised with ``strict``)."""
        hit = self._listings.get(path)
        fresh = self._fresh(key)
        if hit is None or hit[0] != key or not fresh:
            self.misses += 1
            try:
                entries = self._walker.entries(real)
            except OSError:
                if strict:
                    raise
                return None
            names = Names(frozenset([e.name for e in entries]), frozenset([e.name for e in entries if e.is_file]))
            hit = (key, tuple(sorted(entries, key=_BY_NAME)), names, tuple(entries))
            if fresh:
                self._listings[path] = hit
        if fresh:  # quiet: its names answer this pass's probes of names it lacks
            self._names[real] = hit[2]
        return hit

    def names(self, path: str, boundary: str) -> Names | None:
        """The names in the folder ``path`` if it is quiet (unchanged since two seconds before the pass), else None.

        Listed as :meth:`list_dir` lists (names only, never contents); the pass then answers
        a probe of a name the folder lacks without a system call, and a rescan states the
        folder once instead of each name missing from it. A busy folder (None) is left to
        per-name probes and its listing is not observed, so it never turns rescans into passes.
        """
        real, prefix, aliased = self._roots.get(boundary) or self._root(boundary)
        folder = real + path[len(boundary) :] if aliased and is_within(path, boundary) else path
        if not (folder.startswith(prefix) or folder == real):
            return None
        walker = self._walker
        walker.trim()
        try:  # reached without following a link, from the parent's descriptor (which the probes here reuse)
            dfd = self._fds.get(folder) or walker.dir_fd(folder)
            st = os.fstat(dfd)
        except OSError:
            return None  # missing, or a link on the way: its names are probed one by one
        key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode)
        if not self._fresh(key):
            return None
        listing = self._listing(path, folder, key, False)  # a quiet folder: its names go to this pass's probes
        if listing is None:
            return None
        self.observed.append((path, key, True))
        return listing[2]

    def peek(self, path: str, boundary: str) -> list[str]:
        """The regular files of the folder ``path`` (walked from ``boundary``), listed but neither cached nor
        observed: a look that must not make a busy folder's listing part of what a rescan states. The caller
        probes what it uses of it. Empty when it cannot be listed."""
        try:
            found = self._walker.resolve(path, boundary, self._root(boundary).real)
            if not stat.S_ISDIR(found.st.st_mode):
                return []
            return [entry.name for entry in self._walker.entries(found.real) if entry.is_file]
        except OSError:
            return []

    def listed(self, folder: str) -> Names | None:
        """The names of the real folder ``folder`` if a quiet listing of it was taken this pass."""
        return self._names.get(folder)

    def settled(self) -> list[tuple[str, StatKey | None, bool]]:
        """What this pass observed, once each, less what other observations already answer for.

        A missing path stays missing while what shows it missing is unchanged: a quiet folder
        the pass listed that lacks its next component (``.claude`` absent, so
        ``.claude/CLAUDE.md`` and ``.claude/skills`` too), or a missing folder above it (kept
        itself). What :meth:`Scanner.watch_dirs` derives from the list stays the same. Call
        before :meth:`release`.
        """
        unique = dict.fromkeys(self.observed)  # a folder listed twice is stated once
        missing = {path for path, key, _ in unique if key is None}
        names = self._names
        return [item for item in unique if item[1] is not None or item[2] or not _answered(item[0], names, missing)]
