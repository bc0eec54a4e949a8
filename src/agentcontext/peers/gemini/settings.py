"""Gemini CLI's own settings where they change what loads: ``context.fileName`` (0.61.0).

Gemini CLI reads ``~/.gemini/settings.json`` and, in a trusted folder other than home, the
work dir's ``.gemini/settings.json`` (JSON with comments); the work dir's value of a key
replaces the user's. ``context.fileName`` (a name or a list of names) gives the context file
names, each trimmed and normalised, with ``GEMINI.md`` (our ``project_doc`` names) after them:
naming files never turns ``GEMINI.md`` off. A name may hold folders (``docs/RULES.md``); it is
joined to each folder of the walk as Node joins paths (``/x`` is ``<folder>/x``).

What we read of it is bounded as every read is: the names a repository's settings give are
used in the repository's own folders only, and a name whose path leaves them (``../x``) is
refused; ``~/.gemini/<name>`` is read for the user's names only (a repository must not make us
read a file of the user's, such as ``~/.gemini/settings.json`` itself).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

from agentcontext.fs.files import Reader
from agentcontext.layout import Layout
from agentcontext.peers.config_file import read_json, strip_comments
from agentcontext.resource import Scope

__all__ = ["ContextNames", "context_names", "joined", "strip_comments"]
from agentcontext.settings.config import Config

SETTINGS = "settings.json"


@dataclass(frozen=True, slots=True)
class ContextNames:
    """The context file names of one scan: in the walk's folders, in ``~/.gemini``, and where they came from."""

    project: tuple[str, ...]
    home: tuple[str, ...]
    origin: str | None = None  # the settings file that named them (None: the profile's names)
    chosen: tuple[str, ...] = ()  # the names that file gives
    problems: tuple[tuple[str, Scope, str], ...] = ()  # a settings file that could not be used, and why

    def reason(self, name: str) -> str | None:
        if self.origin is None or name not in self.chosen:
            return None
        return f"named by context.fileName in {self.origin}"


def _file_names(path: str, boundary: str, reader: Reader) -> tuple[Any, str | None]:
    """``context.fileName`` of one settings file (absent: ``...``), and why the file could not be used."""
    data, problem = read_json(path, boundary, reader, "Gemini CLI's settings", strip_comments)
    if problem is not None and "not valid JSON" in problem:
        return ..., f"{problem}: Gemini CLI ignores it"
    if data is ...:
        return ..., problem
    context = data.get("context") if isinstance(data, dict) else None
    if not isinstance(context, dict) or "fileName" not in context:
        return ..., None
    return context["fileName"], None


def _names(value: Any) -> tuple[str, ...]:
    """``setGeminiMdFilename``'s list: each name trimmed and normalised, blanks and repeats dropped."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = [posixpath.normpath(item.strip()) for item in items if isinstance(item, str) and item.strip()]
    return tuple(dict.fromkeys(name for name in names if "\x00" not in name))


def joined(directory: str, name: str) -> str:
    """Node's ``path.join(directory, name)``, normalised: an absolute name stays below ``directory``."""
    return posixpath.normpath(f"{directory}/{name}")


def context_names(layout: Layout, config: Config, reader: Reader) -> ContextNames:
    """The names Gemini CLI reads, from its settings files, bounded as the module docstring says."""
    base = config.project_doc.candidates
    problems: list[tuple[str, Scope, str]] = []
    user: Any = ...
    user_file = None
    for root in layout.home_dirs:  # ~/.gemini
        user_file = os.path.join(root.path, SETTINGS)
        user, problem = _file_names(user_file, root.boundary, reader)
        problems += [(user_file, Scope.HOME, problem)] if problem else []
        break
    project: Any = ...
    project_file = os.path.join(layout.work_dir, ".gemini", SETTINGS)
    if not any(os.path.dirname(root.path) == layout.work_dir for root in layout.home_dirs):  # not home itself
        project, problem = _file_names(project_file, layout.doc_boundary, reader)
        problems += [(project_file, Scope.PROJECT, problem)] if problem else []
    user_names = tuple(dict.fromkeys((*_names(user), *base))) if user is not ... and user else base
    setting, origin = (project, project_file) if project is not ... else (user, user_file)
    chosen = _names(setting) if setting is not ... and setting else ()
    names = tuple(dict.fromkeys((*chosen, *base)))
    home = tuple(name for name in names if name in user_names)  # never a name only the repository chose
    return ContextNames(names, home, origin if chosen else None, chosen, tuple(problems))
