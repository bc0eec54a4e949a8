"""An exclusive advisory lock on a file, held for a process's life, with a note of who holds it.

``hold`` takes ``flock(LOCK_EX | LOCK_NB)`` on the file (created 0600, its missing folders
0700) or answers None when another process holds it; the holder writes a JSON note in the
file (its pid, where it serves) for whoever is refused to name it (``holder``). The kernel
releases the lock when the descriptor's last copy closes, so a process that crashes or is
SIGKILLed leaves nothing stuck: the file stays, unlocked, and its note says nothing about who
runs (read a note only after ``hold`` answered None, and check what it names: a note is only
trusted from a file this user alone could have written). The descriptor is not inherited by
children unless passed on on purpose (``Held.fd`` in ``pass_fds``: the lock then lasts until
they have exited too). Where there is no ``fcntl`` (Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

if sys.platform == "win32":  # pragma: no cover

    def _lock(fd: int) -> bool:
        return True

else:
    import fcntl

    def _lock(fd: int) -> bool:
        """Whether this process now holds ``fd``'s lock (False: another does)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


_NOTE_LIMIT = 4096  # bytes of a note read back


class Held:
    """A lock this process holds until ``release`` (or its exit)."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def note(self, **details: Any) -> None:
        """Replace the file's note with this process's pid and ``details``."""
        text = json.dumps({"pid": os.getpid(), **details}, sort_keys=True).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, text, 0)

    def left(self) -> dict[str, Any]:
        """The note the file held when this process took the lock: what the holder before it left (a process
        killed leaves its note; one that released the lock, none), read through the lock's own descriptor."""
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(os.pread(self.fd, _NOTE_LIMIT, 0)) if _ours(os.fstat(self.fd)) else None
            if isinstance(data, dict):
                return data
        return {}

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):  # a note left behind names a process gone (and where it served)
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # the lock goes with it (unless a child still has a copy)
            self.fd = -1


def hold(path: Path) -> Held | None:
    """The lock on ``path``, or None when another process holds it.

    Raises:
        OSError: the file or its folder cannot be made or opened (a link there is refused).
    """
    for folder in reversed([f for f in (path.parent, *path.parent.parents) if not f.exists()]):
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)  # mkdir's mode passes through the umask
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        locked = _lock(fd)
    except BaseException:
        os.close(fd)
        raise
    if not locked:
        os.close(fd)
        return None
    return Held(fd, path)


def holder(path: Path) -> dict[str, Any]:
    """The note of whoever holds ``path``; empty when nobody holds the lock now (a note a crashed or killed holder
    left names a process gone, and a port anyone may have taken since), when it cannot be read (it may be being
    written), when the pid it names is gone, or when another user could have written it (a file not ours, or that
    others may write): ``up`` sends the user's token to the URL a note names."""
    with contextlib.suppress(OSError, ValueError):
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            if not _ours(os.fstat(fd)) or _lock(fd):  # got the lock: nobody holds it (closing lets it go)
                return {}
            data = json.loads(os.read(fd, _NOTE_LIMIT))
        finally:
            os.close(fd)
        if isinstance(data, dict) and _alive(data.get("pid")):
            return data
    return {}


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _ours(status: os.stat_result) -> bool:
    """Whether only this user could have written the file."""
    if sys.platform == "win32":  # pragma: no cover
        return True
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
