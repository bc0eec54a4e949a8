"""Custom commands: ``.claude/commands/*.md``, one file each, which Claude Code and Copilot CLI list among
their skills (``skills.commands``; the folders are the layout's :attr:`~agentcontext.layout.Layout.command_folders`:
the user's, then the work dir's and each one above it to the root).

``claude`` (Claude Code 2.1.332): every file named ``*.md`` (that suffix exactly) below each folder, at any
depth, hidden names too. A command is named by its path below the folder without ``.md``, ``/`` made ``:``
(``group/x.md`` is ``group:x``); a frontmatter ``name`` changes nothing. Described as
:func:`~agentcontext.skills.validation.claude_command_check` says.

``copilot`` (Copilot CLI 1.0.102): only the files right in each folder, named ``*.md`` in any case,
hidden names left out, named and described as its skills are
(:func:`~agentcontext.skills.validation.copilot_command_check`).

Both: ``disable-model-invocation: true`` leaves a command out (``disabled``); a skill of the same name wins
(``shadowed``), and so does the first command of a name in folder order; names in ``skills.disabled`` are
``disabled``. A command is a ``skill`` resource whose path is its file: it has no folder of its own
(:func:`is_command`), so it has no other files to list or read.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from hashlib import sha256

from agentcontext.fs import text_links
from agentcontext.fs.files import Entry, EntryKind, Reader
from agentcontext.fs.textdecode import decode_file
from agentcontext.instructions.loading import OFFERED
from agentcontext.layout import Root
from agentcontext.resource import Kind, Resource, Status, make
from agentcontext.sanitize import hidden_text_warnings
from agentcontext.settings.config import Config
from agentcontext.skills.validation import SkillCheck, claude_command_check, copilot_command_check

FOLDER = "/.claude/commands/"  # what every command's path holds


def is_command(skill: Resource) -> bool:
    """Whether a ``skill`` resource is a custom command: one file, with no folder of its own.

    Told by its path, which every form of a resource keeps (the snapshot, the push, the control plane's rows):
    a skill's ends in its ``SKILL.md`` and holds no ``.claude/commands`` folder, as the skills walk skips
    hidden names, unless the project itself lies in one, where its skills still end in ``SKILL.md``.
    """
    return FOLDER in skill.path and not skill.path.endswith("/SKILL.md")


def discover(folders: Sequence[Root], config: Config, reader: Reader, skills: Sequence[Resource]) -> list[Resource]:
    """Every command candidate of ``folders`` (in order), each with its status beside the ``skills`` found."""
    rules = _RULES[config.skills.commands]
    found: list[Resource] = []
    for folder in folders:
        if _no_claude_folder(folder, reader):
            continue
        listed = rules.listing(folder, reader, config.skills.max_dirs_per_root, found)
        if not listed:
            _folder_as_text(folder.path, folder, reader, found, "no command in the folder it names is read")
        found.extend(_read(folder, relative, rules.check, config, reader) for relative in listed)
    if not found:  # the usual case: no names to weigh against every skill's
        return found
    return _claimed(found, skills, rules.answers_to, config.skills.disabled)


def _no_claude_folder(folder: Root, reader: Reader) -> bool:
    """Whether the folder two up (the chain's folder), as this pass listed it, has no ``.claude``: then there is no
    ``.claude/commands`` to list (most folders of a walk, listed for the instructions already; a link on the way
    or a busy folder has no such listing, and is listed as usual)."""
    above, own = os.path.split(os.path.dirname(folder.path))
    names = reader.listed(above) if own == ".claude" else None  # no system call: this pass's listing or none
    return names is not None and own not in names.all


def _top_md(folder: Root, reader: Reader, cap: int, found: list[Resource]) -> list[str]:
    """Copilot CLI's: the ``.md`` files (any case) right in the folder, hidden names left out (one level: nothing
    to cap)."""
    entries = reader.list_dir(folder.path, boundary=folder.boundary)
    return [e.name for e in entries if not e.is_dir and e.name[-3:].lower() == ".md" and not e.name.startswith(".")]


def _every_md(folder: Root, reader: Reader, cap: int, found: list[Resource]) -> list[str]:
    """Claude Code's: every ``*.md`` below the folder (breadth first, at most ``cap`` folders; links to folders
    are not followed), as paths relative to it."""
    out: list[str] = []
    queue: deque[str] = deque([""])
    visited = 0
    while queue:
        if visited == cap:
            error = f"custom commands scan truncated after {cap} directories (skills.max_dirs_per_root)"
            found.append(Resource(Kind.SKILL, folder.path, folder.scope, Status.EXCLUDED, error=error))
            break
        relative = queue.popleft()
        visited += 1
        where = f"{folder.path}/{relative}" if relative else folder.path
        for entry in reader.list_dir(where, boundary=folder.boundary):
            inner = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir:
                queue.append(inner)
            elif entry.name.endswith(".md"):
                out.append(inner)
            elif entry.is_file and "." not in entry.name:  # named as folders are: a group linked, checked out?
                _folder_as_text(f"{where}/{entry.name}", folder, reader, found, "no command in it is read")
    return out


def _folder_as_text(path: str, folder: Root, reader: Reader, found: list[Resource], lost: str) -> None:
    """``path`` as ``invalid`` when it is a link to a folder checked out as a file (:mod:`~agentcontext.fs.text_links`);
    a folder that is simply missing, or any other file, is nothing to say."""
    above, _, name = path.rpartition("/")
    names = reader.listed(above)  # no system call: this pass's listing of the folder above, if it took one
    if names is not None and name not in names.files:
        return
    error = text_links.folder_as_file(reader, path, folder.boundary, lost)
    if error is not None:
        found.append(Resource(Kind.SKILL, path, folder.scope, Status.INVALID, error=error))


def _read(
    folder: Root, relative: str, check: Callable[[str, str], SkillCheck], config: Config, reader: Reader
) -> Resource:
    """One command file into its resource."""
    path = f"{folder.path}/{relative}"
    scope, cap = folder.scope, config.snapshot.max_resource_bytes
    entry = reader.probe(path, folder.boundary)
    if entry.kind is not EntryKind.FILE:
        return _not_a_file(entry, folder)
    try:
        raw = reader.read(entry, cap + 1)
    except OSError as exc:
        return Resource(Kind.SKILL, path, scope, Status.UNREADABLE, entry.size, error=exc.strerror or str(exc))
    size, digest = max(entry.size, len(raw)), sha256(raw[:cap]).hexdigest()
    if len(raw) > cap:
        error = f"file size {size} exceeds per-resource cap of {cap} bytes"
        return Resource(Kind.SKILL, path, scope, Status.OVERSIZE, size, digest, error=error)
    text, decode_warnings = decode_file(raw)
    if text is None:
        return Resource(Kind.SKILL, path, scope, Status.INVALID, size, digest, error="binary file (contains NUL bytes)")
    checked = check(text, relative)
    if "\n" not in text and (linked := text_links.named_target(reader, path, folder.boundary, raw)) is not None:
        said = text_links.advice(linked, path, "the agent takes that text for the command")
        if checked.errors:
            checked = checked._replace(errors=(*checked.errors, said))
        else:
            checked = checked._replace(warnings=(*checked.warnings, said))
    warnings = (*decode_warnings, *checked.warnings, *hidden_text_warnings(text))
    if checked.errors:
        error = "; ".join(checked.errors)
        status = Status.DISABLED if error.startswith("disable-model-invocation") else Status.INVALID
        return Resource(Kind.SKILL, path, scope, status, size, digest, None, error, warnings, checked.name)
    name, description = checked.name, checked.description
    return make(Kind.SKILL, path, scope, Status.OK, size, digest, text, None, warnings, name, description, load=OFFERED)


def _claude(text: str, relative: str) -> SkillCheck:
    return claude_command_check(text, relative[:-3].replace("/", ":"))


def _copilot(text: str, relative: str) -> SkillCheck:
    return copilot_command_check(text, relative[:-3])


def _folder_name(skill: Resource) -> str:
    """Claude Code's: a skill is invoked by its folder's name (its frontmatter ``name`` is only shown)."""
    return os.path.basename(os.path.dirname(skill.path))


def _own_name(skill: Resource) -> str:
    return skill.name or ""


@dataclass(frozen=True, slots=True)
class _Rules:
    """One agent's reading of custom commands."""

    listing: Callable[[Root, Reader, int, list[Resource]], list[str]]  # the command files of a folder
    check: Callable[[str, str], SkillCheck]  # a command's text and path below its folder into its name and description
    answers_to: Callable[[Resource], str]  # the name a skill claims


_RULES = {"claude": _Rules(_every_md, _claude, _folder_name), "copilot": _Rules(_top_md, _copilot, _own_name)}


def _not_a_file(entry: Entry, folder: Root) -> Resource:
    """A command's name that is no regular file beneath the root: a link out, a dangling link, a folder."""
    if entry.kind is EntryKind.ESCAPE:
        status, error = Status.INVALID, entry.error or "symlink escapes its root"
    elif entry.kind is EntryKind.SPECIAL:
        status, error = Status.INVALID, f"{entry.special or 'a special file'}, not a regular file"
    elif entry.kind is EntryKind.DIRECTORY:
        status, error = Status.INVALID, "a folder named like a command file (a symlink to a folder is not followed)"
    else:
        status, error = Status.UNREADABLE, entry.error or "the file could not be read"
    return Resource(Kind.SKILL, entry.path, folder.scope, status, error=error)


def _claimed(
    found: list[Resource], skills: Sequence[Resource], answers_to: Callable[[Resource], str], disabled: Sequence[str]
) -> list[Resource]:
    """Each name to one offer: a skill of that name (exactly) wins, then the first command of it; names in
    ``skills.disabled`` are off (compared without case, as for skills)."""
    off = {name.casefold() for name in disabled}
    taken = {answers_to(s): s for s in skills if s.status is Status.OK and s.name}
    out: list[Resource] = []
    for command in found:
        name = command.name
        if command.status is not Status.OK or name is None:
            out.append(command)
        elif name.casefold() in off:
            out.append(command.with_status(Status.DISABLED, "disabled by skills.disabled"))
        elif (winner := taken.get(name)) is not None:
            what = "command" if is_command(winner) else f"{winner.scope} skill"
            out.append(command.with_status(Status.SHADOWED, f"shadowed by the {what} at {winner.path}"))
        else:
            taken[name] = command
            out.append(command)
    return out
