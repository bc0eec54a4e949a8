"""The skills list OpenCode sends (1.18.33), byte for byte, its built-in ``customize-opencode`` aside.

``<available_skills>`` with one ``<skill>`` (name, description, location) per skill that has a
description, sorted as JavaScript's ``localeCompare`` sorts (ICU's root collation: punctuation
before digits before letters, case and accents only breaking ties, lower case first). Name and
description are written as they are; the location (the SKILL.md's absolute path) is XML-escaped.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from agentcontext.resource import Resource, Status

BUILTIN = "customize-opencode"
# ICU root order of ASCII whitespace, punctuation and symbols (all before digits, then letters)
_VARIABLE = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY = {char: index for index, char in enumerate(_VARIABLE)}


def _weights(char: str) -> tuple[int, int, int]:
    if char in _PRIMARY:
        return 1, _PRIMARY[char], 0
    if char.isdigit():
        return 2, int(char) if char.isascii() else ord(char), 0
    if char.isalpha():
        return 3, ord(char.casefold()[0]) if len(char.casefold()) else ord(char), 0
    return 4, ord(char), 0


def collation_key(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...], tuple[int, ...]]:
    """A sort key close to ICU's root collation: primary (base characters), accents, then case."""
    primary: list[tuple[int, int]] = []
    accents: list[int] = []
    cases: list[int] = []
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.combining(char):
            if accents:
                accents[-1] += ord(char)
            continue
        group, weight, _ = _weights(char)
        primary.append((group, weight))
        accents.append(0)
        cases.append(1 if char.isupper() else 0)
    return tuple(primary), tuple(accents), tuple(cases)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def opencode_skills(skills: Sequence[Resource]) -> list[Resource]:
    """The skills OpenCode lists, in its order."""
    listed = [s for s in skills if s.status is Status.OK and s.name is not None and s.description is not None]
    return sorted(listed, key=lambda s: collation_key(s.name or ""))


def opencode_skills_xml(skills: Sequence[Resource]) -> str:
    """The ``<available_skills>`` block OpenCode sends, without its built-in ("" when none is left)."""
    listed = opencode_skills(skills)
    if not listed:
        return ""
    lines = ["<available_skills>"]
    for s in listed:
        lines += [
            "  <skill>",
            f"    <name>{s.name}</name>",
            f"    <description>{s.description}</description>",
            f"    <location>{_escape(s.path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
