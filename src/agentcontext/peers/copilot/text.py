"""Copilot CLI's handling of an instruction file's text (1.0.102, as its binary was seen to send it).

* The bytes are sent as written (CRLF, leading blank lines, trailing spaces and newlines, HTML
  comments, frontmatter), but a leading UTF-8 BOM and invisible characters anywhere (zero-width,
  bidi controls, soft hyphen, tag characters) are removed; U+200D (ZWJ) and U+FE0F stay.
* A ``.instructions.md`` file (or a ``.claude/rules`` file) is always applied when its frontmatter
  has no ``applyTo`` (``paths``), or ``"**"`` or ``"*"``; any other pattern makes it path-scoped.
  A YAML list or a comma string are both shown joined by ``, ``. ``excludeAgent: coding-agent``
  drops it.
* ``@`` imports expand only in AGENTS.md and CLAUDE.md: the ``@path`` token stays and the file
  follows it inside ``<imported_custom_instruction source="<abs>">`` (:mod:`.imports`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agentcontext.skills.yaml_subset import YAML_ERRORS, pyyaml_load

# the invisible characters Copilot CLI removes (those seen removed, and their neighbours in the same blocks)
_INVISIBLE = re.compile(
    "[\u00ad\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_FRONTMATTER = re.compile(r"\A---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)")
_LINE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.MULTILINE)
ALWAYS = frozenset({"**", "*"})
CODING_AGENT = "coding-agent"


def cleaned(text: str) -> str:
    """The text as Copilot CLI sends it: without a leading BOM and without invisible characters."""
    return _INVISIBLE.sub("", text)


def has_hidden(text: str) -> bool:
    return _INVISIBLE.search(text.removeprefix("\ufeff")) is not None


class Front(NamedTuple):
    """What Copilot CLI reads in an instruction file's frontmatter."""

    patterns: tuple[str, ...]  # applyTo (paths: for a rules file); () when absent
    description: str
    excluded: bool  # excludeAgent names the coding agent (the CLI): the file is dropped

    @property
    def always(self) -> bool:
        return not self.patterns or ", ".join(self.patterns) in ALWAYS


def _fields(block: str) -> dict[str, object]:
    try:
        data = pyyaml_load(block)
    except YAML_ERRORS:  # a constructor's ValueError too (``applyTo: 2001-02-30``)
        data = None
    if isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    # unparsable YAML: each ``key: value`` line as its text (``applyTo: [unclosed`` shows as ``[unclosed``)
    return {m.group(1): m.group(2).strip("\"'") for m in _LINE.finditer(block)}


def _patterns(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(p for p in (str(item).strip() for item in items) if p)


def front(text: str, key: str = "applyTo") -> Front:
    """The frontmatter of ``text`` (BOM removed) as Copilot CLI reads it; ``key``: ``paths`` for a rules file."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return Front((), "", False)
    fields = _fields(match.group(1))
    description = fields.get("description")
    exclude = fields.get("excludeAgent")
    excluded = CODING_AGENT in (exclude if isinstance(exclude, list) else [exclude])
    return Front(_patterns(fields.get(key)), "" if description is None else str(description), excluded)


def block(text: str) -> str:
    """A copilot-instructions.md, AGENTS.md, CLAUDE.md or GEMINI.md as it frames it."""
    return f"<custom_instruction>\n{text}\n</custom_instruction>"


NESTED_HEADER = (
    "Here is a list of nested AGENTS.md files that contain additional agent instructions.\n"
    "These files provide context-specific instructions for different parts of the codebase.\n"
    "Please make sure to follow the rules specified in these files when working with the relevant areas.\n"
    "If you have not already read the file, use the `view` tool to acquire it.\n"
    "Make sure to acquire the instructions before making any changes to the code in those areas.\n"
    "| Directory | File Path | Description |\n"
    "| --------- | --------- | ----------- |"
)
SCOPED_HEADER = (
    "Here is a list of instruction files that contain rules for modifying or creating new code.\n"
    "These files are important for ensuring that the code is modified or created correctly.\n"
    "Please make sure to follow the rules specified in these files when working with the codebase.\n"
    "If you have not already read the file, use the `view` tool to acquire it.\n"
    "Make sure to acquire the instructions before making any changes to the code.\n"
    "| Pattern | File Path | Description |\n"
    "| ------- | --------- | ----------- |"
)


def nested_row(directory: str, shown: str) -> str:
    return f"| {directory} | '{shown}' | Agent instructions for {directory}**/* |"


def scoped_row(patterns: tuple[str, ...], shown: str, description: str) -> str:
    return f"| {', '.join(patterns)} | '{shown}' | {description} |"


_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def xml_escaped(text: str) -> str:
    return text.translate(_XML)


def reminder(shown: str, text: str) -> str:
    """One file sent after a read (a path-scoped file, or one below the work dir)."""
    return (
        f"<system_reminder>\nCustom instructions from {shown}. Apply these to any code you write here:\n\n"
        f"{xml_escaped(text)}\n</system_reminder>"
    )
