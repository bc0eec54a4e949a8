"""SKILL.md frontmatter: split the ``---`` block, parse its YAML, repair the usual slip.

Two parsers, because the peers disagree:

* :func:`parse` (Codex): the first line, trimmed, must be ``---``; the block ends at
  the next line that trims to ``---``; the block is YAML (safe loading, full syntax).
  When it does not parse, a repair pass quotes unquoted values containing ``": "``
  (``description: Deploy: ECS and Lambda``), leaving block scalars alone, and tries once
  more. A UTF-8 BOM and CRLF line ends are handled by the caller's decoding.
* :func:`parse_strict` (skills-ref): the text must start with ``---`` and is split on
  the string ``---`` (not on lines); the block is strictyaml, where every scalar is a
  string and flow style, duplicate keys and unquoted ``: `` are errors. Messages are
  skills-ref's own.

YAML is data here, never code, and never a bomb: aliases are allowed, but a block that
expands to more than :data:`MAX_VALUES` values is refused before anyone walks it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import yaml

from agentcontext.errors import FrontmatterError
from agentcontext.skills import yaml_subset
from agentcontext.skills.yaml_subset import YAML_ERRORS

MAX_VALUES = 10_000
_TOO_MANY = f"invalid YAML: frontmatter expands to more than {MAX_VALUES} values"
MISSING = "missing YAML frontmatter delimited by ---"

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KEY_VALUE = re.compile(r"^(?P<indent>\s*)(?P<key>[^\s#:\-][^:]*?):(?P<gap>[ \t]+)(?P<value>\S.*)$")
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*\s*(#.*)?$")
_NEEDS_NO_REPAIR = ('"', "'", "[", "{", "|", ">", "&", "*", "!", "#")
_FLOW_LIKE = ("[", "{", "@", "`")  # quoted when the value alone is not YAML (Codex does the same)
_COLON_SPACE = re.compile(r":\s")
MAX_STRICT_VALUES = 256  # strictyaml's time grows with the square of the values


class Frontmatter(NamedTuple):  # immutable, built per SKILL.md
    """A parsed frontmatter block: its fields, its verbatim YAML, the body after it, and the keys whose values
    YAML read only once quoted (none: the block was YAML as written)."""

    fields: Mapping[str, Any]
    raw: str
    body: str
    repaired: tuple[str, ...] = ()


def _delimit(text: str) -> tuple[str, str] | bool:
    """``(block, body)``; False when the first line is not ``---``, True when nothing closes it.

    The same as splitting on ``\n`` and scanning lines, without splitting the whole body:
    only the lines holding ``---`` are looked at, since only those can trim to it.
    """
    first_end = text.find("\n")
    if (text if first_end < 0 else text[:first_end]).strip() != "---":
        return False
    if first_end < 0:
        return True
    block_start = first_end + 1
    at = text.find("---", block_start)
    while at >= 0:
        start = text.rfind("\n", first_end, at) + 1  # the start of the line holding this "---"
        end = text.find("\n", at)
        line = text[start:] if end < 0 else text[start:end]
        if line.strip() == "---":
            block = text[block_start : start - 1] if start > block_start else ""
            return block, ("" if end < 0 else text[end + 1 :])
        if end < 0:
            break
        at = text.find("---", end + 1)
    return True


def split(text: str) -> tuple[str, str]:
    """Split on ``---`` lines: ``(yaml_block, body)``.

    Raises:
        FrontmatterError: no opening line, no closing line, or nothing between them.
    """
    parts = _delimit(text)
    if isinstance(parts, bool) or not parts[0].strip():
        raise FrontmatterError(MISSING)
    return parts


def parse(text: str, *, repair: bool = True, loader: type[yaml.SafeLoader] | None = None) -> Frontmatter:
    """Codex-style frontmatter: line-split, YAML, one repair attempt (unless ``repair=False``); ``loader``: how
    plain values are typed (by default PyYAML's safe loader, YAML 1.1; libyaml's when it is installed).

    Raises:
        FrontmatterError: the block is missing, is not a mapping, or is not YAML even after repair.
    """
    block, body = split(text)
    fields = _fast_fields(block, loader or yaml.SafeLoader)
    if fields is not None:
        return Frontmatter(fields, block, body)
    try:
        return Frontmatter(_load_mapping(block, loader), block, body)
    except YAML_ERRORS as first:
        repaired, keys = repair_block(block) if repair else (block, ())
        if keys:
            try:
                return Frontmatter(_load_mapping(repaired, loader), block, body, repaired=keys)
            except YAML_ERRORS:
                pass
        raise FrontmatterError(f"invalid YAML: {_yaml_message(first)}") from None


def parse_codex(text: str) -> Frontmatter:
    """Codex 0.171.0's reading: YAML that must give ``name``, ``description`` and ``metadata.short-description``
    as text (any scalar is; a mapping or a list is not) and ``metadata`` as a mapping; a block that does not, or
    is not YAML, is read once more after :func:`codex_repair`.

    Raises:
        FrontmatterError: the block is missing, or does not give those even after the repair.
    """
    block, body = split(text)
    try:
        fields = _fast_fields(block, yaml.SafeLoader)
        if fields is None:
            fields = _load_mapping(block)
    except YAML_ERRORS as exc:
        refused = f"invalid YAML: {_yaml_message(exc)}"
    else:
        if (wrong := _not_codex_text(fields)) is None:
            return Frontmatter(fields, block, body)
        refused = f"invalid {wrong}: Codex does not load the skill"
    repaired, keys = codex_repair(block)
    if keys:
        try:
            fixed = _load_mapping(repaired)
        except YAML_ERRORS:
            pass
        else:
            if _not_codex_text(fixed) is None:
                return Frontmatter(fixed, block, body, repaired=keys)
    raise FrontmatterError(refused)


def _not_codex_text(fields: Mapping[str, Any]) -> str | None:
    """What of ``fields`` Codex's frontmatter type refuses (``name: {x: 1}``), said; None when it takes them."""
    metadata = fields.get("metadata")
    values = [("name", fields.get("name")), ("description", fields.get("description"))]
    if isinstance(metadata, dict):
        values.append(("metadata.short-description", metadata.get("short-description")))
    elif metadata is not None:
        return f"metadata: a {_kind(metadata)}, not a mapping"
    for key, value in values:
        if isinstance(value, dict | list):
            return f"{key}: a {_kind(value)}, not text"
    return None


def _kind(value: Any) -> str:
    return "mapping" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


def parse_coder(text: str) -> Frontmatter:
    """Coder's ``ParseSkillFrontmatter``: its delimiter rules and its messages, YAML without repair.

    Raises:
        FrontmatterError: ``missing opening/closing frontmatter delimiter`` or ``parse frontmatter YAML: ...``.
    """
    parts = _delimit(text)
    if isinstance(parts, bool):
        opening = "closing" if parts else "opening"
        raise FrontmatterError(f"missing {opening} frontmatter delimiter")
    block, body = parts
    if not block.strip():
        return Frontmatter({}, block, body)
    try:
        fields = _fast_fields(block)
        return Frontmatter(fields if fields is not None else _load_mapping(block), block, body)
    except YAML_ERRORS as exc:
        raise FrontmatterError(f"parse frontmatter YAML: {_yaml_message(exc)}") from None


# The fastest path, before the YAML subset reader: a block of ``key: value`` lines whose values
# YAML would read as plain strings, found by one regex.
_YAML_WORDS = frozenset(["y", "n", "yes", "no", "on", "off", "true", "false", "null"])  # YAML 1.1: not plain strings
# The fastest path, for what nearly every SKILL.md starts with: "---", lines of an ASCII key,
# ": " and printable ASCII starting with a letter, without ":" or "#", then "---". Possessive
# quantifiers: nothing is ever tried twice, so the match stays linear on hostile text.
_PLAIN = re.compile(r"---\n((?:[A-Za-z_][A-Za-z0-9_-]*+: [A-Za-z][ -\"$-9;-~]*+\n)++)---\n")


def parse_plain(text: str) -> Frontmatter | None:
    """What :func:`parse` and :func:`parse_coder` return for the commonest frontmatter, found with
    one regex and no YAML; None for any other text, which they then read. A property test checks it.
    """
    match = _PLAIN.match(text)
    if match is None:
        return None
    block = match.group(1)[:-1]
    fields: dict[str, Any] = {}
    for line in block.split("\n"):
        key, _, value = line.partition(": ")
        if value[-1] == " " or (len(value) <= 5 and value.lower() in _YAML_WORDS):
            return None  # YAML trims the space, or reads a boolean or null
        fields[key] = value
    if 2 * len(fields) + 1 > MAX_VALUES:
        return None
    return Frontmatter(fields, block, text[match.end() :])


# The same rule, for a validator that needs only the name and the description: one match
# finds both (a group in a repetition keeps its last match, as YAML keeps a key's last value).
# A value is also refused here when YAML would trim a space or read a boolean or null.
_PLAIN_VALUE = (
    r"(?!(?:[Yy](?:[Ee][Ss])?|[Nn][Oo]?|[Oo](?:[Nn]|[Ff][Ff])|[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Nn][Uu][Ll][Ll])\n)"
    r"[A-Za-z][ -\"$-9;-~]*+(?<! )"
)
_PLAIN_SKILL = re.compile(
    rf"---\n(?:(?:name: (?P<name>{_PLAIN_VALUE})|description: (?P<description>{_PLAIN_VALUE})"
    rf"|[A-Za-z_][A-Za-z0-9_-]*+: {_PLAIN_VALUE})\n)++---\n"
)
_PLAIN_SKILL_BYTES = 5 * (MAX_VALUES // 2)  # a shorter block has fewer than MAX_VALUES // 2 lines ("k: v\n")


def plain_skill(text: str) -> tuple[str | None, str | None, str] | None:
    """The ``name``, the ``description`` and the verbatim block that :func:`parse_plain` would give,
    found by one regex and no dict; None where :func:`parse_plain` gives None (and for huge blocks).
    A property test checks it against :func:`parse`.
    """
    match = _PLAIN_SKILL.match(text)
    if match is None:
        return None
    end = match.end()
    if end >= _PLAIN_SKILL_BYTES:
        return None  # as many lines as MAX_VALUES allows: left to parse_plain, which counts them
    name, description = match.group("name", "description")
    return name, description, text[4 : end - 5]


def fast_load(block: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> dict[str, Any] | None:
    """``yaml.load(block, loader)`` (by default ``yaml.safe_load``) for a mapping in the subset
    :mod:`~agentcontext.skills.yaml_subset` reads (all but unusual frontmatter) of at most :data:`MAX_VALUES`
    values; None where PyYAML must decide."""
    loaded = yaml_subset.load(block, loader)
    return loaded[0] if loaded is not None and loaded[1] <= MAX_VALUES else None


def _fast_fields(block: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> dict[str, Any] | None:
    """What :func:`_load_mapping` returns or raises for a block :mod:`yaml_subset` reads; None for the others."""
    loaded = yaml_subset.load(block, loader)
    if loaded is None:
        return None
    if loaded[1] > MAX_VALUES:
        raise FrontmatterError(_TOO_MANY)
    return loaded[0]


def _load_mapping(block: str, loader: type[yaml.SafeLoader] | None = None) -> dict[str, Any]:
    data = yaml_subset.pyyaml_load(block, loader or _Loader)
    if not isinstance(data, dict):
        raise FrontmatterError("invalid YAML: frontmatter must be a mapping of keys to values")
    _check_size(data)
    return {str(key): value for key, value in data.items()}


def _check_size(data: Any) -> None:
    """Refuse alias bombs: count values as a walker would see them, stopping early."""
    budget = MAX_VALUES
    stack = [data]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            raise FrontmatterError(_TOO_MANY)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _yaml_message(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 2}, column {mark.column + 1}"
    return str(problem)


def repair_block(block: str) -> tuple[str, tuple[str, ...]]:
    """The block with each unquoted value YAML would misread quoted (one holding ``": "``, or starting like a
    flow value that is not YAML alone), and the keys of those values; block scalars are left as they are."""
    out: list[str] = []
    keys: list[str] = []
    block_indent: int | None = None
    for line in block.split("\n"):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        match = _KEY_VALUE.match(line)
        if match is None:
            out.append(line)
            continue
        value = match.group("value").rstrip()
        scalar, comment = _split_comment(value)
        if _BLOCK_SCALAR.match(value):
            block_indent = indent
            out.append(line)
        elif scalar and _needs_quotes(scalar):
            quoted = json.dumps(scalar, ensure_ascii=False)
            out.append(f"{match.group('indent')}{match.group('key')}: {quoted}{comment}")
            keys.append(match.group("key"))
        else:
            out.append(line)
    return "\n".join(out), tuple(keys)


def codex_repair(block: str) -> tuple[str, tuple[str, ...]]:
    """Codex 0.171.0's ``repair_frontmatter_scalar_fields``: every ``key: value`` line whose value holds a colon
    before whitespace, or starts like a flow value (``[ { @ ` ``) that is not YAML alone, gets that value
    single-quoted, flow or not (``description: {a: 1}`` becomes the text ``{a: 1}``); a value starting with a
    quote, and the lines of a block scalar, stay as they are. Returns the block and the keys of the values
    quoted (none: nothing changed)."""
    keys: list[str] = []
    block_indent: int | None = None
    out: list[str] = []
    for line in block.split("\n"):  # Rust's lines(): line breaks only, not the other separators splitlines() takes
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        key, colon, value = line.partition(":")
        if not colon or not key.strip() or (value and not value[0].isspace()):
            out.append(line)
            continue
        trimmed = value.lstrip()
        gap = value[: len(value) - len(trimmed)]
        scalar, comment = _split_comment(trimmed)
        scalar = scalar.rstrip()
        first = scalar[:1]
        if first in ("|", ">"):
            block_indent = indent
        if first in ("", "'", '"', "|", ">") or (
            _COLON_SPACE.search(scalar) is None and not (scalar.startswith(_FLOW_LIKE) and not _is_yaml(scalar))
        ):
            out.append(line)
            continue
        quoted = scalar.replace("'", "''")
        out.append(f"{key}:{gap}'{quoted}'{comment}")
        keys.append(key.strip())
    return "\n".join(out), tuple(keys)


def _is_yaml(scalar: str) -> bool:
    try:
        yaml_subset.pyyaml_load(scalar, _Loader)
    except YAML_ERRORS:
        return False
    return True


def _split_comment(value: str) -> tuple[str, str]:
    """``Deploy: ECS  # note`` -> ``("Deploy: ECS", "  # note")``: a ``#`` after a space opens a comment."""
    for index, char in enumerate(value):
        if char == "#" and (index == 0 or value[index - 1].isspace()):
            scalar = value[:index].rstrip()
            return scalar, value[len(scalar) :]
    return value, ""


def _needs_quotes(scalar: str) -> bool:
    if scalar.startswith(_FLOW_LIKE):  # ``tags: [next,@supabase/ssr]``, ``hint: @file``
        return not _is_yaml(scalar)
    if scalar.startswith(_NEEDS_NO_REPAIR):
        return False
    return bool(_COLON_SPACE.search(scalar)) or scalar.endswith(":")


def parse_strict(text: str) -> dict[str, Any]:
    """skills-ref's parser, messages included.

    One difference: a block of more than :data:`MAX_STRICT_VALUES` values is refused
    before strictyaml sees it (10,000 keys would take strictyaml over a minute).

    Raises:
        FrontmatterError: with skills-ref's message.
    """
    if not text.startswith("---"):
        raise FrontmatterError("SKILL.md must start with YAML frontmatter (---)")
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise FrontmatterError("SKILL.md frontmatter not properly closed with ---")
    if _too_many_values(parts[1]):
        raise FrontmatterError(
            f"Invalid YAML in frontmatter: more than {MAX_STRICT_VALUES} values, too many to check strictly"
        )
    import strictyaml  # only here (the skills-ref check): it and dateutil cost a process ~40 ms to import

    try:
        metadata = strictyaml.load(parts[1]).data
    except strictyaml.YAMLError as exc:
        raise FrontmatterError(f"Invalid YAML in frontmatter: {exc}") from None
    if not isinstance(metadata, dict):
        raise FrontmatterError("SKILL.md frontmatter must be a YAML mapping")
    if isinstance(metadata.get("metadata"), dict):
        metadata["metadata"] = {str(k): str(v) for k, v in metadata["metadata"].items()}
    return dict(metadata)


def _too_many_values(block: str) -> bool:
    """Count values with PyYAML's (linear) event parser before strictyaml's quadratic one runs.

    A block PyYAML cannot parse is left to strictyaml, whose message is the one to report.
    """
    count = 0
    try:
        for event in yaml.parse(block, Loader=_Loader):
            if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent | yaml.AliasEvent):
                count += 1
                if count > MAX_STRICT_VALUES:
                    return True
    except yaml.YAMLError:
        return False
    return False


def strict_body(text: str) -> str:
    """The body as skills-ref sees it (after the second ``---``, stripped)."""
    parts = text.split("---", 2)
    return parts[2].strip() if len(parts) == 3 else ""
