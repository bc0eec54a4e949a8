"""Claude Code's ``@`` import scan: the quick scan of plain text finds exactly what parsing the Markdown finds."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcontext.peers.claude.text import _IMPORT, _markdown, _plain_specs, _text_runs, import_paths, plain_fields


def parsed_specs(text: str) -> list[str]:
    """Each spec the parsed text runs hold, once, in the order of first sight (as imports are taken)."""
    specs = [match.group(1) for run in _text_runs(_markdown().parse(text)) for match in _IMPORT.finditer(run)]
    return list(dict.fromkeys(specs))


_PIECES = st.sampled_from(
    ["@a.md", "@b/c.md", " ", "  ", "\t", "\n", "\n\n", "\r\n", "x", "- ", "1. ", "# ", "> ", "    ", "*", "_",
     "**", "[", "](", ")", "![", "`", "```\n", "~~~\n", "<", "<!-- c -->", "\\", "&amp;", "&#64;", "---\n",
     "===\n", "\u00a0", "a@b", "@", "#x", ":"]
)  # fmt: skip


_PLAIN_PIECES = st.sampled_from(
    [
        "@a.md",
        "@b/c.md",
        "@d#x",
        " ",
        "\n",
        "\n\n",
        "x",
        "- ",
        "1) ",
        "## ",
        "   ",
        "a@b",
        "&amp;",
        "---\n",
        "\u00a0",
        "=\n",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(pieces=st.lists(st.one_of(_PLAIN_PIECES, _PLAIN_PIECES, _PLAIN_PIECES, _PIECES), max_size=14))
def test_the_quick_scan_agrees_with_parsing_the_markdown_whenever_it_answers(pieces: list[str]) -> None:
    text = "".join(pieces)
    quick = _plain_specs(text)
    if quick is None:
        return  # the Markdown parser decides
    assert list(dict.fromkeys(quick)) == parsed_specs(text)


def test_the_quick_scan_takes_plain_lists_and_paragraphs_and_leaves_code_and_emphasis_to_the_parser() -> None:
    text = "# Project\n\n- @docs/a.md\n- @docs/b.md\n\nSee @c.md and mail me@example.com.\n"
    assert _plain_specs(text) == parsed_specs(text) == ["docs/a.md", "docs/b.md", "c.md"]
    for text in ("see `@a.md`", "*@a.md*", "    @a.md", "> @a.md", "<p>\n@a.md\n</p>", "```\n@a.md\n```", "\\@a.md"):
        assert _plain_specs(text) is None, text
    assert _plain_specs("*intro*\n\n@a.md") == ["a.md"]  # emphasis in another paragraph cannot reach it


def test_imports_resolve_against_the_importer_once_each_in_order() -> None:
    text = "@b.md @a.md\n\n- @b.md\n- @~/x.md\n"
    assert import_paths(text, "/w", "/home/u") == ["/w/b.md", "/w/a.md", "/home/u/x.md"]


_KEYS = st.sampled_from(
    [*["paths"] * 8, "globs", "globs", "a-b", "_x", "yes", "No", "x1", "paths:", " paths", "-k", "y"]
)
_CLEAN = st.text(alphabet=st.sampled_from("abcxyz/_*{},.-"), max_size=5)
_ODD = st.sampled_from(
    [*[""] * 30, *"0.*{}[]-!&|>%@`'\":#\t\u00e9~= ", "  ", " #", ": "]
)  # one odd character, often none
_VALUES = st.one_of(
    st.tuples(st.sampled_from([*"abxyz/_" * 8, *"0.*{[-!&|>%@`'\":#~= "]), _CLEAN, _ODD, _CLEAN).map("".join),
    st.sampled_from(["yes", "No", "null", "TRUE", "y", "off", "src/**/*.py", "a b", "a  ", "a: b", "a #b", "a#b"]),
)
_ENTRIES = st.tuples(
    _KEYS,
    st.one_of(_VALUES, st.lists(_VALUES, max_size=3)),
    st.sampled_from(["", " ", "  ", "    "]),  # the items' indentation
    st.sampled_from(["", "", " ", "   ", "\t"]),  # one item's indentation changed (none when "")
    st.sampled_from(["\n", "\n", "\n", "\n\n", "\n \n", "\r\n"]),  # what ends the entry
)


def _render(key: str, value: str | list[str], indent: str, odd: str, end: str) -> str:
    if isinstance(value, str):
        return f"{key}: {value}{end}"
    items = [f"{indent}- {item}" for item in value]
    if odd and items:
        items[-1] = odd + items[-1].lstrip(" ")
    return "\n".join([f"{key}:", *items]) + end


@settings(max_examples=1000, deadline=None)
@given(entries=st.lists(_ENTRIES, max_size=4))
def test_the_plain_frontmatter_read_agrees_with_yaml_whenever_it_answers(
    entries: list[tuple[str, str | list[str], str, str, str]],
) -> None:
    block = "".join(_render(*entry) for entry in entries)
    fast = plain_fields(block)
    if fast is None:
        return  # YAML decides
    assert fast == yaml.safe_load(block)


def test_the_plain_frontmatter_read_takes_the_usual_rule_shapes_and_leaves_the_rest_to_yaml() -> None:
    for usual in (
        "paths: src/mod0/**/*.py\n",
        "paths:\n  - src/**/*.ts\n  - lib/{a,b}/x.py\n",
        "description: x\npaths:\n- a",
    ):
        assert plain_fields(usual) is not None, usual
        assert plain_fields(usual) == yaml.safe_load(usual)
    for tricky in (
        "paths: yes",
        "paths: '*.py'",
        "paths: *.py",
        "paths: [a]",
        "paths: a #c",
        "paths: 1.5",
        "paths:\n - a\n  - b",
    ):
        assert plain_fields(tricky) is None, tricky
