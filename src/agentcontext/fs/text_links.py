"""Symbolic links checked out as files.

Where git does not make symbolic links (``core.symlinks=false``: Windows without developer
mode, and archives or sync tools that drop links), it writes the link as a small file that
holds the link's target and nothing else, with no newline. An agent then reads a ``CLAUDE.md``
linked to ``AGENTS.md`` as the nine bytes ``AGENTS.md``, and passes over a ``.claude/skills``
linked to ``.agents/skills`` without a word, since it is a file where a folder should be.

Such a file is told by its text: one line with no newline and no control character, naming a
path that exists beneath the root it was read from. Only that path is looked at, beneath that
root: the text never widens what is read, and it is never followed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from agentcontext.fs.files import Entry, EntryKind, Reader, is_within

MAX_TARGET = 4095  # PATH_MAX less its NUL: git writes no longer target
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_FILE_OR_FOLDER = frozenset({EntryKind.FILE, EntryKind.DIRECTORY})
_FOLDER = frozenset({EntryKind.DIRECTORY})


def target_text(data: bytes) -> str | None:
    """The target ``data`` holds when it has the shape git writes for a link it did not make, else None."""
    if not data or len(data) > MAX_TARGET or data[:1].isspace() or data[-1:].isspace() or _CONTROL.search(data):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() else None


def named_target(
    reader: Reader,
    path: str,
    boundary: str,
    data: bytes | None = None,
    kinds: Collection[EntryKind] = _FILE_OR_FOLDER,
) -> str | None:
    """The target the file at ``path`` holds when it is a link checked out as a file: its text (``data``, or
    read here) names, from the file's folder, something of ``kinds`` beneath ``boundary``. None otherwise."""
    if data is None:
        data = _small_file(reader, reader.probe(path, boundary))
    text = None if data is None else target_text(data)
    if text is None:
        return None
    target = os.path.normpath(os.path.join(os.path.dirname(path), text))
    if not is_within(target, boundary) or target == path:
        return None
    return text if reader.probe(target, boundary).kind in kinds else None


def _small_file(reader: Reader, entry: Entry) -> bytes | None:
    if entry.kind is not EntryKind.FILE or entry.size > MAX_TARGET:
        return None
    try:
        return reader.read(entry, MAX_TARGET + 1)
    except OSError:
        return None


def advice(text: str, path: str, consequence: str) -> str:
    """What to tell the user of the file at ``path`` holding the target ``text``, and what it leads to."""
    return (
        f'{CHECKED_OUT}: it holds only "{text}", so {consequence} (git core.symlinks=false); recreate the link: '
        f"git config core.symlinks true, then git checkout -- {path}"
    )


def folder_as_file(reader: Reader, path: str, boundary: str, lost: str) -> str | None:
    """The error for the file at ``path`` where a folder is looked for, when it is a link to a folder checked out
    as a file (``lost``: what the agent then misses); None for any other file, or none."""
    text = named_target(reader, path, boundary, kinds=_FOLDER)
    return None if text is None else f"a file, not a folder: {advice(text, path, lost)}"


CHECKED_OUT = "a symbolic link checked out as a file"
