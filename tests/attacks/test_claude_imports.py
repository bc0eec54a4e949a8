"""Hostile ``@`` imports under the ``claude`` profile: each is listed with a reason, nothing outside is read.

Escapes point into ``outside_the_roots``: the suite's audit hook fails a test that opens
or lists anything there, so "not read" is checked, not assumed.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentcontext.resource import LoadType, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree
from tests.containment import outside_the_roots


def claude(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="claude")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def loaded(result: ScanResult) -> list[str]:
    return [f.path for f in result.project_doc().files]


def test_a_claude_md_importing_itself_is_loaded_once(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "me\n@CLAUDE.md\n@./CLAUDE.md\n"})
    result = claude(work, home)
    assert loaded(result) == [str(work / "CLAUDE.md")]
    me = by_path(result)[str(work / "CLAUDE.md")]
    assert me.status is Status.OK and me.warnings == (
        f"imports {work / 'CLAUDE.md'} again: already loaded, so not again (a file is loaded once; a cycle stops here)",
    )


def test_an_import_cycle_is_stopped_and_said_on_the_file_that_closes_it(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w", {".git/": "", "CLAUDE.md": "@a.md\n", "a.md": "a\n@b.md\n", "b.md": "@a.md\n"}
    )
    result = claude(work, home)
    assert loaded(result) == [str(work / "CLAUDE.md"), str(work / "a.md"), str(work / "b.md")]
    files = by_path(result)
    assert files[str(work / "CLAUDE.md")].warnings == files[str(work / "a.md")].warnings == ()
    assert files[str(work / "b.md")].warnings == (
        f"imports {work / 'a.md'} again: already loaded, so not again (a file is loaded once; a cycle stops here)",
    )


def test_an_import_chain_fifty_deep_stops_at_the_depth_limit_and_says_so(tmp_path: Path, home: Path) -> None:
    files = {f"d{i}.md": f"level {i}\n@d{i + 1}.md\n" for i in range(1, 50)}
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "top\n@d1.md\n", **files, "d50.md": "end\n"})
    result = claude(work, home)
    assert loaded(result) == [str(work / "CLAUDE.md"), *(str(work / f"d{i}.md") for i in range(1, 5))]
    cut = by_path(result)[str(work / "d5.md")]
    assert cut.status is Status.DISABLED and cut.content is None
    assert cut.error is not None and "import depth limit" in cut.error
    assert cut.load is not None and cut.load.chain[0] == str(work / "CLAUDE.md") and len(cut.load.chain) == 5
    assert str(work / "d6.md") not in by_path(result)  # nothing past the cut is even looked at


def test_the_depth_limit_is_configurable(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@a.md\n", "a.md": "@b.md\n", "b.md": "b\n"})
    result = scan_tree(work, home=home, profile="claude", settings={"project_doc.import_depth": 2})
    assert loaded(result) == [str(work / "CLAUDE.md"), str(work / "a.md")]


def test_an_absolute_import_outside_the_work_dir_is_listed_not_read(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": f"@{secret}\n@/etc/passwd\n"})
    result = claude(work, home)
    for path in (str(secret), "/etc/passwd"):
        resource = by_path(result)[path]
        assert resource.status is Status.DISABLED and resource.content is None and resource.size_bytes == 0
        assert resource.error is not None and "outside the work dir" in resource.error
        assert resource.load is not None and resource.load.type is LoadType.NOT_LOADED
    assert loaded(result) == [str(work / "CLAUDE.md")]


def test_an_import_through_a_symlink_leaving_the_roots_is_refused(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@link.md\n@dir/inner.md\n"})
    (work / "link.md").symlink_to(secret)
    (work / "dir").symlink_to(secret.parent)
    result = claude(work, home)
    for name in ("link.md", "dir/inner.md"):
        resource = by_path(result)[str(work / name)]
        assert resource.status in (Status.INVALID, Status.UNREADABLE) and resource.content is None
        assert resource.load is not None and resource.load.type is LoadType.NOT_LOADED
    assert loaded(result) == [str(work / "CLAUDE.md")]


def test_a_user_file_cannot_import_outside_home_and_project(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    make_workspace(home, {".claude/CLAUDE.md": f"user\n@{secret}\n@~/mine.md\n", "mine.md": "mine\n"})
    work = make_workspace(tmp_path / "w", {".git/": ""})
    result = claude(work, home)
    refused = by_path(result)[str(secret)]
    assert (
        refused.status is Status.INVALID and refused.error is not None and "outside the allowed roots" in refused.error
    )
    assert loaded(result) == [str(home / ".claude" / "CLAUDE.md"), str(home / "mine.md")]


def test_a_100_mb_import_is_listed_oversize_without_being_read_whole(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@huge.md\n"})
    with open(work / "huge.md", "wb") as fh:
        fh.truncate(100 * 1024 * 1024)  # sparse: costs no disk
    result = claude(work, home)
    huge = by_path(result)[str(work / "huge.md")]
    assert huge.status is Status.OVERSIZE and huge.content is None and huge.size_bytes == 100 * 1024 * 1024
    assert huge.load is not None and huge.load.type is LoadType.NOT_LOADED


def test_a_binary_import_is_invalid_and_says_what_claude_code_would_do(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@blob.md\n"})
    (work / "blob.md").write_bytes(b"\x7fELF\x00\x01\x02")
    blob = by_path(claude(work, home))[str(work / "blob.md")]
    assert blob.status is Status.INVALID and blob.error is not None and "NUL" in blob.error


def test_a_fifo_import_is_refused_without_blocking(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@pipe.md\n"})
    os.mkfifo(work / "pipe.md")
    pipe = by_path(claude(work, home))[str(work / "pipe.md")]
    assert pipe.status is Status.INVALID and pipe.content is None


def test_at_signs_in_addresses_and_code_import_nothing(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "CLAUDE.md": "mail ops@a.md now\n`@b.md`\n```\n@c.md\n```\n    @d.md\n",
            **{f"{n}.md": "x\n" for n in "abcd"},
        },
    )
    result = claude(work, home)
    assert loaded(result) == [str(work / "CLAUDE.md")]
    assert not any(str(work / f"{n}.md") in by_path(result) for n in "abcd")


def test_a_missing_import_is_listed_as_such(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "@gone.md\n"})
    gone = by_path(claude(work, home))[str(work / "gone.md")]
    assert gone.status is Status.UNREADABLE and gone.error is not None and "does not exist" in gone.error


def test_a_rules_folder_that_links_to_itself_ends(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", ".claude/rules/a.md": "rule\n"})
    (work / ".claude" / "rules" / "loop").symlink_to(work / ".claude" / "rules")
    assert loaded(claude(work, home)) == [str(work / ".claude" / "rules" / "a.md")]


def test_a_claude_md_above_the_project_that_links_outside_is_refused(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    above = tmp_path / "above"
    work = make_workspace(above / "repo", {".git/": "", "CLAUDE.md": "in\n"})
    (above / "CLAUDE.md").symlink_to(secret)
    result = claude(work, home)
    link = by_path(result)[str(above / "CLAUDE.md")]
    assert link.status is Status.INVALID and link.content is None
    assert loaded(result) == [str(work / "CLAUDE.md")]
