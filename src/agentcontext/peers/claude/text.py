"""Claude Code's handling of an instruction file's text (2.1.332, as its binary behaves).

* Frontmatter: a file starting ``---`` loses its frontmatter block (any memory file, not
  only rules); a ``paths:`` key (a string, comma separated outside ``{}``, or a list) makes a rule
  path-scoped (a number or a mapping does not). A trailing ``/**`` is dropped from each
  glob; ``**`` alone means "always". A rule whose frontmatter is not valid YAML is not
  loaded at all (a CLAUDE.md is, without its frontmatter).
* HTML comments: only when the text contains ``<!--``. The file is then rebuilt from its
  Markdown blocks, which normalises line ends to LF, and every top-level HTML block that
  is a comment is removed with the blank lines after it (text left on its line stays).
  Comments inside paragraphs, lists or code are kept.
* ``@`` imports: ``@path`` preceded by a line start or whitespace, in Markdown text only
  (never in code spans, fenced or indented code, images or HTML other than a comment's
  remainder); ``#`` ends the path, ``\\ `` is a space; only paths starting
  ``./``, ``~/``, ``/`` or a letter, digit, ``.``, ``_`` or ``-`` count. They resolve
  against the importing file's folder (``~/`` against the home folder).
* Only files whose extension is a known text one (or none) are loaded.
* Rendering trims with JavaScript's ``trim`` (which takes a leading BOM too).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from agentcontext.skills.yaml_subset import YAML_ERRORS, pyyaml_load

if TYPE_CHECKING:  # markdown-it is imported by the first text that needs it (~40 ms a process otherwise)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

TEXT_EXTENSIONS = frozenset(
    (  # noqa: SIM905 - one readable block, as Claude Code lists them
        ".md .txt .text .json .yaml .yml .toml .xml .csv .html .htm .css .scss .sass .less .js .ts .tsx .jsx "
        ".mjs .cjs .mts .cts .py .pyi .pyw .rb .erb .rake .go .rs .java .kt .kts .scala .c .cpp .cc .cxx .h "
        ".hpp .hxx .cs .swift .sh .bash .zsh .fish .ps1 .bat .cmd .env .ini .cfg .conf .config .properties "
        ".sql .graphql .gql .proto .vue .svelte .astro .ejs .hbs .pug .jade .php .pl .pm .lua .r .dart .ex "
        ".exs .erl .hrl .clj .cljs .cljc .edn .hs .lhs .elm .ml .mli .f .f90 .f95 .for .cmake .make .makefile "
        ".gradle .sbt .rst .adoc .asciidoc .org .tex .latex .lock .log .diff .patch"
    ).split()
)
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_FRONTMATTER = re.compile(r"^---\s*\n([\s\S]*?)---\s*\n?")
_IMPORT = re.compile(rf"(?:^|[{_JS_SPACE}])@((?:[^{_JS_SPACE}\\]|\\ )+)")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_NAME_START = re.compile(r"^[a-zA-Z0-9._-]")
_SYMBOLS_ONLY = re.compile(r"^[#%^&*()]+")


def js_trim(text: str) -> str:
    """``String.prototype.trim``: JavaScript's whitespace set, which includes U+FEFF."""
    return text.strip(_JS_SPACE)


def loads_extension(path: str) -> bool:
    """Whether Claude Code reads a file by this name (a known text extension, or none)."""
    extension = os.path.splitext(os.path.basename(path))[1].lower()
    return not extension or extension in TEXT_EXTENSIONS


class Split(NamedTuple):
    """A file without its frontmatter; ``globs`` make a rule path-scoped (None: it is not)."""

    body: str
    globs: tuple[str, ...] | None = None
    error: str | None = None  # the frontmatter is not valid YAML: Claude Code skips such a rule


def split_frontmatter(text: str) -> Split:
    """The text without its frontmatter, the rule's globs, and why the frontmatter is unusable."""
    if text.find("---", 3) < 0:
        return Split(text)
    match = _FRONTMATTER.match(text)
    if match is None:
        return Split(text)
    body = text[match.end() :]
    block = match.group(1)
    try:
        fields = plain_fields(block)
        if fields is None:
            fields = pyyaml_load(block)
    except YAML_ERRORS as exc:  # a constructor's ValueError too (``paths: 2001-02-30``)
        problem = "nested too deeply" if isinstance(exc, RecursionError) else str(getattr(exc, "problem", None) or exc)
        problem = problem.split("\n", 1)[0]
        return Split(body, None, f"its frontmatter is not valid YAML ({problem})")
    paths = fields.get("paths") if isinstance(fields, dict) else None
    return Split(body, _globs(paths))


def _globs(paths: object) -> tuple[str, ...] | None:
    """A ``paths:`` value's globs; None when it does not make the rule path-scoped."""
    if not paths:
        return None
    if isinstance(paths, str):
        items: list[Any] = _split_commas(paths)
    elif isinstance(paths, list):
        items = paths
    else:  # a number or a mapping: not path-scoped
        return None
    globs: list[str] = []
    for item in items:
        if isinstance(item, _SCALARS):
            glob = str(item).strip()
            if glob.endswith("/**"):
                glob = glob[:-3]
            if glob:
                globs.append(glob)
    if not globs or all(g == "**" for g in globs):
        return None
    return tuple(globs)


# The frontmatter most rules have, read without YAML: lines of ``key: value`` or ``key:`` and
# ``- value`` items below it, every key and value a plain ASCII text YAML reads as that very
# string (starting with a letter, "/" or "_", no ":" or "#", not a YAML 1.1 boolean or null).
# Anything else goes to YAML; a property test checks that both agree whenever this answers.
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*+):(?: ([A-Za-z/_][ -\"$-9;-~]*+))?")
_ITEM_LINE = re.compile(r"( *+)- ([A-Za-z/_][ -\"$-9;-~]*+)")
_SCALARS = (str, int, float)  # the paths: items taken as globs (a boolean is an int)
_YAML_WORDS = frozenset(["yes", "no", "on", "off", "true", "false", "null", "y", "n"])


def _plain(value: str) -> bool:
    return value[-1] != " " and (len(value) > 5 or value.lower() not in _YAML_WORDS)


def plain_fields(block: str) -> dict[str, str | list[str] | None] | None:
    """What ``yaml.safe_load`` gives for a block of plain keys, values and lists; None: ask YAML."""
    fields: dict[str, str | list[str] | None] = {}
    items: list[str] | None = None  # the list of the last ``key:`` line
    owner = ""  # that key
    indent = -1
    for line in block.split("\n"):
        if not line:
            continue
        if line[0] == " " or line[0] == "-":
            item = _ITEM_LINE.fullmatch(line)
            if item is None or items is None or (indent >= 0 and len(item[1]) != indent) or not _plain(item[2]):
                return None
            indent = len(item[1])
            items.append(item[2])
            fields[owner] = items
            continue
        pair = _KEY_LINE.fullmatch(line)
        if pair is None or not _plain(pair[1]):
            return None
        owner, value = pair[1], pair[2]
        if value is None:
            items, indent = [], -1
        elif not _plain(value):
            return None
        else:
            items = None
        fields[owner] = value
    return fields or None


def _split_commas(text: str) -> list[str]:
    """A ``paths:`` string split at its commas, except those inside ``{...}`` alternatives."""
    if "{" not in text:
        return text.split(",")
    items: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and not depth:
            items.append(text[start:index])
            start = index + 1
    return [*items, text[start:]]


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True})
    md.disable("text_join")  # keep escapes apart, as marked does
    return md


def strip_comments(text: str) -> str:
    """Remove top-level HTML comment blocks the way Claude Code does (see the module docstring)."""
    if "<!--" not in text:
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    drops: list[tuple[int, int, str]] = []  # first line, line after, replacement
    for token in _markdown().parse(text):
        if token.type != "html_block" or token.level != 0 or token.map is None:
            continue
        if not (token.content.lstrip().startswith("<!--") and "-->" in token.content):
            continue
        start, end = token.map
        while end < len(lines) - 1 and lines[end] == "":
            end += 1  # marked's raw takes the empty lines after the block
        raw = "\n".join(lines[start:end]) + ("\n" if end < len(lines) else "")
        left = _COMMENT.sub("", raw)
        drops.append((start, end, left if left.strip() else ""))
    if not drops:
        return text
    out: list[str] = []
    at = 0
    for start, end, replacement in drops:
        out.append("".join(line + "\n" for line in lines[at:start]))
        out.append(replacement)
        at = end
    rest = lines[at:]
    out.append("\n".join(rest))
    return "".join(out)


def import_paths(text: str, importer_dir: str, home: str) -> list[str]:
    """The absolute paths ``@`` lines of ``text`` import, in order, each once."""
    if "@" not in text or not _IMPORT.search(text):
        return []  # a run of Markdown text is a piece of the source: no match in it, none in a run
    specs = _plain_specs(text)
    if specs is None:
        specs = [match.group(1) for run in _text_runs(_markdown().parse(text)) for match in _IMPORT.finditer(run)]
    found: dict[str, None] = {}
    for spec in specs:
        cut = spec.find("#")
        if cut != -1:
            spec = spec[:cut]
        spec = spec.replace("\\ ", " ")
        if not spec or not _importable(spec):
            continue
        found.setdefault(resolve(spec, importer_dir, home), None)
    return list(found)


# Markdown that can hide an "@" from the text (code, HTML, autolinks, escapes) wherever it is...
_HIDING = re.compile(r"[`<\\]|~~~")
# ...and what can cut the text right at an "@" or inside its path, within its paragraph: emphasis,
# links and images, block quotes, and indented code (which four spaces or a tab may start, at a
# line's start or after a list marker).
_CUTTING = re.compile(r"[*_\[\]>\t]| {4}")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")  # what ends a paragraph


def _plain_specs(text: str) -> list[str] | None:
    """The ``@`` specs of ``text`` found without parsing Markdown, when parsing could change nothing.

    That is when no Markdown anywhere can hide text and no paragraph holding an ``@`` has
    anything that could cut it: the text runs are then the source's own lines, less block
    markers and indentation (which the import pattern treats like the whitespace they are),
    so the pattern finds the same specs in the same order. None: parse (a property test
    compares both on generated Markdown).
    """
    if "\r" in text:  # Markdown reads CR and CRLF as LF; so does the pattern
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _HIDING.search(text):
        return None
    for paragraph in _BLANK_LINE.split(text):
        if "@" in paragraph and _CUTTING.search(paragraph):
            return None
    return [match.group(1) for match in _IMPORT.finditer(text)]


def _importable(spec: str) -> bool:
    if spec.startswith(("./", "~/")) or (spec.startswith("/") and spec != "/"):
        return True
    return not spec.startswith("@") and not _SYMBOLS_ONLY.match(spec) and bool(_NAME_START.match(spec))


def resolve(spec: str, importer_dir: str, home: str) -> str:
    if spec.startswith("~/"):
        return os.path.normpath(os.path.join(home, spec[2:]))
    return os.path.normpath(os.path.join(importer_dir, spec))


def _text_runs(tokens: Iterable[Token]) -> Iterator[str]:
    """The stretches of Markdown text marked would hand to the import scan."""
    in_item = 0
    for token in tokens:
        kind = token.type
        if kind == "list_item_open":
            in_item += 1
        elif kind == "list_item_close":
            in_item -= 1
        if kind == "html_block":
            yield from _comment_remainder(token.content)
        elif kind == "inline":
            if in_item:  # marked scans a list item's raw text as well as its pieces
                yield token.content
            yield from _inline_runs(token.children or [])


def _comment_remainder(raw: str) -> Iterator[str]:
    stripped = raw.lstrip()
    if stripped.startswith("<!--") and "-->" in raw:
        rest = _COMMENT.sub("", raw)
        if rest.strip():
            yield rest


def _inline_runs(children: list[Token]) -> Iterator[str]:
    run: list[str] = []
    for child in children:  # an image keeps its alt text as its own children: never scanned
        kind = child.type
        if kind == "text":
            run.append(child.content)
            continue
        if kind == "softbreak":
            run.append("\n")
            continue
        if kind == "text_special" and (child.info == "entity" or child.content == child.markup):
            run.append(child.markup)  # an entity, or a backslash marked does not treat as an escape
            continue
        if run:
            yield "".join(run)
            run = []
        if kind == "html_inline":
            yield from _comment_remainder(child.content)
    if run:
        yield "".join(run)
