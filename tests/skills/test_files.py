"""Reading a skill's files: Codex Free's lookup, resource and package tests (codex-skills.md D),
Coder's ``validateSkillFilePath`` table, bounded reads and Codex Free's output-budget windows."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcontext.errors import NotFoundError, UnsafePathError
from agentcontext.fs.files import is_within
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.skills.files import (
    Window,
    check_file_path,
    find,
    offered,
    resolve_resource,
    window,
)
from agentcontext.skills.folder import LeavesFolderError, SkillFile, open_folder
from agentcontext.testing import make_workspace, scan_tree, skill_md


def skill(name: str, path: str = "/skills/x/SKILL.md") -> Resource:
    return Resource(Kind.SKILL, path, Scope.REPO, Status.OK, name=name, description="d")


def skill_folder(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    """A skill folder ``alpha`` with a SKILL.md and the given extra files."""
    folder = root / "skills" / "alpha"
    make_workspace(folder, {"SKILL.md": skill_md("alpha"), **(files or {})})
    return folder


def package_files(folder: str, *, limit: int | None = None) -> tuple[list[SkillFile], int]:
    """The folder's files, the folder read beneath its own parent."""
    with open_folder(folder, os.path.dirname(folder)) as opened:
        return opened.files(limit=limit)


def read_text(path: str, *, limit: int = 4 * 1024 * 1024) -> tuple[str, bool]:
    """A file's text, read through its folder."""
    folder, name = os.path.split(path)
    with open_folder(folder, folder) as opened:
        return opened.read_text([name], limit)


# Lookup by name.


def test_find_skill_exact_then_ci_then_none(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".agents/skills/Code-Review/SKILL.md": skill_md("Code-Review"),
            ".agents/skills/alpha/SKILL.md": skill_md("alpha"),
        },
    )
    skills = offered(scan_tree(tmp_path, home=home).snapshot.resources)
    assert find(skills, "Code-Review").name == "Code-Review"
    assert find(skills, "code-review").name == "Code-Review"
    assert find(skills, "  alpha ").name == "alpha"
    with pytest.raises(NotFoundError) as caught:
        find(skills, "missing")
    assert str(caught.value) == "No skill named missing. Available: Code-Review, alpha."


def test_an_exact_match_wins_over_an_earlier_case_insensitive_one() -> None:
    upper, lower = skill("DEPLOY", "/a/SKILL.md"), skill("deploy", "/b/SKILL.md")
    assert find([upper, lower], "deploy") is lower
    assert find([upper, lower], "Deploy") is upper


def test_find_says_when_no_skills_are_installed() -> None:
    with pytest.raises(NotFoundError) as caught:
        find([], "deploy")
    assert str(caught.value) == "No skill named deploy. No skills are installed."


def test_offered_keeps_ok_named_skills_in_name_order() -> None:
    broken = Resource(Kind.SKILL, "/c/SKILL.md", Scope.REPO, Status.INVALID, name="aaa")
    nameless = Resource(Kind.SKILL, "/d/SKILL.md", Scope.REPO, Status.OK)
    doc = Resource(Kind.INSTRUCTION_FILE, "/AGENTS.md", Scope.REPO, Status.OK, name="AGENTS.md")
    assert [s.name for s in offered([skill("zeta"), broken, nameless, doc, skill("beta")])] == ["beta", "zeta"]


# Resource paths (Codex Free's rules, plus hidden names and symlinks).


def test_resolve_resource_against_skill_dir(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path)
    assert resolve_resource(str(folder), "references/api.md") == str(folder / "references" / "api.md")
    assert resolve_resource(str(folder), "./scripts/run.py") == str(folder / "scripts" / "run.py")
    assert resolve_resource(str(folder), "scripts\\run.py") == str(folder / "scripts" / "run.py")
    assert resolve_resource(str(folder), ".\\scripts\\run.py") == str(folder / "scripts" / "run.py")


@pytest.mark.parametrize(
    "resource",
    [
        "../beta/SKILL.md",
        "a/../../b",
        "/etc/passwd",
        "",
        "C:\\x",
        "c:/x",
        "a//b",
        "a/./b",
        "a/",
        ".git/config",
        "sub/.env",
        "..\\..\\secret.txt",
        "\\etc\\passwd",
        "./",
        "a\0b",
    ],
)
def test_resolve_resource_refuses_to_escape(tmp_path: Path, resource: str) -> None:
    folder = skill_folder(tmp_path, {".git/config": "[core]", "sub/.env": "TOKEN=1"})
    with pytest.raises(UnsafePathError) as caught:
        resolve_resource(str(folder), resource)
    assert str(caught.value) == f"Resource must be a path inside the skill: {resource}"


def test_a_symlink_inside_the_skill_pointing_outside_is_refused(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path)
    make_workspace(
        tmp_path, {"outside-the-roots/secret.txt": "secret", "outside-the-roots/elsewhere/notes.md": "notes"}
    )
    (folder / "leak.txt").symlink_to(tmp_path / "outside-the-roots/secret.txt")
    (folder / "refs").symlink_to(tmp_path / "outside-the-roots/elsewhere")
    for resource in ("leak.txt", "refs/notes.md"):
        with pytest.raises(UnsafePathError) as caught:
            resolve_resource(str(folder), resource)
        assert str(caught.value) == f"Resource must be a path inside the skill: {resource}"


def test_a_symlink_that_stays_inside_the_skill_is_followed(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"references/api.md": "api"})
    (folder / "api.md").symlink_to(folder / "references" / "api.md")
    assert resolve_resource(str(folder), "api.md") == str(folder / "api.md")


_PIECES = st.sampled_from(
    ["..", ".", "/", "\\", ":", "\0", "C:", "leak", "inside", "fifo", ".git", "é", "\u202e", "\udc80", "~", " "]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(resource=st.lists(_PIECES | st.text(max_size=3), max_size=8).map("".join))
def test_a_resolved_resource_never_leaves_the_skill_and_nothing_is_opened(tmp_path: Path, resource: str) -> None:
    folder = tmp_path / "skills" / "alpha"
    if not folder.exists():
        skill_folder(tmp_path, {"inside/file.md": "x"})
        make_workspace(tmp_path, {"secret.txt": "secret"})
        (folder / "leak").symlink_to(tmp_path / "secret.txt")
        os.mkfifo(folder / "fifo")  # opening it would block the test: resolving must only compute paths
    try:
        path = resolve_resource(str(folder), resource)
    except UnsafePathError as exc:
        assert str(exc) == f"Resource must be a path inside the skill: {resource}"
        return
    assert is_within(os.path.realpath(path), os.path.realpath(folder))
    assert path.startswith(str(folder) + os.sep)


# Coder's read_skill_file path rules (coder.md 2.5, 8.6 TestLoadSkillFile).


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "path is required"),
        ("/abs", "absolute paths are not allowed"),
        ("/a/../b", "absolute paths are not allowed"),
        ("a/../b", "path traversal is not allowed"),
        ("..", "path traversal is not allowed"),
        ("../.git/config", "path traversal is not allowed"),
        (".git/config", "hidden file components are not allowed"),
        ("refs/.hidden", "hidden file components are not allowed"),
    ],
)
def test_check_file_path_gives_coder_s_message(path: str, message: str) -> None:
    with pytest.raises(UnsafePathError) as caught:
        check_file_path(path)
    assert str(caught.value) == message


@pytest.mark.parametrize("path", ["references/api.md", "run.py", "a/b/c.txt", "dots.in.name.md"])
def test_check_file_path_accepts_plain_relative_paths(path: str) -> None:
    check_file_path(path)


# Package listings.


def test_package_files_lists_everything_but_skill_md(tmp_path: Path) -> None:
    folder = skill_folder(
        tmp_path,
        {
            "references/api.md": "api",
            "run.py": "print()\n",
            "sub/SKILL.md": "nested",
            "deep/er/x.txt": "x",
            ".hidden": "h",
            ".git/config": "c",
            "refs/.env": "e",
        },
    )
    make_workspace(tmp_path, {"outside-the-roots/outside.txt": "secret", "outside-the-roots/outdir/a.txt": "a"})
    (folder / "link-out").symlink_to(tmp_path / "outside-the-roots/outside.txt")
    (folder / "dir-out").symlink_to(tmp_path / "outside-the-roots/outdir")
    (folder / "link-in").symlink_to(folder / "run.py")
    (folder / "broken").symlink_to(folder / "missing")
    os.mkfifo(folder / "pipe")
    files, more = package_files(str(folder))
    assert [f.path for f in files] == ["deep/er/x.txt", "link-in", "references/api.md", "run.py", "sub/SKILL.md"]
    assert more == 0
    assert {f.path: f.size for f in files}["run.py"] == len("print()\n")
    assert {f.path: f.absolute for f in files}["references/api.md"] == str(folder / "references" / "api.md")


def test_package_files_stops_at_cap(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {f"f{i}.txt": "" for i in range(10)})
    files, more = package_files(str(folder), limit=3)
    assert [f.path for f in files] == ["f0.txt", "f1.txt", "f2.txt"]
    assert more == 7


def test_the_cap_keeps_the_first_files_of_the_sorted_listing_across_folders(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"z.txt": "", "a/2.txt": "", "a/1.txt": "", "m/x.txt": ""})
    everything, _ = package_files(str(folder))
    files, more = package_files(str(folder), limit=2)
    assert [f.path for f in files] == [f.path for f in everything][:2] == ["a/1.txt", "a/2.txt"]
    assert more == 2


def test_package_files_does_not_loop_on_a_symlink_cycle(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"sub/x.txt": "x"})
    (folder / "sub" / "again").symlink_to(folder)
    files, _ = package_files(str(folder))
    assert [f.path for f in files] == ["sub/x.txt"]


def test_package_files_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"data.bin": b"\x00\x01\x02"})
    with open_folder(str(folder), str(tmp_path)) as opened:
        (item,) = opened.files()[0]
        assert opened.digest([item.path]) == "sha256:" + hashlib.sha256(b"\x00\x01\x02").hexdigest()


def test_package_files_mark_executables_without_opening_them(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"run.sh": "echo", "notes.md": "n"})
    os.chmod(folder / "run.sh", 0o755)
    files, _ = package_files(str(folder))
    assert [(f.path, f.executable) for f in files] == [("notes.md", False), ("run.sh", True)]


def test_a_skill_folder_swapped_for_a_link_out_of_its_boundary_is_refused(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path)
    outside = make_workspace(tmp_path / "outside-the-roots", {"SKILL.md": "secret", "id_rsa": "KEY"})
    shutil.rmtree(folder)
    folder.symlink_to(outside)
    with pytest.raises(LeavesFolderError), open_folder(str(folder), str(tmp_path / "skills")):
        pass
    with pytest.raises(LeavesFolderError), open_folder(str(folder), None):
        pass


def test_a_file_inside_the_skill_read_through_a_link_out_is_refused(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, {"refs/api.md": "api"})
    make_workspace(tmp_path / "outside-the-roots", {"secret.txt": "secret"})
    (folder / "leak.txt").symlink_to(tmp_path / "outside-the-roots" / "secret.txt")
    (folder / "alias").symlink_to("refs")
    with open_folder(str(folder), str(tmp_path)) as opened:
        with pytest.raises(LeavesFolderError, match="path escapes the skill directory"):
            opened.read(["leak.txt"], 100)
        assert opened.read(["alias", "api.md"], 100) == b"api"
        assert opened.listing("SKILL.md") == ["alias/", "leak.txt", "refs/"]


# Bounded reads.


def test_read_text_returns_lf_text(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.md": b"one\r\ntwo\r\n"})
    assert read_text(str(tmp_path / "a.md")) == ("one\ntwo\n", False)


def test_read_text_is_bounded_and_says_it_was_cut(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.md": "0123456789" * 3})
    assert read_text(str(tmp_path / "a.md"), limit=12) == ("012345678901", True)
    assert read_text(str(tmp_path / "a.md"), limit=30) == ("0123456789" * 3, False)


def test_read_text_refuses_binary(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.bin": b"PK\x03\x04\x00\x00"})
    with pytest.raises(UnsafePathError, match="binary file"):
        read_text(str(tmp_path / "a.bin"))


def test_read_text_of_a_fifo_fails_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        read_text(str(tmp_path / "pipe"))


def test_read_text_of_a_directory_or_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_text(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        read_text(str(tmp_path / "missing.md"))


# Windows of lines: Codex Free's output_budget.rs, exactly.


def test_whole_small_file_has_no_notice() -> None:
    assert window("a\nb\nc", max_lines=1000, max_bytes=1000) == Window("a\nb\nc", None)


def test_line_cap_windows_and_notices() -> None:
    assert window("a\nb\nc\nd", max_lines=2, max_bytes=1000) == Window(
        "a\nb", "(showing lines 1-2 of 4 — call again with offset=2 for the rest)"
    )


def test_offset_windows() -> None:
    assert window("a\nb\nc\nd", 2, max_lines=1000, max_bytes=1000) == Window("c\nd", "(showing lines 3-4 of 4)")


def test_a_window_in_the_middle_names_where_to_continue() -> None:
    assert window("a\nb\nc\nd\ne", 1, 2) == Window(
        "b\nc", "(showing lines 2-3 of 5 — call again with offset=3 for the rest)"
    )


def test_a_requested_limit_is_capped_by_the_line_budget() -> None:
    assert window("a\nb\nc\nd", 0, 50, max_lines=3) == Window(
        "a\nb\nc", "(showing lines 1-3 of 4 — call again with offset=3 for the rest)"
    )


def test_byte_cap_stops_before_the_line_that_does_not_fit() -> None:
    assert window("aaaa\nbbbb\ncccc", max_bytes=10) == Window(
        "aaaa\nbbbb", "(showing lines 1-2 of 3, cut at the byte budget — call again with offset=2 for the rest)"
    )


def test_byte_cap_on_single_huge_line() -> None:
    assert window("x" * 100, max_bytes=10) == Window("x" * 10, "(showing lines 1-1 of 1, cut at the byte budget)")


def test_an_oversized_first_line_is_cut_to_max_bytes_and_a_split_character_becomes_a_replacement() -> None:
    result = window("é" * 10 + "\nnext", max_bytes=5)
    assert result == Window(
        "éé\ufffd", "(showing lines 1-1 of 2, cut at the byte budget — call again with offset=1 for the rest)"
    )


def test_offset_past_the_end_returns_nothing_and_says_where_the_file_ends() -> None:
    assert window("a\nb\nc", 10) == Window("", "(showing lines 4-3 of 3)")


def test_limit_zero_returns_no_lines_and_points_back_at_the_same_offset() -> None:
    assert window("a\nb\nc", 0, 0) == Window("", "(showing lines 1-0 of 3 — call again with offset=0 for the rest)")


def test_a_trailing_newline_is_an_empty_last_line_and_the_whole_file_still_fits() -> None:
    assert window("a\nb\n") == Window("a\nb\n", None)


def test_the_window_that_reaches_the_end_has_no_continuation() -> None:
    assert window("a\nb\nc\nd", 2, 2) == Window("c\nd", "(showing lines 3-4 of 4)")
