"""Claude Code plugin skills: Codex Free's plugin helpers (codex-skills.md D) and the cache layout (C.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcontext.fs.files import Reader
from agentcontext.peers.claude.plugins import PluginSkills, installed, version_key
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree, skill_md


def scan_with(work_dir: Path, home: Path, settings: dict[str, Any]) -> ScanResult:
    """``scan_tree`` with dotted-key settings."""
    return scan_tree(work_dir, home=home, settings=settings)


def ordered(*versions: str) -> list[str]:
    return sorted(versions, key=version_key)


def plugin_skills(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.of_kind(Kind.SKILL) if r.scope is Scope.PLUGIN]


def test_version_key_orders_numerically() -> None:
    assert ordered("1.10.0", "1.9.0", "1.2.0", "2.0.0", "1.2.10", "1.2.9") == [
        "1.2.0",
        "1.2.9",
        "1.2.10",
        "1.9.0",
        "1.10.0",
        "2.0.0",
    ]
    assert version_key("1.10.0") > version_key("1.9.0")


@pytest.mark.parametrize("suffixed", ["1.2.0-rc1", "1.2.0-beta.2", "1.2.0+build.5", "1.2-alpha"])
def test_prerelease_or_build_suffix_ranks_below_the_plain_version(suffixed: str) -> None:
    assert version_key(suffixed) < version_key("1.2.0")
    assert version_key(suffixed) > version_key("1.1.9")


def test_prereleases_of_a_later_version_rank_above_earlier_versions() -> None:
    assert ordered("1.10.0-rc1", "1.9.0", "1.10.0") == ["1.9.0", "1.10.0-rc1", "1.10.0"]


def test_trailing_zero_parts_and_a_v_prefix_do_not_change_the_version() -> None:
    assert version_key("1.2") == version_key("1.2.0") == version_key("1.2.0.0") == version_key("v1.2.0")
    assert version_key("1") == version_key("1.0.0")
    assert version_key("1.2.1") > version_key("1.2")


@pytest.mark.parametrize(
    "commit", ["abcdef1", "4b825dc642cb", "1a2b3c4d5e6f", "0123456789abcdef0123456789abcdef01234567"]
)
def test_commit_hash_names_rank_below_numbered_versions(commit: str) -> None:
    assert version_key(commit) < version_key("0.0.1")
    assert ordered("1.0.0", commit, "0.1.0") == [commit, "0.1.0", "1.0.0"]


def test_names_that_are_not_versions_are_ordered_by_name() -> None:
    assert ordered("main", "abcdef1", "latest") == ["abcdef1", "latest", "main"]


def test_installed_picks_the_highest_version_of_each_plugin(tmp_path: Path) -> None:
    cache = make_workspace(
        tmp_path / "cache",
        {
            "market/alpha/1.9.0/skills/one/SKILL.md": skill_md("one"),
            "market/alpha/1.10.0/skills/one/SKILL.md": skill_md("one"),
            "market/alpha/1.10.0-rc1/skills/one/SKILL.md": skill_md("one"),
            "market/beta/4b825dc642cb/skills/two/SKILL.md": skill_md("two"),
            "market/beta/0.2.0/skills/two/SKILL.md": skill_md("two"),
            "other-market/gamma/1.0.0/": "",
        },
    )
    assert installed(str(cache), Reader()) == [
        PluginSkills("alpha", "1.10.0", str(cache / "market/alpha/1.10.0/skills"), ("1.9.0", "1.10.0-rc1")),
        PluginSkills("beta", "0.2.0", str(cache / "market/beta/0.2.0/skills"), ("4b825dc642cb",)),
        PluginSkills("gamma", "1.0.0", str(cache / "other-market/gamma/1.0.0/skills"), ()),
    ]


def test_installed_breaks_a_version_tie_by_name(tmp_path: Path) -> None:
    cache = make_workspace(tmp_path / "cache", {"m/p/1.2/skills/": "", "m/p/1.2.0/skills/": ""})
    assert installed(str(cache), Reader()) == [PluginSkills("p", "1.2.0", str(cache / "m/p/1.2.0/skills"), ("1.2",))]


def test_installed_skips_hidden_entries_files_and_empty_plugins(tmp_path: Path) -> None:
    cache = make_workspace(
        tmp_path / "cache",
        {
            ".staging/p/1.0.0/skills/": "",
            "m/.p/1.0.0/skills/": "",
            "m/p/.9.9.9/skills/": "",
            "m/p/1.0.0/skills/": "",
            "m/p/2.0.0": "a file, not a version folder",
            "m/empty/": "",
            "m/README.md": "not a plugin",
            "stray.json": "{}",
        },
    )
    assert installed(str(cache), Reader()) == [PluginSkills("p", "1.0.0", str(cache / "m/p/1.0.0/skills"), ())]


def test_installed_with_no_cache_is_empty(tmp_path: Path) -> None:
    assert installed(str(tmp_path / "missing"), Reader()) == []


def test_plugin_skill_is_named_plugin_colon_skill_with_plugin_scope(tmp_path: Path, home: Path) -> None:
    cache = home / ".claude" / "plugins" / "cache"
    make_workspace(
        cache,
        {
            "official/review-tools/1.2.0/skills/code-review/SKILL.md": skill_md("code-review", "reviews code"),
            "official/review-tools/1.2.0/.claude-plugin/plugin.json": '{"name": "review-tools", "version": "1.2.0"}',
        },
    )
    make_workspace(tmp_path, {".git/": ""})
    result = scan_tree(tmp_path, home=home)
    [skill] = plugin_skills(result)
    assert skill.path == str(cache / "official/review-tools/1.2.0/skills/code-review/SKILL.md")
    assert (skill.name, skill.scope, skill.status) == ("review-tools:code-review", Scope.PLUGIN, Status.OK)
    assert skill.description == "reviews code"
    assert skill.warnings == ()


def test_plugin_skills_come_from_the_highest_version_and_name_the_older_ones(tmp_path: Path, home: Path) -> None:
    cache = home / ".claude" / "plugins" / "cache"
    make_workspace(
        cache,
        {
            "m/tools/1.9.0/skills/lint/SKILL.md": skill_md("lint", "old"),
            "m/tools/1.10.0/skills/lint/SKILL.md": skill_md("lint", "new"),
            "m/tools/1.10.0-rc1/skills/lint/SKILL.md": skill_md("lint", "candidate"),
        },
    )
    make_workspace(tmp_path, {".git/": ""})
    [skill] = plugin_skills(scan_tree(tmp_path, home=home))
    assert skill.path == str(cache / "m/tools/1.10.0/skills/lint/SKILL.md")
    assert (skill.name, skill.description) == ("tools:lint", "new")
    assert skill.warnings == (
        "plugin tools: version 1.10.0 is used; older installed version(s) ignored: 1.9.0, 1.10.0-rc1",
    )


def test_plugin_skills_do_not_clash_with_a_project_skill_of_the_same_name(tmp_path: Path, home: Path) -> None:
    make_workspace(home / ".claude/plugins/cache", {"m/tools/1.0.0/skills/lint/SKILL.md": skill_md("lint")})
    make_workspace(tmp_path, {".git/": "", ".claude/skills/lint/SKILL.md": skill_md("lint")})
    result = scan_tree(tmp_path, home=home)
    skills = {(r.name, r.scope, r.status) for r in result.snapshot.of_kind(Kind.SKILL)}
    assert skills == {("lint", Scope.REPO, Status.OK), ("tools:lint", Scope.PLUGIN, Status.OK)}


def test_plugins_default_on_but_off_when_dirs_overridden(tmp_path: Path, home: Path) -> None:
    make_workspace(home / ".claude/plugins/cache", {"m/tools/1.0.0/skills/lint/SKILL.md": skill_md("lint")})
    make_workspace(tmp_path, {".git/": ""})
    assert [r.name for r in plugin_skills(scan_tree(tmp_path, home=home))] == ["tools:lint"]
    overridden = scan_with(tmp_path, home, {"skills.dirs": [str(home / "my-skills")]})
    assert plugin_skills(overridden) == []
    explicit = scan_with(tmp_path, home, {"skills.dirs": [str(home / "my-skills")], "skills.include_plugins": True})
    assert [r.name for r in plugin_skills(explicit)] == ["tools:lint"]
