"""Custom commands (``.claude/commands/*.md``, ``skills.commands``): what Claude Code and Copilot CLI showed
(tests/realagents: ``claude_commands``, ``copilot_commands``), here without the binaries."""

from __future__ import annotations

from pathlib import Path

from agentcontext.mcp import skills_ext, tools
from agentcontext.peers.claude.skills import claude_skill_lines
from agentcontext.peers.copilot.skills import copilot_skills
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult, scan_full, skill_roots
from agentcontext.skills.commands import is_command
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config
from tests.helpers import backdate
from tests.realagents.copilot_cases import YAML_WORDS

GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}  # a repository to git


def command(description: str, body: str = "body\n") -> str:
    return f"---\ndescription: {description}\n---\n{body}"


def scanned(work: Path, home: Path, profile: str, **settings: object) -> ScanResult:
    config = test_config(work, home=home, profile=profile, settings=settings)
    return scan_full(work, config, environ=isolated_environ(home))


def every_command(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.of_kind(Kind.SKILL) if is_command(r)]


def commands(result: ScanResult) -> dict[str, Resource]:
    """The command candidates by their path below a ``commands`` folder (one folder's)."""
    return {r.path.split("/commands/", 1)[1]: r for r in every_command(result)}


def offered(result: ScanResult) -> dict[str, str | None]:
    return {r.name or "": r.description for r in every_command(result) if r.status is Status.OK}


def test_claude_names_a_command_by_its_path_below_the_folder_at_any_depth(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/plain.md": command("Plain"),
            ".claude/commands/group/nested.md": command("Nested"),
            ".claude/commands/group/deep/deeper.md": command("Deeper"),
            ".claude/commands/.hidden.md": command("Hidden"),
            ".claude/commands/named.md": "---\nname: other\ndescription: Named\n---\n",
            ".claude/commands/CAPS.MD": command("Not .md exactly"),
            ".claude/commands/notes.txt": "no\n",
        },
    )
    assert offered(scanned(work, home, "claude")) == {
        "plain": "Plain",
        "group:nested": "Nested",
        "group:deep:deeper": "Deeper",
        ".hidden": "Hidden",
        "named": "Named",
    }


def test_claude_describes_a_command_by_its_first_line_else_custom_command(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/heading.md": "\n# Heading marks dropped\n\nbody\n",
            ".claude/commands/long.md": "L" * 120 + "\n",
            ".claude/commands/empty.md": "",
            ".claude/commands/listed.md": "---\ndescription: [a, b]\n---\nThe body's line\n",
            ".claude/commands/num.md": "---\ndescription: 42\n---\n",
            ".claude/commands/when.md": "---\ndescription: Said\nwhen_to_use: also said\n---\n",
        },
    )
    assert offered(scanned(work, home, "claude")) == {
        "heading": "Heading marks dropped",
        "long": "L" * 97 + "...",
        "empty": "Custom command",
        "listed": "The body's line",
        "num": "42",
        "when": "Said - also said",
    }


def test_claude_lists_commands_after_every_skill_sorted_without_case(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/skills/zz/SKILL.md": skill_md("zz", "A skill sorts before any command"),
            ".claude/skills/folder/SKILL.md": skill_md("taken", "Its name is a command's: shown as its folder"),
            ".claude/commands/Upper.md": command("U"),
            ".claude/commands/lower.md": command("l"),
            ".claude/commands/taken.md": command("A command named as a skill's frontmatter"),
            ".claude/commands/a/b.md": command("a:b"),
        },
    )
    result = scanned(work, home, "claude")
    lines = claude_skill_lines(result.skills, [path for path, _ in skill_roots(result)])
    assert lines == [
        "- folder: Its name is a command's: shown as its folder",
        "- zz: A skill sorts before any command",
        "- a:b: a:b",
        "- lower: l",
        "- taken: A command named as a skill's frontmatter",
        "- Upper: U",
    ]


def test_the_users_command_claims_a_name_first_then_the_work_dirs_then_those_above(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".claude/commands/same.md": command("user"), ".claude/commands/mine.md": command("mine")})
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/same.md": command("root"),
            ".claude/commands/both.md": command("root both"),
            "sub/.claude/commands/both.md": command("work dir both"),
            "sub/.claude/commands/Same.md": command("another name: case counts"),
        },
    )
    result = scanned(work / "sub", home, "claude")
    assert offered(result) == {
        "same": "user",
        "mine": "mine",
        "both": "work dir both",
        "Same": "another name: case counts",
    }
    shadowed = {r.path: r.error for r in every_command(result) if r.status is Status.SHADOWED}
    assert shadowed == {
        f"{work}/.claude/commands/same.md": f"shadowed by the command at {home}/.claude/commands/same.md",
        f"{work}/.claude/commands/both.md": f"shadowed by the command at {work}/sub/.claude/commands/both.md",
    }


def test_a_skill_of_the_same_name_wins_over_a_command(tmp_path: Path, home: Path) -> None:
    files = {
        ".git/": "",
        ".claude/skills/dup/SKILL.md": skill_md("dup", "the skill"),
        ".claude/commands/dup.md": command("the command"),
    }
    work = make_workspace(tmp_path / "w", files)
    for profile in ("claude", "copilot"):
        dup = commands(scanned(work, home, profile))["dup.md"]
        assert (dup.status, dup.error) == (
            Status.SHADOWED,
            f"shadowed by the repo skill at {work}/.claude/skills/dup/SKILL.md",
        )


def test_disable_model_invocation_and_skills_disabled_turn_a_command_off(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/off.md": "---\ndescription: Gone\ndisable-model-invocation: true\n---\n",
            ".claude/commands/named-off.md": command("Turned off by name"),
        },
    )
    for profile in ("claude", "copilot"):
        found = commands(scanned(work, home, profile, **{"skills.disabled": ["NAMED-OFF"]}))
        assert {path: r.status for path, r in found.items()} == {
            "off.md": Status.DISABLED,
            "named-off.md": Status.DISABLED,
        }
        assert found["named-off.md"].error == "disabled by skills.disabled"
        assert (found["off.md"].error or "").startswith("disable-model-invocation: true")


def test_copilot_reads_only_the_files_right_in_each_folder_from_the_work_dir_up_to_the_root(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(home, {".claude/commands/user.md": command("The user's: Copilot reads none")})
    work = make_workspace(
        tmp_path / "w",
        {
            **GIT,
            ".claude/commands/at-root.md": command("root"),
            ".claude/commands/CAPS.MD": command("any case"),
            ".claude/commands/.hidden.md": command("hidden"),
            ".claude/commands/group/nested.md": command("nested"),
            ".claude/commands/spaced name.md": command("spaces"),
            ".claude/commands/plain.md": "No frontmatter\n\n# heading\nsecond\n  third  \nfourth\n",
            "mid/.claude/commands/a-mid.md": command("mid"),
            "mid/sub/.claude/commands/z-cwd.md": command("work dir"),
        },
    )
    result = scanned(work / "mid" / "sub", home, "copilot")
    assert offered(result) == {
        "at-root": "root",
        "CAPS": "any case",
        "spaced-name": "spaces",
        "plain": "No frontmatter second third",
        "a-mid": "mid",
        "z-cwd": "work dir",
    }
    listed = copilot_skills(
        result.skills, [p for p, _ in skill_roots(result)], str(work / "mid/sub"), str(work), str(home)
    )
    assert [(s.name, word) for s, word in listed] == [
        ("z-cwd", "project"),  # the work dir's first
        ("CAPS", "project"),  # then those above it, sorted together, bytewise
        ("a-mid", "project"),
        ("at-root", "project"),
        ("plain", "project"),
        ("spaced-name", "project"),
    ]


def test_copilot_leaves_out_a_command_whose_argument_hint_or_description_is_not_text(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/hint.md": "---\ndescription: A list hint\nargument-hint: [pr]\n---\n",
            ".claude/commands/quoted.md": "---\ndescription: A text hint\nargument-hint: '[pr]'\n---\n",
            ".claude/commands/empty-hint.md": "---\ndescription: No hint\nargument-hint:\n---\n",
            ".claude/commands/num.md": "---\ndescription: 42\n---\n",
            ".claude/commands/null.md": "---\ndescription:\n---\nbody\n",
            ".claude/skills/s-num/SKILL.md": "---\nname: s-num\ndescription: 42\n---\n",
        },
    )
    result = scanned(work, home, "copilot")
    found = commands(result)
    assert {p: r.status for p, r in found.items()} == {
        "hint.md": Status.INVALID,
        "quoted.md": Status.OK,
        "empty-hint.md": Status.OK,
        "num.md": Status.INVALID,
        "null.md": Status.INVALID,
    }
    assert found["hint.md"].error == "argument-hint must be a string (quote it): Copilot CLI does not load the command"
    assert found["num.md"].error == "description must be a string: Copilot CLI does not load the command"
    (skill,) = [r for r in result.snapshot.of_kind(Kind.SKILL) if r.path.endswith("s-num/SKILL.md")]
    assert (skill.status, skill.error) == (
        Status.INVALID,
        "description must be a string: Copilot CLI does not load the skill",
    )


def test_no_profile_but_claudes_and_copilots_reads_commands(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", ".claude/commands/x.md": command("x")})
    for profile in ("default", "codex", "gemini", "opencode", "cursor", "coder"):
        assert commands(scanned(work, home, profile)) == {}, profile
    assert commands(scanned(work, home, "default", **{"skills.commands": "claude"}))["x.md"].status is Status.OK


def test_a_binary_or_oversize_command_says_why_it_is_not_offered(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", ".claude/commands/bin.md": b"\x00\x01", ".claude/commands/big.md": "x" * (70 * 1024)},
    )
    found = commands(scanned(work, home, "claude"))
    assert (found["bin.md"].status, found["bin.md"].error) == (Status.INVALID, "binary file (contains NUL bytes)")
    assert found["big.md"].status is Status.OVERSIZE
    assert found["big.md"].content is None


def test_a_command_is_read_whole_and_has_no_other_files(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/review.md": command("Reviews", body="Review $ARGUMENTS\n"),
            ".claude/commands/other.md": command("Another command beside it"),
        },
    )
    result = scanned(work, home, "claude")
    read = tools.skills_read(result, {"name": "review"}, tools.Limits())
    assert not read.error
    assert "Review $ARGUMENTS" in read.text
    assert "Other files" not in read.text
    beside = tools.skills_read(result, {"name": "review", "resource": "other.md"}, tools.Limits())
    assert (beside.error, beside.text) == (
        True,
        "review is a custom command: one file (review.md), with no other files.",
    )
    (review,) = [r for r in result.skills if r.name == "review"]
    assert [f.relative for f in skills_ext.files_of(review, result.layout)] == ["review.md"]
    assert "Skill directory" not in skills_ext.prompt_text(review, result.layout)


def test_a_rescan_sees_a_command_come_change_and_go(tmp_path: Path, home: Path) -> None:
    from agentcontext.scan import Scanner

    work = make_workspace(tmp_path / "w", {".git/": "", ".claude/commands/a.md": command("one")})
    backdate(work)
    config = test_config(work, home=home, profile="claude")
    scanner = Scanner(work, config, environ=isolated_environ(home))

    def now() -> dict[str, str | None]:
        return {
            r.name or "": r.description for r in scanner.run().snapshot.of_kind(Kind.SKILL) if r.status is Status.OK
        }

    assert now() == {"a": "one"}
    make_workspace(work, {".claude/commands/group/b.md": command("two")})
    assert now() == {"a": "one", "group:b": "two"}
    (work / ".claude/commands/a.md").write_text(command("changed"), encoding="utf-8")
    assert now() == {"a": "changed", "group:b": "two"}
    (work / ".claude/commands/group/b.md").unlink()
    assert now() == {"a": "changed"}
    make_workspace(work, {"sub/": ""})
    backdate(work)
    inner = Scanner(work / "sub", config, environ=isolated_environ(home))  # sub has no .claude yet
    assert {r.name for r in inner.run().snapshot.of_kind(Kind.SKILL) if r.status is Status.OK} == {"a"}
    make_workspace(work, {"sub/.claude/commands/new.md": command("new")})
    assert {r.name for r in inner.run().snapshot.of_kind(Kind.SKILL) if r.status is Status.OK} == {"a", "new"}


def test_copilot_types_frontmatter_scalars_close_to_yaml_1_2s_core_schema(tmp_path: Path, home: Path) -> None:
    values = (*YAML_WORDS, "true")
    work = make_workspace(
        tmp_path / "w",
        {
            **GIT,
            **{
                f".claude/skills/y-{n}/SKILL.md": f"---\nname: y-{n}\ndescription: {v}\n---\n"
                for n, v in enumerate(values)
            },
            ".claude/skills/on/SKILL.md": "---\nname: on\ndescription: named on\n---\n",
        },
    )
    found = {r.name: r.description for r in scanned(work, home, "copilot").skills}
    text = {
        "y-0": "yes",
        "y-1": "Off",
        "y-2": "2024-01-01",
        "y-3": "1_000",
        "y-4": "1:20",
        "y-8": "017",
        "y-12": "1_0.5",
    }
    assert found == {**text, "on": "named on"}
