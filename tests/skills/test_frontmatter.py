"""SKILL.md frontmatter: Codex Free's parse tests, Codex G3's YAML repair tests, hostile input.

Sources: codex-skills.md A.2 (extraction, repair, error strings) and D (Codex Free's
``parse_frontmatter_*`` tests). skills-ref's strict parser is compared with skills-ref itself.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from skills_ref.errors import ParseError as SkillsRefParseError
from skills_ref.parser import parse_frontmatter as skills_ref_parse_frontmatter

from agentcontext.errors import FrontmatterError
from agentcontext.skills.frontmatter import (
    MAX_STRICT_VALUES,
    MAX_VALUES,
    MISSING,
    Frontmatter,
    _delimit,
    fast_load,
    parse,
    parse_coder,
    parse_plain,
    parse_strict,
    plain_skill,
    repair_block,
    split,
    strict_body,
)
from agentcontext.skills.validation import check

REPAIRED = (
    "frontmatter YAML needed repair: the value of description read as quoted text; quote it in the file,"
    " since agents that do not repair YAML drop the skill"
)


def skill(block: str, body: str = "\n# Body\n") -> str:
    return f"---\n{block}\n---\n{body}"


def parse_error(text: str, *, repair: bool = True) -> str:
    with pytest.raises(FrontmatterError) as raised:
        parse(text, repair=repair)
    return str(raised.value)


def strict_error(text: str) -> str:
    with pytest.raises(FrontmatterError) as raised:
        parse_strict(text)
    return str(raised.value)


def skills_ref_error(text: str) -> str:
    with pytest.raises(SkillsRefParseError) as raised:
        skills_ref_parse_frontmatter(text)
    return str(raised.value)


def strict_and_reference(text: str) -> tuple[dict[str, Any], Any]:
    ours = parse_strict(text)
    theirs, _ = skills_ref_parse_frontmatter(text)
    return ours, theirs


# --- Codex Free: parse_frontmatter_* ----------------------------------------------------


def test_parse_frontmatter_reads_name_description_short() -> None:
    text = "---\nname: review\ndescription: Review a pull request\nmetadata:\n  short-description: Review\n---\n\nbody"
    front = parse(text)
    assert front.fields == {
        "name": "review",
        "description": "Review a pull request",
        "metadata": {"short-description": "Review"},
    }
    assert front.body == "\nbody"
    result = check(text, "fallback", "lenient")
    assert (result.name, result.description) == ("review", "Review a pull request")


def test_parse_frontmatter_falls_back_to_dir_name_but_not_missing_description() -> None:
    named = check("---\ndescription: Something\n---\n", "on-disk", "lenient")
    assert (named.valid, named.name) == (True, "on-disk")
    unnamed = check("---\nname: x\n---\n", "on-disk", "lenient")
    assert unnamed.errors == ("missing field `description`",)


def test_parse_frontmatter_collapses_wrapped_scalar() -> None:
    text = "---\nname: wrapped\ndescription: >\n  one\n  two\n---\n"
    assert parse(text).fields["description"] == "one two"
    assert check(text, "wrapped", "lenient").description == "one two"


def test_parse_frontmatter_collapses_literal_block_and_runs_of_whitespace() -> None:
    text = "---\nname: wrapped\ndescription: |\n  does things\n  carefully\tand   well\n---\n"
    assert check(text, "wrapped", "lenient").description == "does things carefully and well"


def test_parse_frontmatter_rejects_no_frontmatter() -> None:
    assert parse_error("# Just a heading\n") == MISSING
    assert check("# Just a heading\n", "x", "lenient").errors == (MISSING,)


def test_parse_frontmatter_rejects_invalid_yaml_without_repair() -> None:
    # Codex Free has no repair pass: ``[unclosed`` is a broken flow sequence.
    assert parse_error("---\nname: [unclosed\n---\n", repair=False) == (
        "invalid YAML: did not find expected ',' or ']' at line 3, column 1"
    )


def test_parse_frontmatter_repairs_broken_flow_value_into_text_like_codex() -> None:
    # Codex G3 quotes a value opening with ``[``, ``{``, ``@`` or a backtick when it is not YAML.
    front = parse("---\nname: [unclosed\n---\n")
    assert front.fields == {"name": "[unclosed"}
    assert front.repaired == ("name",)


def test_parse_frontmatter_rejects_invalid_yaml_that_repair_cannot_fix() -> None:
    message = parse_error("---\nname: 'unclosed\n---\n")
    assert message == "invalid YAML: found unexpected end of stream at line 2, column 16"


def test_parse_frontmatter_rejects_non_mapping() -> None:
    assert parse_error("---\njust a string\n---\n") == "invalid YAML: frontmatter must be a mapping of keys to values"
    assert parse_error("---\n- a\n- b\n---\n") == "invalid YAML: frontmatter must be a mapping of keys to values"


def test_parse_frontmatter_warns_about_overlong_name_instead_of_rejecting_it() -> None:
    # Codex Free rejects with "invalid name: ..."; lenient mode keeps the skill and warns.
    name = "n" * 65
    result = check(f"---\nname: {name}\ndescription: d\n---\n", name, "lenient")
    assert result.valid
    assert result.name == name
    assert result.warnings == ("name is 65 characters; the limit is 64",)


# --- Codex G3: YAML repair -----------------------------------------------------------------


def test_loads_unquoted_description_containing_colon_space() -> None:
    text = skill("name: colon-description\ndescription: AWS deployment patterns: ECS Fargate, Lambda, and S3")
    front = parse(text)
    assert front.repaired == ("description",)
    assert front.fields == {
        "name": "colon-description",
        "description": "AWS deployment patterns: ECS Fargate, Lambda, and S3",
    }
    result = check(text, "colon-description", "lenient")
    assert (result.valid, result.warnings) == (True, (REPAIRED,))


def test_loads_unquoted_short_description_containing_colon_space_and_apostrophe() -> None:
    text = skill(
        "name: colon-short-description\ndescription: long description\n"
        "metadata:\n  short-description: What's included: builds and tests"
    )
    assert parse(text).fields == {
        "name": "colon-short-description",
        "description": "long description",
        "metadata": {"short-description": "What's included: builds and tests"},
    }


def test_loads_unrecognized_frontmatter_fields_that_need_quotes() -> None:
    text = skill(
        "name: repaired-unknown-fields\ndescription: valid description\n"
        "argument-hint: <duration: e.g. 7d, 2w>\ntags: [next,@supabase/ssr]"
    )
    assert parse(text).fields == {
        "name": "repaired-unknown-fields",
        "description": "valid description",
        "argument-hint": "<duration: e.g. 7d, 2w>",
        "tags": "[next,@supabase/ssr]",
    }
    result = check(text, "repaired-unknown-fields", "lenient")
    assert (result.valid, result.name, result.description) == (True, "repaired-unknown-fields", "valid description")
    assert result.warnings == (
        "frontmatter YAML needed repair: the values of argument-hint, tags read as quoted text; quote them in the"
        " file, since agents that do not repair YAML drop the skill",
    )


def test_preserves_block_scalar_body_while_repairing_other_fields() -> None:
    text = skill(
        "name: block-description-with-repair\ndescription: |-\n  Build for AWS: ECS\nargument-hint: <duration: e.g. 7d>"
    )
    front = parse(text)
    assert front.repaired == ("argument-hint",)  # not the block scalar's "Build for AWS: ECS"
    assert front.fields == {
        "name": "block-description-with-repair",
        "description": "Build for AWS: ECS",
        "argument-hint": "<duration: e.g. 7d>",
    }


def test_repair_keeps_a_trailing_comment_outside_the_quotes() -> None:
    front = parse(skill("name: x\ndescription: Deploy: ECS  # internal note"))
    assert front.fields["description"] == "Deploy: ECS"


def test_repair_leaves_valid_lines_and_block_scalars_untouched() -> None:
    block = "name: x\nlist: [a, b]\nquoted: 'a: b'\nbody: |\n  key: value: here\n  more: text\nlater: a: b"
    assert repair_block(block) == (
        "name: x\nlist: [a, b]\nquoted: 'a: b'\nbody: |\n  key: value: here\n  more: text\nlater: \"a: b\"",
        ("later",),
    )


def test_repair_quotes_nested_values_at_their_own_indent() -> None:
    assert repair_block("metadata:\n  note: a: b\n  ok: fine") == ('metadata:\n  note: "a: b"\n  ok: fine', ("note",))


def test_repair_is_not_attempted_when_disabled() -> None:
    assert parse_error(skill("name: x\ndescription: a: b"), repair=False).startswith("invalid YAML: mapping values")


def test_repaired_frontmatter_keeps_the_original_text_as_raw() -> None:
    front = parse(skill("name: x\ndescription: a: b", body="body\n"))
    assert front == Frontmatter(
        {"name": "x", "description": "a: b"}, "name: x\ndescription: a: b", "body\n", ("description",)
    )


# --- the --- delimiters ---------------------------------------------------------------------


def test_missing_closing_delimiter_gives_the_codex_message() -> None:
    assert parse_error("---\nname: bad") == "missing YAML frontmatter delimited by ---"


def test_empty_frontmatter_gives_the_codex_message() -> None:
    assert parse_error("---\n---\nbody") == MISSING
    assert parse_error("---\n   \n---\nbody") == MISSING


def test_delimiter_lines_are_compared_trimmed() -> None:
    assert split("  ---  \nname: x\n---   \nbody") == ("name: x", "body")


def test_dashes_inside_a_value_do_not_close_the_block() -> None:
    # Line-based like Codex; skills-ref splits on the string and cuts the value short.
    text = "---\nname: x\ndescription: before---after\n---\nbody"
    assert parse(text).fields["description"] == "before---after"
    ours, theirs = strict_and_reference(text)
    assert ours == theirs == {"name": "x", "description": "before"}


def test_crlf_line_ends_parse() -> None:
    front = parse("---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n")
    assert front.fields == {"name": "x", "description": "d"}


# --- hostile input ---------------------------------------------------------------------------


def billion_laughs() -> str:
    lines = ["name: lol", "description: lol", 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    return skill("\n".join(lines))


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    # 9 ** 10 strings once expanded; the walk stops after MAX_VALUES of them.
    started = time.perf_counter()
    message = parse_error(billion_laughs())
    elapsed = time.perf_counter() - started
    assert message == f"invalid YAML: frontmatter expands to more than {MAX_VALUES} values"
    assert elapsed < 1.0


def test_yaml_alias_bomb_is_refused_by_the_strict_parser_like_skills_ref() -> None:
    text = billion_laughs()
    assert "disallowed anchor token" in strict_error(text)
    assert strict_error(text) == skills_ref_error(text)


def test_yaml_self_referencing_alias_is_refused() -> None:
    assert parse_error(skill("name: x\ndescription: d\nloop: &loop [*loop]")) == (
        f"invalid YAML: frontmatter expands to more than {MAX_VALUES} values"
    )


def test_ten_thousand_line_block_scalar_parses() -> None:
    lines = "".join(f"  line {i}: text\n" for i in range(10_000))
    text = f"---\nname: big\ndescription: |\n{lines}---\nbody"
    assert parse(text).fields["description"].splitlines()[-1] == "line 9999: text"
    assert len(parse_strict(text)["description"].splitlines()) == 10_000


def test_ten_thousand_keys_fail_cleanly_in_both_parsers() -> None:
    text = "---\n" + "".join(f"key{i}: value\n" for i in range(10_000)) + "---\n"
    assert parse_error(text) == f"invalid YAML: frontmatter expands to more than {MAX_VALUES} values"
    # strictyaml needs quadratic time (over a minute here); the count is checked first.
    assert strict_error(text) == (
        f"Invalid YAML in frontmatter: more than {MAX_STRICT_VALUES} values, too many to check strictly"
    )


def test_strict_parser_accepts_127_keys_and_refuses_128() -> None:
    pairs = (MAX_STRICT_VALUES - 1) // 2  # the mapping itself is one value, each pair two
    text = "---\n" + "".join(f"key{i}: value\n" for i in range(pairs)) + "---\n"
    assert len(parse_strict(text)) == pairs
    over = "---\n" + "".join(f"key{i}: value\n" for i in range(pairs + 1)) + "---\n"
    assert strict_error(over).endswith("too many to check strictly")


def test_raw_nul_character_is_refused_as_invalid_yaml() -> None:
    message = parse_error("---\nname: a\x00b\ndescription: d\n---\n")
    assert message == "invalid YAML: unacceptable character #x0000: control characters are not allowed"


def test_escaped_nul_in_a_name_becomes_a_space_in_lenient_mode() -> None:
    text = '---\nname: "my\\0skill"\ndescription: "tab\\tand\\u0000nul\\u0007"\n---\n'
    assert parse(text).fields == {"name": "my\x00skill", "description": "tab\tand\x00nul\x07"}
    result = check(text, "myskill", "lenient")
    assert (result.name, result.description) == ("my skill", "tab and nul")
    assert result.warnings == (
        "name 'my skill' is not kebab-case (lowercase letters, digits and single hyphens)",
        "name 'my skill' does not match its folder 'myskill'",
    )


def test_escaped_nul_in_a_name_never_matches_its_folder_in_coder_mode() -> None:
    text = '---\nname: "my\\0skill"\ndescription: d\n---\n'
    assert check(text, "myskill", "coder").errors == (
        'front-matter name "my\x00skill" does not match directory "myskill"',
    )


def test_escaped_nul_in_a_name_is_an_invalid_character_in_spec_mode() -> None:
    text = '---\nname: "myskill\\0"\ndescription: d\n---\n'
    assert check(text, "myskill", "spec").errors == (
        "Skill name 'myskill\x00' contains invalid characters. Only letters, digits, and hyphens are allowed.",
        "Directory name 'myskill' must match skill name 'myskill\x00'",
    )


def test_newline_in_a_name_is_collapsed_to_a_space_in_lenient_mode() -> None:
    text = '---\nname: "my\\nskill"\ndescription: d\n---\n'
    assert parse(text).fields["name"] == "my\nskill"
    result = check(text, "my-skill", "lenient")
    assert result.name == "my skill"
    assert "name 'my skill' is not kebab-case (lowercase letters, digits and single hyphens)" in result.warnings


def test_newline_in_a_name_is_an_invalid_character_in_spec_mode() -> None:
    text = '---\nname: "my\\nskill"\ndescription: d\n---\n'
    assert "Skill name 'my\nskill' contains invalid characters." in check(text, "my-skill", "spec").errors[0]


# --- skills-ref's strict parser ------------------------------------------------------------


def test_strict_parser_reads_every_scalar_as_a_string() -> None:
    ours, theirs = strict_and_reference(skill("name: x\ndescription: 123\nmetadata:\n  version: 1.0"))
    assert ours == {"name": "x", "description": "123", "metadata": {"version": "1.0"}}
    assert ours == theirs


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("name: x\ntags: [a, b]", "Found ugly disallowed JSONesque flow mapping"),
        ("name: x\nname: y", "Duplicate key 'name' found"),
        ("name: x\ndescription: a: b", "mapping values are not allowed here"),
    ],
    ids=["flow_style", "duplicate_key", "unquoted_colon"],
)
def test_strict_parser_refuses_what_skills_ref_refuses(block: str, problem: str) -> None:
    text = skill(block)
    message = strict_error(text)
    assert message.startswith("Invalid YAML in frontmatter: ")
    assert problem in message
    assert message == skills_ref_error(text)


def test_strict_body_is_the_stripped_text_after_the_second_dashes() -> None:
    text = skill("name: x", body="\n\n# Title\n\ntext\n\n")
    assert strict_body(text) == "# Title\n\ntext"
    assert strict_body(text) == skills_ref_parse_frontmatter(text)[1]
    assert strict_body("no frontmatter") == ""


_LINE = st.tuples(
    st.sampled_from(["name", "description", "license", "x_1", "a-b", " name", "#c", "name:"]),
    st.sampled_from([": ", ":", ":  ", ": \t"]),
    st.text(alphabet=st.sampled_from("abYyNnOo0-9 :#'\"[]{}&*!|>%@`,.\t\u2028\u00e9"), max_size=12),
)


@settings(max_examples=500, deadline=None)
@given(lines=st.lists(_LINE, max_size=5))
def test_the_plain_frontmatter_fast_path_agrees_with_yaml_whenever_it_answers(
    lines: list[tuple[str, str, str]],
) -> None:
    block = "\n".join(f"{key}{sep}{value}" for key, sep, value in lines)
    fast = fast_load(block)
    if fast is None:
        return  # the YAML parser decides
    assert [(k, type(v), v) for k, v in fast.items()] == [(k, type(v), v) for k, v in yaml.safe_load(block).items()]


def test_the_fast_path_reads_what_yaml_reads_and_leaves_the_rest_to_yaml() -> None:
    block = (
        "name: pdf-tools\ndescription: Extract text, tables (and forms) from PDFs; use it for reports.\nlicense: MIT"
    )
    assert fast_load(block) == yaml.safe_load(block)
    for read in ("name: yes", "name: No", "name: null", "name: a #c", "name: 'q'", "n: 15", "n: ~"):
        assert fast_load(read) == yaml.safe_load(read), read
    for tricky in ("name: a: b", "n: 1.5", "n: 2024-01-01", "  a: b", "name: &a x", "a: 1\na: 2"):
        assert fast_load(tricky) is None, tricky


def delimit_by_lines(text: str) -> tuple[str, str] | bool:
    """The rule of ``_delimit`` written plainly: split into lines, find the next one trimming to ``---``."""
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return False
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return True


_PIECES = st.sampled_from(["---", " --- ", "\t---", "-- -", "----", "\n", "\r", "a", "name: x", " ", "\u2003"])


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=12))
def test_finding_the_closing_dashes_agrees_with_splitting_into_lines(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _delimit(text) == delimit_by_lines(text)


_NEAR_PLAIN_VALUE = st.tuples(
    st.sampled_from(["a", "Y", "n", "O", "N", "t", "f", "b", "c", "é", "0", " ", "'"]),
    st.text(alphabet=st.sampled_from("abfalsenoYyNuOo0-9 '\"[]{}&*!|>%@`,.~;:#\t\x7fé"), max_size=8),
).map("".join)
_PLAIN_LINE = st.tuples(
    st.sampled_from(["name", "description", "license", "x_1", "a-b", "Name", "name", "-a", "1k"]),
    st.sampled_from([": "] * 8 + [":  ", ":", ": \t"]),
    _NEAR_PLAIN_VALUE,
)


@settings(max_examples=1500, deadline=None)
@given(lines=st.lists(_PLAIN_LINE, max_size=4), closing=st.sampled_from(["---\n"] * 5 + ["---", " ---\n", "-- \n"]))
def test_the_plain_readers_agree_with_both_parsers_whenever_they_answer_and_answer_together(
    lines: list[tuple[str, str, str]], closing: str
) -> None:
    text = "---\n" + "".join(f"{key}{sep}{value}\n" for key, sep, value in lines) + closing + "# Body\n"
    plain = parse_plain(text)
    named = plain_skill(text)  # the name and description reader answers exactly when parse_plain does
    assert named == (None if plain is None else (plain.fields.get("name"), plain.fields.get("description"), plain.raw))
    if plain is None:
        return  # the general parsers decide
    assert plain == parse(text) == parse_coder(text)


def test_the_plain_name_and_description_reader_keeps_the_last_of_each_and_leaves_huge_blocks() -> None:
    text = skill("name: a\ndescription: first one\nnames: b\nname: c\ndescription: Second; one")
    assert plain_skill(text) == (
        "c",
        "Second; one",
        "name: a\ndescription: first one\nnames: b\nname: c\ndescription: Second; one",
    )
    assert plain_skill(skill("license: MIT")) == (None, None, "license: MIT")
    for other in ("name: yes", "name: NULL", "description: Off", "name: x ", "name: a: b", "name: é", "n: 1"):
        assert plain_skill(skill(other)) is None, other
    huge = skill("\n".join(f"k{i}: v" for i in range(6000)))
    assert plain_skill(huge) is None and parse_plain(huge) is None


def test_the_plain_frontmatter_reader_takes_the_usual_skill_and_leaves_the_rest() -> None:
    text = skill("name: pdf-tools\ndescription: Extract text; use it for reports.\nlicense: MIT")
    assert parse_plain(text) == Frontmatter(
        {"name": "pdf-tools", "description": "Extract text; use it for reports.", "license": "MIT"},
        "name: pdf-tools\ndescription: Extract text; use it for reports.\nlicense: MIT",
        "\n# Body\n",
    )
    for other in ("name: yes", "name: a: b", "name: 'q'", "name: x ", "name:  x", "name: é", "n: 1"):
        assert parse_plain(skill(other)) is None, other
    assert parse_plain("---\r\nname: x\r\n---\r\n") is None
