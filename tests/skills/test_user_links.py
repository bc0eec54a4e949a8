"""The user's own skill folders reached through links, and skills inside skills (Codex 0.171.0, Claude Code 2.1.332).

Both agents follow a link in the user's skill dirs wherever it leads: a skill folder linked
elsewhere in home or out of it, the skills dir itself linked away (Codex then lists the
folder where it really is). The place a user's link leads becomes its own boundary: links
found there stay inside it. Codex also finds a skill inside another skill's folder, and lists
no skill whose ``SKILL.md`` is itself a link.
Checked against the binaries by ``tests/realagents/detail_cases.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.scan import ScanResult, skill_roots
from agentcontext.skills.folder import open_folder
from agentcontext.testing import make_workspace, scan_tree, skill_md


def skills(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.resources if r.kind is Kind.SKILL and r.scope is not Scope.SYSTEM]


def offered(result: ScanResult) -> dict[str, str]:
    return {r.name or "": r.path for r in skills(result) if r.status is Status.OK}


def link_in_both(home: Path, link: str, target: Path) -> None:
    """``link`` (a path below a skills dir) made in Codex's ``~/.agents/skills`` and Claude Code's
    ``~/.claude/skills``, leading to ``target``."""
    for skills_dir in (".agents/skills", ".claude/skills"):
        (home / skills_dir / link).parent.mkdir(parents=True, exist_ok=True)
        (home / skills_dir / link).symlink_to(target)


def test_codex_and_claude_read_a_user_skill_folder_linked_out_of_home(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"elsewhere/far/SKILL.md": skill_md("far"), "repo/.git/": ""})
    link_in_both(home, "far", tmp_path / "elsewhere/far")
    codex = scan_tree(tmp_path / "repo", home=home, profile="codex")
    assert offered(codex) == {"far": str(home / ".agents/skills/far/SKILL.md")}
    claude = scan_tree(tmp_path / "repo", home=home, profile="claude")
    assert offered(claude) == {"far": str(home / ".claude/skills/far/SKILL.md")}


def test_the_default_profile_still_keeps_a_user_skill_link_inside_home(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"elsewhere/far/SKILL.md": skill_md("far"), "repo/.git/": ""})
    (home / ".agents/skills").mkdir(parents=True)
    (home / ".agents/skills/far").symlink_to(tmp_path / "elsewhere/far")
    [resource] = skills(scan_tree(tmp_path / "repo", home=home))
    assert (resource.status, resource.path) == (Status.INVALID, str(home / ".agents/skills/far"))
    assert "escapes scan root" in (resource.error or "")


def test_claude_reads_a_user_skill_md_linked_out_of_home_and_codex_does_not_list_it(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"elsewhere/file.md": skill_md("linked"), "repo/.git/": ""})
    link_in_both(home, "linked/SKILL.md", tmp_path / "elsewhere/file.md")
    claude = scan_tree(tmp_path / "repo", home=home, profile="claude")
    assert offered(claude) == {"linked": str(home / ".claude/skills/linked/SKILL.md")}
    [codex] = skills(scan_tree(tmp_path / "repo", home=home, profile="codex"))
    assert (codex.status, codex.path) == (Status.INVALID, str(home / ".agents/skills/linked/SKILL.md"))


def test_a_user_skills_dir_linked_out_of_home_is_listed_where_it_really_is(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"agents-user/au/SKILL.md": skill_md("au"), "repo/.git/": ""})
    (home / ".agents").mkdir()
    (home / ".agents/skills").symlink_to(tmp_path / "agents-user")
    result = scan_tree(tmp_path / "repo", home=home, profile="codex")
    real = os.path.realpath(tmp_path / "agents-user")
    assert offered(result) == {"au": f"{real}/au/SKILL.md"}
    assert (real, Scope.USER) in skill_roots(result)


def test_a_user_skills_dir_linked_within_home_is_listed_where_it_really_is(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"dotfiles/codex-skills/xu/SKILL.md": skill_md("xu"), ".codex/": ""})
    make_workspace(tmp_path, {"repo/.git/": ""})
    (home / ".codex/skills").symlink_to(home / "dotfiles/codex-skills")
    result = scan_tree(tmp_path / "repo", home=home, profile="codex")
    real = os.path.realpath(home / "dotfiles/codex-skills")
    assert offered(result) == {"xu": f"{real}/xu/SKILL.md"}


def test_a_link_inside_a_folder_the_user_linked_out_of_home_must_stay_inside_it(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "elsewhere/far/SKILL.md": skill_md("far"),
            "outside-the-roots/secret/SKILL.md": skill_md("secret"),
            "repo/.git/": "",
        },
    )
    (tmp_path / "elsewhere/far/again").symlink_to(tmp_path / "outside-the-roots/secret")
    (home / ".agents/skills").mkdir(parents=True)
    (home / ".agents/skills/far").symlink_to(tmp_path / "elsewhere/far")
    result = scan_tree(tmp_path / "repo", home=home, profile="codex")
    assert offered(result) == {"far": str(home / ".agents/skills/far/SKILL.md")}
    [refused] = [r for r in skills(result) if r.status is not Status.OK]
    assert (refused.path, refused.status) == (str(home / ".agents/skills/far/again"), Status.INVALID)
    assert "escapes scan root" in (refused.error or "")


def test_codex_finds_skills_inside_a_skills_folder_and_claude_does_not(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "repo/.git/": "",
            "repo/.agents/skills/outer/SKILL.md": skill_md("outer"),
            "repo/.agents/skills/outer/inner/SKILL.md": skill_md("inner"),
            "repo/.agents/skills/outer/refs/deep/SKILL.md": skill_md("deep"),
            "repo/.claude/skills/couter/SKILL.md": skill_md("couter"),
            "repo/.claude/skills/couter/cinner/SKILL.md": skill_md("cinner"),
        },
    )
    codex = scan_tree(tmp_path / "repo", home=home, profile="codex")
    assert sorted(offered(codex)) == ["deep", "inner", "outer"]
    claude = scan_tree(tmp_path / "repo", home=home, profile="claude")
    assert sorted(offered(claude)) == ["couter"]
    default = scan_tree(tmp_path / "repo", home=home, settings={"skills.max_depth": 6})
    assert sorted(offered(default)) == ["couter", "outer"]


def test_codex_lists_no_skill_whose_skill_md_is_a_link_even_inside_the_repository(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo", {".git/": "", "docs/tool.md": skill_md("tool"), ".agents/skills/tool/": ""}
    )
    (work / ".agents/skills/tool/SKILL.md").symlink_to(work / "docs/tool.md")
    [codex] = skills(scan_tree(work, home=home, profile="codex"))
    assert (codex.status, codex.error) == (
        Status.INVALID,
        "SKILL.md is a symlink: Codex lists no such skill (skills.linked_skill_md)",
    )
    assert offered(scan_tree(work, home=home)) == {"tool": str(work / ".agents/skills/tool/SKILL.md")}


def test_a_followed_user_skills_other_files_are_read_beneath_where_the_link_leads(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "elsewhere/far/SKILL.md": skill_md("far"),
            "elsewhere/far/notes.md": "far notes\n",
            "agents-user/au/SKILL.md": skill_md("au"),
            "agents-user/au/notes.md": "au notes\n",
            "repo/.git/": "",
        },
    )
    (home / ".claude/skills").mkdir(parents=True)
    (home / ".claude/skills/far").symlink_to(tmp_path / "elsewhere/far")
    (home / ".agents").mkdir()
    (home / ".agents/skills").symlink_to(tmp_path / "agents-user")
    for profile, name in (("claude", "far"), ("codex", "au")):
        result = scan_tree(tmp_path / "repo", home=home, profile=profile)
        folder = os.path.dirname(offered(result)[name])
        with open_folder(folder, result.layout.boundary_of(folder)) as opened:
            assert opened.read_text(["notes.md"], 1000) == (f"{name} notes\n", False)
