"""Whether a SKILL.md is usable, under one of three validation modes.

``lenient`` (default; the Agent Skills client guidance)
    The YAML gets one repair attempt. A missing name falls back to the folder name; a
    name that is too long, not kebab-case or unlike its folder is a warning; a missing
    description or unusable YAML makes the skill ``invalid``.
``codex`` (Codex 0.171.0 as observed)
    ``lenient``, for a SKILL.md that is UTF-8 from its first byte (one with a BOM, invalid
    UTF-8 or UTF-16 is not loaded), its YAML read and repaired as Codex does: a name or
    description YAML gives as a mapping or a list is read again with values holding ``: ``
    quoted (``description: {a: 1}`` is the text ``{a: 1}``), else the skill is not loaded.
``spec`` (skills-ref)
    strictyaml and skills-ref's rules and messages exactly: allowed fields, NFKC names
    of at most 64 lowercase letters, digits and hyphens matching the folder, description
    of 1 to 1024 characters, compatibility of at most 500.
``coder`` (Coder)
    YAML without repair; ``name`` is required, must equal the folder and be kebab-case;
    ``description`` is optional.
``claude`` (Claude Code 2.1.332)
    A skill is named by its folder; a different frontmatter name shows as ``folder (name)``.
    No frontmatter is fine. A missing description falls back to the body's first non-empty
    line (``#`` marks dropped, over 100 characters cut to 97 and ``...``); ``when_to_use``
    is appended after `` - ``. ``disable-model-invocation: true`` keeps it out of the list.
``gemini`` (Gemini CLI 0.61.0)
    The file as written must start with ``---`` and a line break (a BOM first: no frontmatter); the
    block's YAML must give ``name`` and ``description`` as strings, else a line reader takes
    ``name:`` and ``description:`` lines (with the indented lines after a description); both are
    required (an empty one is fine). The name has ``:\\/<>*?"|`` made ``-``; the description is
    kept as written (a ``|`` block keeps its line breaks). The name need not match the folder.
``opencode`` (OpenCode 1.18.33, gray-matter with js-yaml)
    The file must start with ``---`` (not ``----``); the frontmatter runs to the next line starting
    with ``---``, or to the end when none closes it. YAML that does not parse, or whose ``name`` is not
    a string, drops the skill; so does a ``description`` that is not a string. Without a description
    OpenCode loads the skill but never lists it (invalid here). Name and description are taken as
    written; the name need not match the folder. ``yes``/``no`` are strings, as in YAML 1.2.
``copilot`` (GitHub Copilot CLI 1.0.102)
    Frontmatter required, its YAML valid. ``name`` trimmed, spaces made ``-`` (the folder when
    absent); it must be a string of at most 64 characters from ``[A-Za-z0-9_.: -]`` starting with a
    letter or digit. ``description`` as YAML gives it (spaces and a block's final line break kept),
    at most 1,024 characters; absent: the body's first three lines that are neither blank nor a
    heading, trimmed and joined by a space, cut to 1,024. ``disable-model-invocation: true`` keeps it
    out of the list.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from agentcontext.errors import FrontmatterError, UnsafePathError
from agentcontext.fs.textdecode import UTF8_BOM, UTF16_BOMS, decode_file, garbled_utf16
from agentcontext.peers.claude.text import js_trim
from agentcontext.sanitize import hidden_text_warnings
from agentcontext.settings.config import Validation
from agentcontext.skills.folder import open_folder
from agentcontext.skills.frontmatter import (
    Frontmatter,
    fast_load,
    parse,
    parse_coder,
    parse_codex,
    parse_plain,
    parse_strict,
    plain_skill,
)
from agentcontext.skills.yaml_subset import YAML_ERRORS, pyyaml_load

MAX_NAME = 64
MAX_QUALIFIED_NAME = 128
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
READ_CAP = 4 * 1024 * 1024  # what validate reads of a SKILL.md at most (its size is still reported)
ALLOWED_FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# the validation modes whose agent reads a SKILL.md's bytes as they are (a BOM is no frontmatter to Gemini CLI)
READS_AS_WRITTEN = frozenset({"gemini", "copilot"})
# the agents that read a SKILL.md as UTF-8 whatever it is (a UTF-16 one arrives garbled, its NUL bytes kept), by mode
_READS_UTF8 = {"claude": "Claude Code", "gemini": "Gemini CLI", "opencode": "OpenCode", "copilot": "Copilot CLI"}
_STRICT_UTF8 = {"codex": "Codex"}  # reads nothing but UTF-8 from the first byte: no BOM, no bad sequence


class SkillCheck(NamedTuple):  # immutable, built per SKILL.md
    """The outcome of validating one SKILL.md."""

    name: str | None
    description: str | None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    frontmatter: str = ""  # the YAML block verbatim, when it could be split

    @property
    def valid(self) -> bool:
        return not self.errors


_new_check = tuple.__new__  # a SkillCheck from all its fields, without the Python-level __new__ (half the cost)


def _clean(text: str) -> bool:
    """Whether ``text`` is not empty and :func:`collapse` keeps it: printable, single spaces, none at the ends."""
    return text.isprintable() and "  " not in text and text[:1] not in ("", " ") and text[-1] != " "


def collapse(value: str) -> str:
    """Codex's ``sanitize_single_line``: whitespace runs become one space, ends trimmed.

    Control characters (NUL, BEL, ...) count as whitespace, as in Coder's skill index.
    """
    if not value.isprintable():
        value = _CONTROL.sub(" ", value)
    return " ".join(value.split())


def check(text: str, folder: str, mode: Validation, *, namespace: str | None = None) -> SkillCheck:
    """Validate SKILL.md ``text`` found in a folder named ``folder`` under the validation ``mode``."""
    return _CHECKS[mode](text, folder, namespace)


class Decoded(NamedTuple):
    """A SKILL.md's bytes as text: ``text`` what a resource holds, ``checked`` what the agent's reader judges;
    ``error`` why the agent does not load it for its bytes alone (``text`` is then None)."""

    text: str | None
    checked: str
    warnings: tuple[str, ...] = ()
    error: str | None = None


def decode_skill(raw: bytes, mode: Validation) -> Decoded:
    """A SKILL.md's bytes as the agent of ``mode`` reads them, for bytes that need more than a UTF-8 decode (a BOM,
    UTF-16, a CR, a NUL, a bad sequence): the modes that name no agent decode whatever :func:`decode_file` can."""
    if (agent := _READS_UTF8.get(mode)) is not None and raw.startswith(UTF16_BOMS):
        return Decoded(None, "", error=garbled_utf16(agent))
    if (agent := _STRICT_UTF8.get(mode)) is not None:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = f"not UTF-8 ({exc.reason} at byte {exc.start}): {agent} does not load the skill; save it as UTF-8"
            return Decoded(None, "", error=error)
        if raw.startswith(UTF8_BOM):
            error = f"a byte order mark before its frontmatter: {agent} does not load the skill; save it without one"
            return Decoded(None, "", error=error)
    text, warnings = decode_file(raw)
    if text is None:
        return Decoded(None, "", warnings, "binary file (contains NUL bytes)")
    checked = raw.decode("utf-8", errors="replace") if mode in READS_AS_WRITTEN else text
    return Decoded(text, checked, warnings)


def _check_lenient_text(
    text: str, folder: str, namespace: str | None, parsed: Callable[[str], Frontmatter] = parse
) -> SkillCheck:
    """``parsed``: how the frontmatter is read when it is more than plain values (Codex's: :func:`parse_codex`)."""
    plain = plain_skill(text) if namespace is None else None
    if plain is not None:
        # The usual skill in one step. Its values are printable ASCII starting with a letter and not
        # ending in a space (see frontmatter._PLAIN_SKILL), so _clean needs only the double-space test.
        name, description, block = plain
        if (
            name == folder
            and description is not None
            and "  " not in description
            and len(name) <= MAX_NAME
            and len(description) <= MAX_DESCRIPTION
            and KEBAB.match(name)
        ):
            return _new_check(SkillCheck, (name, description, (), (), block))
    front = parse_plain(text)
    if front is None:
        try:
            front = parsed(text)
        except FrontmatterError as exc:
            return SkillCheck(None, None, errors=(str(exc),))
    return _check_lenient(front.fields, folder, namespace, front.raw, repaired=front.repaired)


def _check_coder_text(text: str, folder: str, namespace: str | None) -> SkillCheck:
    front = parse_plain(text)
    if front is None:
        try:
            front = parse_coder(text)
        except FrontmatterError as exc:
            return SkillCheck(None, None, errors=(str(exc),))
    return _check_coder(front.fields, folder, front.raw)


def _check_claude(text: str, folder: str) -> SkillCheck:
    plain = plain_skill(text)
    if plain is not None:
        # The usual skill in one step. Plain values (printable ASCII from a letter, no space at either
        # end) are collapsed already unless they hold a double space, and are never YAML's true, so
        # disable-model-invocation cannot be set; with a description and no when_to_use, nothing else counts.
        name, description, block = plain
        if description is not None and "  " not in description and "when_to_use" not in block:
            shown = folder if name is None or name == folder else f"{folder} ({name})"
            return _new_check(SkillCheck, (shown, description, (), (), ""))
    return claude_check(text, folder)


def claude_check(text: str, folder: str) -> SkillCheck:
    """Claude Code's reading of a SKILL.md, every case (:func:`check` takes the usual one faster)."""
    try:
        front = parse(text, loader=_Yaml12Core)
        fields, body = front.fields, front.body
    except FrontmatterError:
        fields, body = {}, text
    raw_name = _js_text(fields.get("name"))
    name = folder if not raw_name or raw_name.strip() == folder else f"{folder} ({raw_name.strip()})"
    return _claude_described(name, fields, body, "Skill")


def claude_command_check(text: str, name: str) -> SkillCheck:
    """Claude Code's reading of a custom command named ``name`` (a frontmatter ``name`` changes nothing): as a
    skill's, but ``Custom command`` describes one whose description and body are empty."""
    try:
        front = parse(text, loader=_Yaml12Core)
        fields, body = front.fields, front.body
    except FrontmatterError:
        fields, body = {}, text
    return _claude_described(name, fields, body, "Custom command")


def _claude_described(name: str, fields: Mapping[str, Any], body: str, fallback: str) -> SkillCheck:
    """``description`` (else the first body line, else ``fallback``) and ``when_to_use``, as Claude Code joins them."""
    description = collapse(_js_text(fields.get("description")) or "") or _first_line(body, fallback)
    when = collapse(_js_text(fields.get("when_to_use")) or "")
    if when:
        description = f"{description} - {when}"
    if fields.get("disable-model-invocation") in (True, "true"):
        return SkillCheck(
            name, description, errors=("disable-model-invocation: true (Claude Code lists it for the user only)",)
        )
    return SkillCheck(name, description)


# Gemini CLI's pattern less its optional tail (the body, which it never reads): matching it cost 4 us a KB
_GEMINI_FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---")
_GEMINI_NAME = re.compile(r"\s*name:\s*([^\r\u2028\u2029]*)")
_GEMINI_DESCRIPTION = re.compile(r"\s*description:\s*([^\r\u2028\u2029]*)")
_GEMINI_MORE = re.compile(r"[ \t]+\S")
_GEMINI_UNSAFE = re.compile(r'[:\\/<>*?"|]')


def _check_gemini(text: str, folder: str) -> SkillCheck:
    """Gemini CLI's ``loadSkillFromFile``: its frontmatter pattern, YAML, then its line reader."""
    match = _GEMINI_FRONTMATTER.match(text)
    if match is None:
        return SkillCheck(None, None, errors=("no frontmatter at the file's start: Gemini CLI drops the skill",))
    block = match.group(1)
    fields = _gemini_yaml(block) or _gemini_lines(block)
    if fields is None:
        error = "frontmatter without a name or a description: Gemini CLI drops the skill"
        return SkillCheck(None, None, errors=(error,), frontmatter=block)
    name, description = fields
    return SkillCheck(_GEMINI_UNSAFE.sub("-", name), description, frontmatter=block)


def _as_js_yaml_reads(block: str) -> str:
    """A frontmatter block (its closing line break cut off) as YAML text PyYAML reads as js-yaml reads the block:
    js-yaml ends a block scalar at the input's end with one line break, and adds none after a blank line."""
    return block if block.endswith("\n") else block + "\n"


def _gemini_yaml(block: str) -> tuple[str, str] | None:
    text = _as_js_yaml_reads(block)
    fields: Any = fast_load(text)
    if fields is None:
        try:
            fields = pyyaml_load(text)
        except YAML_ERRORS:
            return None
    if isinstance(fields, dict):
        name, description = fields.get("name"), fields.get("description")
        if isinstance(name, str) and isinstance(description, str):
            return name, description
    return None


def _gemini_lines(block: str) -> tuple[str, str] | None:
    """Gemini CLI's ``parseSimpleFrontmatter``: the last ``name:`` and ``description:`` lines, trimmed."""
    lines = re.split(r"\r?\n", block)
    name: str | None = None
    description: str | None = None
    at = 0
    while at < len(lines):
        line = lines[at]
        found = _GEMINI_NAME.fullmatch(line)
        if found:
            name = js_trim(found.group(1))
        else:
            found = _GEMINI_DESCRIPTION.fullmatch(line)
            if found:
                parts = [js_trim(found.group(1))]
                while at + 1 < len(lines) and _GEMINI_MORE.match(lines[at + 1]):
                    parts.append(js_trim(lines[at + 1]))
                    at += 1
                description = " ".join(part for part in parts if part)
        at += 1
    if name is None or description is None:
        return None
    return name, description


class _Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with js-yaml's booleans (``true``/``false`` only: ``yes`` stays a string)."""


_Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
for _resolvers in _Yaml12Loader.yaml_implicit_resolvers.values():  # js-yaml 3's floats: 1e3 is one, 00.5 is not
    _resolvers[:] = [(tag, regexp) for tag, regexp in _resolvers if tag != "tag:yaml.org,2002:float"]
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def _core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = str(loader.construct_scalar(node))
    digits = value.lstrip("+-")
    base = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2], 10)
    number = int(digits if base == 10 else digits[2:], base)
    return -number if value.startswith("-") else number


def _typed_by(loader: type[yaml.SafeLoader], ints: str, floats: str) -> None:
    """Make ``loader`` type a plain scalar by YAML 1.2's nulls and booleans and these ints and floats, and nothing
    else: no dates, no ``1_000`` or ``12:30``, no ``yes``/``off``, no ``<<`` merge."""
    loader.yaml_implicit_resolvers = {}
    for tag, pattern, first in (
        ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
        ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
        ("int", ints, list("-+0123456789")),
        ("float", floats, list("-+.0123456789")),
    ):
        loader.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", re.compile(pattern), first)
    loader.add_constructor("tag:yaml.org,2002:int", _core_int)


class _Yaml12Core(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML 1.2's core schema, as Claude Code 2.1.332 types a plain scalar (the ``yaml`` package's): only
    ``true``/``false`` in three cases are booleans; ``~``, ``null`` and nothing are null; ``007`` is 7, ``0x1F`` and
    ``0o17`` are ints; ``1e3`` and ``00.5`` are floats; ``yes``, ``off``, ``0b101``, ``1_000``, ``12:30`` and dates
    are text."""


_typed_by(
    _Yaml12Core,
    r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$",
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
)


class _YamlCoreLoader(yaml.SafeLoader):
    """How Copilot CLI 1.0.102 types a plain scalar, as seen (close to YAML 1.2's core schema): only
    ``true``/``false`` in three cases are booleans; ``~``, ``null`` and nothing are null; ints are decimal without a
    leading zero, or ``0x``, ``0o``, ``0b`` (a sign allowed); a float has a ``.`` or an exponent (``00.5``, ``1e3``);
    ``yes``, ``off``, ``007``, ``1_000``, ``1:20``, ``2024-01-01`` and ``<<`` stay text."""


_typed_by(
    _YamlCoreLoader,
    r"^[-+]?(?:0|[1-9][0-9]*|0x[0-9a-fA-F]+|0o[0-7]+|0b[01]+)$",
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+[eE][-+]?[0-9]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
)
_OPENCODE_CLOSE = re.compile(r"\n---")


def _check_opencode(text: str, folder: str) -> SkillCheck:
    """OpenCode's ``Skill`` loader: gray-matter's frontmatter, js-yaml, a string name and description."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---") or text[3:4] == "-":
        return SkillCheck(None, None, errors=("no frontmatter at the file's start: OpenCode drops the skill",))
    rest = text[3:]
    close = _OPENCODE_CLOSE.search(rest)
    block = rest[: close.start()] if close else rest
    first, _, _ = block.partition("\n")
    if first.strip():
        error = f"frontmatter language {first.strip()!r}: OpenCode's parser refuses it and drops the skill"
        return SkillCheck(None, None, errors=(error,), frontmatter=block)
    text = _as_js_yaml_reads(block)  # gray-matter's block has no closing line break
    fields: Any = fast_load(text, _Yaml12Loader)
    try:
        if fields is None:
            fields = pyyaml_load(text, _Yaml12Loader) if block.strip() else {}
    except YAML_ERRORS as exc:
        error = f"frontmatter is not valid YAML ({str(exc).splitlines()[0]}): OpenCode drops the skill"
        return SkillCheck(None, None, errors=(error,), frontmatter=block)
    if not isinstance(fields, dict) or not isinstance(fields.get("name"), str):
        return SkillCheck(None, None, errors=("no name string in the frontmatter: OpenCode drops the skill",))
    name, description = fields["name"], fields.get("description")
    if description is None and "description" not in fields:
        error = "no description: OpenCode loads the skill but never lists it"
        return SkillCheck(name, None, errors=(error,), frontmatter=block)
    if not isinstance(description, str):
        error = "description is not a string: OpenCode drops the skill"
        return SkillCheck(name, None, errors=(error,), frontmatter=block)
    return SkillCheck(name, description, frontmatter=block)


# Copilot CLI's pattern; the body it captured last is the rest of the text (a regex took 10 us a KB to say so)
_COPILOT_FRONTMATTER = re.compile(r"\A\ufeff?---\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|\Z)")
_COPILOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.: -]*")


def _check_copilot(text: str, folder: str) -> SkillCheck:
    """Copilot CLI's reading of a SKILL.md (as its ``skill list`` reports it)."""
    match = _COPILOT_FRONTMATTER.match(text)
    if match is None:
        return SkillCheck(None, None, errors=("no frontmatter: Copilot CLI does not load the skill",))
    return _copilot_fields(match.group(1), text[match.end() :], folder, "skill")


def copilot_command_check(text: str, stem: str) -> SkillCheck:
    """Copilot CLI's reading of a custom command (``.claude/commands/<stem>.md``): as a skill's, but a file
    without frontmatter is named by its file and described by its body, and an ``argument-hint`` must be text."""
    match = _COPILOT_FRONTMATTER.match(text)
    if match is None:
        return _copilot_fields("", text, stem, "command")
    return _copilot_fields(match.group(1), text[match.end() :], stem, "command")


def _copilot_fields(block: str, body: str, folder: str, what: str) -> SkillCheck:
    """A skill's or command's frontmatter ``block`` as Copilot CLI validates it (``what``: ``skill`` or ``command``)."""
    fields: Any = fast_load(block, _YamlCoreLoader)
    try:
        if fields is None:
            fields = pyyaml_load(block, _YamlCoreLoader) if block.strip() else {}
    except YAML_ERRORS as exc:
        error = f"invalid YAML frontmatter ({str(exc).splitlines()[0]}): Copilot CLI does not load the {what}"
        return SkillCheck(None, None, errors=(error,), frontmatter=block)
    if not isinstance(fields, dict):
        fields = {}
    raw_name = fields.get("name", folder)
    if not isinstance(raw_name, str):
        return SkillCheck(None, None, errors=("name must be a string",), frontmatter=block)
    name = raw_name.strip().replace(" ", "-") or folder
    if len(name) > MAX_NAME or not _COPILOT_NAME.fullmatch(name):
        error = f"name {name!r}: at most {MAX_NAME} of A-Z a-z 0-9 _ . : - (spaces), from a letter or digit"
        return SkillCheck(None, None, errors=(error,), frontmatter=block)
    if "description" not in fields:
        description = _copilot_body_description(body)
    else:
        description = fields["description"]  # as YAML gives it: spaces kept, a block's final line break too
        if not isinstance(description, str):  # a number, a list, or empty (null)
            error = f"description must be a string: Copilot CLI does not load the {what}"
            return SkillCheck(name, None, errors=(error,), frontmatter=block)
        if len(description) > MAX_DESCRIPTION:
            error = f"Skill description must be at most {MAX_DESCRIPTION} characters"
            return SkillCheck(name, None, errors=(error,), frontmatter=block)
    hint = fields.get("argument-hint")
    if what == "command" and hint is not None and not isinstance(hint, str):
        error = "argument-hint must be a string (quote it): Copilot CLI does not load the command"
        return SkillCheck(name, description, errors=(error,), frontmatter=block)
    if fields.get("disable-model-invocation") is True:
        error = "disable-model-invocation: true (Copilot CLI lists it for the user only)"
        return SkillCheck(name, description, errors=(error,), frontmatter=block)
    return SkillCheck(name, description, frontmatter=block)


def _copilot_body_description(body: str) -> str:
    """Copilot CLI's description of a skill or command that gives none: the body's first three lines that are
    neither blank nor a heading, each trimmed, joined by a space (their own spacing kept), cut to 1,024."""
    lines = (js_trim(line) for line in re.split(r"\r?\n", body))
    kept = [line for line in lines if line and not line.startswith("#")][:3]
    return " ".join(kept)[:MAX_DESCRIPTION]


def _first_line(body: str, fallback: str = "Skill") -> str:
    """Claude Code's fallback description: the first non-empty line, without heading marks (else ``fallback``)."""
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped:
            heading = re.match(r"^#+\s+(\S.*)$", stripped)
            text = heading.group(1) if heading else stripped
            return text[:97] + "..." if len(text) > 100 else text
    return fallback


def _js_text(value: Any) -> str | None:
    """A YAML scalar as JavaScript's ``String()`` writes it (``1e3`` is ``1000``, ``.inf`` is ``Infinity``); None
    for mappings, lists and null."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
    return _scalar(value)


def _scalar(value: Any) -> str | None:
    """A YAML scalar as text (numbers and booleans too); None for mappings, lists and null."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if value is not None and not isinstance(value, dict | list):
        return str(value)  # dates and the like
    return None


def _check_lenient(
    fields: Mapping[str, Any], folder: str, namespace: str | None, frontmatter: str, *, repaired: tuple[str, ...]
) -> SkillCheck:
    name, description = fields.get("name"), fields.get("description")
    if (  # the common case, with nothing to warn about, in one step
        name == folder
        and type(description) is str
        and namespace is None
        and not repaired
        and _clean(name)
        and _clean(description)
        and len(name) <= MAX_NAME
        and len(description) <= MAX_DESCRIPTION
        and KEBAB.match(name)
    ):
        return SkillCheck(name, description, (), (), frontmatter)
    errors: list[str] = []
    warnings: list[str] = []
    raw_name = fields.get("name")
    name = collapse(_scalar(_as_written(raw_name, "name", frontmatter)) or "")
    if raw_name is not None and not isinstance(raw_name, str) and name:
        warnings.append(f"name is a YAML {type(raw_name).__name__}, read as the text {name!r}")
    if not name:
        name = folder or "skill"
        if raw_name is not None:
            warnings.append("name is not a usable string; using the folder name")
    else:
        warnings += _name_warnings(name, folder)
    raw_description = fields.get("description")
    description = collapse(_scalar(_as_written(raw_description, "description", frontmatter)) or "")
    if isinstance(raw_description, dict | list):
        kind = "mapping" if isinstance(raw_description, dict) else "list"
        errors.append(f"invalid description: expected a string, found a {kind}")
    elif not description:
        errors.append("missing field `description`")
    elif not isinstance(raw_description, str):
        warnings.append(f"description is a YAML {type(raw_description).__name__}, read as text")
    elif len(description) > MAX_DESCRIPTION:
        warnings.append(f"description is {len(description)} characters; the Agent Skills limit is {MAX_DESCRIPTION}")
    if namespace is not None:
        name = f"{namespace}:{name}"
        if len(name) > MAX_QUALIFIED_NAME:
            warnings.append(f"invalid qualified name: longer than {MAX_QUALIFIED_NAME} characters")
    if repaired:
        warnings.append(repair_warning(repaired))
    return SkillCheck(name, description or None, tuple(errors), tuple(warnings), frontmatter)


def repair_warning(keys: tuple[str, ...]) -> str:
    """What a repair of the frontmatter changed, said so the author can make it YAML: an agent that reads the
    block without a repair (OpenCode, Copilot CLI, skills-ref) drops the skill."""
    one = len(keys) == 1
    return (
        f"frontmatter YAML needed repair: the {'value' if one else 'values'} of {', '.join(keys)} read as quoted"
        f" text; quote {'it' if one else 'them'} in the file, since agents that do not repair YAML drop the skill"
    )


def _as_written(value: Any, key: str, block: str) -> Any:
    """A plain scalar YAML 1.1 types (``on``, ``0x1F``, ``1.50``, ``12:30``) as the text written on its line, as
    Codex 0.171.0 reads a name and a description; any other value as it is."""
    if value is None or isinstance(value, str | dict | list):
        return value
    match = re.search(rf"^{re.escape(key)}:[ \t]+([^\n]*?)[ \t]*(?:[ \t]#[^\n]*)?$", block, re.MULTILINE)
    return match.group(1) if match is not None and match.group(1)[:1] not in ("'", '"', "!", "&") else value


def _name_warnings(name: str, folder: str) -> list[str]:
    warnings: list[str] = []
    if len(name) > MAX_NAME:
        warnings.append(f"name is {len(name)} characters; the limit is {MAX_NAME}")
    if not KEBAB.match(name):
        warnings.append(f"name {name!r} is not kebab-case (lowercase letters, digits and single hyphens)")
    if name != folder:
        warnings.append(f"name {name!r} does not match its folder {folder!r}")
    return warnings


def _check_coder(fields: Mapping[str, Any], folder: str, frontmatter: str) -> SkillCheck:
    raw_name = fields.get("name")
    if raw_name is None or raw_name == "":
        return SkillCheck(None, None, ("frontmatter missing required 'name' field",), frontmatter=frontmatter)
    if not isinstance(raw_name, str):
        return SkillCheck(None, None, ('frontmatter field "name" must be a string',), frontmatter=frontmatter)
    name = raw_name.rstrip("\r\n")
    if not name:
        return SkillCheck(None, None, ("frontmatter missing required 'name' field",), frontmatter=frontmatter)
    raw_description = fields.get("description")
    if raw_description is not None and not isinstance(raw_description, str):
        return SkillCheck(name, None, ('frontmatter field "description" must be a string',), frontmatter=frontmatter)
    description = raw_description.rstrip("\r\n") if isinstance(raw_description, str) else ""
    if name != folder:
        error = f'front-matter name "{name}" does not match directory "{folder}"'
        return SkillCheck(name, description, (error,), frontmatter=frontmatter)
    if not KEBAB.match(name):
        return SkillCheck(name, description, (f'skill name "{name}" is not kebab-case',), frontmatter=frontmatter)
    return _new_check(SkillCheck, (name, description, (), (), frontmatter))  # the usual skill: built positionally


def _check_spec(text: str, folder: str) -> SkillCheck:
    try:
        metadata = parse_strict(text)
    except FrontmatterError as exc:
        return SkillCheck(None, None, errors=(str(exc),))
    errors = spec_errors(metadata, folder)
    name = metadata.get("name")
    description = metadata.get("description")
    frontmatter = text.split("---", 2)[1]
    return SkillCheck(
        name.strip() if isinstance(name, str) else None,
        collapse(description) if isinstance(description, str) else None,
        tuple(errors),
        frontmatter=frontmatter.strip("\n"),
    )


def spec_errors(metadata: dict[str, Any], folder: str | None) -> list[str]:
    """skills-ref's ``validate_metadata``: every error, in its order and wording."""
    errors: list[str] = []
    extra = set(metadata) - ALLOWED_FIELDS
    if extra:
        errors.append(
            f"Unexpected fields in frontmatter: {', '.join(sorted(extra))}. Only {sorted(ALLOWED_FIELDS)} are allowed."
        )
    if "name" not in metadata:
        errors.append("Missing required field in frontmatter: name")
    else:
        errors += _spec_name(metadata["name"], folder)
    if "description" not in metadata:
        errors.append("Missing required field in frontmatter: description")
    else:
        errors += _spec_description(metadata["description"])
    if "compatibility" in metadata:
        compatibility = metadata["compatibility"]
        if not isinstance(compatibility, str):
            errors.append("Field 'compatibility' must be a string")
        elif len(compatibility) > MAX_COMPATIBILITY:
            errors.append(f"Compatibility exceeds {MAX_COMPATIBILITY} character limit ({len(compatibility)} chars)")
    return errors


def _spec_name(raw: Any, folder: str | None) -> list[str]:
    if not raw or not isinstance(raw, str) or not raw.strip():
        return ["Field 'name' must be a non-empty string"]
    name = unicodedata.normalize("NFKC", raw.strip())
    errors: list[str] = []
    if len(name) > MAX_NAME:
        errors.append(f"Skill name '{name}' exceeds {MAX_NAME} character limit ({len(name)} chars)")
    if name != name.lower():
        errors.append(f"Skill name '{name}' must be lowercase")
    if name.startswith("-") or name.endswith("-"):
        errors.append("Skill name cannot start or end with a hyphen")
    if "--" in name:
        errors.append("Skill name cannot contain consecutive hyphens")
    if not all(c.isalnum() or c == "-" for c in name):
        errors.append(
            f"Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are allowed."
        )
    if folder and unicodedata.normalize("NFKC", folder) != name:
        errors.append(f"Directory name '{folder}' must match skill name '{name}'")
    return errors


def _spec_description(raw: Any) -> list[str]:
    if not raw or not isinstance(raw, str) or not raw.strip():
        return ["Field 'description' must be a non-empty string"]
    if len(raw) > MAX_DESCRIPTION:
        return [f"Description exceeds {MAX_DESCRIPTION} character limit ({len(raw)} chars)"]
    return []


@dataclass(frozen=True, slots=True)
class Report:
    """``skills validate`` for one path: skills-ref's wording for missing paths and files."""

    path: str
    valid: bool
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    name: str | None = None
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "valid": self.valid, "errors": list(self.errors), "warnings": list(self.warnings)}


def find_skill_md(folder: Path) -> Path | None:
    """``SKILL.md``, else a lowercase ``skill.md`` (as skills-ref accepts)."""
    for name in ("SKILL.md", "skill.md"):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def validate_path(path: str | Path, mode: Validation = "spec", *, max_bytes: int = 64 * 1024) -> Report:
    """Validate one skill folder (or its SKILL.md) the way ``skills-ref validate`` does."""
    target, shown = Path(path), str(path)
    try:  # Path.is_file and exists raise on a folder that cannot be looked inside (no search permission)
        if target.is_file() and target.name.lower() == "skill.md":
            target = target.parent
        if not target.exists():
            return Report(shown, False, (f"Path does not exist: {target}",), ())
        if not target.is_dir():
            return Report(shown, False, (f"Not a directory: {target}",), ())
        skill_md = find_skill_md(target)
    except OSError as exc:
        return Report(shown, False, (f"cannot look inside {exc.filename or target}: {exc.strerror or exc}",), ())
    if skill_md is None:
        return Report(shown, False, ("Missing required file: SKILL.md",), ())
    try:  # read through the folder: a SKILL.md that is (or becomes) a link out of it is not read
        with open_folder(str(target), str(target)) as opened:
            size = opened.find([skill_md.name]).st.st_size
            raw = opened.read([skill_md.name], max(max_bytes, READ_CAP) + 1)
    except (OSError, UnsafePathError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Report(shown, False, (f"failed to read file: {reason}",), ())
    text, checked, decode_warnings, error = decode_skill(raw, mode)
    if text is None:
        return Report(shown, False, (f"SKILL.md: {error}",), decode_warnings)
    result = check(checked, target.resolve().name, mode)
    warnings = list(decode_warnings) + list(result.warnings) + list(hidden_text_warnings(text))
    if max(size, len(raw)) > max_bytes:
        warnings.append(
            f"SKILL.md is {max(size, len(raw))} bytes, over the {max_bytes}-byte cap: most agents will not load it"
        )
    return Report(shown, result.valid, result.errors, tuple(warnings), result.name, result.description)


# each validation mode's check (a mode is a setting's value: ``skills.validation``)
_CHECKS: dict[str, Callable[[str, str, str | None], SkillCheck]] = {
    "spec": lambda text, folder, _namespace: _check_spec(text, folder),
    "claude": lambda text, folder, _namespace: _check_claude(text, folder),
    "gemini": lambda text, folder, _namespace: _check_gemini(text, folder),
    "opencode": lambda text, folder, _namespace: _check_opencode(text, folder),
    "copilot": lambda text, folder, _namespace: _check_copilot(text, folder),
    "lenient": _check_lenient_text,
    "codex": lambda text, folder, namespace: _check_lenient_text(text, folder, namespace, parse_codex),
    "coder": _check_coder_text,
}
