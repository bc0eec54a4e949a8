"""Claude Code's ``@`` import scan: the quick scan of plain text finds exactly what parsing the Markdown finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcontext.claude_text import _IMPORT, _markdown, _plain_specs, _text_runs, import_paths


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
