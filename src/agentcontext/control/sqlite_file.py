"""A SQLite database file only its owner can read: created 0600, in folders created 0700.

It holds token hashes, chats and the snapshots of workspaces, so other local users must not
read it. SQLite gives its ``-wal`` and ``-shm`` files the database file's mode, so creating
the file first with 0600 (whatever the umask) makes all three private. A file that exists
keeps its mode: it may be shared on purpose.

One process serves a file (``hold_for_serving``): an exclusive lock on ``control.db-server.lock``
beside it, held for the server's life and let go by the kernel when it ends, however it ends.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentcontext.errors import UnavailableError
from agentcontext.fs.lockfile import Held, hold, holder


def create_private(path: Path) -> None:
    """Create ``path`` (empty, mode 0600) and its missing folders (mode 0700) unless it exists."""
    missing = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)  # mkdir's mode passes through the umask
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.fchmod(fd, 0o600)
    os.close(fd)


ONE_SERVER = "a SQLite database has one server at a time (stop that one first, or use PostgreSQL for several)"


def serving_lock(database: Path) -> Path:
    """The file whose lock the server of ``database`` holds (``control.db-server.lock``)."""
    return database.with_name(f"{database.name}-server.lock")


def hold_for_serving(database: Path, url: str) -> Held:
    """The lock that makes this process the one server of the SQLite file ``database``, noting ``url`` for
    whoever is refused (and for ``up``, which joins the server it names). Held until this process ends.

    Its events stay in the process that published them (``events``), so a second server on the same file
    would serve chats that never hear of what the first stores; the CLI's administrative commands take no
    lock: they are short writers, which SQLite queues.

    Raises:
        UnavailableError: another process serves ``database``, or its lock file cannot be made.
    """
    lock = serving_lock(database)
    try:
        held = hold(lock)
        for _ in range(5):  # ``holder`` takes the lock for an instant to see whether anyone holds it: try again
            if held is not None:
                break
            time.sleep(0.02)
            held = hold(lock)
    except OSError as exc:
        raise UnavailableError(f"cannot make the lock file {lock}: {exc.strerror or exc}") from None
    if held is None:
        raise UnavailableError(f"{database} is already served by {_who(holder(lock))}: {ONE_SERVER}")
    held.note(url=url)
    return held


def _who(note: dict[str, object]) -> str:
    url, pid = note.get("url"), note.get("pid")
    if isinstance(url, str) and isinstance(pid, int):
        return f"the control plane at {url} (pid {pid})"
    return "another control plane"
