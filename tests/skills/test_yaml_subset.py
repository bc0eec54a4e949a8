"""The frontmatter YAML reader without PyYAML: equal to ``yaml.safe_load`` wherever it answers, and it answers
for what real SKILL.md files hold."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcontext.skills.validation import _Yaml12Core, _Yaml12Loader, _YamlCoreLoader
from agentcontext.skills.yaml_subset import is_text, load

_CLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it: ``True == 1`` and ``1.0 == 1`` must not pass for equal."""
    if isinstance(value, dict):
        return {typed(key): typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def agrees(block: str) -> bool:
    """Whether :func:`load` answered for ``block``; when it did, PyYAML (both loaders) gives the same values."""
    fast = load(block)
    if fast is None:
        return False
    fields, _ = fast
    assert typed(fields) == typed(yaml.safe_load(block)), block
    assert typed(fields) == typed(yaml.load(block, Loader=_CLoader)), block
    opencode = load(block, _Yaml12Loader)  # OpenCode's resolvers: yes, no, on and off are strings
    if opencode is not None:
        assert typed(opencode[0]) == typed(yaml.load(block, Loader=_Yaml12Loader)), block
    copilot = load(block, _YamlCoreLoader)  # Copilot CLI's YAML 1.2 core schema: dates and 1_000 are strings too
    if copilot is not None:
        assert typed(copilot[0]) == typed(yaml.load(block, Loader=_YamlCoreLoader)), block
    claude = load(block, _Yaml12Core)  # Claude Code's: YAML 1.2's core schema exactly
    if claude is not None:
        assert typed(claude[0]) == typed(yaml.load(block, Loader=_Yaml12Core)), block
    return True


# --- generated frontmatter: every construct, tricky scalars, noise -------------------------------------------

TRICKY = [
    *("yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "true", "False"),
    *("1e3", "1.5e3", "0x1F", "0o17", "017", "0b101", "1_000", "12:30", "190:20:30", ".5", ".inf", "-.NaN"),
    *("+1", "-1", "2024-01-01", "2024-01-01 10:00:00", "2024-1-1", "=", "<<", "-", "?", ":"),
    *("a: b", "a #b", "a#b", "C#", "a:b", "http://x.y/z", "x:", "'q'", '"q"', "it's", 'say "hi"'),
    *("-x", "- x", "?x", ":x", "[a]", "{a}", "a, b", "a [b]", "&a", "*a", "!t", "%p", "@x", "`x", "|", ">", "#"),
    *("héllo", "日本語", "emoji 😀", "a  b", "trailing ", " lead", "", "---", "...", "a\\b", "tab\there"),
    *("zero\u200bwidth", "bom\ufeff", "nel\x85", "ls\u2028", "cr\rx", "del\x7f"),
]
_WORD = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet=st.sampled_from("abcXYZ019 .,-_:#'\"\\/!?é😀[]{}"), min_size=1, max_size=10),
    *[st.text(alphabet=st.sampled_from("abcXYZ019 .,-_/!?é😀()"), min_size=1, max_size=10)] * 12,
)
_KEYS = st.sampled_from(
    ["name", "description", "license", "metadata", "allowed-tools", "tags", "version", "a_b", "x.y", "k/v"] * 3
    + ["Yes", "on", "null", "1k", "_k", "-k", "a b", "<<", "?k", "é"]
)
_ESCAPES = st.sampled_from(["\\n", '\\"', "\\\\", "\\/", "\\t", "\\u00e9", "\\x41", "\\U0001F600", "\\ud800", "\\q"])
_SPACES = st.sampled_from(["", " ", "  "])
_COMMENT = st.sampled_from(["", "", "", " # note", "  #: x", "# tight"])


@st.composite
def _double(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(_WORD.map(lambda w: w.replace("\\", "").replace('"', "")), _ESCAPES), max_size=4))
    return '"' + "".join(parts) + '"'


@st.composite
def _single(draw: st.DrawFn) -> str:
    word: str = draw(_WORD)
    return "'" + word.replace("'", draw(st.sampled_from(["''", "''", "'"]))) + "'"


_INLINE = st.one_of(_WORD, _WORD, _double(), _single())


@st.composite
def _flow(draw: st.DrawFn) -> str:
    items = draw(st.lists(st.one_of(_WORD, _double(), _single()), max_size=3))
    return "[" + draw(st.sampled_from([", ", ",", " , "])).join(items) + draw(st.sampled_from(["]", "]", ",]", " ]"]))


@st.composite
def _block_scalar(draw: st.DrawFn, indent: int) -> list[str]:
    header = draw(st.sampled_from(["|", ">"])) + draw(st.sampled_from(["", "-", "+", "2"])) + draw(_COMMENT)
    step = draw(st.sampled_from([1, 2, 2, 4]))
    lines = [header]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["text", "text", "text", "deeper", "blank", "spaces", "less"]))
        pad = " " * (indent + step)
        if kind == "text":
            lines.append(pad + draw(_WORD).lstrip(" ") + draw(_SPACES))
        elif kind == "deeper":
            lines.append(pad + "  " + draw(_WORD))
        elif kind == "blank":
            lines.append("")
        elif kind == "spaces":
            lines.append(" " * draw(st.integers(0, indent + step + 2)))
        else:
            lines.append(" " * (indent + 1) + draw(_WORD))
    return lines


@st.composite
def _plain_lines(draw: st.DrawFn, indent: int) -> list[str]:
    lines = [draw(_WORD) + draw(_COMMENT)]
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            lines.append("")
        lines.append(" " * (indent + draw(st.sampled_from([0, 1, 2, 3]))) + draw(_WORD) + draw(_SPACES))
    return lines


@st.composite
def _mapping(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        pad = " " * indent
        if draw(st.integers(0, 9)) == 0:
            out.append(" " * draw(st.integers(0, 4)) + "# a comment")
        key = pad + draw(_KEYS) + ":"
        kind = draw(st.sampled_from(["inline", "inline", "block", "flow", "plain", "list", "map", "null"]))
        if kind == "inline":
            out.append(key + draw(st.sampled_from([" ", " ", "  "])) + draw(_INLINE) + draw(_COMMENT))
        elif kind == "flow":
            out.append(key + " " + draw(_flow()) + draw(_COMMENT))
        elif kind == "block":
            first, *rest = draw(_block_scalar(indent))
            out += [key + " " + first, *rest]
        elif kind == "plain":
            first, *rest = draw(_plain_lines(indent + 1))
            out += [key + " " + first, *rest]
        elif kind == "list" or (kind == "map" and depth >= 2):
            out.append(key + draw(_COMMENT))
            out += draw(_sequence(indent + draw(st.sampled_from([0, 2, 2, 4])), depth + 1))
        elif kind == "map":
            out.append(key + draw(_COMMENT))
            out += draw(_mapping(indent + draw(st.sampled_from([2, 2, 4, 1])), depth + 1))
        else:
            out.append(key + draw(_SPACES) + draw(_COMMENT))
        if draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from(["", "  ", " " * (indent + 3) + "stray"])))
    return out


@st.composite
def _sequence(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        dash = " " * indent + draw(st.sampled_from(["- ", "- ", "-  ", "-"]))
        kind = draw(st.sampled_from(["inline", "inline", "flow", "plain", "block", "map", "below"]))
        if kind == "inline":
            out.append(dash + draw(_INLINE) + draw(_COMMENT))
        elif kind == "below" and depth < 3:  # the item on the lines after its "-"
            out.append(dash.rstrip(" ") + draw(_COMMENT))
            below = indent + draw(st.sampled_from([0, 1, 2, 2]))
            out += draw(_sequence(below, depth + 1) if draw(st.booleans()) else _mapping(below, depth + 1))
        elif kind == "flow":
            out.append(dash + draw(_flow()))
        elif kind == "plain":
            first, *rest = draw(_plain_lines(indent + 1))
            out += [dash + first, *rest]
        elif kind == "block":
            first, *rest = draw(_block_scalar(indent))
            out += [dash + first, *rest]
        else:
            first, *rest = draw(_mapping(len(dash), depth + 1)) if depth < 3 else [draw(_WORD)]
            out += [dash + first.lstrip(" "), *rest]
    return out


_BLOCKS = _mapping(0, 0).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(block=_BLOCKS, end=st.sampled_from(["", "", "\n", "\n\n", "\n  "]))
def test_the_subset_reader_agrees_with_pyyaml_whenever_it_answers(block: str, end: str) -> None:
    agrees(block + end)


# --- what a SKILL.md usually holds: always read here --------------------------------------------------------

_SAFE = st.text(alphabet=st.sampled_from("abcdeXYZ .,;()/'\"é日😀-_"), min_size=1, max_size=12).map(
    lambda text: "W" + text.strip(" ").replace(" #", " ").replace(": ", " ")
)


@st.composite
def _usual(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A block in the shapes real skills use, with the values it must give."""
    expected: dict[str, Any] = {"name": draw(_SAFE)}
    lines = [f"name: {expected['name']}"]
    words = draw(st.lists(_SAFE, min_size=1, max_size=4))
    style = draw(st.sampled_from(["plain", "double", "single", "folded", "literal", "wrapped"]))
    if style == "plain":
        lines.append("description: " + " ".join(words) + draw(st.sampled_from(["", " # why"])))
        expected["description"] = " ".join(words)
    elif style == "double":
        lines.append('description: "' + "\\n".join(w.replace('"', '\\"') for w in words) + '"')
        expected["description"] = "\n".join(words)
    elif style == "single":
        lines.append("description: '" + " ".join(w.replace("'", "''") for w in words) + "'")
        expected["description"] = " ".join(words)
    elif style == "wrapped":
        lines += ["description: " + words[0], *("  " + w for w in words[1:])]
        expected["description"] = " ".join(words)
    else:
        chomp = draw(st.sampled_from(["", "-", "+"]))
        lines += [f"description: {'>' if style == 'folded' else '|'}{chomp}", *("  " + w for w in words), ""]
        joined = (" " if style == "folded" else "\n").join(words)
        expected["description"] = joined + {"": "\n", "-": "", "+": "\n\n"}[chomp]
    tags = draw(st.lists(_SAFE, max_size=3))
    if tags:
        if draw(st.booleans()):
            lines += ["tags:", *(f"  - {t}" for t in tags)]
        else:
            tags = [t.replace("'", "").replace('"', "").replace(",", "").rstrip(" ") for t in tags]
            lines.append("tags: [" + ", ".join(tags) + "]")
        expected["tags"] = tags
    if draw(st.booleans()):
        lines += ["# where it came from", "metadata:", f"  author: {words[0]}", "  version: '1.0'"]
        expected["metadata"] = {"author": words[0], "version": "1.0"}
    return "\n".join(lines) + "\nlicense: MIT", {**expected, "license": "MIT"}


@settings(max_examples=400, deadline=None)
@given(case=_usual())
def test_the_subset_reader_reads_the_usual_skill_shapes_itself(case: tuple[str, dict[str, Any]]) -> None:
    block, expected = case
    assert agrees(block), block
    assert load(block) is not None and typed(load(block)[0]) == typed(expected)  # type: ignore[index]


def test_an_item_written_below_its_dash_is_read() -> None:
    assert agrees("phrases:\n  -\n    - x\n    - y\n  -\n    k: v\n  - z")
    assert agrees("allOf:\n-\n  - monorepo")


def test_a_real_looking_block_is_read_with_its_values_count() -> None:
    block = (
        "name: workflow\n"
        "description: >-\n"
        "  Durable workflows: pause, resume\n"
        "  and retries.\n"
        "metadata:  # ours\n"
        "  priority: high\n"
        "  docs:\n"
        '    - "https://vercel.com/docs/workflow"\n'
        "    - 'lib/**'\n"
        "  signals:\n"
        "    phrases:\n"
        "    - durable workflow\n"
        "allowed-tools: [Read, 'Grep', \"Bash(git:*)\"]\n"
        "argument-hint: |\n"
        "  first\n"
        "\n"
        "    indented\n"
        "last"
    )
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(block)  # "last" without a colon: not YAML
    assert load(block) is None
    block = block.removesuffix("\nlast")
    assert agrees(block)
    fields, values = load(block)  # type: ignore[misc]
    assert fields["description"] == "Durable workflows: pause, resume and retries."
    assert fields["metadata"]["signals"] == {"phrases": ["durable workflow"]}
    assert fields["argument-hint"] == "first\n\n  indented"
    assert values == 1 + 2 * 5 + 2 * 3 + 2 + 2 + 1 + 3  # the root, 5 pairs, metadata's 3, 2 docs, signals, tools


@pytest.mark.parametrize(
    "block",
    [
        "name: 2024-01-01",
        "name: 12:30",
        "name: 0x1F",
        "name: 017",
        "name: 1_000",
        "name: 1.5",
        "name: .inf",
        "name: <<",
        "name: =",
        "on: x",
        "name: &a x\nother: *a",
        "name: !!str x",
        "? name\n: x",
        "name: {a: b}",
        "name: x\nname: y",
        "name: x\n  more: y",
        "  name: x",
        "name:\tx",
        "name: x\r\ndescription: y",
        "name: a\u2028b",
        "name: |2\n   x",
        "name: |\n\n  x",
        '"name": x',
        "name: 'open",
        'name: "a\\\n  b"',
        "name: [a,\n  b]",
        "name: [a, [b]]",
        "%YAML 1.1\n---\nname: x",
        "name: x\n---\nname: y",
        "# only a comment",
        'name: "\\ud800"',
        "- a\n- b",
    ],
)
def test_the_subset_reader_leaves_what_it_does_not_know_to_pyyaml(block: str) -> None:
    assert load(block) is None


def test_plain_text_is_text_by_pyyamls_own_resolvers() -> None:
    assert all(is_text(word) for word in ("Deploy", "yes please", "Nope", "1x", "v1.0", "~x", "nulls", "1e3"))
    assert not any(is_text(word) for word in ("Yes", "off", "NULL", "~", "1_0", "0.5", "-1.5e+3", "1:2", "2024-01-01"))


@pytest.mark.parametrize(
    "word", ["yes", "No", "ON", "off", "true", "False", "~", "null", "Null", "0", "-0", "+7", "42"]
)
def test_booleans_nulls_and_decimal_ints_are_read_as_pyyaml_builds_them(word: str) -> None:
    assert agrees(f"name: {word}\ntags: [{word}, x]\nlist:\n- {word}")
