"""Gemini CLI's import scan and ordering, on text alone (the binary checks are in tests/realagents)."""

from __future__ import annotations

import json

from agentcontext.peers.gemini.settings import joined, strip_comments
from agentcontext.peers.gemini.text import code_regions, find_imports, in_code, section, sort_key


def test_an_import_starts_after_whitespace_with_a_dot_a_slash_or_an_ascii_letter() -> None:
    text = "@a.md x@b.md @./c.md @/d.md @~/e.md @1.md @_f.md @é.md\t@g.md\r\n@h.md,"
    assert [spec.path for spec in find_imports(text)] == ["a.md", "./c.md", "/d.md", "g.md", "h.md,"]


def test_backtick_runs_closed_by_the_same_run_hide_imports_and_nothing_else_of_markdown_does() -> None:
    text = "`@a.md` ``x ` @b.md`` ```\n@c.md\n``` # @d.md\n> @e.md\n"
    regions = code_regions(text)
    assert [s.path for s in find_imports(text) if not in_code(s.start, regions)] == ["d.md", "e.md"]


def test_a_section_is_the_trimmed_text_between_its_markers_and_an_empty_one_is_none() -> None:
    assert section("/r/GEMINI.md", "\ufeff\n text\r\n \n") == (
        "--- Context from: /r/GEMINI.md ---\ntext\n--- End of Context from: /r/GEMINI.md ---"
    )
    assert section("/r/GEMINI.md", " \u3000\n") is None


def test_paths_sort_as_javascript_sorts_strings() -> None:
    paths = ["/r/GEMINI.md", "/r/A/GEMINI.md", "/r/a/GEMINI.md", "/r/\U0001f600/x", "/r/\uff5e/x", "/r/_/GEMINI.md"]
    assert sorted(paths, key=sort_key) == [
        "/r/A/GEMINI.md",
        "/r/GEMINI.md",
        "/r/_/GEMINI.md",
        "/r/a/GEMINI.md",
        "/r/\U0001f600/x",  # a surrogate pair (D83D) sorts before U+FF5E in UTF-16
        "/r/\uff5e/x",
    ]


def test_a_name_joins_as_node_joins_paths_and_settings_lose_their_comments() -> None:
    assert joined("/r/sub", "/abs.md") == "/r/sub/abs.md"
    assert joined("/r/sub", "../up.md") == "/r/up.md"
    stripped = strip_comments('{"a": "// kept \\" /* kept */", /* gone */ "b": 1} // gone\n')
    assert json.loads(stripped) == {"a": '// kept " /* kept */', "b": 1}
