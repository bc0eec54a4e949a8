"""OpenCode's own settings where they change what loads: ``instructions`` (1.18.33, read from its binary).

OpenCode merges its config files in this order, each list of ``instructions`` appended to the
ones before it (a repeat kept once, at its first place): the user's ``~/.config/opencode/``
``config.json``, ``opencode.json``, ``opencode.jsonc`` (these three merged first: a later file's
list replaces an earlier one's), the file ``$OPENCODE_CONFIG`` names (read only when the caller passes
an environment naming a file beneath home: a scan does not), then the project's
``opencode.json`` and ``opencode.jsonc`` of each folder from the worktree root down to the work
dir, then ``opencode.json`` and ``opencode.jsonc`` in each ``.opencode`` folder from the work dir
up to the root, then ``~/.opencode``'s. Files are JSON with comments and trailing commas.

Each entry is kept with who named it: the user's entries may name any file beneath home or the
project; a project's only what lies inside the repository (:mod:`.instructions` enforces it).
OpenCode substitutes ``{env:X}`` and ``{file:path}`` in a config's text; we do not (an entry
holding one is taken as written, and listed as such when it matches nothing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from agentcontext.fs.files import Reader
from agentcontext.peers.config_file import read_json, strip_comments
from agentcontext.resource import Scope

USER_FILES = ("config.json", "opencode.json", "opencode.jsonc")
PROJECT_FILES = ("opencode.json", "opencode.jsonc")
MAX_ENTRIES = 256  # instructions entries taken, every file together: each is a walk of up to 2,000 folders


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``instructions`` entry and the config file that named it."""

    pattern: str
    origin: str
    scope: Scope  # USER: the user's config (home, $OPENCODE_CONFIG); PROJECT: a repository's


@dataclass(frozen=True, slots=True)
class Instructions:
    entries: tuple[Entry, ...]
    problems: tuple[tuple[str, Scope, str], ...] = ()  # a config file that could not be used, and why


def _jsonc(text: str) -> str:
    return "{}" if not text.strip() else strip_comments(text, trailing_commas=True)


def _read(path: str, boundary: str, reader: Reader) -> tuple[Any, str | None]:
    """``instructions`` of one config file (absent: ``...``), and why the file could not be used."""
    data, problem = read_json(path, boundary, reader, "OpenCode's config", _jsonc)
    if problem is not None and "not valid JSON" in problem:
        return ..., f"{problem}: OpenCode refuses to start with it"
    if data is ... or not isinstance(data, dict) or "instructions" not in data:
        return ..., problem
    value = data["instructions"]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return ..., "OpenCode's config: instructions is not a list of strings; OpenCode refuses it"
    return value, None


def instructions(
    work_dir: str, walk: tuple[str, ...], home: str, project: str, reader: Reader, environ: dict[str, str]
) -> Instructions:
    """Every ``instructions`` entry, in OpenCode's order; ``walk``: the folders from the work dir up to the root."""
    problems: list[tuple[str, Scope, str]] = []
    entries: dict[str, Entry] = {}

    def add(values: Any, origin: str, scope: Scope) -> None:
        if values is ...:
            return
        past = _take(entries, values, origin, scope)
        if past:
            said = (
                f"{len(past)} instructions entries past the first {MAX_ENTRIES} are not matched ({past[0][:80]!r} ...)"
            )
            problems.append((origin, scope if scope is Scope.PROJECT else Scope.HOME, said))

    config_dir = os.path.join(home, ".config", "opencode")
    user: Any = ...
    user_origin = ""
    for name in USER_FILES:
        path = os.path.join(config_dir, name)
        value, problem = _read(path, home, reader)
        problems += [(path, Scope.HOME, problem)] if problem else []
        if value is not ...:
            user, user_origin = value, path
    add(user, user_origin, Scope.USER)
    custom = environ.get("OPENCODE_CONFIG", "")
    if custom and os.path.isabs(custom) and _within(custom, home):  # the user's own file, read beneath home
        value, problem = _read(custom, home, reader)
        problems += [(custom, Scope.HOME, problem)] if problem else []
        add(value, custom, Scope.USER)
    inside = [d for d in walk if _within(d, project)]  # a repository's configs: its own folders only
    for directory in reversed(inside):
        for name in PROJECT_FILES:
            path = os.path.join(directory, name)
            value, problem = _read(path, project, reader)
            problems += [(path, Scope.PROJECT, problem)] if problem else []
            add(value, path, Scope.PROJECT)
    dot = [(os.path.join(d, ".opencode"), project, Scope.PROJECT) for d in inside]
    for folder, boundary, scope in [*dot, (os.path.join(home, ".opencode"), home, Scope.USER)]:
        for name in PROJECT_FILES:
            path = os.path.join(folder, name)
            value, problem = _read(path, boundary, reader)
            problems += [(path, Scope.HOME if scope is Scope.USER else scope, problem)] if problem else []
            add(value, path, scope)
    return Instructions(tuple(entries.values()), tuple(problems))


def _take(entries: dict[str, Entry], values: list[str], origin: str, scope: Scope) -> list[str]:
    """``values`` added to ``entries`` (a pattern named before keeps its first place) up to ``MAX_ENTRIES``; what
    is past it."""
    past: list[str] = []
    for value in values:
        if value in entries:
            continue
        if len(entries) < MAX_ENTRIES:
            entries[value] = Entry(value, origin, scope)
        else:
            past.append(value)
    return past


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
