"""Containment, checked for the whole suite: no surface running in the test process reads outside its roots.

Tests that build escapes (symlinks, ``..`` paths, absolute paths) point them into a folder
named ``OUTSIDE`` (``outside_the_roots(tmp_path)``). An audit hook (PEP 578) watches every
read-mode ``open`` and every directory listing in this process, and every descriptor the
engine opens to read beneath a root (event ``agentcontext.open``, whose path is known only
from the descriptor: its name is relative to a directory descriptor); one whose real path
lies in such a folder fails the test that made it, naming the path. The agent, the server
and MCP servers started as other processes are not watched here: their containment is
checked through what they answer.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from agentcontext.fs.beneath import AUDIT_EVENT

OUTSIDE = "outside-the-roots"
_READ_ONLY = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

_violations: list[str] = []
_lock = threading.Lock()
_installed = False
_temp = os.path.realpath(tempfile.gettempdir())


def outside_the_roots(tmp_path: Path) -> Path:
    """A folder no surface may read: escapes built by a test point here."""
    folder = tmp_path / OUTSIDE
    folder.mkdir(exist_ok=True)
    return folder


def _reads(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return not any(c in mode for c in "wax+")
    return isinstance(flags, int) and not flags & _READ_ONLY


def _check(path: Any) -> None:
    if isinstance(path, int) or path is None:
        return
    try:
        text = os.fsdecode(path)
    except (TypeError, ValueError):
        return
    if not os.path.isabs(text):
        return  # relative to a directory descriptor (``dir_fd``), not to the working directory: unknown here
    absolute = os.path.abspath(text)
    if not absolute.startswith((_temp, "/tmp")):
        return  # only test folders can hold an OUTSIDE folder: skip the cost elsewhere
    if OUTSIDE in os.path.realpath(absolute).split(os.sep):
        with _lock:
            _violations.append(absolute)


def _check_descriptor(fd: Any) -> None:
    try:
        where = os.readlink(f"/proc/self/fd/{int(fd)}")
    except (OSError, TypeError, ValueError):
        return
    if OUTSIDE in where.split(os.sep):
        with _lock:
            _violations.append(where)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == AUDIT_EVENT and args:
        _check_descriptor(args[0])
        return
    reading = event == "open" and len(args) >= 3 and _reads(args[1], args[2])
    listing = event in ("os.listdir", "os.scandir") and bool(args)
    if reading or listing:
        _check(args[0])


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


def take() -> list[str]:
    """The reads inside an OUTSIDE folder since the last call (and forget them)."""
    with _lock:
        found = list(_violations)
        _violations.clear()
    return found
