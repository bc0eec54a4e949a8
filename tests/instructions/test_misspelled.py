"""Files named as the agent's instruction files or SKILL.md but for case are listed ``invalid`` with the name the
agent reads, never passed over; the oracle for which agents read them is tests/realagents (``copilot_name_case``)."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from agentcontext.cli import app
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import Scanner
from agentcontext.testing import backdate, isolated_environ, make_workspace, scan_tree, skill_md, test_config

GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}


def listed(resources: tuple[Resource, ...], root: Path, kind: Kind) -> dict[str, tuple[Status, str | None]]:
    return {os.path.relpath(r.path, root): (r.status, r.error) for r in resources if r.kind is kind}


def test_an_instruction_file_named_in_another_case_is_listed_not_read_with_the_name_the_agent_reads(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "agents.md": "a\n", "Claude.md": "c\n", "work/gemini.md": "g\n"})
    expected = {
        "codex": {"agents.md": "Codex reads the name AGENTS.md exactly"},
        "claude": {
            "agents.md": "Claude Code reads the name AGENTS.md",
            "Claude.md": "Claude Code reads the name CLAUDE.md",
        },
        "opencode": {
            "agents.md": "OpenCode reads the name AGENTS.md",
            "Claude.md": "OpenCode reads the name CLAUDE.md",
        },
        "gemini": {"work/gemini.md": "Gemini CLI reads the name GEMINI.md"},
    }
    for profile, wanted in expected.items():
        found = listed(
            scan_tree(root / "work", home=home, profile=profile).snapshot.resources, root, Kind.INSTRUCTION_FILE
        )
        assert set(found) == set(wanted), profile
        for path, said in wanted.items():
            status, error = found[path]
            assert status is Status.INVALID and said in str(error), (profile, path, error)


def test_copilot_reads_one_spelling_of_a_name_and_lists_the_others_as_not_read(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "AGENTS.md": "exact\n", "agents.md": "lower\n"})
    found = listed(scan_tree(root, home=home, profile="copilot").snapshot.resources, root, Kind.INSTRUCTION_FILE)
    assert found["AGENTS.md"][0] is Status.OK
    assert found["agents.md"] == (
        Status.INVALID,
        "not read: GitHub Copilot CLI reads AGENTS.md for this name, one file for it",
    )


def test_a_name_in_another_case_where_the_agent_reads_no_instruction_file_is_not_listed(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "work/below/agents.md": "below the work dir\n", "work/x.txt": ""})
    for profile in ("codex", "claude", "cursor", "coder"):
        resources = scan_tree(root / "work", home=home, profile=profile).snapshot.resources
        assert not listed(resources, root, Kind.INSTRUCTION_FILE), profile


def test_a_rescan_sees_the_file_renamed_to_the_name_the_agent_reads(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "agents.md": "rules\n"})
    backdate(root)
    scanner = Scanner(root, test_config(root, home=home, profile="codex"), environ=isolated_environ(home))
    assert listed(scanner.run().snapshot.resources, root, Kind.INSTRUCTION_FILE)["agents.md"][0] is Status.INVALID
    (root / "agents.md").rename(root / "AGENTS.md")
    assert {p: s for p, (s, _) in listed(scanner.run().snapshot.resources, root, Kind.INSTRUCTION_FILE).items()} == {
        "AGENTS.md": Status.OK
    }


def test_a_skill_file_named_in_another_case_is_invalid_at_any_depth_the_walk_reaches(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".agents/skills/lower/skill.md": skill_md("lower"),
            ".agents/skills/group/caps/SKILL.MD": skill_md("caps"),
            ".agents/skills/good/SKILL.md": skill_md("good"),
            ".agents/skills/good/references/skill.md": "a file of the skill, named so: not a skill of its own",
            ".agents/skills/skill.md": "right in the container: not a skill folder's file",
        },
    )
    for profile, settings in (("default", {}), ("default", {"skills.max_depth": 3}), ("codex", {})):
        found = listed(
            scan_tree(root, home=home, profile=profile, settings=settings).snapshot.resources, root, Kind.SKILL
        )
        wanted = {".agents/skills/lower/skill.md"} | (
            {".agents/skills/group/caps/SKILL.MD"} if settings or profile == "codex" else set()
        )
        if profile == "codex":  # Codex looks inside a skill's folder too
            wanted.add(".agents/skills/good/references/skill.md")
        assert {p for p, (s, _) in found.items() if s is Status.INVALID} == wanted, (profile, settings)
        status, error = found[".agents/skills/lower/skill.md"]
        assert error == "not read: a skill's file is named SKILL.md, with its case (no agent reads skill.md)"
        assert found[".agents/skills/good/SKILL.md"][0] is Status.OK


def test_scan_check_fails_on_a_name_in_another_case(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "agents.md": "rules\n"})
    env = {"HOME": str(home), "COLUMNS": "200"}
    assert CliRunner().invoke(app, ["scan", str(root), "-p", "codex", "--check"], env=env).exit_code == 1
    (root / "agents.md").rename(root / "AGENTS.md")
    assert CliRunner().invoke(app, ["scan", str(root), "-p", "codex", "--check"], env=env).exit_code == 0
