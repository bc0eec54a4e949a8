"""Codex's own user settings where they change what it reads (Codex 0.171.0).

``$CODEX_HOME/config.toml`` (``~/.codex/config.toml``) may set ``project_doc_fallback_filenames``
(names tried in a folder after ``AGENTS.override.md`` and ``AGENTS.md``, in order; each trimmed,
blanks and repeats dropped) and ``project_doc_max_bytes`` (the doc budget; 0 sends no project
doc). Under the ``codex`` profile they replace the profile's defaults of
``project_doc.fallback_filenames`` and ``project_doc.max_bytes``; anything the user sets for
agentcontext itself (their config file, ``AGENTCONTEXT_*``, a flag) still wins over them.

Only the user's file is read: a repository's ``.codex/config.toml`` changes nothing here.
(Codex reads it for a project the user marked ``trusted`` in that same file; we do not, so
a trusted project's own names and budget are not followed.) A name that is not a file name
inside its folder (``../x``, ``/etc/x``) is left out with a warning, as is a value of the
wrong type or a file that is not TOML (on which Codex itself would refuse to start).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from typing import Any

from agentcontext.settings.declared import check_name

CONFIG = "config.toml"
MAX_BYTES = 1024 * 1024  # a larger config.toml is not read
_FIXED = ("AGENTS.override.md", "AGENTS.md")  # Codex tries these first in every folder
_BUDGET_LIMIT = 1 << 40


@dataclass(frozen=True, slots=True)
class CodexSettings:
    """What ``config.toml`` gives, as our dotted settings, and what could not be used."""

    path: str
    values: dict[str, Any]
    warnings: tuple[str, ...] = ()


def read(codex_home: str) -> CodexSettings:
    """The settings of ``codex_home``'s ``config.toml`` (none when it is missing)."""
    path = os.path.join(codex_home, CONFIG)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return CodexSettings(path, {})
    except OSError as exc:
        return CodexSettings(path, {}, (f"{path}: not read ({exc.strerror or exc})",))
    if len(raw) > MAX_BYTES:
        return CodexSettings(path, {}, (f"{path}: not read (over {MAX_BYTES} bytes)",))
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        said = "nested too deeply" if isinstance(exc, RecursionError) else exc
        return CodexSettings(path, {}, (f"{path}: not TOML ({said}); Codex would not start with it",))
    values: dict[str, Any] = {}
    warnings: list[str] = []
    if "project_doc_fallback_filenames" in data:
        names, problems = _fallbacks(data["project_doc_fallback_filenames"])
        values["project_doc.fallback_filenames"] = names
        warnings += [f"{path}: project_doc_fallback_filenames: {problem}" for problem in problems]
    if "project_doc_max_bytes" in data:
        budget = data["project_doc_max_bytes"]
        if isinstance(budget, int) and not isinstance(budget, bool) and 0 <= budget <= _BUDGET_LIMIT:
            values["project_doc.max_bytes"] = budget
        else:
            warnings.append(f"{path}: project_doc_max_bytes {budget!r} ignored: not a byte count")
    return CodexSettings(path, values, tuple(warnings))


def _fallbacks(value: Any) -> tuple[list[str], list[str]]:
    """Codex's candidate names after its own two, and why any given name was left out."""
    if not isinstance(value, list):
        return [], [f"{value!r} ignored: not a list of names"]
    names: list[str] = []
    problems: list[str] = []
    for item in value:
        if not isinstance(item, str):
            problems.append(f"{item!r} ignored: not a name")
            continue
        name = item.strip()
        if not name or name in _FIXED or name in names:
            continue
        problem = check_name(name)
        if problem:
            problems.append(f"{problem}: left out (nothing outside a folder of the chain is read)")
            continue
        names.append(name)
    return names, problems
