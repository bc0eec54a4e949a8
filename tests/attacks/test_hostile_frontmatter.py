"""A SKILL.md's frontmatter written to make its reader slow or crash: read in linear time, or left to PyYAML.

``skills validate`` reads up to 4 MiB of a SKILL.md, the scan up to the per-resource cap: each block
below is a few hundred KiB, and each is read (or refused) in well under a second.
"""

from __future__ import annotations

import time

import pytest
import yaml

from agentcontext.errors import FrontmatterError
from agentcontext.settings.config import Validation
from agentcontext.skills.frontmatter import parse
from agentcontext.skills.validation import check
from agentcontext.skills.yaml_subset import load

WIDE = 200_000

HOSTILE = {
    "spaces inside a flow item": "a: [x" + " " * WIDE + "y]",
    "spaces before a flow item's end that never comes": "a: [x" + " " * WIDE + "y",
    "a quoted scalar of escapes": 'a: "' + "\\\\" * WIDE + '"',
    "a quoted scalar of escapes left open": 'a: "' + "\\\\" * WIDE,
    "a single-quoted scalar of doubled quotes": "a: '" + "''" * WIDE + "'",
    "a block scalar header with spaces and no comment": "a: |" + " " * WIDE + "x\n  y",
    "an indentation of spaces and no key": " " * WIDE + "x",
    "a sequence item after many spaces": "a:\n" + " " * WIDE + "- x",
    "two thousand levels of maps": "".join(" " * i + f"k{i}:\n" for i in range(2_000)) + " " * 2_000 + "v: x",
    "two thousand levels of lists": "a:\n" + "".join(" " * i + "-\n" for i in range(2_000)) + " " * 2_000 + "- x",
    "two hundred thousand blank lines in a block scalar": "a: |\n  x\n" + "\n" * WIDE + "  y",
    "fifty thousand continuation lines": "a: x\n" + "  y\n" * (WIDE // 4),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_frontmatter_is_read_in_linear_time_or_left_to_pyyaml(name: str) -> None:
    block = HOSTILE[name]
    started = time.perf_counter()
    fast = load(block)
    assert time.perf_counter() - started < 1.0
    if fast is not None:
        assert fast[0] == yaml.load(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def test_nesting_deeper_than_the_reader_goes_is_left_to_pyyaml_without_a_recursion_error() -> None:
    text = "---\n" + "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v: x\n---\n"
    assert load(text[4:-5]) is None
    try:
        fields = parse(text).fields
    except FrontmatterError:
        return  # PyYAML may refuse it too; what matters is a clean answer
    assert "k0" in fields


@pytest.mark.parametrize("mode", ["lenient", "coder", "opencode", "copilot", "claude", "gemini"])
def test_a_date_that_does_not_exist_makes_one_skill_unparsed_instead_of_failing_the_scan(mode: Validation) -> None:
    # PyYAML's constructor raises ValueError, not a YAMLError, for 2001-02-30: it used to escape every parser
    result = check("---\nname: bad\ndescription: d\ndate: 2001-02-30\n---\nbody\n", "bad", mode)
    if mode in ("claude", "gemini", "copilot"):  # their fallbacks (the body's first line, the line reader); a
        assert result.valid and result.name == "bad"  # date is text to Copilot CLI, which YAML 1.2 leaves untyped
    else:
        assert not result.valid and "day is out of range for month" in result.errors[0]
