"""A clone made where git does not make symbolic links (``core.symlinks=false``) holds small files in
their place: the scan says so wherever an agent would read one or pass over it, with how to fix it."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from agentcontext import applicable
from agentcontext.audit.report import audit
from agentcontext.cli import app
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import Scanner
from agentcontext.testing import backdate, isolated_environ, make_workspace, scan_tree, skill_md, test_config
from tests.fs.test_text_links import git, linked_clone

SKILL = skill_md("shared", "a skill kept in one place")
LINKED = {
    "CLAUDE.md": "AGENTS.md",
    ".claude/skills": "../.agents/skills",
    ".agents/skills/shared": "../../library/shared",
    ".codex/skills/one/SKILL.md": "../../../library/shared/SKILL.md",
    ".mcp.json": "config/mcp.json",
}
FILES = {
    "AGENTS.md": "# Rules\nUse tabs.\n",
    "library/shared/SKILL.md": SKILL,
    ".agents/skills/own/SKILL.md": skill_md("own"),
    "config/mcp.json": '{"mcpServers": {}}',
}


def by_path(resources: tuple[Resource, ...], root: Path) -> dict[str, Resource]:
    return {os.path.relpath(r.path, root): r for r in resources}


def test_a_claude_md_checked_out_from_a_link_is_loaded_as_claude_code_loads_it_with_a_warning_that_says_how_to_fix_it(
    tmp_path: Path, home: Path
) -> None:
    clone = linked_clone(tmp_path, LINKED, FILES)
    found = by_path(scan_tree(clone, home=home, profile="claude").snapshot.resources, clone)
    claude = found["CLAUDE.md"]
    assert (claude.status, claude.content) == (Status.OK, "AGENTS.md")  # the text the agent reads, not followed
    [warning] = claude.warnings
    assert 'a symbolic link checked out as a file: it holds only "AGENTS.md"' in warning
    assert f"git config core.symlinks true, then git checkout -- {clone}/CLAUDE.md" in warning


def test_a_skills_folder_or_a_skills_folder_checked_out_from_a_link_is_invalid_not_passed_over(
    tmp_path: Path, home: Path
) -> None:
    clone = linked_clone(tmp_path, LINKED, FILES)
    claude = by_path(scan_tree(clone, home=home, profile="claude").snapshot.resources, clone)
    assert claude[".claude/skills"].status is Status.INVALID
    assert 'it holds only "../.agents/skills", so no skill in the folder it names is read' in str(
        claude[".claude/skills"].error
    )
    default = by_path(scan_tree(clone, home=home).snapshot.resources, clone)
    shared = default[".agents/skills/shared"]
    assert (shared.kind, shared.status) == (Kind.SKILL, Status.INVALID)
    assert str(shared.error).startswith("a file, not a folder: a symbolic link checked out as a file")
    assert default[".agents/skills/own/SKILL.md"].status is Status.OK  # its sibling is read as ever


def test_a_skill_md_checked_out_from_a_link_says_so_whether_the_agent_rejects_it_or_takes_its_text(
    tmp_path: Path, home: Path
) -> None:
    target = "../../../library/shared/SKILL.md"
    clone = linked_clone(tmp_path, {".codex/skills/one/SKILL.md": target, ".claude/skills/one/SKILL.md": target}, FILES)
    codex = by_path(scan_tree(clone, home=home, profile="codex").snapshot.resources, clone)[
        ".codex/skills/one/SKILL.md"
    ]
    assert codex.status is Status.INVALID  # no frontmatter: Codex lists no such skill
    assert f'it holds only "{target}", so the agent reads that text as the skill' in str(codex.error)
    claude = by_path(scan_tree(clone, home=home, profile="claude").snapshot.resources, clone)
    taken = claude[".claude/skills/one/SKILL.md"]
    assert (taken.status, taken.description) == (Status.OK, target)  # as Claude Code reads it
    assert any("so the agent takes that text for the skill" in w for w in taken.warnings)


def test_an_mcp_json_checked_out_from_a_link_is_invalid_with_the_reason(tmp_path: Path, home: Path) -> None:
    clone = linked_clone(tmp_path, LINKED, FILES)
    mcp = by_path(scan_tree(clone, home=home, profile="claude").snapshot.resources, clone)[".mcp.json"]
    assert mcp.status is Status.INVALID
    assert str(mcp.error).startswith("invalid JSON")
    assert 'it holds only "config/mcp.json", so it is no JSON config' in str(mcp.error)


def test_files_that_only_look_like_links_are_left_as_they_were(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "AGENTS.md": "Use tabs.",  # one line, naming nothing
            "CLAUDE.md": "AGENTS.md\n",  # a newline: written by hand
            "skills": "#!/bin/sh\n",  # a file where the default profile looks for a folder of skills
            ".agents/skills/LICENSE": "MIT",
            ".agents/skills/x/SKILL.md": skill_md("x"),
        },
    )
    for profile in ("default", "claude"):
        resources = scan_tree(work, home=home, profile=profile).snapshot.resources
        assert not any("checked out as a file" in f"{r.error}{r.warnings}" for r in resources), profile
        assert {os.path.relpath(r.path, work) for r in resources if r.kind is Kind.SKILL} <= {
            ".agents/skills/x/SKILL.md"
        }, profile


def test_a_rescan_sees_the_link_made_again_and_what_it_named_removed(tmp_path: Path, home: Path) -> None:
    clone = linked_clone(tmp_path, {"CLAUDE.md": "AGENTS.md", "B.md": "AGENTS.md"}, {"AGENTS.md": "# Rules\n"})
    backdate(clone)
    env = isolated_environ(home)
    scanner = Scanner(clone, test_config(clone, home=home, profile="claude"), environ=env)

    def claude_md() -> Resource:
        return by_path(scanner.run().snapshot.resources, clone)["CLAUDE.md"]

    assert claude_md().warnings
    git(clone, "config", "core.symlinks", "true")
    git(clone, "checkout", "--", "CLAUDE.md")  # the fix the warning gives
    assert (clone / "CLAUDE.md").is_symlink()
    assert (claude_md().content, claude_md().warnings) == ("# Rules\n", ())
    (clone / "CLAUDE.md").unlink()
    (clone / "CLAUDE.md").write_text("B.md")  # a file again, naming a file that is there
    assert claude_md().warnings
    (clone / "B.md").unlink()  # what it named is gone: a one-line file, nothing more
    assert (claude_md().content, claude_md().warnings) == ("B.md", ())


def test_scan_check_fails_and_the_audit_warns_on_links_checked_out_as_files(tmp_path: Path, home: Path) -> None:
    clone = linked_clone(tmp_path, LINKED, FILES)
    env = {"HOME": str(home), "COLUMNS": "200"}
    assert CliRunner().invoke(app, ["scan", str(clone), "-p", "claude", "--check"], env=env).exit_code == 1
    scanner = Scanner(clone, test_config(clone, home=home, profile="claude"), environ=isolated_environ(home))
    report = audit(scanner.run(), scanner.reader)
    codes = {(f.code, f.severity.value, os.path.relpath(f.path, clone)) for f in report.findings}
    assert ("link-checked-out-as-file", "warning", "CLAUDE.md") in codes
    assert ("scan-invalid", "error", ".claude/skills") in codes


def test_a_nested_file_checked_out_from_a_link_is_warned_about_when_a_touched_path_brings_it_in(
    tmp_path: Path, home: Path
) -> None:
    clone = linked_clone(
        tmp_path, {"pkg/CLAUDE.md": "AGENTS.md"}, {"AGENTS.md": "# Root\n", "pkg/AGENTS.md": "# Pkg\n", "pkg/x.py": ""}
    )
    for profile in ("claude", "codex"):
        answer = applicable(clone, ["pkg/x.py"], test_config(clone, home=home, profile=profile))
        files = {os.path.relpath(f.resource.path, clone): f.resource for f in answer.files}
        warned = {path for path, r in files.items() if any("checked out as a file" in w for w in r.warnings)}
        assert warned == ({"pkg/CLAUDE.md"} if profile == "claude" else set()), profile  # Codex reads pkg/AGENTS.md
        assert files, profile


def test_every_profile_warns_about_each_instruction_file_it_loads_that_holds_only_a_link_target(
    tmp_path: Path, home: Path
) -> None:
    names = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules")
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", "RULES.md": "# Rules\n", ".github/copilot-instructions.md": "../RULES.md"}
        | dict.fromkeys(names, "RULES.md"),
    )
    for profile in ("default", "codex", "claude", "gemini", "opencode", "copilot", "cursor", "coder"):
        files = scan_tree(work, home=home, profile=profile).snapshot.of_kind(Kind.INSTRUCTION_FILE)
        loaded = [r for r in files if r.status is Status.OK]
        assert loaded, profile
        for resource in loaded:
            assert any('holds only "' in w and "RULES.md" in w for w in resource.warnings), (profile, resource.path)


def test_a_skills_folder_whose_own_skill_md_was_checked_out_from_a_link_says_so_for_copilot(
    tmp_path: Path, home: Path
) -> None:
    clone = linked_clone(tmp_path, {".github/skills/SKILL.md": "../../library/shared/SKILL.md"}, FILES)
    found = by_path(scan_tree(clone, home=home, profile="copilot").snapshot.resources, clone)
    own = found[".github/skills/SKILL.md"]
    assert own.status is Status.INVALID  # no frontmatter: Copilot CLI does not load it
    assert 'it holds only "../../library/shared/SKILL.md"' in str(own.error)


def test_custom_commands_checked_out_from_links_say_so_a_command_file_a_group_and_the_commands_folder(
    tmp_path: Path, home: Path
) -> None:
    command = "---\ndescription: review a change\n---\nReview it.\n"
    grouped = linked_clone(
        tmp_path / "a",
        {".claude/commands/review.md": "../../shared/review.md", ".claude/commands/team": "../../shared/team"},
        {"shared/review.md": command, "shared/team/deploy.md": command, ".claude/commands/own.md": command},
    )
    found = by_path(scan_tree(grouped, home=home, profile="claude").snapshot.resources, grouped)
    review = found[".claude/commands/review.md"]
    assert (review.status, review.content) == (Status.OK, "../../shared/review.md")  # what Claude Code lists
    assert 'it holds only "../../shared/review.md", so the agent takes that text for the command' in review.warnings[-1]
    team = found[".claude/commands/team"]
    assert team.status is Status.INVALID
    assert 'it holds only "../../shared/team", so no command in it is read' in str(team.error)
    assert found[".claude/commands/own.md"].warnings == ()
    whole = linked_clone(tmp_path / "b", {".claude/commands": "../shared/commands"}, {"shared/commands/x.md": command})
    for profile in ("claude", "copilot"):
        folder = by_path(scan_tree(whole, home=home, profile=profile).snapshot.resources, whole)[".claude/commands"]
        assert folder.status is Status.INVALID
        assert "so no command in the folder it names is read" in str(folder.error)
        assert f"git checkout -- {whole}/.claude/commands" in str(folder.error)


def test_a_declared_source_that_is_one_skill_md_checked_out_from_a_link_says_so_within_its_folder(
    tmp_path: Path, home: Path
) -> None:
    clone = linked_clone(tmp_path, {"kit/SKILL.md": "skill-base.md"}, {"kit/skill-base.md": SKILL, "AGENTS.md": "x\n"})
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "work\n"})
    source = str(clone / "kit" / "SKILL.md")
    config = test_config(work, home=home, profile="coder", settings={"sources": [source]})
    found = Scanner(work, config, environ=isolated_environ(home)).run().snapshot.find(source)
    assert found is not None and found.status is Status.INVALID  # no frontmatter: Coder lists no such skill
    assert 'it holds only "skill-base.md", so the agent reads that text as the skill' in str(found.error)
