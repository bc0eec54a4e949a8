"""Reading a skill's files safely: lookup by name, path rules, listings, windows of lines.

Two path rule sets, because the peers word them differently:

* :func:`resolve_resource` (Codex Free's ``skills_read``): backslashes become ``/``, one
  leading ``./`` is dropped; absolute paths, drive letters, empty input and empty, ``.`` or
  ``..`` segments are refused with ``Resource must be a path inside the skill: <resource>``.
  We also refuse hidden components, and resolve symlinks: a link whose target leaves the
  skill folder is refused too (Codex Free checks the text only).
* :func:`check_file_path` (Coder's ``read_skill_file``): ``path is required``, ``absolute
  paths are not allowed``, ``path traversal is not allowed``, ``hidden file components are
  not allowed``, checked in that order before anything is read.

Every read is bounded; every listing is capped and says when it was cut.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentcontext.errors import AgentContextError, NotFoundError, UnsafePathError
from agentcontext.files import is_within
from agentcontext.frontmatter import split
from agentcontext.resource import Kind, Resource, Status
from agentcontext.textdecode import decode_file

MAX_PACKAGE_FILES = 50
MAX_LINES = 1000
MAX_WINDOW_BYTES = 128 * 1024
MAX_FILE_BYTES = 4 * 1024 * 1024  # what a read returns at most; larger files are cut
SKILL_FILE_BYTES = 512 * 1024  # Coder's read_skill_file limit
_DRIVE = re.compile(r"^[A-Za-z]:")
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")


def offered(resources: Iterable[Resource]) -> list[Resource]:
    """The skills a model may use: ok, with a name, in name order."""
    return sorted(
        (r for r in resources if r.kind is Kind.SKILL and r.status is Status.OK and r.name),
        key=lambda r: (r.name or "", r.path),
    )


def find(skills: Sequence[Resource], name: str) -> Resource:
    """An offered skill by name: an exact match first, then one ignoring case.

    Raises:
        NotFoundError: ``No skill named X. Available: a, b.`` (or ``No skills are installed.``).
    """
    wanted = name.strip()
    for skill in skills:
        if skill.name == wanted:
            return skill
    folded = wanted.casefold()
    for skill in skills:
        if (skill.name or "").casefold() == folded:
            return skill
    known = ", ".join(s.name or "" for s in skills)
    suffix = f"Available: {known}." if known else "No skills are installed."
    raise NotFoundError(f"No skill named {wanted}. {suffix}")


def skill_dir(skill: Resource) -> str:
    return os.path.dirname(skill.path)


def resolve_resource(folder: str, resource: str) -> str:
    """The absolute path of ``resource`` inside the skill ``folder``.

    Raises:
        UnsafePathError: the path would leave the folder or names a hidden component.
    """
    refused = UnsafePathError(f"Resource must be a path inside the skill: {resource}")
    relative = resource.replace("\\", "/")
    if relative.startswith("./"):
        relative = relative[2:]
    if not relative or os.path.isabs(resource) or resource.startswith("/") or _DRIVE.match(resource):
        raise refused
    parts = relative.split("/")
    if any(part in ("", ".", "..") or part.startswith(".") or "\0" in part for part in parts):
        raise refused
    path = os.path.join(folder, *parts)
    try:
        real = os.path.realpath(path)
    except ValueError:  # a name the file system cannot encode (a lone surrogate)
        raise refused from None
    if not is_within(real, os.path.realpath(folder)):
        raise refused
    return path


def check_file_path(path: str) -> None:
    """Coder's ``validateSkillFilePath``.

    Raises:
        UnsafePathError: with Coder's message.
    """
    if path == "":
        raise UnsafePathError("path is required")
    if path.startswith("/"):
        raise UnsafePathError("absolute paths are not allowed")
    components = path.split("/")
    if ".." in components:
        raise UnsafePathError("path traversal is not allowed")
    if any(c.startswith(".") for c in components):
        raise UnsafePathError("hidden file components are not allowed")


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill package, for listings and SEP-2640 digests."""

    path: str  # relative, with "/" separators
    size: int
    absolute: str

    def digest(self) -> str:
        with open(self.absolute, "rb") as fh:
            return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def package_files(folder: str, *, limit: int | None = None, meta_file: str = "SKILL.md") -> tuple[list[SkillFile], int]:
    """Regular files below ``folder`` (depth first, by name), without hidden names or links out.

    Returns the files (at most ``limit``, the top-level meta file left out) and how many
    more there were.
    """
    real_root = os.path.realpath(folder)
    found: list[SkillFile] = []
    more = 0  # files past ``limit``: the listing keeps the first ones by path
    stack: list[tuple[str, str]] = [(folder, "")]
    seen = {real_root}
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            relative = f"{prefix}{entry.name}"
            try:
                st = os.stat(entry.path)
            except OSError:
                continue
            real = os.path.realpath(entry.path) if entry.is_symlink() else os.path.join(real_root, relative)
            if entry.is_symlink() and not is_within(real, real_root):
                continue
            if stat.S_ISDIR(st.st_mode):
                if real not in seen:
                    seen.add(real)
                    stack.append((entry.path, relative + "/"))
                continue
            if not stat.S_ISREG(st.st_mode) or relative == meta_file:
                continue
            found.append(SkillFile(relative, st.st_size, entry.path))
    found.sort(key=lambda f: f.path)
    if limit is not None and len(found) > limit:
        more = len(found) - limit
        del found[limit:]
    return found, more


def read_text(path: str, *, limit: int = MAX_FILE_BYTES) -> tuple[str, bool]:
    """A file's text (lossy UTF-8, LF line ends) and whether it was cut at ``limit`` bytes.

    Raises:
        OSError: the file cannot be read, or is not a regular file.
        UnsafePathError: the file is binary.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(21, "not a regular file")
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    cut = len(raw) > limit
    text, _ = decode_file(raw[:limit])
    if text is None:
        raise UnsafePathError("binary file: it cannot be shown as text")
    return text, cut


@dataclass(frozen=True, slots=True)
class Window:
    text: str
    notice: str | None  # set when the window is not the whole file


def window(
    text: str,
    offset: int = 0,
    limit: int | None = None,
    *,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_WINDOW_BYTES,
) -> Window:
    """Codex Free's ``window_file_lines``: a slice of lines within a line and byte budget."""
    lines = text.split("\n")
    total = len(lines)
    start = min(max(offset, 0), total)
    count = max_lines if limit is None else max(0, min(limit, max_lines))
    kept: list[str] = []
    used = 0
    cut_on_bytes = False
    for line in lines[start : start + count]:
        cost = len(line.encode("utf-8")) + 1
        if used + cost > max_bytes:
            cut_on_bytes = True
            if not kept:
                kept.append(line.encode("utf-8")[:max_bytes].decode("utf-8", errors="replace"))
            break
        kept.append(line)
        used += cost
    end = start + len(kept)
    if start == 0 and end == total and not cut_on_bytes:
        return Window("\n".join(kept), None)
    reason = ", cut at the byte budget" if cut_on_bytes else ""
    more = f" — call again with offset={end} for the rest" if end < total else ""
    return Window("\n".join(kept), f"(showing lines {start + 1}-{end} of {total}{reason}{more})")


def body(text: str) -> str:
    """A SKILL.md body as Coder serves it: after the frontmatter, HTML comments removed, trimmed."""
    try:
        _, rest = split(text)
    except AgentContextError:
        rest = text
    return _HTML_COMMENT.sub("", rest).strip()


def listing(folder: str, meta_file: str = "SKILL.md") -> list[str]:
    """Coder's supporting-file list: one level, the meta file left out, folders with a trailing ``/``."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    return [e.name + ("/" if e.is_dir() else "") for e in entries if e.name != meta_file]


def read_skill_file(folder: str, path: str, *, limit: int = SKILL_FILE_BYTES) -> tuple[str, bool]:
    """Coder's ``read_skill_file``: the path rules first, then at most ``limit`` bytes.

    Raises:
        UnsafePathError: a rule refused the path, or it resolves outside the skill folder.
        OSError: the file cannot be read.
    """
    check_file_path(path)
    full = os.path.join(folder, *path.split("/"))
    if not is_within(os.path.realpath(full), os.path.realpath(folder)):
        raise UnsafePathError("path escapes the skill directory")
    return read_text(full, limit=limit)
