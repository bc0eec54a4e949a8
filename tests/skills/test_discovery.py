"""Skill discovery: Codex's loader tests (codex-skills.md A.2, A.4) and Codex Free's skill tests (D).

Our precedence is Codex Free's: the first container to offer a name wins it (names
compared without case) and later copies are listed as ``shadowed``; Codex G3 would keep
same-named skills side by side. Nothing is dropped silently: escaping or broken links,
unusable frontmatter and scan truncation are all resources with a reason.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentcontext.errors import ConfigError
from agentcontext.fs.files import Reader
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.scan import ScanResult
from agentcontext.skills.discovery import roots_searched
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md
from tests.helpers import as_unprivileged_user


def skills(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.resources if r.kind is Kind.SKILL]


def offered(result: ScanResult) -> dict[str, str]:
    """Name -> SKILL.md path of every skill that is ``ok``."""
    return {r.name or "": r.path for r in skills(result) if r.status is Status.OK}


def by_path(result: ScanResult, path: Path) -> Resource:
    resource = result.snapshot.find(str(path))
    assert resource is not None, f"{path} not in the inventory"
    return resource


def scan(
    work_dir: Path,
    home: Path,
    settings: Mapping[str, Any] | None = None,
    *,
    profile: str = "default",
    environ: Mapping[str, str] | None = None,
) -> ScanResult:
    """:func:`scan_tree` with dotted-key settings passed as a mapping."""
    return scan_tree(work_dir, home=home, profile=profile, environ=environ, settings=settings)


def searched(result: ScanResult) -> list[tuple[str, Scope]]:
    return roots_searched(result.layout, Reader())


def install_plugin(home: Path, plugin: str, version: str, skill: str, text: str | None = None) -> Path:
    """A Claude Code plugin skill in the cache; returns its SKILL.md."""
    path = home / ".claude" / "plugins" / "cache" / "market" / plugin / version / "skills" / skill / "SKILL.md"
    make_workspace(path.parent, {"SKILL.md": text if text is not None else skill_md(skill)})
    return path


def real(path: Path) -> str:
    return os.path.realpath(path)


# Roots: which containers are searched, in which order, with which scope.


def test_skill_roots_searches_every_container_name(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/from-agents/SKILL.md": skill_md("from-agents"),
            ".codex/skills/from-codex/SKILL.md": skill_md("from-codex"),
            ".claude/skills/from-claude/SKILL.md": skill_md("from-claude"),
            "skills/from-plain/SKILL.md": skill_md("from-plain"),
        },
    )
    result = scan(tmp_path, home)
    assert offered(result) == {
        "from-agents": str(tmp_path / ".agents/skills/from-agents/SKILL.md"),
        "from-codex": str(tmp_path / ".codex/skills/from-codex/SKILL.md"),
        "from-claude": str(tmp_path / ".claude/skills/from-claude/SKILL.md"),
        "from-plain": str(tmp_path / "skills/from-plain/SKILL.md"),
    }
    assert {r.scope for r in skills(result)} == {Scope.REPO}


def test_loads_skills_from_all_codex_dirs_under_project_root(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".codex/skills/at-root/SKILL.md": skill_md("at-root"),
            "mid/.agents/skills/at-mid/SKILL.md": skill_md("at-mid"),
            "mid/work/.claude/skills/at-work/SKILL.md": skill_md("at-work"),
            "mid/sibling/.agents/skills/off-chain/SKILL.md": skill_md("off-chain"),
            "mid/work/below/.agents/skills/below-work/SKILL.md": skill_md("below-work"),
        },
    )
    result = scan(tmp_path / "mid" / "work", home)
    assert sorted(offered(result)) == ["at-mid", "at-root", "at-work"]


def test_skill_roots_walks_from_project_root_down(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "a/b/": ""})
    result = scan(tmp_path / "a" / "b", home)
    names = (".agents/skills", ".codex/skills", ".claude/skills", "skills")
    expected = [str(d / n) for d in (tmp_path, tmp_path / "a", tmp_path / "a" / "b") for n in names]
    assert [path for path, scope in searched(result) if scope is Scope.REPO] == expected


def test_skill_roots_repo_before_user_before_plugin(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": ""})
    plugin_skill = install_plugin(home, "plug", "1.0.0", "helper")
    result = scan(tmp_path, home)
    assert searched(result) == [
        (str(tmp_path / ".agents/skills"), Scope.REPO),
        (str(tmp_path / ".codex/skills"), Scope.REPO),
        (str(tmp_path / ".claude/skills"), Scope.REPO),
        (str(tmp_path / "skills"), Scope.REPO),
        (str(home / ".agents/skills"), Scope.USER),
        (str(home / ".codex/skills"), Scope.USER),
        (str(home / ".claude/skills"), Scope.USER),
        (str(plugin_skill.parent.parent), Scope.PLUGIN),
    ]


def test_repo_skills_search_does_not_escape_repo_root(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".agents/skills/outside/SKILL.md": skill_md("outside"),
            "repo/.git/": "",
            "repo/.agents/skills/inside/SKILL.md": skill_md("inside"),
        },
    )
    result = scan(tmp_path / "repo", home)
    assert list(offered(result)) == ["inside"]
    assert result.snapshot.find(str(tmp_path / ".agents/skills/outside/SKILL.md")) is None


def test_non_git_repo_skills_search_does_not_walk_parents(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".agents/skills/parent/SKILL.md": skill_md("parent"),
            "work/.agents/skills/here/SKILL.md": skill_md("here"),
        },
    )
    result = scan(tmp_path / "work", home)
    assert result.snapshot.project_root is None
    assert list(offered(result)) == ["here"]
    assert {path for path, scope in searched(result) if scope is Scope.REPO} == {
        str(tmp_path / "work" / name) for name in (".agents/skills", ".codex/skills", ".claude/skills", "skills")
    }


def test_loads_skills_when_cwd_is_file_in_repo(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/at-root/SKILL.md": skill_md("at-root"),
            "crate/.codex/skills/in-crate/SKILL.md": skill_md("in-crate"),
            "crate/main.rs": "fn main() {}",
        },
    )
    result = scan(tmp_path / "crate" / "main.rs", home)
    assert result.snapshot.work_dir == str(tmp_path / "crate")
    assert sorted(offered(result)) == ["at-root", "in-crate"]


def test_skill_roots_defaults_user_scope_to_home(tmp_path: Path, home: Path) -> None:
    make_workspace(
        home,
        {
            ".agents/skills/u-agents/SKILL.md": skill_md("u-agents"),
            ".codex/skills/u-codex/SKILL.md": skill_md("u-codex"),
            ".claude/skills/u-claude/SKILL.md": skill_md("u-claude"),
        },
    )
    result = scan(tmp_path, home)
    assert offered(result) == {
        "u-agents": str(home / ".agents/skills/u-agents/SKILL.md"),
        "u-codex": str(home / ".codex/skills/u-codex/SKILL.md"),
        "u-claude": str(home / ".claude/skills/u-claude/SKILL.md"),
    }
    assert {r.scope for r in skills(result)} == {Scope.USER}


def test_skill_roots_configured_dirs_replace_home_and_resolve_relative_to_work_dir(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".agents/skills/home-skill/SKILL.md": skill_md("home-skill")})
    make_workspace(
        tmp_path,
        {
            "team/team-skill/SKILL.md": skill_md("team-skill"),
            "abs/abs-skill/SKILL.md": skill_md("abs-skill"),
            "repo/.git/": "",
            "repo/sub/local/local-skill/SKILL.md": skill_md("local-skill"),
        },
    )
    dirs = ["../../team", str(tmp_path / "abs"), "local"]
    result = scan(tmp_path / "repo" / "sub", home, {"skills.dirs": dirs})
    assert offered(result) == {
        "team-skill": str(tmp_path / "team/team-skill/SKILL.md"),
        "abs-skill": str(tmp_path / "abs/abs-skill/SKILL.md"),
        "local-skill": str(tmp_path / "repo/sub/local/local-skill/SKILL.md"),
    }
    scopes = {r.name: r.scope for r in skills(result)}
    assert scopes == {"team-skill": Scope.USER, "abs-skill": Scope.USER, "local-skill": Scope.REPO}


def test_skill_roots_lists_each_path_once(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/once/SKILL.md": skill_md("once")})
    result = scan(tmp_path, home, {"skills.dirs": [".agents/skills", str(tmp_path / ".agents/skills")]})
    paths = [path for path, _ in searched(result)]
    assert len(paths) == len(set(paths))
    [resource] = skills(result)
    assert (resource.scope, resource.status, resource.warnings) == (Scope.REPO, Status.OK, ())


def test_plugins_default_on_but_off_when_dirs_overridden(tmp_path: Path, home: Path) -> None:
    install_plugin(home, "plug", "1.0.0", "helper")
    assert "plug:helper" in offered(scan(tmp_path, home))
    assert offered(scan(tmp_path, home, {"skills.dirs": ["mine"]})) == {}
    forced = scan(tmp_path, home, {"skills.dirs": ["mine"], "skills.include_plugins": True})
    assert list(offered(forced)) == ["plug:helper"]
    refused = scan(tmp_path, home, {"skills.include_plugins": False})
    assert offered(refused) == {}


def test_plugin_skills_are_namespaced_and_read_from_the_highest_version(tmp_path: Path, home: Path) -> None:
    install_plugin(home, "plug", "1.2.0", "helper")
    newest = install_plugin(home, "plug", "1.10.0", "helper")
    result = scan(tmp_path, home)
    [resource] = skills(result)
    assert (resource.name, resource.path, resource.scope) == ("plug:helper", str(newest), Scope.PLUGIN)
    assert "plugin plug: version 1.10.0 is used; older installed version(s) ignored: 1.2.0" in resource.warnings


# Scanning one container.


def test_loads_valid_skill(tmp_path: Path, home: Path) -> None:
    text = skill_md("demo", "Demonstrates things", body="# Demo\n\nSteps.\n")
    make_workspace(tmp_path, {".git/": "", ".agents/skills/demo/SKILL.md": text})
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/demo/SKILL.md")
    assert (resource.status, resource.scope, resource.name) == (Status.OK, Scope.REPO, "demo")
    assert resource.description == "Demonstrates things"
    assert resource.content == text
    assert resource.size_bytes == len(text.encode())
    assert resource.content_hash == hashlib.sha256(text.encode()).hexdigest()
    assert (resource.error, resource.warnings) == (None, ())


def test_falls_back_to_directory_name_when_skill_name_is_missing(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/folder-name/SKILL.md": skill_md(None, "no name here")})
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/folder-name/SKILL.md")
    assert (resource.status, resource.name, resource.description) == (Status.OK, "folder-name", "no name here")


def test_only_immediate_children_of_a_container_are_skills_by_default(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/top/SKILL.md": skill_md("top"),
            ".agents/skills/group/nested/SKILL.md": skill_md("nested"),
        },
    )
    assert list(offered(scan(tmp_path, home))) == ["top"]


def test_respects_max_scan_depth(tmp_path: Path, home: Path) -> None:
    six = ".agents/skills/d1/d2/d3/d4/d5/six/SKILL.md"
    seven = ".agents/skills/d1/d2/d3/d4/d5/d6/seven/SKILL.md"
    make_workspace(tmp_path, {".git/": "", six: skill_md("six"), seven: skill_md("seven")})
    assert list(offered(scan(tmp_path, home, {"skills.max_depth": 6}))) == ["six"]
    assert offered(scan(tmp_path, home, {"skills.max_depth": 5})) == {}


def test_max_depth_above_six_is_refused(tmp_path: Path, home: Path) -> None:
    with pytest.raises(ConfigError, match="skills.max_depth must be an integer from 1 to 6, not 7"):
        scan(tmp_path, home, {"skills.max_depth": 7})


def test_folder_limit_is_reported_as_an_excluded_resource_naming_the_container(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", **{f".agents/skills/s{i}/SKILL.md": skill_md(f"s{i}") for i in range(1, 6)}})
    result = scan(tmp_path, home, {"skills.max_dirs_per_root": 3})
    truncated = by_path(result, tmp_path / ".agents/skills")
    assert (truncated.kind, truncated.status, truncated.scope) == (Kind.SKILL, Status.EXCLUDED, Scope.REPO)
    assert truncated.error == "skills scan truncated after 3 directories (skills.max_dirs_per_root)"
    assert sorted(offered(result)) == ["s1", "s2"]  # the container itself is the first of the 3 folders


def test_folder_limit_counts_folders_at_every_depth_and_is_silent_when_not_reached(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/a/b/deep/SKILL.md": skill_md("deep")})
    exact = scan(tmp_path, home, {"skills.max_depth": 6, "skills.max_dirs_per_root": 4})
    assert list(offered(exact)) == ["deep"]
    assert all(r.status is not Status.EXCLUDED for r in skills(exact))
    short = scan(tmp_path, home, {"skills.max_depth": 6, "skills.max_dirs_per_root": 3})
    assert offered(short) == {}
    assert by_path(short, tmp_path / ".agents/skills").status is Status.EXCLUDED


def test_skips_hidden_and_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/.hidden/SKILL.md": skill_md("hidden"),
            ".agents/skills/group/.hidden-too/SKILL.md": skill_md("hidden-too"),
            ".agents/skills/invalid/SKILL.md": "---\nname: invalid\ndescription: never closed\n",
        },
    )
    result = scan(tmp_path, home, {"skills.max_depth": 6})
    [resource] = skills(result)
    assert resource.path == str(tmp_path / ".agents/skills/invalid/SKILL.md")
    assert (resource.status, resource.error) == (Status.INVALID, "missing YAML frontmatter delimited by ---")


def test_node_modules_is_skipped_at_every_depth(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/node_modules/SKILL.md": skill_md("node_modules"),
            ".agents/skills/tool/node_modules/dep/SKILL.md": skill_md("dep"),
            ".agents/skills/tool/kept/SKILL.md": skill_md("kept"),
        },
    )
    result = scan(tmp_path, home, {"skills.max_depth": 6})
    assert [r.name for r in skills(result)] == ["kept"]


def test_discover_passes_over_a_dir_without_skill_md_and_lists_a_lowercase_skill_md_as_not_read(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/notes/README.md": "not a skill",
            ".agents/skills/lowercase/skill.md": skill_md("lowercase"),
            ".agents/skills/dir-named-skill/SKILL.md/": "",
            ".agents/skills/loose-file.md": "a file in the container",
            ".agents/skills/real/SKILL.md": skill_md("real"),
        },
    )
    result = scan(tmp_path, home)
    assert {r.path: r.status for r in skills(result)} == {
        str(tmp_path / ".agents/skills/lowercase/skill.md"): Status.INVALID,  # no agent reads it: said, not dropped
        str(tmp_path / ".agents/skills/real/SKILL.md"): Status.OK,
    }


def test_skill_md_that_is_a_fifo_is_invalid_and_never_opened(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/pipe/": ""})
    os.mkfifo(tmp_path / ".agents/skills/pipe/SKILL.md")
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/pipe/SKILL.md")
    assert (resource.status, resource.error) == (Status.INVALID, "SKILL.md is a FIFO, not a regular file")


# Symlinks.


def test_loads_skills_via_symlinked_subdir(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "shared/linked/SKILL.md": skill_md("linked"), ".agents/skills/": ""})
    (tmp_path / ".agents/skills/linked").symlink_to(tmp_path / "shared/linked")
    result = scan(tmp_path, home)
    assert offered(result) == {"linked": str(tmp_path / ".agents/skills/linked/SKILL.md")}


def test_loads_user_skills_via_symlinked_subdir_anywhere_in_home(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"dotfiles/kept/SKILL.md": skill_md("kept"), ".agents/skills/": ""})
    (home / ".agents/skills/kept").symlink_to(home / "dotfiles/kept")
    result = scan(tmp_path, home)
    assert offered(result) == {"kept": str(home / ".agents/skills/kept/SKILL.md")}


def test_symlinked_skill_folder_escaping_the_project_is_invalid_and_never_read(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {"outside-the-roots/secret/SKILL.md": skill_md("secret"), "repo/.git/": "", "repo/.agents/skills/": ""},
    )
    link = tmp_path / "repo/.agents/skills/secret"
    link.symlink_to(tmp_path / "outside-the-roots/secret")
    result = scan(tmp_path / "repo", home)
    [resource] = skills(result)
    assert (resource.path, resource.status, resource.scope) == (str(link), Status.INVALID, Scope.REPO)
    target, root = real(tmp_path / "outside-the-roots/secret"), real(tmp_path / "repo")
    assert resource.error == f'symlink target "{target}" escapes scan root "{root}"'
    assert (resource.content, resource.content_hash, resource.name) == (None, "", None)


def test_symlinked_user_skill_escaping_home_is_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"outside-the-roots/far/SKILL.md": skill_md("far"), "repo/AGENTS.md": "rules"})
    make_workspace(home, {".agents/skills/": ""})
    (home / ".agents/skills/far").symlink_to(tmp_path / "outside-the-roots/far")
    resource = by_path(scan(tmp_path / "repo", home), home / ".agents/skills/far")
    assert (resource.status, resource.scope) == (Status.INVALID, Scope.USER)
    assert (
        resource.error
        == f'symlink target "{real(tmp_path / "outside-the-roots/far")}" escapes scan root "{real(home)}"'
    )


def test_symlinked_skill_md_escaping_the_project_is_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path, {"outside-the-roots/outside.md": skill_md("leak"), "repo/.git/": "", "repo/.agents/skills/leak/": ""}
    )
    (tmp_path / "repo/.agents/skills/leak/SKILL.md").symlink_to(tmp_path / "outside-the-roots/outside.md")
    resource = by_path(scan(tmp_path / "repo", home), tmp_path / "repo/.agents/skills/leak/SKILL.md")
    assert resource.status is Status.INVALID
    assert "escapes scan root" in (resource.error or "")
    assert resource.content is None


def test_symlinked_skill_md_inside_the_project_is_read(tmp_path: Path, home: Path) -> None:
    # Coder follows a symlinked SKILL.md (Lstat); Codex G3 would ignore it.
    make_workspace(tmp_path, {".git/": "", "docs/tool.md": skill_md("tool"), ".agents/skills/tool/": ""})
    (tmp_path / ".agents/skills/tool/SKILL.md").symlink_to(tmp_path / "docs/tool.md")
    assert offered(scan(tmp_path, home)) == {"tool": str(tmp_path / ".agents/skills/tool/SKILL.md")}


def test_broken_symlinked_skill_folder_is_unreadable(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/": ""})
    (tmp_path / ".agents/skills/gone").symlink_to(tmp_path / "nowhere")
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/gone")
    assert resource.status is Status.UNREADABLE
    assert resource.error == "symlink resolve: No such file or directory"


def test_does_not_loop_on_symlink_cycle(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/group/real/SKILL.md": skill_md("real")})
    (tmp_path / ".agents/skills/group/again").symlink_to(tmp_path / ".agents/skills")
    (tmp_path / ".agents/skills/group/real/up").symlink_to(tmp_path / ".agents/skills/group")
    result = scan(tmp_path, home, {"skills.max_depth": 6})
    [resource] = skills(result)
    assert (resource.name, resource.status) == ("real", Status.OK)


def test_loads_skills_through_visible_alias_to_hidden_directory(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "tools/.hidden/alias/SKILL.md": skill_md("alias"), ".agents/skills/": ""})
    (tmp_path / ".agents/skills/alias").symlink_to(tmp_path / "tools/.hidden/alias")
    assert offered(scan(tmp_path, home)) == {"alias": str(tmp_path / ".agents/skills/alias/SKILL.md")}


def test_deduplicates_by_path_preferring_first_root(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/shared/SKILL.md": skill_md("shared"), ".claude/skills/": ""})
    (tmp_path / ".claude/skills/shared").symlink_to(tmp_path / ".agents/skills/shared")
    result = scan(tmp_path, home)
    [resource] = skills(result)
    assert (resource.path, resource.status) == (str(tmp_path / ".agents/skills/shared/SKILL.md"), Status.OK)
    assert resource.warnings == (f"also reached via {tmp_path / '.claude/skills/shared/SKILL.md'}",)


def test_same_skill_md_through_a_symlinked_container_is_one_skill(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/one/SKILL.md": skill_md("one"), ".claude/": ""})
    (tmp_path / ".claude/skills").symlink_to(tmp_path / ".agents/skills")
    result = scan(tmp_path, home)
    [resource] = skills(result)
    assert (resource.path, resource.status) == (str(tmp_path / ".agents/skills/one/SKILL.md"), Status.OK)
    assert resource.warnings == (f"also reached via {tmp_path / '.claude/skills/one/SKILL.md'}",)


# Precedence: repo > user > plugin, names without case, first container first.


def test_discover_repo_shadows_user_and_says_so(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/review/SKILL.md": skill_md("review", "repo review")})
    make_workspace(home, {".agents/skills/Review/SKILL.md": skill_md("Review", "user review")})
    result = scan(tmp_path, home)
    winner = by_path(result, tmp_path / ".agents/skills/review/SKILL.md")
    loser = by_path(result, home / ".agents/skills/Review/SKILL.md")
    assert (winner.status, winner.description) == (Status.OK, "repo review")
    assert (loser.status, loser.scope, loser.content) == (Status.SHADOWED, Scope.USER, None)
    assert loser.error == f"shadowed by the repo skill at {winner.path}"


def test_user_shadows_plugin(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".agents/skills/mine/SKILL.md": skill_md("plug:helper", "mine")})
    plugin_skill = install_plugin(home, "plug", "1.0.0", "helper")
    result = scan(tmp_path, home)
    loser = by_path(result, plugin_skill)
    assert (loser.status, loser.scope) == (Status.SHADOWED, Scope.PLUGIN)
    assert loser.error == f"shadowed by the user skill at {home / '.agents/skills/mine/SKILL.md'}"


def test_outermost_directory_and_earlier_container_win_within_the_repo(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "root"),
            ".codex/skills/deploy/SKILL.md": skill_md("DEPLOY", "root codex"),
            "sub/.agents/skills/deploy/SKILL.md": skill_md("Deploy", "nested"),
        },
    )
    result = scan(tmp_path / "sub", home)
    assert offered(result) == {"deploy": str(tmp_path / ".agents/skills/deploy/SKILL.md")}
    reason = f"shadowed by the repo skill at {tmp_path / '.agents/skills/deploy/SKILL.md'}"
    for path in (tmp_path / ".codex/skills/deploy/SKILL.md", tmp_path / "sub/.agents/skills/deploy/SKILL.md"):
        assert (by_path(result, path).status, by_path(result, path).error) == (Status.SHADOWED, reason)


def test_disabled_names_disable_every_copy(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/lint/SKILL.md": skill_md("lint"),
            ".agents/skills/other/SKILL.md": skill_md("other"),
        },
    )
    make_workspace(home, {".agents/skills/lint/SKILL.md": skill_md("Lint")})
    result = scan(tmp_path, home, {"skills.disabled": ["LINT"]})
    for path in (tmp_path / ".agents/skills/lint/SKILL.md", home / ".agents/skills/lint/SKILL.md"):
        resource = by_path(result, path)
        assert (resource.status, resource.error, resource.content) == (
            Status.DISABLED,
            "disabled by skills.disabled",
            None,
        )
    assert list(offered(result)) == ["other"]


def test_discover_searches_nothing_when_disabled(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/any/SKILL.md": skill_md("any")})
    make_workspace(home, {".agents/skills/mine/SKILL.md": skill_md("mine")})
    install_plugin(home, "plug", "1.0.0", "helper")
    result = scan(tmp_path, home, {"skills.enabled": False})
    assert skills(result) == []
    assert searched(result) == []


# Reading and validating SKILL.md.


def test_oversize_skill_md_is_oversize_without_content(tmp_path: Path, home: Path) -> None:
    text = skill_md("big", body="x" * 500)
    make_workspace(tmp_path, {".git/": "", ".agents/skills/big/SKILL.md": text})
    result = scan(tmp_path, home, {"snapshot.max_resource_bytes": 200})
    resource = by_path(result, tmp_path / ".agents/skills/big/SKILL.md")
    size = len(text.encode())
    assert (resource.status, resource.content, resource.size_bytes) == (Status.OVERSIZE, None, size)
    assert resource.error == f"file size {size} exceeds per-resource cap of 200 bytes"
    assert resource.content_hash == hashlib.sha256(text.encode()[:200]).hexdigest()


def test_binary_skill_md_is_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".agents/skills/bin/SKILL.md": b"---\nname: bin\n---\n\x00\x01\x02"})
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/bin/SKILL.md")
    assert (resource.status, resource.error, resource.content) == (
        Status.INVALID,
        "binary file (contains NUL bytes)",
        None,
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no frontmatter at all\n", "missing YAML frontmatter delimited by ---"),
        ("---\nname: open\ndescription: never closed\n", "missing YAML frontmatter delimited by ---"),
        ("---\nname: bad\n  nested: wrong\n description: x\n---\n", "invalid YAML: mapping values are not allowed"),
        (skill_md("nodesc", None), "missing field `description`"),
    ],
    ids=["no-frontmatter", "unclosed", "invalid-yaml", "no-description"],
)
def test_discover_reports_unusable_frontmatter(tmp_path: Path, home: Path, text: str, reason: str) -> None:
    make_workspace(
        tmp_path,
        {".git/": "", ".agents/skills/bad/SKILL.md": text, ".agents/skills/good/SKILL.md": skill_md("good")},
    )
    result = scan(tmp_path, home)
    bad = by_path(result, tmp_path / ".agents/skills/bad/SKILL.md")
    assert bad.status is Status.INVALID
    assert (bad.error or "").startswith(reason)
    assert bad.content is None
    assert list(offered(result)) == ["good"]


def test_wrapped_description_is_collapsed_to_one_line(tmp_path: Path, home: Path) -> None:
    text = "---\nname: wrapped\ndescription: does things\n  carefully\n---\n"
    make_workspace(tmp_path, {".git/": "", ".agents/skills/wrapped/SKILL.md": text})
    resource = by_path(scan(tmp_path, home), tmp_path / ".agents/skills/wrapped/SKILL.md")
    assert resource.description == "does things carefully"


def test_unreadable_skill_md_is_reported_and_siblings_still_load(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/locked/SKILL.md": skill_md("locked"),
            ".agents/skills/open/SKILL.md": skill_md("open"),
        },
    )
    os.chmod(tmp_path / ".agents/skills/locked/SKILL.md", 0)
    statuses = as_unprivileged_user(tmp_path, home)
    assert statuses[str(tmp_path / ".agents/skills/locked/SKILL.md")] == ("unreadable", "Permission denied")
    assert statuses[str(tmp_path / ".agents/skills/open/SKILL.md")] == ("ok", None)


def test_unlistable_container_and_locked_skill_folder_are_reported_not_passed_over(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/open/SKILL.md": skill_md("open"),
            ".agents/skills/locked/SKILL.md": skill_md("locked"),
            ".claude/skills/shut/SKILL.md": skill_md("shut"),
        },
    )
    os.chmod(tmp_path / ".agents/skills/locked", 0)
    os.chmod(tmp_path / ".claude/skills", 0)
    statuses = as_unprivileged_user(tmp_path, home)
    assert statuses == {
        str(tmp_path / ".agents/skills/open/SKILL.md"): ("ok", None),
        str(tmp_path / ".agents/skills/locked/SKILL.md"): ("unreadable", "Permission denied"),
        str(tmp_path / ".claude/skills"): ("unreadable", "cannot list directory: Permission denied"),
    }


# The codex profile.


def test_codex_profile_reads_codex_and_agents_containers_six_levels_deep(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".codex/skills/top/SKILL.md": skill_md("top"),
            ".agents/skills/d1/d2/d3/d4/d5/deep/SKILL.md": skill_md("deep"),
            ".agents/skills/d1/d2/d3/d4/d5/d6/too-deep/SKILL.md": skill_md("too-deep"),
            ".claude/skills/claude-only/SKILL.md": skill_md("claude-only"),
            "skills/plain-only/SKILL.md": skill_md("plain-only"),
        },
    )
    make_workspace(
        home,
        {
            ".codex/skills/u-codex/SKILL.md": skill_md("u-codex"),
            ".agents/skills/u-agents/SKILL.md": skill_md("u-agents"),
            ".claude/skills/u-claude/SKILL.md": skill_md("u-claude"),
        },
    )
    install_plugin(home, "plug", "1.0.0", "helper")
    result = scan(tmp_path, home, profile="codex")
    assert sorted(offered(result)) == ["deep", "top", "u-agents", "u-codex"]
    assert [path for path, _ in searched(result)] == [
        str(tmp_path / ".codex/skills"),
        str(tmp_path / ".agents/skills"),
        str(home / ".codex/skills"),
        str(home / ".agents/skills"),
        str(home / ".codex/skills/.system"),  # the skills Codex writes there itself, scope system
    ]


def test_codex_profile_reads_user_skills_from_codex_home(tmp_path: Path, home: Path) -> None:
    codex_home = tmp_path / "codex-home"
    make_workspace(codex_home, {"skills/moved/SKILL.md": skill_md("moved")})
    make_workspace(home, {".codex/skills/default-place/SKILL.md": skill_md("default-place")})
    make_workspace(tmp_path, {"work/": ""})
    environ = isolated_environ(home, CODEX_HOME=str(codex_home))
    result = scan(tmp_path / "work", home, profile="codex", environ=environ)
    assert offered(result) == {"moved": str(codex_home / "skills/moved/SKILL.md")}


# Determinism.

_TREE: dict[str, str | bytes] = {
    ".git/": "",
    ".agents/skills/alpha/SKILL.md": skill_md("alpha"),
    ".agents/skills/Beta/SKILL.md": skill_md("dup", "first by name order"),
    ".agents/skills/gamma/SKILL.md": skill_md("dup", "second by name order"),
    ".agents/skills/zeta/SKILL.md": skill_md("dup", "third by name order"),
    ".codex/skills/broken/SKILL.md": "no frontmatter",
    ".claude/skills/delta/SKILL.md": skill_md("delta"),
    "skills/epsilon/SKILL.md": skill_md("epsilon"),
    "sub/.agents/skills/dup/SKILL.md": skill_md("dup", "nested"),
}


def test_resource_order_and_json_do_not_depend_on_the_order_entries_were_created(tmp_path: Path, home: Path) -> None:
    work = tmp_path / "repo"
    make_workspace(work, _TREE)
    first = scan(work / "sub", home).snapshot
    shutil.rmtree(work)
    make_workspace(work, dict(reversed(list(_TREE.items()))))
    second = scan(work / "sub", home).snapshot
    assert second.to_json() == first.to_json()
    assert [r.id for r in first.resources] == sorted(r.id for r in first.resources)
    dup_winners = [r.path for r in first.resources if r.name == "dup" and r.status is Status.OK]
    assert dup_winners == [str(work / ".agents/skills/Beta/SKILL.md")]


def test_a_skill_md_right_in_a_container_is_passed_over_by_default_a_skill_too_for_codex_the_only_one_for_copilot(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            ".git/objects/": "",
            ".git/refs/": "",
            ".agents/skills/SKILL.md": skill_md("top"),
            ".agents/skills/below/SKILL.md": skill_md("below"),
        },
    )
    names = {
        profile: sorted(r.name for r in scan_tree(root, home=home, profile=profile).skills if r.name)
        for profile in ("default", "codex", "copilot")
    }
    assert names["default"] == ["below"]
    assert names["codex"] == ["below", "top"]
    assert names["copilot"] == ["top"]
    unnamed = make_workspace(
        tmp_path / "unnamed", {".git/": "", ".codex/skills/SKILL.md": "---\ndescription: d\n---\n"}
    )
    [skill] = scan_tree(unnamed, home=home, profile="codex").skills
    assert (skill.name, skill.path) == ("skills", str(unnamed / ".codex/skills/SKILL.md"))  # named by its folder


# a skill folder each profile reads, and which of these bytes its agent's binary loaded (tests/realagents)
ENCODED = {
    "bom": b"\xef\xbb\xbf" + skill_md("bom", "a BOM first").encode(),
    "latin": skill_md("latin", "Caf\xe9").encode("latin-1"),
    "wide": skill_md("wide", "UTF-16").encode("utf-16"),
    "crlf": skill_md("crlf", "CRLF line ends").replace("\n", "\r\n").encode(),
}
READ_BY = {
    "default": (".agents/skills", {"bom", "latin", "wide", "crlf"}),
    "codex": (".agents/skills", {"crlf"}),
    "claude": (".claude/skills", {"bom", "latin", "crlf"}),
    "gemini": (".gemini/skills", {"latin", "crlf"}),
    "opencode": (".opencode/skills", {"bom", "latin", "crlf"}),
    "copilot": (".github/skills", {"bom", "latin", "crlf"}),
}


@pytest.mark.parametrize("profile", READ_BY)
def test_a_skill_md_in_utf16_latin1_or_after_a_bom_is_offered_only_where_the_agent_reads_it(
    tmp_path: Path, home: Path, profile: str
) -> None:
    container, loaded = READ_BY[profile]
    files = {f"{container}/{name}/SKILL.md": raw for name, raw in ENCODED.items()}
    work = make_workspace(tmp_path / "w", {".git/HEAD": "ref: refs/heads/main\n", **files})
    found = {os.path.basename(os.path.dirname(r.path)): r for r in skills(scan(work, home, profile=profile))}
    assert set(found) == set(ENCODED), "each is listed, loaded or not"
    assert {name for name, r in found.items() if r.status is Status.OK} == loaded
    for resource in found.values():
        assert resource.status in (Status.OK, Status.INVALID) and (resource.status is Status.OK) is (not resource.error)
