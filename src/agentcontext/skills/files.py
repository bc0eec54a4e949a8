"""Reading a skill's files safely: lookup by name, path rules, listings, windows of lines.

Two path rule sets, because the peers word them differently:

* :func:`resource_parts` / :func:`resolve_resource` (Codex Free's ``skills_read``):
  backslashes become ``/``, one leading ``./`` is dropped; absolute paths, drive letters,
  empty input and empty, ``.`` or ``..`` segments are refused with ``Resource must be a
  path inside the skill: <resource>``. We also refuse hidden components, and resolve
  symlinks: a link whose target leaves the skill folder is refused too (Codex Free checks
  the text only).
* :func:`check_file_path` (Coder's ``read_skill_file``): ``path is required``, ``absolute
  paths are not allowed``, ``path traversal is not allowed``, ``hidden file components are
  not allowed``, checked in that order before anything is read.

Nothing is opened by path. :func:`open_folder` walks to the skill's folder from the boundary
the scan used for it (:meth:`~agentcontext.layout.Layout.boundary_of`) and every file, listing
and digest goes through the resulting :class:`SkillFolder`, beneath that folder, without the
kernel following a link (:mod:`agentcontext.fs.beneath`): a file or folder swapped for a symlink
to outside while it is read is refused (``path escapes the skill directory``), never read.

Every read is bounded; every listing is capped and says when it was cut.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from agentcontext.errors import AgentContextError, NotFoundError, UnsafePathError
from agentcontext.fs.beneath import is_within
from agentcontext.resource import Kind, Resource, Status
from agentcontext.skills.folder import open_folder
from agentcontext.skills.frontmatter import split

MAX_PACKAGE_FILES = 50
MAX_LINES = 1000
MAX_WINDOW_BYTES = 128 * 1024
MAX_FILE_BYTES = 4 * 1024 * 1024  # what a read returns at most; larger files are cut
SKILL_FILE_BYTES = 512 * 1024  # Coder's read_skill_file limit
MAX_RESOURCE = 4096  # PATH_MAX: no longer path names a file
_DRIVE = re.compile(r"^[A-Za-z]:")
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")


def offered(resources: Iterable[Resource]) -> list[Resource]:
    """The skills a model may use: ok, with a name, in name order."""
    skill, ok = Kind.SKILL, Status.OK  # once, not per resource: an enum attribute costs ~0.2 us on Python 3.11
    return sorted((r for r in resources if r.kind is skill and r.status is ok and r.name), key=_NAME_PATH)


_NAME_PATH = attrgetter("name", "path")  # offered skills all have a name


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


def resource_parts(resource: str) -> list[str]:
    """The components of a ``skills_read`` resource, by Codex Free's rules (no file is looked at).

    Raises:
        UnsafePathError: the path would leave the folder, names a hidden component, or is longer than any path
            (``MAX_RESOURCE``: resolving ``a/a/a/…`` costs the square of its length).
    """
    if len(resource) > MAX_RESOURCE:
        raise UnsafePathError(f"Resource path too long: {len(resource)} characters, at most {MAX_RESOURCE}")
    relative = resource.replace("\\", "/")
    if relative.startswith("./"):
        relative = relative[2:]
    if not relative or os.path.isabs(resource) or resource.startswith("/") or _DRIVE.match(resource):
        raise _outside(resource)
    parts = relative.split("/")
    if any(part in ("", ".", "..") or part.startswith(".") or "\0" in part for part in parts):
        raise _outside(resource)
    return parts


def _outside(resource: str) -> UnsafePathError:
    return UnsafePathError(f"Resource must be a path inside the skill: {resource}")


def resolve_resource(folder: str, resource: str) -> str:
    """The absolute path of ``resource`` inside the skill ``folder``.

    A link leaving the folder is refused here already, for the message; the read itself is
    what keeps it out (:meth:`SkillFolder.read`), whatever changes in between.

    Raises:
        UnsafePathError: the path would leave the folder or names a hidden component.
    """
    path = os.path.join(folder, *resource_parts(resource))
    try:
        inside = is_within(os.path.realpath(path), os.path.realpath(folder))
    except ValueError:  # a name the file system cannot encode (a lone surrogate)
        raise _outside(resource) from None
    except OSError:  # a component changed while it was resolved: the read decides
        inside = True
    if not inside:
        raise _outside(resource)
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


def read_skill_file(folder: str, path: str, *, boundary: str | None, limit: int = SKILL_FILE_BYTES) -> tuple[str, bool]:
    """Coder's ``read_skill_file``: the path rules first, then at most ``limit`` bytes.

    ``boundary`` is the root the scan reached the skill's folder from (see
    :func:`~agentcontext.skills.folder.open_folder`).

    Raises:
        UnsafePathError: a rule refused the path, or it leads outside the skill folder.
        OSError: the file cannot be read.
    """
    check_file_path(path)
    with open_folder(folder, boundary) as opened:
        return opened.read_text(path.split("/"), limit)
