"""Prompt text sanitising (Coder's ``SanitizePromptText``) and hidden-text detection.

Sanitising, in order: CRLF and lone CR become LF; HTML comments are removed; invisible
and direction-changing code points are dropped (U+200C, the zero-width non-joiner that
Persian and Indic scripts need, is kept); trailing whitespace is trimmed on every line;
runs of three or more newlines collapse to two; the result is trimmed. Idempotent.

Detection reports the same hidden content without changing anything, so the inventory
can warn about rules files carrying text a reviewer cannot see. The code points an emoji is
made of are not hidden (a reader sees the emoji): the three subdivision flags' tags, a zero-width
joiner between two pictographs, one presentation selector after a pictograph or in a keycap
(``emoji_part``, which the audit applies too).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Coder's newest list (coder.md section 5), as inclusive ranges.
_STRIP_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x070F, 0x070F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200B),
    (0x200D, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0xE0000, 0xE007F),
)

# Variation selectors 17-256: no emoji needs them, and a run of them after one carries smuggled bytes. Coder's
# sanitiser leaves them, so this one does too (a prompt stays Coder's); the warnings and the audit name them.
SMUGGLING_SELECTORS = (0xE0100, 0xE01EF)
_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_TAG_RANGE = (0xE0000, 0xE007F)

_STRIP_CLASS = "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _STRIP_RANGES)
_STRIP_RE = re.compile(f"[{_STRIP_CLASS}]")
# The same sets, for the audit, which names every hidden code point it finds: what is stripped, and the smugglers.
HIDDEN_CLASS = f"{_STRIP_CLASS}\\U{SMUGGLING_SELECTORS[0]:08x}-\\U{SMUGGLING_SELECTORS[1]:08x}"
BIDI_CONTROLS = _BIDI
TAG_RANGE = _TAG_RANGE
_HIDDEN_RE = re.compile(f"[{HIDDEN_CLASS}]")
_HTML_COMMENT_RE = re.compile(r"<!--[\s\S]*?-->")
_TRAILING_WS_RE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_MANY_NEWLINES_RE = re.compile(r"\n{3,}")
# The tags of the only subdivision flags emoji have (England, Scotland, Wales), each then a cancel tag: any
# other tags after U+1F3F4, even a short region code, could spell words flag after flag.
_FLAG_TAGS_RE = re.compile(
    "(?:"
    + "|".join("".join(chr(0xE0000 + ord(c)) for c in flag) for flag in ("gbeng", "gbsct", "gbwls"))
    + ")\U000e007f"
)
# Pictographs, which a joiner or a presentation selector may follow (Unicode's Extended_Pictographic, in blocks)
PICTOGRAPHS: tuple[tuple[int, int], ...] = (
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122), (0x2139, 0x2139),
    (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328), (0x23CF, 0x23CF), (0x23E9, 0x23F3),
    (0x23F8, 0x23FA), (0x24C2, 0x24C2), (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE),
    (0x2600, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50), (0x2B55, 0x2B55),
    (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1FAFF),
)  # fmt: skip
_PICTOGRAPH_RE = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in PICTOGRAPHS) + "]")
_KEYCAPS = "#*0123456789"  # a keycap's base: the selector, then U+20E3
_SEEN_THROUGH = bytes(c for c in range(128) if chr(c) not in "<!")  # ASCII that is neither hidden nor opens "<!--"


def sanitize(text: str) -> str:
    """Clean text for a model prompt. ``sanitize(sanitize(x)) == sanitize(x)``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Removing a comment or a hidden code point can join the pieces of a new comment
    # ("<!\u200b-- x -->", "<!<!-- a -->-- b -->"), so repeat until nothing changes;
    # a single pass would not be idempotent. Every round shortens the text.
    while True:
        cleaned = _STRIP_RE.sub("", _HTML_COMMENT_RE.sub("", text))
        if cleaned == text:
            break
        text = cleaned
    text = _TRAILING_WS_RE.sub("", text)
    text = _MANY_NEWLINES_RE.sub("\n\n", text)
    return text.strip()


@dataclass(frozen=True, slots=True)
class HiddenText:
    """Counts of hidden content, each with the 1-based line of its first occurrence."""

    invisible: tuple[int, int] = (0, 0)
    bidi: tuple[int, int] = (0, 0)
    tags: tuple[int, int] = (0, 0)
    html_comments: tuple[int, int] = (0, 0)

    def warnings(self) -> tuple[str, ...]:
        return tuple(f"hidden text: {said} (first on line {line})" for said, line in self.counted())

    def counted(self) -> Iterator[tuple[str, int]]:
        """Each kind found, said (``3 invisible characters``), with the line of its first."""
        for (count, line), one, many in (
            (self.invisible, "invisible character", "invisible characters"),
            (self.bidi, "bidirectional control character", "bidirectional control characters"),
            (self.tags, "Unicode tag character", "Unicode tag characters"),
            (self.html_comments, "HTML comment", "HTML comments"),
        ):
            if count:
                yield f"{count} {one if count == 1 else many}", line


def find_hidden_text(text: str, utf8: bytes | None = None) -> HiddenText:
    """Find the content :func:`sanitize` would remove that a reader cannot see, and ``SMUGGLING_SELECTORS``
    (``utf8``: the text's UTF-8 bytes, if the caller has them); the code points of an emoji (``emoji_part``)
    are seen, so not counted.

    A regex scans about 8 ns a character, more than reading the file costs. So the text's UTF-8 bytes
    lose, in one C pass, every ASCII byte but ``<`` and ``!``: what is left holds the hidden code points
    (none is ASCII) as whole characters in their order, and a ``<!`` wherever the text has ``<!--``
    (``-``, common in Markdown, would make it long). Each hidden one is then the first of its kind in the
    text after the one before it, which places it among its neighbours.
    """
    rest = (text.encode("utf-8", "surrogatepass") if utf8 is None else utf8).translate(None, _SEEN_THROUGH)
    counts = {"invisible": [0, 0], "bidi": [0, 0], "tags": [0, 0]}
    if not rest.isascii():
        for start, end, category in _runs(text, rest.decode("utf-8", "surrogatepass")):
            if emoji_part(text[start - 1 : start], text[start:end], text[end : end + 1]):
                continue
            slot = counts[category]
            if slot[0] == 0:
                slot[1] = _line_of(text, start)
            slot[0] += end - start
    comments = [m.start() for m in _HTML_COMMENT_RE.finditer(text)] if b"<!" in rest and "<!--" in text else []
    first_comment = _line_of(text, comments[0]) if comments else 0
    return HiddenText(
        invisible=(counts["invisible"][0], counts["invisible"][1]),
        bidi=(counts["bidi"][0], counts["bidi"][1]),
        tags=(counts["tags"][0], counts["tags"][1]),
        html_comments=(len(comments), first_comment),
    )


def _category(point: int) -> str:
    return "bidi" if point in _BIDI else "tags" if _TAG_RANGE[0] <= point <= _TAG_RANGE[1] else "invisible"


def _runs(text: str, rest: str) -> list[tuple[int, int, str]]:
    """``(start, end, category)``: the text's runs of adjacent hidden code points of one category, found from
    ``rest`` (the text's hidden code points in their order, among other characters)."""
    runs: list[tuple[int, int, str]] = []
    last = -1
    for match in _HIDDEN_RE.finditer(rest):
        char = match.group()
        at = text.find(char, last + 1)
        category = _category(ord(char))
        if runs and at == last + 1 and runs[-1][2] == category:
            runs[-1] = (runs[-1][0], at + 1, category)
        else:
            runs.append((at, at + 1, category))
        last = at
    return runs


def emoji_part(before: str, chars: str, after: str) -> bool:
    """Whether ``chars``, a run of hidden code points of one kind between ``before`` and ``after`` (a character
    each, "" at an end), is part of an emoji: the tags of England's, Scotland's or Wales's flag after U+1F3F4;
    a zero-width joiner (after a presentation selector or not) between two pictographs (a family, a rainbow
    flag); one presentation selector after a pictograph (a red heart) or in a keycap (``1``, the selector,
    U+20E3). Anything else, such as a joiner between letters or a row of selectors, may carry hidden text."""
    if _TAG_RANGE[0] <= ord(chars[0]) <= _TAG_RANGE[1]:
        return before == "\U0001f3f4" and _FLAG_TAGS_RE.fullmatch(chars) is not None
    if chars in ("\u200d", "\ufe0f\u200d"):
        return _pictograph(before) and _pictograph(after)
    if chars in ("\ufe0e", "\ufe0f"):
        return _pictograph(before) or (len(before) == 1 and before in _KEYCAPS and after == "\u20e3")
    return False


def _pictograph(char: str) -> bool:
    return _PICTOGRAPH_RE.match(char) is not None


def _line_of(text: str, position: int) -> int:
    """The 1-based line of ``position``, counting LF, CRLF and lone CR endings as sanitize does."""
    returns = text.count("\r", 0, position)
    crlf = text.count("\r\n", 0, position) if returns else 0
    return text.count("\n", 0, position) + returns - crlf + 1


_NONE = HiddenText()


def hidden_path_warnings(path: str) -> tuple[str, ...]:
    """Warnings for a file whose path holds hidden characters: agents put paths before the model (Claude Code's
    ``Contents of <path>``, Codex's skill list), so a folder's name can carry what no reader sees."""
    if path.isascii():
        return ()
    found = find_hidden_text(path)
    return tuple(f"hidden text in its path: {said}" for said, _ in found.counted() if "HTML" not in said)


def hidden_text_warnings(text: str, utf8: bytes | None = None) -> tuple[str, ...]:
    """Warnings for the inventory; empty for ordinary text (``utf8``: the text's UTF-8 bytes, if known)."""
    if text.isascii() and ("<" not in text or "<!--" not in text):  # one character is found 20x faster
        return ()
    found = find_hidden_text(text, utf8)
    return () if found == _NONE else found.warnings()
