"""A SQLite database file only its owner can read: created 0600, in folders created 0700.

It holds token hashes, chats and the snapshots of workspaces, so other local users must not
read it. SQLite gives its ``-wal`` and ``-shm`` files the database file's mode, so creating
the file first with 0600 (whatever the umask) makes all three private. A file that exists
keeps its mode: it may be shared on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path


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
