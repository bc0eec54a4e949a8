"""A repository cannot borrow the user's own-link rule, nor Codex's own settings.

Codex and Claude Code follow a link in the user's skill dirs wherever it leads (the user made
it), so the ``codex`` and ``claude`` profiles do too. A repository must not get that from us:
its links still stay inside it even when they lead through the user's linked folders, a
folder the user linked into a repository keeps the repository's links inside that folder, a
repository checked out at HOME is a repository, and its ``.codex/config.toml`` changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree, skill_md, test_config


def skills(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.resources if r.kind is Kind.SKILL and r.scope.value != "system"]


def test_a_repository_link_through_the_users_linked_skill_folder_is_refused(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"elsewhere/far/SKILL.md": skill_md("far"), "repo/.git/": "", "repo/.agents/skills/": ""})
    (home / ".agents/skills").mkdir(parents=True)
    (home / ".agents/skills/far").symlink_to(tmp_path / "elsewhere/far")
    (tmp_path / "repo/.agents/skills/far").symlink_to(home / ".agents/skills/far")
    result = scan_tree(tmp_path / "repo", home=home, profile="codex")
    repo_link = next(r for r in skills(result) if r.path == str(tmp_path / "repo/.agents/skills/far"))
    assert repo_link.status is Status.INVALID and "escapes scan root" in (repo_link.error or "")
    assert repo_link.content is None


def test_links_inside_a_repository_folder_the_user_linked_stay_inside_that_folder(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "repo/.git/": "",
            "repo/tools/tool/SKILL.md": skill_md("tool"),
            "repo/tools/other/": "",
            "elsewhere-work/": "",
            "outside-the-roots/secret.md": skill_md("secret"),
            "outside-the-roots/deep/SKILL.md": skill_md("deep"),
        },
    )
    (tmp_path / "repo/tools/tool/deeper").symlink_to(tmp_path / "outside-the-roots/deep")
    (tmp_path / "repo/tools/other/SKILL.md").symlink_to(tmp_path / "outside-the-roots/secret.md")
    for dir in (".agents/skills", ".claude/skills"):
        (home / dir).mkdir(parents=True)
        (home / dir / "tool").symlink_to(tmp_path / "repo/tools/tool")
        (home / dir / "other").symlink_to(tmp_path / "repo/tools/other")
    for profile in ("codex", "claude"):
        result = scan_tree(tmp_path / "elsewhere-work", home=home, profile=profile)
        assert {r.name for r in skills(result) if r.status is Status.OK} == {"tool"}
        refused = [r for r in skills(result) if r.status is not Status.OK]
        assert refused and all("escapes scan root" in (r.error or "") for r in refused)


def test_a_repository_checked_out_at_home_keeps_its_links_inside_it(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".git/": "", ".agents/skills/": "", ".claude/skills/": ""})
    make_workspace(tmp_path, {"outside-the-roots/far/SKILL.md": skill_md("far")})
    (home / ".agents/skills/far").symlink_to(tmp_path / "outside-the-roots/far")
    (home / ".claude/skills/far").symlink_to(tmp_path / "outside-the-roots/far")
    for profile in ("codex", "claude"):
        result = scan_tree(home, home=home, profile=profile)
        [link] = [r for r in skills(result) if r.path.endswith("/far")]
        assert link.status is Status.INVALID and "escapes scan root" in (link.error or "")


def test_a_repositorys_codex_config_toml_changes_nothing_read(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "PROJECT.md": "the repository's own pick\n",
            ".codex/config.toml": 'project_doc_fallback_filenames = ["PROJECT.md", "../secret.md"]\n'
            "project_doc_max_bytes = 1000000\n",
        },
    )
    make_workspace(tmp_path, {"secret.md": "outside the repository\n"})
    config = test_config(work, home=home, profile="codex")
    assert (config.project_doc.fallback_filenames, config.project_doc.max_bytes) == ((), 32768)
    assert scan_tree(work, home=home, profile="codex").project_doc().empty


def test_a_repository_checked_out_inside_the_users_skill_dir_keeps_its_links_inside_it(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(home, {".agents/skills/checkout/.git/": "", ".agents/skills/checkout/.agents/skills/": ""})
    work = home / ".agents/skills/checkout"
    make_workspace(tmp_path, {"outside-the-roots/far/SKILL.md": skill_md("far")})
    (work / ".agents/skills/far").symlink_to(tmp_path / "outside-the-roots/far")
    (work / "far").symlink_to(tmp_path / "outside-the-roots/far")
    result = scan_tree(work, home=home, profile="codex")
    assert [r.name for r in skills(result) if r.status is Status.OK] == []
    assert all("escapes scan root" in (r.error or "") for r in skills(result))
