"""Hostile ``@`` imports and links under the ``gemini`` profile: each is refused with Gemini CLI's own comment.

An import that leaves its root (the repository, or ``~/.gemini`` for the global file), by
``..``, an absolute path or a symlink, becomes ``<!-- Import failed: x - Path traversal
attempt -->`` in the text (what Gemini CLI itself writes for an import outside its project
root) and is listed ``not_loaded`` with why. Escapes point into ``outside_the_roots``: the
suite's audit hook fails a test that opens or lists anything there.
"""

from __future__ import annotations

from pathlib import Path

from agentcontext.resource import LoadType, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree
from tests.containment import outside_the_roots


def gemini(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="gemini")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def refused(resource: Resource) -> bool:
    load = resource.load
    return (
        resource.status is Status.INVALID
        and resource.content is None
        and load is not None
        and load.type is LoadType.NOT_LOADED
        and "path traversal" in (load.reason or "")
    )


def test_imports_leaving_the_repository_are_refused_with_gemini_clis_comment(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    work = make_workspace(
        tmp_path / "w" / "repo",
        {".git/": "", "GEMINI.md": f"@{secret}\n@../../{secret.parent.name}/secret.md\n@link.md\n@dir/secret.md\n"},
    )
    (work / "link.md").symlink_to(secret)
    (work / "dir").symlink_to(secret.parent)
    result = gemini(work, home)
    text = result.project_doc().project_text
    assert "token" not in text
    for spec in (str(secret), f"../../{secret.parent.name}/secret.md", "link.md", "dir/secret.md"):
        assert f"<!-- Import failed: {spec} - Path traversal attempt -->" in text
    files = by_path(result)
    for path in (str(secret), str(work / "link.md"), str(work / "dir/secret.md")):
        assert refused(files[path]), files[path]


def test_without_git_an_import_may_not_leave_the_work_dir(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "up.md"
    secret.write_text("token\n")
    work = make_workspace(tmp_path / "x", {"GEMINI.md": f"@../{secret.parent.name}/up.md\n@in.md\n", "in.md": "in\n"})
    text = gemini(work, home).project_doc().project_text
    assert f"<!-- Import failed: ../{secret.parent.name}/up.md - Path traversal attempt -->" in text
    assert "<!-- Imported from: in.md -->\nin\n" in text and "token" not in text


def test_a_global_file_may_import_only_inside_the_gemini_folder(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    make_workspace(
        home,
        {
            ".gemini/GEMINI.md": f"@{secret}\n@../private.md\n@mine.md\n",
            ".gemini/mine.md": "mine\n",
            "private.md": "p\n",
        },
    )
    work = make_workspace(tmp_path / "repo", {".git/": ""})
    result = gemini(work, home)
    text = result.project_doc().global_text
    assert "token" not in text and "<!-- Imported from: mine.md -->\nmine\n" in text
    assert "<!-- Import failed: ../private.md - Path traversal attempt -->" in text
    assert refused(by_path(result)[str(secret)])


def test_a_context_file_that_links_out_of_the_repository_is_not_read(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "GEMINI.md"
    secret.write_text("token\n")
    work = make_workspace(tmp_path / "repo", {".git/": ""})
    (work / "GEMINI.md").symlink_to(secret)
    result = gemini(work, home)
    linked = by_path(result)[str(work / "GEMINI.md")]
    assert linked.status is Status.INVALID and linked.load is not None and linked.load.type is LoadType.NOT_LOADED
    assert result.project_doc().files == ()


def test_an_import_chain_fifty_deep_stops_expanding_five_imports_down(tmp_path: Path, home: Path) -> None:
    files = {f"d{i}.md": f"level {i}\n@d{i + 1}.md\n" for i in range(1, 50)}
    work = make_workspace(tmp_path / "repo", {".git/": "", "GEMINI.md": "top\n@d1.md\n", **files, "d50.md": "end\n"})
    result = gemini(work, home)
    text = result.project_doc().project_text
    assert "level 5\n@d6.md" in text and "level 6" not in text
    assert str(work / "d6.md") not in by_path(result)  # nothing past the cut is even looked at


def test_a_repositorys_context_file_names_never_read_outside_it(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    make_workspace(home, {".gemini/settings.json": '{"security": {"auth": {"selectedType": "gemini-api-key"}}}\n'})
    names = f'["../{secret.parent.name}/secret.md", "settings.json", "{secret}", "NOTES.md"]'
    work = make_workspace(
        tmp_path / "repo",
        {".git/": "", ".gemini/settings.json": f'{{"context": {{"fileName": {names}}}}}', "NOTES.md": "notes\n"},
    )
    result = gemini(work, home)
    doc = result.project_doc()
    assert "token" not in doc.project_text and "selectedType" not in doc.global_text + doc.project_text
    assert [f.path for f in doc.files] == [str(work / "NOTES.md")]  # an absolute name joins below each folder
    files = by_path(result)
    escaped = files[str(secret)]
    assert escaped.status is Status.INVALID and escaped.load is not None and escaped.load.type is LoadType.NOT_LOADED
    assert str(home / ".gemini" / "settings.json") not in files  # a name only the repository chose: home not read


def test_a_settings_file_that_links_out_or_is_not_json_is_listed_and_ignored(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "settings.json"
    secret.write_text('{"context": {"fileName": "SECRET.md"}}')
    work = make_workspace(tmp_path / "repo", {".git/": "", "GEMINI.md": "g\n", ".gemini/": ""})
    (work / ".gemini" / "settings.json").symlink_to(secret)
    make_workspace(home, {".gemini/settings.json": "{not json"})
    result = gemini(work, home)
    assert [f.path for f in result.project_doc().files] == [str(work / "GEMINI.md")]
    files = by_path(result)
    for path in (str(work / ".gemini/settings.json"), str(home / ".gemini/settings.json")):
        assert files[path].status is Status.INVALID and files[path].content is None


def test_a_skill_md_right_in_a_skills_folder_that_links_out_is_listed_not_read(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "SKILL.md"
    secret.write_text("---\nname: stolen\ndescription: token\n---\n")
    (home / ".gemini" / "skills").mkdir(parents=True)
    (home / ".gemini" / "skills" / "SKILL.md").symlink_to(secret)
    work = make_workspace(tmp_path / "repo", {".git/": ""})
    result = gemini(work, home)
    linked = by_path(result)[str(home / ".gemini" / "skills" / "SKILL.md")]
    assert linked.status is Status.INVALID and linked.description is None and result.skills == ()
