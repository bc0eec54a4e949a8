"""The ``claude`` profile and the ``load`` field; the real binary checks are in tests/realagents."""

from __future__ import annotations

import os
from pathlib import Path

from agentcontext.peers.claude.skills import claude_skill_lines
from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.scan import Scanner, ScanResult, skill_roots
from agentcontext.snapshot import Snapshot, aggregate_hash
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md, test_config
from tests.helpers import backdate


def claude(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="claude")


def loads(result: ScanResult) -> dict[str, LoadType]:
    return {r.path: r.load.type for r in result.snapshot.resources if r.load is not None}


def test_every_resource_says_how_it_loads(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "CLAUDE.md": "top\n@notes.md\n",
            "notes.md": "notes\n",
            ".claude/rules/py.md": "---\npaths:\n  - src/**/*.py\n  - lib/**\n---\npython\n",
            "pkg/CLAUDE.md": "nested\n",
            "AGENTS.md": "agents\n",
        },
    )
    result = claude(work, home)
    assert loads(result) == {
        str(work / "CLAUDE.md"): LoadType.STARTUP,
        str(work / "notes.md"): LoadType.IMPORT,
        str(work / ".claude/rules/py.md"): LoadType.PATH_SCOPED,
        str(work / "pkg/CLAUDE.md"): LoadType.ON_DEMAND,
        str(work / "AGENTS.md"): LoadType.NOT_LOADED,
    }
    by_path = {r.path: r for r in result.snapshot.resources}
    assert by_path[str(work / "notes.md")].load == Load(
        LoadType.IMPORT, importer=str(work / "CLAUDE.md"), chain=(str(work / "CLAUDE.md"),)
    )
    rule = by_path[str(work / ".claude/rules/py.md")].load
    assert rule is not None and rule.globs == ("src/**/*.py", "lib")
    agents = by_path[str(work / "AGENTS.md")]
    assert agents.status is Status.SHADOWED and "only when no CLAUDE.md" in (agents.error or "")


def test_the_load_travels_in_the_snapshot_json(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@a.md\n", "a.md": "a\n"})
    snapshot = claude(work, home).snapshot
    data = snapshot.to_dict()
    imported = next(r for r in data["resources"] if r["path"].endswith("a.md"))
    assert imported["load"] == {
        "type": "import",
        "importer": str(work / "CLAUDE.md"),
        "chain": [str(work / "CLAUDE.md")],
    }
    assert Snapshot.from_dict(data) == snapshot


def test_the_load_never_enters_the_aggregate_hash() -> None:
    plain = Resource(Kind.INSTRUCTION_FILE, "/w/AGENTS.md", Scope.PROJECT, Status.OK, 3, "ab" * 32)
    loaded = plain._replace(load=Load(LoadType.STARTUP))
    assert aggregate_hash([plain]) == aggregate_hash([loaded])
    assert "load" not in plain.to_dict()


def test_there_is_no_doc_budget_and_hidden_text_is_still_reported(tmp_path: Path, home: Path) -> None:
    big = "x" * 50_000 + "\n<!-- hidden instruction -->\nzero\u200bwidth\n"
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": big})
    result = claude(work, home)
    resource = result.snapshot.resources[0]
    assert resource.status is Status.OK and resource.content is not None
    assert "hidden instruction" not in resource.content and "x" * 50_000 in resource.content
    assert any("HTML comment" in w for w in resource.warnings)
    assert any("invisible character" in w for w in resource.warnings)


def test_agents_md_loads_only_when_the_whole_walk_has_no_claude_md(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w" / "repo", {".git/": "", "AGENTS.md": "agents\n"})
    assert [f.path for f in claude(work, home).project_doc().files] == [str(work / "AGENTS.md")]
    (work.parent / "CLAUDE.md").write_text("above the repo\n")
    assert [f.path for f in claude(work, home).project_doc().files] == [str(work.parent / "CLAUDE.md")]


def test_claude_skills_are_named_by_folder_and_the_users_copy_wins(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".claude/skills/dup/SKILL.md": skill_md("dup", "mine")})
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/skills/dup/SKILL.md": skill_md("dup", "theirs"),
            ".claude/skills/folder/SKILL.md": skill_md("other", "named differently"),
        },
    )
    result = claude(work, home)
    assert {(s.name, s.description, s.scope) for s in result.skills} == {
        ("dup", "mine", Scope.USER),
        ("folder (other)", "named differently", Scope.REPO),
    }


def test_claude_lists_a_frontmatter_name_beside_its_folder_only_while_no_other_skill_answers_to_it(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(home, {".claude/skills/Shared/SKILL.md": skill_md("shared", "user")})
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/skills/shared/SKILL.md": skill_md("shared", "project"),
            ".claude/skills/MixedCase/SKILL.md": skill_md("mixedcase", "case only"),
            ".claude/skills/alpha/SKILL.md": skill_md("beta", "named as another folder"),
            ".claude/skills/beta/SKILL.md": skill_md("gamma", "named otherwise"),
            ".claude/skills/p1/SKILL.md": skill_md("same", "first of one name"),
            ".claude/skills/p2/SKILL.md": skill_md("same", "second of one name"),
        },
    )
    result = claude(work, home)
    lines = claude_skill_lines(result.skills, [path for path, _ in skill_roots(result)])
    assert lines == [
        "- Shared: user",
        "- alpha: named as another folder",
        "- beta (gamma): named otherwise",
        "- MixedCase (mixedcase): case only",
        "- p1 (same): first of one name",
        "- p2: second of one name",
        "- shared: project",
    ]


def test_codex_lists_every_copy_of_a_name_and_says_so(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".agents/skills/dup/SKILL.md": skill_md("dup", "user")})
    work = make_workspace(tmp_path / "w", {".git/": "", ".agents/skills/dup/SKILL.md": skill_md("dup", "repo")})
    result = scan_tree(work, home=home, profile="codex")
    copies = [s for s in result.skills if s.name == "dup"]
    assert len(copies) == 2
    assert all(any("no de-duplication" in w for w in s.warnings) for s in copies)


def test_codex_keeps_bytes_as_they_are(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": ""})
    (work / "AGENTS.md").write_bytes(b"\xef\xbb\xbfline\r\nnext\r\n")
    codex = scan_tree(work, home=home, profile="codex").project_doc().content
    default = scan_tree(work, home=home).project_doc().content
    assert (codex, default) == ("\ufeffline\r\nnext\r\n", "line\nnext")


def test_a_codex_repo_skill_link_leaving_the_repo_names_what_codex_would_do(tmp_path: Path, home: Path) -> None:
    elsewhere = make_workspace(tmp_path / "elsewhere", {"linked/SKILL.md": skill_md("linked", "x")})
    work = make_workspace(tmp_path / "w", {".git/": "", ".agents/skills/.keep": ""})
    (work / ".agents" / "skills" / "linked").symlink_to(elsewhere / "linked")
    result = scan_tree(work, home=home, profile="codex")
    link = next(r for r in result.snapshot.resources if r.path.endswith("linked"))
    assert link.status is Status.INVALID and "Codex would follow this link" in (link.error or "")


def _settled_scanner(work: Path, home: Path, root: Path) -> Scanner:
    """A claude scanner over a tree older than the racy window, its first pass done and a rescan a no-op."""
    backdate(root, 3600.0)
    env = isolated_environ(home)
    scanner = Scanner(work, test_config(work, home=home, environ=env, profile="claude"), environ=env)
    first = scanner.run()
    assert scanner.run() is first
    return scanner


def test_a_claude_folder_appearing_anywhere_on_the_walk_up_is_seen_by_the_next_pass(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w" / "repo", {".git/": "", "CLAUDE.md": "root\n", "a/b/x.txt": ""}) / "a" / "b"
    scanner = _settled_scanner(work, home, tmp_path)
    for folder in (work.parent, tmp_path / "w"):  # inside the project, then above it
        make_workspace(folder, {".claude/rules/new.md": f"rule of {folder.name}\n", ".claude/CLAUDE.md": "dot\n"})
        backdate(tmp_path, 3600.0)
        paths = {r.path: r.load for r in scanner.run().snapshot.resources}
        assert paths[str(folder / ".claude" / "rules" / "new.md")] == Load(LoadType.STARTUP)
        assert paths[str(folder / ".claude" / "CLAUDE.md")] == Load(LoadType.STARTUP)
    assert scanner.full_passes == 3


def test_a_file_appearing_in_a_quiet_folder_of_the_walk_up_is_seen_though_its_name_is_not_restated(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(tmp_path / "w" / "repo", {".git/": "", "AGENTS.md": "agents\n", "a/b/x.txt": ""}) / "a" / "b"
    scanner = _settled_scanner(work, home, tmp_path)
    found = (tmp_path / "w" / "CLAUDE.local.md", work.parent / "CLAUDE.md", work / "AGENTS.md", work / ".git")
    for step, path in enumerate(found, 1):
        path.write_text(f"{path.parent.name}\n")
        past = os.stat(tmp_path).st_mtime - 600  # the new file and its folder's change look old (not racy):
        os.utime(path, (past, past))  # only the folder's stat differs from the last pass
        os.utime(path.parent, (past + step, past + step))
        result = scanner.run()
        if path.name == ".git":  # a root marker moves the project root
            assert result.layout.project_root == str(work)
        else:  # AGENTS.md is shadowed by the CLAUDE.md
            assert {r.path: r.status for r in result.snapshot.resources}.get(str(path)) in (Status.OK, Status.SHADOWED)
    make_workspace(work, {".claude/skills/demo/SKILL.md": skill_md("demo")})  # below a name it lacked
    past = os.stat(tmp_path).st_mtime - 600
    for entry in (".claude/skills/demo/SKILL.md", ".claude/skills/demo", ".claude/skills", ".claude", "."):
        os.utime(work / entry, (past - 9, past - 9))
    assert "demo" in {r.name for r in scanner.run().skills}
    (work / ".claude" / "CLAUDE.md").write_text("dot\n")  # in a folder that exists: its own stat shows it
    os.utime(work / ".claude" / "CLAUDE.md", (past - 9, past - 9))
    os.utime(work / ".claude", (past - 8, past - 8))
    assert str(work / ".claude" / "CLAUDE.md") in [f.path for f in scanner.run().project_doc().files]
    assert scanner.full_passes == 7


def test_a_busy_project_folder_keeps_its_own_stats_and_does_not_turn_rescans_into_full_passes(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(tmp_path / "w" / "repo", {".git/": "", "CLAUDE.md": "root\n", "a/x.txt": ""}) / "a"
    backdate(tmp_path, 3600.0)
    (work.parent / "scratch").write_text("")  # the project folder changed a moment ago (racy)
    env = isolated_environ(home)
    scanner = Scanner(work, test_config(work, home=home, environ=env, profile="claude"), environ=env)
    first = scanner.run()
    assert scanner.run() is first
    assert scanner.full_passes == 1
    (work.parent / "CLAUDE.local.md").write_text("local\n")  # its names are still stated one by one
    assert str(work.parent / "CLAUDE.local.md") in [f.path for f in scanner.run().project_doc().files]
