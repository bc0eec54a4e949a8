"""The YAML that SKILL.md frontmatter is written in, read without PyYAML, exactly as ``yaml.safe_load`` reads it.

PyYAML builds every value through Python-level scanner, resolver and constructor calls; a block of
real frontmatter (a multi-line description, a ``metadata:`` map, a list of tools) costs it 10-20x
what reading the file does. :func:`load` reads the subset such blocks use, line by line:

* block mappings of plain keys (ASCII, from a letter or ``_``) at any depth, and block sequences
  (``- item``, also at their key's indentation and with ``- key: value`` mappings as items);
* plain scalars, also continued on more-indented lines, resolved by PyYAML's own YAML 1.1 resolvers
  (``yaml.SafeLoader.yaml_implicit_resolvers``, tried in its order): strings, booleans (``yes``,
  ``Off``, ...), nulls (``~``, ``null``) and decimal ints; a float, a date, ``0x1F``, ``017``, ``12:30``,
  ``1_000``, ``<<`` are left to PyYAML;
* single- and double-quoted scalars on one line (every escape PyYAML knows but surrogates);
* ``|`` and ``>`` block scalars with a chomping indicator or none (an indentation indicator, or
  blank lines before the first text, are left to PyYAML);
* one-line flow sequences of plain or quoted scalars; comments, whole-line and after a value.

Anything else (anchors, aliases, tags, ``?`` keys, flow mappings, a duplicate key, tabs, CR, odd
indentation, documents, characters PyYAML refuses or reads as line breaks) returns None: the
caller then asks PyYAML. Being unsure is always allowed, being wrong never: property tests hold
:func:`load` equal to ``yaml.safe_load`` (and libyaml's loader) wherever it answers.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
import yaml.constructor
import yaml.scanner

# What a loader's resolver tries on a plain scalar, by its first character, in its order.
_Resolvers = dict[str, list[tuple[str, re.Pattern[str]]]]
_RESOLVERS: _Resolvers = yaml.SafeLoader.yaml_implicit_resolvers
_BOOL, _NULL, _INT = (f"tag:yaml.org,2002:{name}" for name in ("bool", "null", "int"))
_BOOLS = yaml.constructor.SafeConstructor.bool_values
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")  # the ints read here; octal, hex, "1_000" and "1:30" are not
# Printable for PyYAML's reader and no line break but LF: no tab, CR, NEL, LS, PS, BOM, control character.
_UNSURE_TEXT = re.compile("[^\n -~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_ENTRY = re.compile(r"([A-Za-z_][A-Za-z0-9_./-]{0,127}):(?: +|$)")  # a plain key, ":" and the spaces after it
_KEY_LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_./-]{0,127}):(?: +|$)")  # the same, with its indentation
_BLOCK_HEADER = re.compile(r"([|>])([-+]?) *(?: #.*)?")
_DOUBLE_PLAIN = re.compile(r'"([^"\\]*)"')
_DOUBLE = re.compile(r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"')  # runs between escapes: linear, no alternation a character
_SINGLE = re.compile(r"'([^']*+(?:''[^']*+)*+)'")
_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_ESCAPES = {char: text for char, text in yaml.scanner.Scanner.ESCAPE_REPLACEMENTS.items() if char != "\t"}
_FLOW_EMPTY = re.compile(r"\[ *\]")
# an item, its spaces and "," or "]"; possessive runs (and a space run only before more of the item) keep it linear
_FLOW_ITEM = re.compile(
    r""" *(?:"([^"\\]*)"|'([^']*+(?:''[^']*+)*+)'|((?:[^-?:,\[\]{}#&*!|>'"%@` ]|-[^ ,?\[\]{}#:])"""
    r"""(?:[^ ,?\[\]{}#:]++| ++(?=[^ ,\]]))*+)) *([,\]])"""
)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NOT_PLAIN = _INDICATORS  # a value starting with one is read by _scalar (a "-x", "?x" or ":x" too)
_MAX_DEPTH = 32
# "- item" alone on its line: single-quoted, double-quoted without escapes, or plain without ":", "#" or a space last
_ITEM = re.compile(
    r"""( *)- (?:'([^'\n]*+(?:''[^'\n]*+)*+)'|"([^"\\\n]*+)"|([^-?:,\[\]{}#&*!|>'"%@` ][^:#\n]*+(?<! )))$"""
)
# Keys whose first letter has resolvers (n, t, o, f, y): those a table leaves strings are looked up once per table.
_USUAL_KEYS = ("name", "notes", "title", "tags", "type", "tools", "triggers", "owner", "file", "files", "version")
_TEXT_KEYS: dict[int, tuple[_Resolvers, frozenset[str]]] = {}


# What loading YAML raises: PyYAML's errors, and a constructor's ValueError (a date such as 2001-02-30)
YAML_ERRORS = (yaml.YAMLError, ValueError, RecursionError)  # PyYAML recurses into nested flow values
_GENERAL = object()  # "not the usual case: read it the general way"
# PyYAML's scanner costs the square of a flow value's depth (each ``[`` rechecks every open one) and its composer
# a frame a level: a SKILL.md of 3,000 ``[`` took a second, and past 1,000 the recursion limit
MAX_FLOW_DEPTH = 64
_NOT_FLOW = re.compile(r"[^\[\]{}]+")


def pyyaml_load(text: str | bytes, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """``yaml.load(text, loader)``, refusing first (a ``yaml.YAMLError``) a flow value nested deeper than
    :data:`MAX_FLOW_DEPTH`: every reading of a repository's YAML goes through here."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.count("[") + text.count("{") > MAX_FLOW_DEPTH:
        depth = 0
        for char in _NOT_FLOW.sub("", text):  # brackets in quotes counted too: deeper than ever written by hand
            depth = depth + 1 if char in "[{" else max(depth - 1, 0)
            if depth > MAX_FLOW_DEPTH:
                raise yaml.YAMLError(f"nested too deeply (more than {MAX_FLOW_DEPTH} levels of [ and {{)")
    return yaml.load(text, Loader=loader)


class _Unsure(Exception):
    """Raised inside the reader: the block is left to PyYAML."""


def load(block: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> tuple[dict[str, Any], int] | None:
    """``yaml.load(block, loader)`` (``loader``: the safe loader or a subclass with other implicit
    resolvers) and the number of values in it (the mapping, each key, each value and item), when
    ``block`` is a non-empty mapping in the subset above; None when PyYAML must decide."""
    if not block.replace("\n", " ").isprintable() and _UNSURE_TEXT.search(block) is not None:
        return None  # (what str.isprintable takes, twice as fast, is a subset of what the regex does)
    resolvers = loader.yaml_implicit_resolvers
    if None in resolvers:
        return None  # a resolver PyYAML would try on every value
    known = _TEXT_KEYS.get(id(resolvers))
    if known is None or known[0] is not resolvers:
        known = _TEXT_KEYS[id(resolvers)] = (resolvers, frozenset(k for k in _USUAL_KEYS if is_text(k, resolvers)))
    reader = _Reader(block.split("\n"), resolvers, known[1])
    try:
        fields = reader.mapping(0, 0)
    except _Unsure:
        return None
    if reader.at < len(reader.lines) or not fields:
        return None  # something at the end the mapping did not take; an empty one is YAML's null
    return fields, reader.values + 1


def is_text(value: str, by: _Resolvers = _RESOLVERS) -> bool:
    """Whether PyYAML reads the plain scalar ``value`` (not empty) as a string, not a bool, null, number or date."""
    resolvers = by.get(value[0])
    return resolvers is None or not any(regexp.match(value) for _, regexp in resolvers)


def _resolved(value: str, by: _Resolvers) -> Any:
    """The plain scalar ``value`` (not empty) as PyYAML constructs it, when a string, bool, null or decimal int."""
    resolvers = by.get(value[0])
    if resolvers is not None:
        for tag, regexp in resolvers:  # the first that matches decides, as in PyYAML's Resolver.resolve
            if regexp.match(value):
                if tag == _BOOL:
                    return _BOOLS[value.lower()]
                if tag == _NULL:
                    return None
                if tag == _INT and _DECIMAL.fullmatch(value):
                    return int(value)
                raise _Unsure  # a float, a date, an octal or sexagesimal int, "<<", "="
    return value


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _unescape(match: re.Match[str]) -> str:
    digits = match.group(1) or match.group(2) or match.group(3)
    if digits:
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise _Unsure  # libyaml refuses what PyYAML would take
        return chr(code)
    text = _ESCAPES.get(match.group(4))
    if text is None:
        raise _Unsure
    return text


def _breaks(lines: list[str], at: int, column: int) -> tuple[int, int]:
    """The blank lines (no more spaces than ``column``) from ``at`` on: the next line, and how many (the block's
    last line is no break: nothing ends it)."""
    start = at
    while at < len(lines) - 1:
        spaces = _indent(lines[at])
        if spaces != len(lines[at]) or spaces > column:
            break
        at += 1
    return at, at - start


def _ends(line: str, entry: re.Match[str] | None, indent: int) -> bool:
    """Whether a line that is no entry at column ``indent`` ends the mapping there (False: a blank or comment line)."""
    if entry is not None:
        if entry.end(1) < indent:
            return True
        raise _Unsure
    words = line.lstrip(" ")
    if not words or words[0] == "#":
        return False
    if len(line) - len(words) < indent:
        return True
    raise _Unsure


def _after(line: str, end: int) -> None:
    """Only spaces, or spaces and a comment, may follow a quoted or flow scalar on its line."""
    tail = line[end:]
    rest = tail.lstrip(" ")
    if rest and (rest[0] != "#" or len(rest) == len(tail)):
        raise _Unsure


class _Reader:
    """One block's lines, the next line to read, and the values read so far."""

    __slots__ = ("at", "lines", "resolvers", "text_keys", "values")

    def __init__(self, lines: list[str], resolvers: _Resolvers, text_keys: frozenset[str]) -> None:
        self.lines = lines
        self.resolvers = resolvers
        self.text_keys = text_keys  # keys known to be strings under these resolvers
        self.at = 0
        self.values = 0

    def _next(self) -> int:
        """The index of the next line holding more than spaces and a comment (len(lines) at the end)."""
        lines, at = self.lines, self.at
        while at < len(lines):
            text = lines[at].lstrip(" ")
            if text and text[0] != "#":
                break
            at += 1
        return at

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        """The entries at column ``indent``, from the next line on (the hot loop: a plain value is read inline)."""
        if depth > _MAX_DEPTH:
            raise _Unsure
        lines, resolvers, text_keys, at = self.lines, self.resolvers, self.text_keys, self.at
        count = len(lines)
        deeper = " " * (indent + 1)
        out: dict[str, Any] = {}
        while at < count:
            line = lines[at]
            entry = _KEY_LINE.match(line)
            if entry is None or entry.end(1) != indent:
                if _ends(line, entry, indent):
                    break
                at += 1  # a blank or comment line
                continue
            key = entry.group(2)
            if key in out or (key[0] in resolvers and key not in text_keys and not is_text(key, resolvers)):
                raise _Unsure  # a duplicate key, or one YAML reads as a bool or null
            rest = line[entry.end() :]
            at += 1
            if rest and rest[0] not in _NOT_PLAIN:  # a plain scalar (what _plain reads, without its calls)
                comment = rest.find(" #")
                text = rest if comment < 0 else rest[:comment]
                if text[-1] == " ":
                    text = text.rstrip(" ")
                if ": " in text or text[-1] == ":":
                    raise _Unsure
                if comment < 0 and at < count and (not lines[at] or lines[at].startswith(deeper)):
                    self.at = at  # perhaps continued on the lines below (any other line ends it)
                    text = self._continued(text, indent)
                    at = self.at
                out[key] = _resolved(text, resolvers) if text[0] in resolvers else text
            else:
                self.at = at
                out[key] = self._value(rest, indent, depth)
                at = self.at
        self.at = at
        self.values += 2 * len(out)
        return out

    def _value(self, rest: str, indent: int, depth: int) -> Any:
        """A mapping value: ``rest`` is what follows ``key: `` on its line (the mapping at ``indent``)."""
        if not rest or rest[0] == "#":
            return self._nested(indent, depth)
        return self._scalar(rest, indent)

    def _scalar(self, rest: str, indent: int) -> Any:
        """The scalar (or flow sequence) that starts with ``rest``, in a collection at column ``indent``."""
        first = rest[0]
        if first == '"':
            match = _DOUBLE_PLAIN.match(rest)
            if match is not None:
                _after(rest, match.end())
                return match.group(1)
            match = _DOUBLE.match(rest)
            if match is None:
                raise _Unsure  # it goes on to the next line: left to PyYAML
            _after(rest, match.end())
            return _ESCAPE.sub(_unescape, match.group(1))
        if first == "'":
            match = _SINGLE.match(rest)
            if match is None:
                raise _Unsure
            _after(rest, match.end())
            return match.group(1).replace("''", "'")
        if first == "[":
            return self._flow(rest)
        if first == "|" or first == ">":
            return self._block_scalar(rest, indent)
        return self._plain(rest, indent)

    def _nested(self, indent: int, depth: int) -> Any:
        """What follows ``key:`` alone on its line: a mapping or sequence below it, else null."""
        at = self._next()
        if at == len(self.lines):
            return None
        line = self.lines[at]
        column = _indent(line)
        starts_item = line.startswith("- ", column) or len(line) == column + 1 and line[column] == "-"
        if column == indent and starts_item:
            return self._sequence(column, depth + 1)  # a sequence may sit at its key's indentation
        if column <= indent:
            return None
        if starts_item:
            return self._sequence(column, depth + 1)
        if _ENTRY.match(line, column) is None:
            raise _Unsure  # a scalar on the lines below its key
        return self.mapping(column, depth + 1)

    def _sequence(self, column: int, depth: int) -> list[Any]:
        """The ``- item`` lines at ``column``: scalars, flow sequences, or ``key: value`` mappings."""
        if depth > _MAX_DEPTH:
            raise _Unsure
        lines = self.lines
        count = len(lines)
        deeper = " " * (column + 1)
        out: list[Any] = []
        while True:
            at = self._next()
            if at == count:
                self.at = at
                break
            line = lines[at]
            usual = _ITEM.match(line)
            if usual is not None and usual.end(1) == column:  # the usual item, in one match
                value = self._usual_item(usual, at, deeper)
                if value is not _GENERAL:
                    out.append(value)
                    self.at = at + 1
                    continue
            start = _indent(line)
            if start < column:
                self.at = at
                break
            if start > column:
                raise _Unsure
            if not line.startswith("- ", column):
                if line[column:] == "-":  # an item on the lines below (an empty one is left to PyYAML)
                    self.at = at + 1
                    out.append(self._below(column, depth))
                    continue
                self.at = at  # the next key of the mapping holding this sequence (else that mapping refuses it)
                break
            item = line[column + 2 :].lstrip(" ")
            if not item or item[0] == "#" or item.startswith("- ") or item == "-":
                raise _Unsure
            self.at = at + 1
            if _ENTRY.match(item) is not None:  # "- key: value": a mapping whose keys line up with "key"
                lines[at] = " " * (len(line) - len(item)) + item
                self.at = at
                out.append(self.mapping(len(line) - len(item), depth + 1))
            else:
                out.append(self._scalar(item, column))
        self.values += len(out)
        return out

    def _usual_item(self, usual: re.Match[str], at: int, deeper: str) -> Any:
        """The value of the item line ``usual`` (at index ``at``); _GENERAL when a plain one may go on below."""
        single, double, plain = usual.group(2, 3, 4)
        if plain is None:
            return double if single is None else single.replace("''", "'")
        lines = self.lines
        if at + 1 == len(lines) or (lines[at + 1] and not lines[at + 1].startswith(deeper)):
            return _resolved(plain, self.resolvers) if plain[0] in self.resolvers else plain
        return _GENERAL

    def _below(self, column: int, depth: int) -> Any:
        """A sequence item written below its ``-`` (at ``column``): a sequence or mapping indented past it."""
        at = self.at = self._next()
        if at < len(self.lines):
            line = self.lines[at]
            start = _indent(line)
            if start > column:
                if line.startswith("- ", start) or line[start:] == "-":
                    return self._sequence(start, depth + 1)
                if _ENTRY.match(line, start) is not None:
                    return self.mapping(start, depth + 1)
        raise _Unsure

    def _plain(self, rest: str, indent: int) -> Any:
        """A plain scalar from ``rest`` on, continued on lines indented past ``indent``."""
        first = rest[0]
        if first in _INDICATORS and (first not in "-?:" or rest[1:2] in ("", " ")):
            raise _Unsure  # an anchor, alias, tag, reserved character, or a "-"/"?"/":" indicator
        comment = rest.find(" #")
        text = (rest if comment < 0 else rest[:comment]).rstrip(" ")
        if ": " in text or text[-1] == ":":
            raise _Unsure  # YAML reads a mapping (or an error) here
        if comment < 0:
            text = self._continued(text, indent)
        return _resolved(text, self.resolvers)

    def _continued(self, text: str, indent: int) -> str:
        """``text`` with the lines that continue it: a line break folds to a space, n blank lines to n LFs."""
        lines = self.lines
        at, blank = self.at, 0
        parts = [text]
        while at < len(lines):
            line = lines[at]
            words = line.lstrip(" ")
            if not words:
                blank += 1
                at += 1
                continue
            if len(line) - len(words) <= indent:
                break
            if words[0] in _INDICATORS or "#" in words or ": " in words or words[-1] == ":":
                raise _Unsure
            parts.append("\n" * blank if blank else " ")
            parts.append(words.rstrip(" "))
            blank = 0
            at += 1
            self.at = at
        return "".join(parts) if len(parts) > 1 else text

    def _flow(self, rest: str) -> list[Any]:
        """A flow sequence on one line: ``[]``, or plain or quoted scalars without escapes."""
        items: list[Any] = []
        empty = _FLOW_EMPTY.match(rest)
        if empty is not None:
            end = empty.end()
        else:
            end = 1
            while True:
                match = _FLOW_ITEM.match(rest, end)
                if match is None:
                    raise _Unsure
                double, single, plain, closing = match.groups()
                if double is not None:
                    items.append(double)
                elif single is not None:
                    items.append(single.replace("''", "'"))
                else:
                    items.append(_resolved(plain, self.resolvers))
                end = match.end()
                if closing == "]":
                    break
        _after(rest, end)
        self.values += len(items)
        return items

    def _usual_block(self, column: int, folded: bool, chomping: str) -> str | None:
        """The usual block scalar: lines of text at its indentation (``column``), ended by text left of it."""
        lines, at = self.lines, self.at
        last = len(lines) - 1
        pad, end = lines[at][:column], at
        while end <= last and lines[end].startswith(pad) and lines[end][column : column + 1] not in ("", " "):
            end += 1
        if end <= last and (lines[end].startswith(pad) or not lines[end].lstrip(" ")):
            return None  # a blank line, or one indented further: read the general way
        text = (" " if folded else "\n").join([line[column:] for line in lines[at:end]])
        self.at = end
        return text if chomping == "-" or end > last else text + "\n"

    def _block_scalar(self, rest: str, indent: int) -> str:
        """A ``|`` or ``>`` block scalar (PyYAML's ``scan_block_scalar``), in a collection at column ``indent``."""
        header = _BLOCK_HEADER.fullmatch(rest)
        if header is None:
            raise _Unsure  # an indentation indicator, or text after the header
        folded, chomping = header.group(1) == ">", header.group(2)
        lines, at = self.lines, self.at
        last = len(lines) - 1
        if at > last:
            raise _Unsure
        column = _indent(lines[at])
        if column == len(lines[at]) or column <= indent:
            raise _Unsure  # blank lines first (their spaces count), or an empty scalar
        usual = self._usual_block(column, folded, chomping)
        if usual is not None:
            return usual
        chunks: list[str] = []
        while True:
            line = lines[at]
            chunks.append(line[column:])
            leading_text = line[column] != " "
            line_break = "\n" if at < last else ""
            at, breaks = _breaks(lines, at + 1, column)
            if at > last or _indent(lines[at]) < column or (at == last and len(lines[at]) == column):
                break
            if folded and line_break and leading_text and lines[at][column] != " ":
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
            chunks.append("\n" * breaks)
        if chomping != "-":
            chunks.append(line_break)
        if chomping == "+":
            chunks.append("\n" * breaks)
        self.at = at
        return "".join(chunks)
