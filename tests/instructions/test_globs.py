"""Rule globs matched as Claude Code 2.1.332 matches ``paths:`` (see tests/realagents), never catastrophically."""

from __future__ import annotations

import time

import pytest

from agentcontext.instructions.globs import MAX_PATTERNS, compile_globs
from agentcontext.peers.claude.text import split_frontmatter

OBSERVED = [  # glob, path relative to the folder holding .claude, matched by Claude Code
    ("deep", "deep/code.py", True),
    ("deep/*.{py,ts}", "deep/code.py", True),
    ("*.py", "deep/code.py", True),
    ("**/code.py", "deep/code.py", True),
    ("./deep/code.py", "deep/code.py", False),
    ("/deep/code.py", "deep/code.py", True),
    ("!deep/code.py", "deep/code.py", False),
    ("DEEP/CODE.PY", "deep/code.py", True),
    ("deep/*.py", "sub/deep/code.py", False),
    ("sub/deep/*.py", "sub/deep/code.py", True),
    ("deep/*.md", "deep/code.py", False),
]


@pytest.mark.parametrize(("glob", "path", "matched"), OBSERVED)
def test_a_glob_matches_what_claude_code_matched(glob: str, path: str, matched: bool) -> None:
    assert compile_globs([glob]).matches(path) is matched


@pytest.mark.parametrize(
    ("globs", "path", "matched"),
    [
        (["src/**/*.py"], "src/a/b/c.py", True),
        (["src/**/*.py"], "src/c.py", True),
        (["src/**/*.py"], "lib/src/c.py", False),
        (["deep/"], "deep/code.py", True),
        (["code.py/"], "deep/code.py", False),
        (["*.py", "!code.py"], "deep/code.py", False),
        (["deep", "!deep/code.py"], "deep/code.py", True),  # a file in an excluded folder cannot come back
        (["a/**"], "a", False),
        (["a/**"], "a/b", True),
        (["[^x]eep/*"], "deep/c", True),
        (["\\*.py"], "*.py", True),
        (["\\*.py"], "a.py", False),
        (["{a,b}/{c,d}"], "b/d/x", True),
        (["{x}"], "{x}", True),
    ],
)
def test_gitignore_rules_apply(globs: list[str], path: str, matched: bool) -> None:
    assert compile_globs(globs).matches(path) is matched


def test_catastrophic_globs_are_matched_in_bounded_time() -> None:
    globs = compile_globs(["**/" * 500 + "*.zz", "**/a*/" * 30 + "zz", "*a" * 60 + "b"])
    path = "/".join(["a" * 20] * 64) + "/" + "a" * 250
    start = time.perf_counter()
    assert globs.matches(path) is False
    assert time.perf_counter() - start < 0.5


def test_a_brace_bomb_stops_at_the_pattern_limit_and_says_so() -> None:
    globs = compile_globs(["{a,b}" * 30 + "/x.py", "ok.py"])
    assert len(globs.patterns) == 1
    assert globs.problems == (f"glob '{('{a,b}' * 30)[:80]}' expands past {MAX_PATTERNS} patterns: not matched",)
    assert globs.matches("ok.py")


@pytest.mark.parametrize(
    ("text", "globs", "error"),
    [
        ("---\npaths: 'deep/*.{py,ts}, other'\n---\nx\n", ("deep/*.{py,ts}", "other"), None),
        ("---\npaths: 5\n---\nx\n", None, None),
        ("---\npaths: {a: 1}\n---\nx\n", None, None),
        ("---\npaths: [5, x.py]\n---\nx\n", ("5", "x.py"), None),
        ("---\npaths: src/**\n---\nx\n", ("src",), None),
        ("---\npaths: [': bad\n---\nx\n", None, "its frontmatter is not valid YAML"),
    ],
)
def test_paths_frontmatter_is_read_as_claude_code_reads_it(
    text: str, globs: tuple[str, ...] | None, error: str | None
) -> None:
    split = split_frontmatter(text)
    assert split.globs == globs and split.body == "x\n"
    assert (split.error or "").startswith(error or "")
    assert (split.error is None) is (error is None)
