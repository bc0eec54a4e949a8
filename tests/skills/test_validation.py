"""Skill validation in its three modes.

``spec`` mirrors skills-ref's 21 validator and 15 parser tests (codex-skills.md B.3) and
uses skills-ref 0.1.1 itself as an oracle: every spec-mode outcome is compared with
``skills_ref.validator.validate`` on the same folder. ``lenient`` follows Codex G3 and the
Agent Skills client guidance (A.2, B.4); ``coder`` follows Coder (coder.md 2.1, 2.2).
"""

from __future__ import annotations

import json
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from skills_ref.parser import find_skill_md as skills_ref_find_skill_md
from skills_ref.parser import parse_frontmatter as skills_ref_parse_frontmatter
from skills_ref.validator import ALLOWED_FIELDS as SKILLS_REF_ALLOWED_FIELDS
from skills_ref.validator import validate as skills_ref_validate

from agentcontext.errors import FrontmatterError
from agentcontext.settings.config import Validation
from agentcontext.skills.frontmatter import parse_strict, strict_body
from agentcontext.skills.validation import (
    ALLOWED_FIELDS,
    Report,
    _clean,
    check,
    claude_check,
    collapse,
    find_skill_md,
    validate_path,
)
from agentcontext.testing import make_workspace, skill_md
from tests.containment import outside_the_roots

ALLOWED = "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']"
REPAIRED = (
    "frontmatter YAML needed repair: the value of description read as quoted text; quote it in the file,"
    " since agents that do not repair YAML drop the skill"
)


def write_skill(root: Path, folder: str, text: str | bytes, *, filename: str = "SKILL.md") -> Path:
    """A skill folder ``root/folder`` holding ``filename``; returns the folder."""
    make_workspace(root, {f"{folder}/{filename}": text})
    return root / folder


def frontmatter(*lines: str, body: str = "Body\n") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n" + body


def spec_errors_checked(path: Path) -> list[str]:
    """Our spec-mode errors for ``path``, after asserting skills-ref reports exactly the same."""
    ours = list(validate_path(path, "spec").errors)
    theirs: list[str] = skills_ref_validate(path)
    assert ours == theirs
    return ours


# --- skills-ref validator tests (spec mode) -----------------------------------------


def test_valid_skill_has_no_errors_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", frontmatter("name: my-skill", "description: A test skill"))
    assert spec_errors_checked(folder) == []
    report = validate_path(folder, "spec")
    assert report.valid
    assert (report.name, report.description) == ("my-skill", "A test skill")


def test_nonexistent_path_is_reported(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    assert spec_errors_checked(missing) == [f"Path does not exist: {missing}"]
    assert not validate_path(missing, "spec").valid


def test_not_a_directory_is_reported(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"file.txt": "test"})
    assert spec_errors_checked(tmp_path / "file.txt") == [f"Not a directory: {tmp_path / 'file.txt'}"]


def test_missing_skill_md_is_reported(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"my-skill/": ""})
    assert spec_errors_checked(tmp_path / "my-skill") == ["Missing required file: SKILL.md"]


def test_invalid_name_uppercase_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "MySkill", frontmatter("name: MySkill", "description: A test skill"))
    assert spec_errors_checked(folder) == ["Skill name 'MySkill' must be lowercase"]


def test_name_too_long_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    name = "a" * 70
    folder = write_skill(tmp_path, name, frontmatter(f"name: {name}", "description: A test skill"))
    assert spec_errors_checked(folder) == [f"Skill name '{name}' exceeds 64 character limit (70 chars)"]


def test_name_leading_hyphen_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "-my-skill", frontmatter("name: -my-skill", "description: A test skill"))
    assert spec_errors_checked(folder) == ["Skill name cannot start or end with a hyphen"]


def test_name_consecutive_hyphens_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my--skill", frontmatter("name: my--skill", "description: A test skill"))
    assert spec_errors_checked(folder) == ["Skill name cannot contain consecutive hyphens"]


def test_name_invalid_characters_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my_skill", frontmatter("name: my_skill", "description: A test skill"))
    assert spec_errors_checked(folder) == [
        "Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed."
    ]


def test_name_directory_mismatch_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "wrong-name", frontmatter("name: correct-name", "description: A test skill"))
    assert spec_errors_checked(folder) == ["Directory name 'wrong-name' must match skill name 'correct-name'"]


def test_unexpected_fields_are_an_error_in_spec_mode(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "unknown_field: should not be here")
    folder = write_skill(tmp_path, "my-skill", text)
    assert spec_errors_checked(folder) == [
        f"Unexpected fields in frontmatter: unknown_field. Only {ALLOWED} are allowed."
    ]


def test_valid_with_all_fields(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "license: MIT", "metadata:", "  author: Test")
    folder = write_skill(tmp_path, "my-skill", text)
    assert spec_errors_checked(folder) == []


def test_allowed_tools_accepted(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "allowed-tools: Bash(jq:*) Bash(git:*)")
    folder = write_skill(tmp_path, "my-skill", text)
    assert spec_errors_checked(folder) == []


def test_i18n_chinese_name_is_accepted(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "技能", frontmatter("name: 技能", "description: A skill with Chinese name"))
    assert spec_errors_checked(folder) == []


def test_i18n_russian_name_with_hyphens_is_accepted(tmp_path: Path) -> None:
    text = frontmatter("name: мой-навык", "description: A skill with Russian name")
    folder = write_skill(tmp_path, "мой-навык", text)
    assert spec_errors_checked(folder) == []


def test_i18n_russian_lowercase_name_is_accepted(tmp_path: Path) -> None:
    text = frontmatter("name: навык", "description: A skill with Russian lowercase name")
    folder = write_skill(tmp_path, "навык", text)
    assert spec_errors_checked(folder) == []


def test_i18n_russian_uppercase_name_is_rejected(tmp_path: Path) -> None:
    text = frontmatter("name: НАВЫК", "description: A skill with Russian uppercase name")
    folder = write_skill(tmp_path, "НАВЫК", text)
    assert spec_errors_checked(folder) == ["Skill name 'НАВЫК' must be lowercase"]


def test_description_too_long_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", frontmatter("name: my-skill", f"description: {'x' * 1100}"))
    assert spec_errors_checked(folder) == ["Description exceeds 1024 character limit (1100 chars)"]


def test_valid_compatibility_is_accepted(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "compatibility: Requires Python 3.11+")
    folder = write_skill(tmp_path, "my-skill", text)
    assert spec_errors_checked(folder) == []


def test_compatibility_too_long_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", f"compatibility: {'x' * 550}")
    folder = write_skill(tmp_path, "my-skill", text)
    assert spec_errors_checked(folder) == ["Compatibility exceeds 500 character limit (550 chars)"]


def test_nfkc_normalization_matches_decomposed_name_to_composed_folder(tmp_path: Path) -> None:
    decomposed = "cafe\u0301"
    composed = unicodedata.normalize("NFC", decomposed)
    assert composed != decomposed
    folder = write_skill(tmp_path, composed, frontmatter(f"name: {decomposed}", "description: A test skill"))
    assert spec_errors_checked(folder) == []


# --- skills-ref parser tests, mapped onto parse_strict / find_skill_md / validate_path ---


def test_valid_frontmatter_is_parsed_like_skills_ref() -> None:
    content = frontmatter("name: my-skill", "description: A test skill", body="# My Skill\n\nInstructions here.\n")
    metadata = parse_strict(content)
    assert metadata == {"name": "my-skill", "description": "A test skill"}
    assert "# My Skill" in strict_body(content)
    theirs, their_body = skills_ref_parse_frontmatter(content)
    assert (metadata, strict_body(content)) == (theirs, their_body)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("# No frontmatter here", "SKILL.md must start with YAML frontmatter (---)"),
        ("---\nname: my-skill\ndescription: A test skill\n", "SKILL.md frontmatter not properly closed with ---"),
        ("---\n- just\n- a\n- list\n---\nBody\n", "SKILL.md frontmatter must be a YAML mapping"),
    ],
    ids=["missing_frontmatter", "unclosed_frontmatter", "non_dict_frontmatter"],
)
def test_unusable_frontmatter_is_refused_with_skills_ref_message(tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(FrontmatterError) as raised:
        parse_strict(content)
    assert str(raised.value) == message
    folder = write_skill(tmp_path, "my-skill", content)
    assert spec_errors_checked(folder) == [message]


def test_invalid_yaml_is_refused_with_skills_ref_message(tmp_path: Path) -> None:
    content = "---\nname: [invalid\ndescription: broken\n---\nBody here\n"
    with pytest.raises(FrontmatterError) as raised:
        parse_strict(content)
    assert str(raised.value).startswith("Invalid YAML in frontmatter: ")
    folder = write_skill(tmp_path, "my-skill", content)
    assert spec_errors_checked(folder) == [str(raised.value)]


def test_read_valid_skill_gives_name_description_and_license(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "license: MIT", body="# My Skill\n")
    folder = write_skill(tmp_path, "my-skill", text)
    report = validate_path(folder, "spec")
    assert (report.name, report.description, report.errors) == ("my-skill", "A test skill", ())
    assert parse_strict(text)["license"] == "MIT"


def test_read_with_metadata_gives_string_values(tmp_path: Path) -> None:
    text = frontmatter(
        "name: my-skill", "description: A test skill", "metadata:", "  author: Test Author", "  version: 1.0"
    )
    folder = write_skill(tmp_path, "my-skill", text)
    assert parse_strict(text)["metadata"] == {"author": "Test Author", "version": "1.0"}
    assert spec_errors_checked(folder) == []


def test_missing_skill_md_in_a_bare_folder_is_found_by_neither_lookup(tmp_path: Path) -> None:
    assert find_skill_md(tmp_path) is None
    assert validate_path(tmp_path, "spec").errors == ("Missing required file: SKILL.md",)


def test_missing_name_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", frontmatter("description: A test skill"))
    assert spec_errors_checked(folder) == ["Missing required field in frontmatter: name"]


def test_missing_description_is_an_error_in_spec_mode(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", frontmatter("name: my-skill"))
    assert spec_errors_checked(folder) == ["Missing required field in frontmatter: description"]


def test_find_skill_md_prefers_uppercase(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"my-skill/SKILL.md": "uppercase", "my-skill/skill.md": "lowercase"})
    found = find_skill_md(tmp_path / "my-skill")
    assert found is not None
    assert found.name == "SKILL.md"
    assert found == skills_ref_find_skill_md(tmp_path / "my-skill")


def test_find_skill_md_accepts_lowercase(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"my-skill/skill.md": "lowercase"})
    found = find_skill_md(tmp_path / "my-skill")
    assert found is not None
    assert found.name.lower() == "skill.md"


def test_find_skill_md_returns_none_when_missing(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"my-skill/README.md": "not a skill"})
    assert find_skill_md(tmp_path / "my-skill") is None


def test_find_skill_md_skips_a_directory_named_skill_md(tmp_path: Path) -> None:
    # skills-ref picks the directory (``exists()``) and then fails to read it; we look further.
    make_workspace(tmp_path, {"my-skill/SKILL.md/": "", "my-skill/skill.md": "lowercase"})
    found = find_skill_md(tmp_path / "my-skill")
    assert found is not None
    assert found.name == "skill.md"


def test_read_properties_with_lowercase_skill_md(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", body="# My Skill\n")
    folder = write_skill(tmp_path, "my-skill", text, filename="skill.md")
    report = validate_path(folder, "spec")
    assert (report.name, report.description, report.errors) == ("my-skill", "A test skill", ())
    assert spec_errors_checked(folder) == []
    assert validate_path(folder / "skill.md", "spec").errors == ()


def test_read_with_allowed_tools(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: A test skill", "allowed-tools: Bash(jq:*) Bash(git:*)")
    folder = write_skill(tmp_path, "my-skill", text)
    assert parse_strict(text)["allowed-tools"] == "Bash(jq:*) Bash(git:*)"
    assert spec_errors_checked(folder) == []


# --- validate_path beyond skills-ref --------------------------------------------------


def test_validate_path_accepts_the_skill_md_file_itself(tmp_path: Path) -> None:
    # skills-ref says "Not a directory" for the file; its CLI (and we) accept it.
    folder = write_skill(tmp_path, "wrong-name", frontmatter("name: correct-name", "description: d"))
    by_file = validate_path(folder / "SKILL.md", "spec")
    assert by_file.path == str(folder / "SKILL.md")
    assert by_file.errors == validate_path(folder, "spec").errors
    assert by_file.errors == ("Directory name 'wrong-name' must match skill name 'correct-name'",)


def test_validate_path_handles_utf8_bom_and_crlf(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf---\r\nname: my-skill\r\ndescription: A test skill\r\n---\r\nBody\r\n"
    folder = write_skill(tmp_path, "my-skill", raw)
    for mode in ("spec", "lenient", "coder"):
        report = validate_path(folder, mode)
        assert (report.valid, report.errors, report.name) == (True, (), "my-skill"), mode


def test_validate_path_refuses_a_binary_skill_md(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", b"---\nname: my-skill\x00\ndescription: d\n---\n")
    report = validate_path(folder, "lenient")
    assert report.errors == ("SKILL.md: binary file (contains NUL bytes)",)


ENCODED = {
    "bom": b"\xef\xbb\xbf---\nname: my-skill\ndescription: A test skill\n---\nBody\n",
    "latin1": "---\nname: my-skill\ndescription: Caf\xe9\n---\nBody\n".encode("latin-1"),
    "utf16": "---\nname: my-skill\ndescription: A test skill\n---\nBody\n".encode("utf-16"),
}
# what each agent's binary did with such a SKILL.md (tests/realagents: codex_skills, opencode_skills, ...)
LOADED = {
    "lenient": {"bom", "latin1", "utf16"},
    "codex": set(),
    "claude": {"bom", "latin1"},
    "gemini": {"latin1"},
    "opencode": {"bom", "latin1"},
    "copilot": {"bom", "latin1"},
}


@pytest.mark.parametrize("mode", LOADED)
def test_a_skill_md_that_is_not_plain_utf8_is_loaded_as_the_modes_agent_loads_it(tmp_path: Path, mode: str) -> None:
    for encoding, raw in ENCODED.items():
        report = validate_path(write_skill(tmp_path / encoding, "my-skill", raw), mode)  # type: ignore[arg-type]
        assert report.valid is (encoding in LOADED[mode]), (encoding, report.errors)
        if encoding == "utf16" and not report.valid and mode != "codex":
            assert "UTF-16 (byte order mark)" in report.errors[0] and "save it as UTF-8" in report.errors[0]


def test_codex_says_why_it_reads_no_skill_from_a_bom_latin1_or_utf16(tmp_path: Path) -> None:
    errors = {
        encoding: validate_path(write_skill(tmp_path / encoding, "my-skill", raw), "codex").errors
        for encoding, raw in ENCODED.items()
    }
    assert errors == {
        "bom": (
            "SKILL.md: a byte order mark before its frontmatter: Codex does not load the skill; save it without one",
        ),
        "latin1": (
            "SKILL.md: not UTF-8 (invalid continuation byte at byte 35): Codex does not load the skill;"
            " save it as UTF-8",
        ),
        "utf16": (
            "SKILL.md: not UTF-8 (invalid start byte at byte 0): Codex does not load the skill; save it as UTF-8",
        ),
    }


def test_validate_path_warns_about_an_oversized_skill_md(tmp_path: Path) -> None:
    text = frontmatter("name: my-skill", "description: d", body="x" * 100)
    folder = write_skill(tmp_path, "my-skill", text)
    report = validate_path(folder, "lenient", max_bytes=64)
    assert report.valid
    assert report.warnings == (f"SKILL.md is {len(text)} bytes, over the 64-byte cap: most agents will not load it",)


def test_validate_path_does_not_read_a_skill_md_linked_out_of_its_folder(tmp_path: Path) -> None:
    key = outside_the_roots(tmp_path) / "id_rsa"
    key.write_text(frontmatter("name: leaked-secret", "description: d"))
    folder = tmp_path / "my-skill"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(key)
    report = validate_path(folder, "spec")
    assert report.errors == ("failed to read file: path escapes the skill directory",)
    assert "leaked-secret" not in str(report.to_dict())


def test_report_to_dict_lists_errors_and_warnings(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "my-skill", frontmatter("name: other"))
    report = validate_path(folder, "lenient")
    assert isinstance(report, Report)
    assert report.to_dict() == {
        "path": str(folder),
        "valid": False,
        "errors": ["missing field `description`"],
        "warnings": ["name 'other' does not match its folder 'my-skill'"],
    }


# --- spec mode agrees with skills-ref on generated frontmatter ------------------------

_TEXT = st.characters(blacklist_categories=("Cs", "Cc"))  # CR and NUL are read differently on purpose
_NAMES = st.one_of(
    st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True),
    st.text(alphabet=st.sampled_from("abcXYZ-_ 0é技НнﬁⅨ.:"), min_size=0, max_size=12),
    st.text(alphabet=st.sampled_from("ab-"), min_size=60, max_size=70),
    st.text(_TEXT, max_size=20),
)
_DESCRIPTIONS = st.one_of(
    st.just(""),
    st.text(alphabet=st.sampled_from("Use it to: deploy. "), min_size=1, max_size=40),
    st.text(_TEXT, max_size=40),
    st.text(alphabet=st.sampled_from("xy z"), min_size=1020, max_size=1030),
)
_COMPATIBILITY = st.text(alphabet=st.sampled_from("ab "), max_size=20) | st.text(
    alphabet=st.sampled_from("ab "), min_size=495, max_size=510
)
_EXTRA_FIELDS = st.lists(
    st.sampled_from(["license: MIT", "allowed-tools: Bash(git:*)", "metadata:\n  author: me", "author: me", "tier: 1"]),
    unique=True,
    max_size=2,
)


def _yaml_value(value: str, quoted: bool) -> str:
    return json.dumps(value, ensure_ascii=False) if quoted else value


def _folder_name(name: str | None) -> str | None:
    if not name or "/" in name or name in {".", ".."} or len(name.encode()) > 200:
        return None
    return name


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.none() | _NAMES,
    description=st.none() | _DESCRIPTIONS,
    compatibility=st.none() | _COMPATIBILITY,
    extra=_EXTRA_FIELDS,
    quoted=st.booleans(),
    same_folder=st.booleans(),
)
def test_spec_mode_agrees_with_skills_ref_on_generated_frontmatter(
    name: str | None,
    description: str | None,
    compatibility: str | None,
    extra: list[str],
    quoted: bool,
    same_folder: bool,
) -> None:
    lines = []
    if name is not None:
        lines.append(f"name: {_yaml_value(name, quoted)}")
    if description is not None:
        lines.append(f"description: {_yaml_value(description, quoted)}")
    if compatibility is not None:
        lines.append(f"compatibility: {compatibility}")
    lines += extra
    folder_name = (_folder_name(name) if same_folder else None) or "some-skill"
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_skill(Path(scratch), folder_name, frontmatter(*lines))
        ours = validate_path(folder, "spec")
        theirs: list[str] = skills_ref_validate(folder)
        assert list(ours.errors) == theirs
        assert ours.valid == (theirs == [])
    for error in theirs or ["valid"]:
        event(error.split("'")[0].split("(")[0].split(":")[0].strip())


def test_allowed_fields_are_skills_ref_allowed_fields() -> None:
    assert set(SKILLS_REF_ALLOWED_FIELDS) == ALLOWED_FIELDS


# --- lenient mode (Codex G3 and the Agent Skills client guidance) -------------------


def test_falls_back_to_directory_name_when_skill_name_is_missing() -> None:
    result = check(frontmatter("description: Something"), "on-disk", "lenient")
    assert (result.valid, result.name, result.description, result.warnings) == (True, "on-disk", "Something", ())


def test_empty_name_falls_back_to_directory_name_with_a_warning() -> None:
    result = check(frontmatter('name: ""', "description: d"), "on-disk", "lenient")
    assert result.valid
    assert result.name == "on-disk"
    assert result.warnings == ("name is not a usable string; using the folder name",)


def test_name_directory_mismatch_is_only_a_warning_in_lenient_mode() -> None:
    result = check(frontmatter("name: correct-name", "description: d"), "wrong-name", "lenient")
    assert result.valid
    assert result.name == "correct-name"
    assert result.warnings == ("name 'correct-name' does not match its folder 'wrong-name'",)


def test_overlong_name_is_only_a_warning_in_lenient_mode() -> None:
    name = "a" * 70
    result = check(frontmatter(f"name: {name}", "description: d"), name, "lenient")
    assert result.valid
    assert result.warnings == ("name is 70 characters; the limit is 64",)


def test_name_outside_the_charset_is_only_a_warning_in_lenient_mode() -> None:
    result = check(frontmatter("name: Make_Coffee", "description: d"), "Make_Coffee", "lenient")
    assert result.valid
    assert result.warnings == ("name 'Make_Coffee' is not kebab-case (lowercase letters, digits and single hyphens)",)


def test_missing_description_makes_the_skill_invalid_in_lenient_mode() -> None:
    result = check(frontmatter("name: my-skill"), "my-skill", "lenient")
    assert not result.valid
    assert result.errors == ("missing field `description`",)


def test_blank_description_counts_as_missing_in_lenient_mode() -> None:
    result = check(frontmatter("name: my-skill", 'description: "  \\n "'), "my-skill", "lenient")
    assert result.errors == ("missing field `description`",)


def test_unquoted_colon_is_repaired_with_a_warning_in_lenient_mode() -> None:
    text = frontmatter("name: my-skill", "description: AWS deployment patterns: ECS Fargate, Lambda, and S3")
    result = check(text, "my-skill", "lenient")
    assert result.valid
    assert result.description == "AWS deployment patterns: ECS Fargate, Lambda, and S3"
    assert result.warnings == (REPAIRED,)


def test_overlong_description_is_kept_with_a_warning_in_lenient_mode() -> None:
    result = check(frontmatter("name: my-skill", f"description: {'x' * 1100}"), "my-skill", "lenient")
    assert result.valid
    assert result.description == "x" * 1100
    assert result.warnings == ("description is 1100 characters; the Agent Skills limit is 1024",)


def test_non_string_scalars_are_read_as_text_with_warnings_in_lenient_mode() -> None:
    result = check(frontmatter("name: 123", "description: true"), "123", "lenient")
    assert result.valid
    assert (result.name, result.description) == ("123", "true")
    assert result.warnings == (
        "name is a YAML int, read as the text '123'",
        "description is a YAML bool, read as text",
    )


def test_lenient_mode_reads_a_scalar_yaml_1_1_types_as_the_text_written_as_codex_does() -> None:
    result = check(frontmatter("name: on", "description: 0x1F  # a comment"), "on", "lenient")
    assert (result.name, result.description) == ("on", "0x1F")
    assert result.warnings == ("name is a YAML bool, read as the text 'on'", "description is a YAML int, read as text")
    for written in ("1.50", "12:30", "007", "+1", ".inf", "Off", "1_000"):
        assert check(frontmatter("name: x", f"description: {written}"), "x", "lenient").description == written


def test_claude_mode_types_plain_values_by_yaml_1_2s_core_schema_and_writes_them_as_javascript_does() -> None:
    written = {"1e3": "1000", ".inf": "Infinity", "007": "7", "0x1F": "31", "1.50": "1.5", "00.5": "0.5"}
    written |= {v: v for v in ("yes", "Off", "0b101", "1_000", "12:30", "2001-02-30", "2024-01-01")}
    for value, text in written.items():
        assert check(frontmatter("name: f", f"description: {value}"), "f", "claude").description == text, value
    assert check(frontmatter("name: on", "description: d"), "f", "claude").name == "f (on)"


def test_opencode_mode_types_floats_as_js_yaml_3_does() -> None:
    dropped = check(frontmatter("name: f", "description: 1e3"), "f", "opencode")
    assert not dropped.valid
    assert check(frontmatter("name: f", "description: 00.5"), "f", "opencode").description == "00.5"


def test_unparseable_yaml_makes_the_skill_invalid_in_lenient_mode() -> None:
    result = check(frontmatter("name: 'unclosed", "description: d"), "my-skill", "lenient")
    assert not result.valid
    assert len(result.errors) == 1
    assert result.errors[0].startswith("invalid YAML: ")


def test_skill_md_without_closing_delimiter_gives_exactly_one_error() -> None:
    result = check("---\nname: bad", "invalid", "lenient")
    assert result.errors == ("missing YAML frontmatter delimited by ---",)


def test_lenient_mode_keeps_the_frontmatter_verbatim() -> None:
    text = frontmatter("name: my-skill", "description: a: b")
    assert check(text, "my-skill", "lenient").frontmatter == "name: my-skill\ndescription: a: b"


# --- plugin namespaces (lenient mode) ---------------------------------------------------


def test_plugin_skill_name_is_qualified_with_its_namespace() -> None:
    result = check(skill_md("review"), "review", "lenient", namespace="toolkit")
    assert result.valid
    assert result.name == "toolkit:review"
    assert result.warnings == ()


def test_plugin_skill_name_length_limit_allows_max_qualified_name() -> None:
    name = "b" * 64
    result = check(skill_md(name), name, "lenient", namespace="a" * 63)
    assert result.name is not None
    assert len(result.name) == 128
    assert result.warnings == ()


def test_plugin_skill_name_length_limit_warns_on_overlong_qualified_name() -> None:
    # Codex rejects 64 + 64; lenient mode keeps the skill and says why.
    name = "b" * 64
    result = check(skill_md(name), name, "lenient", namespace="a" * 64)
    assert result.valid
    assert result.warnings == ("invalid qualified name: longer than 128 characters",)


# --- coder mode (coder.md 2.1, 2.2) --------------------------------------------------------


def test_missing_name_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("description: d"), "make-coffee", "coder")
    assert (result.valid, result.name) == (False, None)
    assert result.errors == ("frontmatter missing required 'name' field",)


def test_empty_name_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("name: ", "description: d"), "make-coffee", "coder")
    assert result.errors == ("frontmatter missing required 'name' field",)


def test_non_string_name_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("name: 5"), "5", "coder")
    assert result.errors == ('frontmatter field "name" must be a string',)


def test_non_string_description_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("name: make-coffee", "description: [a, b]"), "make-coffee", "coder")
    assert result.errors == ('frontmatter field "description" must be a string',)


def test_name_directory_mismatch_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("name: make-tea", "description: d"), "make-coffee", "coder")
    assert result.errors == ('front-matter name "make-tea" does not match directory "make-coffee"',)


def test_non_kebab_case_name_is_an_error_in_coder_mode() -> None:
    result = check(frontmatter("name: Make_Coffee", "description: d"), "Make_Coffee", "coder")
    assert result.errors == ('skill name "Make_Coffee" is not kebab-case',)


def test_directory_match_is_checked_before_kebab_case_in_coder_mode() -> None:
    result = check(frontmatter("name: Make_Coffee"), "make-coffee", "coder")
    assert result.errors == ('front-matter name "Make_Coffee" does not match directory "make-coffee"',)


def test_description_is_optional_in_coder_mode() -> None:
    result = check(frontmatter("name: make-coffee"), "make-coffee", "coder")
    assert (result.valid, result.name, result.description, result.errors) == (True, "make-coffee", "", ())


def test_trailing_newline_of_a_block_scalar_name_is_trimmed_in_coder_mode() -> None:
    result = check(frontmatter("name: |", "  make-coffee", "description: |", "  Brews."), "make-coffee", "coder")
    assert (result.valid, result.name, result.description) == (True, "make-coffee", "Brews.")


def test_unquoted_colon_is_not_repaired_in_coder_mode() -> None:
    result = check(frontmatter("name: make-coffee", "description: Brew: coffee"), "make-coffee", "coder")
    assert not result.valid
    assert result.errors[0].startswith("parse frontmatter YAML: mapping values are not allowed")


def test_coder_mode_uses_coder_s_delimiter_messages() -> None:
    assert check("no frontmatter\n", "x", "coder").errors == ("missing opening frontmatter delimiter",)
    assert check("---\nname: x\n", "x", "coder").errors == ("missing closing frontmatter delimiter",)
    assert check("---\n---\nbody\n", "x", "coder").errors == ("frontmatter missing required 'name' field",)


def test_a_description_that_is_a_list_is_reported_as_such_in_lenient_mode() -> None:
    result = check(frontmatter("name: x", "description: [a, b]"), "x", "lenient")
    assert result.errors == ("invalid description: expected a string, found a list",)


def test_extra_fields_are_ignored_in_coder_mode() -> None:
    text = frontmatter("name: make-coffee", "description: d", "user-invocable: true", "argument-hint: cups")
    assert check(text, "make-coffee", "coder").errors == ()


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab -\t\u00a0\u2003\x85\x1fé"), max_size=8))
def test_a_clean_value_is_exactly_one_that_collapsing_leaves_as_it_is(text: str) -> None:
    assert _clean(text) == (bool(text) and collapse(text) == text)


@pytest.mark.parametrize(
    ("name", "description", "folder"),
    [
        ("pdf-tools", "Extract text.", "pdf-tools"),
        ("pdf-tools", "Extract  text.", "pdf-tools"),
        ("pdf-tools", "Extract text. ", "pdf-tools"),
        ("pdf-tools", "x" * 1025, "pdf-tools"),
        ("Pdf-tools", "Extract text.", "Pdf-tools"),
        ("p" * 65, "Extract text.", "p" * 65),
        ("pdf-tools", "Extract text.", "other"),
    ],
    ids=["clean", "double_space", "trailing_space", "long_description", "not_kebab", "long_name", "other_folder"],
)
def test_the_quick_lenient_answer_equals_the_one_built_step_by_step(name: str, description: str, folder: str) -> None:
    quoted = f"---\nname: {json.dumps(name)}\ndescription: {json.dumps(description)}\n---\n# Body\n"
    plain = f"---\nname: {name}\ndescription: {description}\n---\n# Body\n"
    quick, slow = check(plain, folder, "lenient"), check(quoted, folder, "lenient")  # quoted: the YAML parser
    assert (quick.name, quick.description, quick.errors, quick.warnings) == (
        slow.name, slow.description, slow.errors, slow.warnings,
    )  # fmt: skip


_CLAUDE_LINE = st.tuples(
    st.sampled_from(["name", "description", "when_to_use", "disable-model-invocation", "license", "x-when_to_use"]),
    st.sampled_from([": "] * 6 + [":  ", ": \t"]),
    st.one_of(
        st.sampled_from(
            ["Extract text.", "a  b", "Use  it;  now", "a", "x", "true", "True", "a: b", "a #b", " a", "a "]
        ),
        st.tuples(
            st.sampled_from(["a", "b", "T", "true", "é", " ", "'"]),
            st.text(alphabet=st.sampled_from([*"abtrue-;.' ", ":", "#", "\t", "é"]), max_size=8),
        ).map("".join),
    ),
)


@settings(max_examples=1500, deadline=None)
@given(
    lines=st.lists(_CLAUDE_LINE, max_size=4),
    body=st.sampled_from(["# Title\n", "\n\n## Use it well\n", "", "text " * 30 + "\n"]),
    folder=st.sampled_from(["a", "ab", "x"]),
)
def test_claude_reads_the_usual_skill_in_one_step_exactly_as_step_by_step(
    lines: list[tuple[str, str, str]], body: str, folder: str
) -> None:
    text = "---\n" + "".join(f"{key}{sep}{value}\n" for key, sep, value in lines) + "---\n" + body
    assert check(text, folder, "claude") == claude_check(text, folder)


def test_claude_names_a_skill_by_its_folder_and_shows_a_different_frontmatter_name_beside_it() -> None:
    usual = frontmatter("name: pdf-tools", "description: Extract text.", "license: MIT")
    assert check(usual, "pdf-tools", "claude") == (("pdf-tools", "Extract text.", (), (), ""))
    assert check(usual, "pdf", "claude").name == "pdf (pdf-tools)"
    assert check(frontmatter("description: Extract text."), "pdf", "claude").name == "pdf"
    # the first body line stands in for a missing description; when_to_use follows the description
    assert check(frontmatter("name: pdf", body="# Read PDFs\n"), "pdf", "claude").description == "Read PDFs"
    with_when = frontmatter("description: Extract text.", "when_to_use: asked for tables")
    assert check(with_when, "pdf", "claude").description == "Extract text. - asked for tables"
    hidden = check(frontmatter("description: d", "disable-model-invocation: true"), "pdf", "claude")
    assert hidden.errors == ("disable-model-invocation: true (Claude Code lists it for the user only)",)


@pytest.mark.parametrize("mode", ["gemini", "opencode"])
def test_a_kept_block_scalar_last_in_the_frontmatter_ends_as_js_yaml_reads_the_block(mode: Validation) -> None:
    """Both read the block without its closing line break, and js-yaml ends a block scalar with one (binary-checked
    in tests/realagents): a kept block before a blank line keeps that one line break, not two."""
    assert check("---\nname: k\ndescription: |+\n  kept\n\n---\nx\n", "k", mode).description == "kept\n"
    assert check("---\nname: k\ndescription: |\n  one\n  two\n---\nx\n", "k", mode).description == "one\ntwo\n"


# what Codex 0.171.0 listed for each description (tests/realagents: codex_skills); None: not listed
CODEX_READS = {
    "{a: 1}": "{a: 1}",
    "{a: 1, b: two}": "{a: 1, b: two}",
    "{ a: 1 }": "{ a: 1 }",
    "{a: [1, 2]}": "{a: [1, 2]}",
    '{"a": "b"}': '{"a": "b"}',
    "{a: 1} tail": "{a: 1} tail",
    "a: b": "a: b",
    "42": "42",
    "true": "true",
    "2024-01-01": "2024-01-01",
    "&x hello": "hello",
    "!!str 12": "12",
    "{}": None,
    "[a, b]": None,
    "[]": None,
    "\n  a: 1\n  b: 2": None,
    "\n  - a\n  - b": None,
    "null": None,
    "~": None,
}


@pytest.mark.parametrize("written", CODEX_READS)
def test_codex_reads_a_mapping_or_list_description_again_after_its_repair_as_the_binary_did(written: str) -> None:
    result = check(frontmatter("name: my-skill", f"description: {written}"), "my-skill", "codex")
    assert result.description == CODEX_READS[written], result.errors
    assert result.valid is (CODEX_READS[written] is not None)


def test_codex_names_a_skill_by_a_mapping_written_as_its_name_and_drops_one_named_by_a_list() -> None:
    named = check(frontmatter("name: {x: 1}", "description: d"), "my-skill", "codex")
    assert (named.valid, named.name) == (True, "{x: 1}")
    listed = check(frontmatter("name: [x]", "description: d"), "my-skill", "codex")
    assert listed.errors == ("invalid name: a list, not text: Codex does not load the skill",)
    assert check(frontmatter("name: [x]", "description: d"), "my-skill", "lenient").valid  # the folder's name
