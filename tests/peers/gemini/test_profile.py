"""The ``gemini`` profile: what loads, in which order, with which text (binary checks: tests/realagents)."""

from __future__ import annotations

from pathlib import Path

from agentcontext.peers.gemini.skills import gemini_skills_xml
from agentcontext.resource import Kind, LoadType, Resource, Status
from agentcontext.scan import ScanResult, skill_roots
from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.cli.test_commands import run


def gemini(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="gemini")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def sent(result: ScanResult) -> list[str]:
    return [f.path for f in result.project_doc().files]


def test_every_folder_from_the_git_root_down_to_the_work_dir_gives_its_gemini_md_in_sorted_path_order(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "GEMINI.md": "root\n",
            "AGENTS.md": "not read\n",
            "A/GEMINI.md": "A\n",
            "A/b/GEMINI.md": "b\n",
            "A/b/below/GEMINI.md": "below the work dir\n",
        },
    )
    make_workspace(tmp_path, {"GEMINI.md": "above the root\n"})
    result = gemini(root / "A" / "b", home)
    assert sent(result) == [str(root / "A/GEMINI.md"), str(root / "A/b/GEMINI.md"), str(root / "GEMINI.md")]
    assert str(tmp_path / "GEMINI.md") not in by_path(result)
    assert str(root / "AGENTS.md") not in by_path(result)


def test_without_git_only_the_work_dir_is_read(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "x", {"GEMINI.md": "x\n", "y/GEMINI.md": "y\n"})
    assert sent(gemini(work / "y", home)) == [str(work / "y/GEMINI.md")]


def test_the_global_file_comes_first_in_a_block_of_its_own(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".gemini/GEMINI.md": "\ufeffglobal  \n\n", "GEMINI.md": "not read\n"})
    work = make_workspace(tmp_path / "repo", {".git/": "", "GEMINI.md": "project\r\nline\r\n"})
    result = gemini(work, home)
    assert result.peer.wrap(result.project_doc(), str(work)) == (
        f"<loaded_context>\n--- Context from: {home}/.gemini/GEMINI.md ---\nglobal\n"
        f"--- End of Context from: {home}/.gemini/GEMINI.md ---\n</loaded_context>\n\n"
        f"<loaded_context>\n<project_context>\n--- Context from: {work}/GEMINI.md ---\nproject\r\nline\n"
        f"--- End of Context from: {work}/GEMINI.md ---\n</project_context>\n</loaded_context>"
    )


def test_an_empty_file_is_listed_not_loaded_and_a_repeated_file_once(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "repo", {".git/": "", "GEMINI.md": "the file\n", "sub/.keep": ""})
    (work / "sub" / "GEMINI.md").symlink_to("../GEMINI.md")
    make_workspace(work, {"sub/deeper/GEMINI.md": " \n\t\n"})
    result = gemini(work / "sub" / "deeper", home)
    files = by_path(result)
    assert sent(result) == [str(work / "GEMINI.md")]
    again = files[str(work / "sub/GEMINI.md")]
    assert again.status is Status.SHADOWED and again.load is not None and again.load.type is LoadType.NOT_LOADED
    empty = files[str(work / "sub/deeper/GEMINI.md")]
    assert empty.load is not None and empty.load.type is LoadType.NOT_LOADED and "empty" in (empty.load.reason or "")


def test_imports_are_expanded_inline_and_each_target_is_listed_with_its_load(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {".git/": "", "GEMINI.md": "top\n@a.md and `@b.md`\n@gone.md\n", "a.md": "a\n@GEMINI.md\n", "b.md": "b\n"},
    )
    result = gemini(work, home)
    assert result.project_doc().project_text == (
        f"--- Context from: {work}/GEMINI.md ---\ntop\n<!-- Imported from: a.md -->\na\n"
        "<!-- Imported from: GEMINI.md -->\ntop\n<!-- File already processed: a.md --> and `@b.md`\n"
        f"<!-- Import failed: gone.md - ENOENT: no such file or directory, access '{work}/gone.md' -->\n\n"
        "<!-- End of import from: GEMINI.md -->\n\n<!-- End of import from: a.md --> and `@b.md`\n"
        f"<!-- Import failed: gone.md - ENOENT: no such file or directory, access '{work}/gone.md' -->\n"
        f"--- End of Context from: {work}/GEMINI.md ---"
    )
    files = by_path(result)
    imported = files[str(work / "a.md")].load
    assert imported is not None and imported.type is LoadType.IMPORT and imported.importer == str(work / "GEMINI.md")
    gone = files[str(work / "gone.md")]
    assert gone.status is Status.UNREADABLE and gone.load is not None and gone.load.type is LoadType.NOT_LOADED
    assert str(work / "b.md") not in files  # in code: never looked at


def test_skills_come_from_the_users_folders_and_the_work_dirs_own_the_work_dirs_copy_winning(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(
        home,
        {
            ".gemini/skills/dup/SKILL.md": skill_md("dup", "user"),
            ".agents/skills/mine/SKILL.md": skill_md("mine", "user agents"),
        },
    )
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            ".gemini/skills/atroot/SKILL.md": skill_md("atroot", "not the work dir"),
            "sub/.agents/skills/b/SKILL.md": skill_md("dup", "workspace"),
            "sub/.agents/skills/a/SKILL.md": skill_md("a", "first folder, listed last"),
            "sub/.gemini/skills/bom/SKILL.md": "\ufeff" + skill_md("bom", "dropped"),
            "sub/.gemini/skills/nodesc/SKILL.md": skill_md("nodesc", None),
            "sub/.claude/skills/cl/SKILL.md": skill_md("cl", "not read"),
        },
    )
    result = gemini(root / "sub", home)
    skills = result.snapshot.of_kind(Kind.SKILL)
    assert gemini_skills_xml(skills, [p for p, _ in skill_roots(result)]) == (
        "<available_skills>\n"
        f"  <skill>\n    <name>dup</name>\n    <description>workspace</description>\n"
        f"    <location>{root}/sub/.agents/skills/b/SKILL.md</location>\n  </skill>\n"
        f"  <skill>\n    <name>mine</name>\n    <description>user agents</description>\n"
        f"    <location>{home}/.agents/skills/mine/SKILL.md</location>\n  </skill>\n"
        f"  <skill>\n    <name>a</name>\n    <description>first folder, listed last</description>\n"
        f"    <location>{root}/sub/.agents/skills/a/SKILL.md</location>\n  </skill>\n"
        "</available_skills>"
    )
    files = by_path(result)
    assert files[f"{home}/.gemini/skills/dup/SKILL.md"].status is Status.SHADOWED
    assert files[f"{root}/sub/.gemini/skills/bom/SKILL.md"].status is Status.INVALID
    assert files[f"{root}/sub/.gemini/skills/nodesc/SKILL.md"].status is Status.INVALID
    assert f"{root}/.gemini/skills/atroot/SKILL.md" not in files


def test_doc_wrap_and_skills_prompt_print_what_gemini_cli_sends_and_nothing_when_it_sends_nothing(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "repo", {".git/": "", "GEMINI.md": "rules\n", ".gemini/skills/s/SKILL.md": skill_md("s", "S")}
    )
    doc = run("doc", str(work), "--wrap", "-p", "gemini", home=home).stdout
    assert doc == (
        f"<loaded_context>\n<project_context>\n--- Context from: {work}/GEMINI.md ---\nrules\n"
        f"--- End of Context from: {work}/GEMINI.md ---\n</project_context>\n</loaded_context>"
    )
    skills = run("skills", "prompt", str(work), "-f", "gemini", "-p", "gemini", home=home).stdout
    assert skills == (
        "<available_skills>\n  <skill>\n    <name>s</name>\n    <description>S</description>\n"
        f"    <location>{work}/.gemini/skills/s/SKILL.md</location>\n  </skill>\n</available_skills>"
    )
    empty = make_workspace(tmp_path / "empty", {".git/": "", "AGENTS.md": "not gemini's\n"})
    assert run("doc", str(empty), "--wrap", "-p", "gemini", home=home).stdout == ""
    assert run("skills", "prompt", str(empty), "-f", "gemini", "-p", "gemini", home=home).stdout == ""


def test_context_file_names_come_from_the_users_settings_replaced_by_the_projects_and_gemini_md_stays(
    tmp_path: Path, home: Path
) -> None:
    make_workspace(home, {".gemini/settings.json": '{"context": {"fileName": ["USER.md"]}}', ".gemini/USER.md": "u\n"})
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "USER.md": "user's name\n",
            "GEMINI.md": "gemini\n",
            "sub/LOCAL.md": "project's name\n",
            "sub/USER.md": "replaced\n",
            "sub/.gemini/settings.json": (
                '{\n  // comment "with quotes"\n  "context": {"fileName": " LOCAL.md "} /* end */\n}\n'
            ),
        },
    )
    assert sent(gemini(work, home)) == [str(home / ".gemini/USER.md"), str(work / "GEMINI.md"), str(work / "USER.md")]
    result = gemini(work / "sub", home)
    assert sent(result) == [str(work / "GEMINI.md"), str(work / "sub/LOCAL.md")]
    local = by_path(result)[str(work / "sub/LOCAL.md")].load
    assert local is not None and local.reason == f"named by context.fileName in {work}/sub/.gemini/settings.json"
