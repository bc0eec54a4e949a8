"""A Cursor rule file's frontmatter, read as Cursor's documentation describes it.

A ``.mdc`` rule starts with a ``---`` block of three keys: ``description`` (a string),
``globs`` (a comma-separated string) and ``alwaysApply`` (a boolean). Cursor reads the block
line by line rather than as YAML (``globs: *.ts`` would be a YAML alias), so this does too:
``key: value`` lines, a value's surrounding quotes removed. What the keys make of a rule:

* ``alwaysApply: true`` (the bare word; the string ``"true"`` is not true): always, ``startup``;
* ``globs`` set: attached when a matching file is in context, ``path_scoped``;
* ``description`` only: the model asks for it by its description, ``agent_requested``;
* none of them: only when mentioned as ``@rule``, ``manual``.

Sources disagree on two points, and this module picks: a YAML list under ``globs`` is
accepted, and a file without frontmatter (a plain ``.md`` in a rules folder) is ``manual``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcontext.resource import LoadType

RULE_SUFFIXES = (".mdc", ".md")
RULES_DIR = ".cursor/rules"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule file as Cursor applies it: how it loads, its globs, its description, and the text it sends."""

    load: LoadType
    globs: tuple[str, ...]
    description: str | None
    body: str
    warnings: tuple[str, ...] = ()


def parse(text: str) -> Rule:
    """The rule a file's text makes (its frontmatter removed from what it sends)."""
    fields, body, warnings = _frontmatter(text)
    globs = _globs(fields.get("globs"))
    description = _scalar(fields.get("description"))
    always = fields.get("alwaysapply")
    is_true = isinstance(always, str) and always.lower() == "true"
    if isinstance(always, str) and not is_true and (_scalar(always) or "").lower() == "true":
        warnings = (*warnings, 'alwaysApply is the string "true", not the boolean: Cursor does not apply it always')
    if is_true:
        return Rule(LoadType.STARTUP, globs, description, body, warnings)
    if globs:
        return Rule(LoadType.PATH_SCOPED, globs, description, body, warnings)
    if description:
        return Rule(LoadType.AGENT_REQUESTED, (), description, body, warnings)
    return Rule(LoadType.MANUAL, (), description, body, warnings)


def _frontmatter(text: str) -> tuple[dict[str, str | list[str]], str, tuple[str, ...]]:
    """The block's keys (lower-cased), the text after it, and what could not be read."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return {}, text, ()
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            break
    else:
        return {}, text, ("a frontmatter block that never closes: read as plain text",)
    fields: dict[str, str | list[str]] = {}
    last: str | None = None
    for line in lines[1:end]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and last is not None:  # a YAML list item under the last key
            value = fields.get(last)
            items = value if isinstance(value, list) else []
            fields[last] = [*items, stripped[2:].strip()]
            continue
        key, colon, value = stripped.partition(":")
        if not colon:
            continue
        last = key.strip().lower()
        fields[last] = value.strip()
    return fields, "".join(lines[end + 1 :]), ()


def _scalar(value: str | list[str] | None) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value or None


def _globs(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):  # a flow list
            text = text[1:-1]
        items = text.split(",")
    else:
        items = value
    out = (_scalar(item) for item in items)
    return tuple(glob for glob in out if glob)
