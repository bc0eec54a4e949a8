"""Instruction discovery: Codex's AGENTS.md tests (codex-skills.md A.4) and Codex Free's doc tests (D)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree


def instruction_files(result: ScanResult) -> list[Resource]:
    return [r for r in result.snapshot.resources if r.kind is Kind.INSTRUCTION_FILE]


def doc_paths(result: ScanResult) -> list[str]:
    return [f.path for f in result.project_doc().files]


def by_path(result: ScanResult, path: Path) -> Resource:
    resource = result.snapshot.find(str(path))
    assert resource is not None, f"{path} not in the inventory"
    return resource


def test_no_doc_file_returns_none(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": ""})
    result = scan_tree(tmp_path, home=home)
    assert result.project_doc().empty
    assert instruction_files(result) == []


def test_doc_smaller_than_limit_is_returned(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "hello world"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().content == "hello world"
    assert by_path(result, tmp_path / "AGENTS.md").status is Status.OK


def test_doc_larger_than_limit_is_truncated(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "A" * 2048})
    result = scan_tree(tmp_path, home=home, profile="codex", settings={"project_doc.max_bytes": 1024})
    assert result.project_doc().content == "A" * 1024
    resource = by_path(result, tmp_path / "AGENTS.md")
    assert resource.status is Status.TRUNCATED
    assert resource.error == "cut to 1024 of 2048 bytes by the project doc budget of 1024 bytes"
    assert result.project_doc().to_dict()["files"] == [{"path": str(tmp_path / "AGENTS.md"), "truncated": True}]


def test_total_byte_limit_truncates_later_project_docs(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "nested/AGENTS.md": "abcdef"})
    result = scan_tree(tmp_path / "nested", home=home, profile="codex", settings={"project_doc.max_bytes": 7})
    assert result.project_doc().content == "root\n\nabc"
    assert by_path(result, tmp_path / "AGENTS.md").status is Status.OK
    assert by_path(result, tmp_path / "nested" / "AGENTS.md").status is Status.TRUNCATED


def test_files_left_out_by_the_budget_are_truncated_not_silent(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "1234", "a/AGENTS.md": "5678", "a/b/AGENTS.md": "more"})
    result = scan_tree(tmp_path / "a" / "b", home=home, profile="codex", settings={"project_doc.max_bytes": 6})
    left_out = by_path(result, tmp_path / "a" / "b" / "AGENTS.md")
    assert left_out.status is Status.TRUNCATED
    assert left_out.error == "left out: the project doc budget of 6 bytes was used up by earlier files"
    assert result.project_doc().to_dict() == {
        "files": [
            {"path": str(tmp_path / "AGENTS.md"), "truncated": False},
            {"path": str(tmp_path / "a" / "AGENTS.md"), "truncated": True},
            {"path": str(tmp_path / "a" / "b" / "AGENTS.md"), "truncated": True},
        ],
        "content": "1234\n\n56",
    }


def test_project_doc_invalid_utf8_warns_and_uses_lossy_text(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": b"good \xff bad"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().content == "good \ufffd bad"
    resource = by_path(result, tmp_path / "AGENTS.md")
    assert any("invalid UTF-8" in w for w in resource.warnings)


def test_finds_doc_in_repo_root_when_git_is_a_file(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git": "gitdir: /elsewhere", "AGENTS.md": "root doc", "workspace/crate_a/x": ""})
    result = scan_tree(tmp_path / "workspace" / "crate_a", home=home, profile="codex")
    assert result.snapshot.project_root == str(tmp_path)
    assert result.project_doc().content == "root doc"


def test_zero_byte_limit_disables_docs(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "something"})
    result = scan_tree(tmp_path, home=home, profile="codex", settings={"project_doc.max_bytes": 0})
    assert result.project_doc().empty
    resource = by_path(result, tmp_path / "AGENTS.md")
    assert resource.status is Status.DISABLED
    assert resource.error == "project docs are disabled (project_doc.max_bytes = 0)"


def test_concatenates_root_and_cwd_docs(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root doc", "crate/AGENTS.md": "crate doc"})
    result = scan_tree(tmp_path / "crate", home=home, profile="codex")
    assert result.project_doc().content == "root doc\n\ncrate doc"
    assert [r.doc_order for r in instruction_files(result)] == [0, 1]


def test_project_root_markers_are_honored_for_agents_discovery(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {".codex-root": "", "AGENTS.md": "top", "repo/.git/": "", "repo/AGENTS.md": "inner"},
    )
    result = scan_tree(
        tmp_path / "repo", home=home, profile="codex", settings={"project_doc.root_markers": [".codex-root"]}
    )
    assert result.snapshot.project_root == str(tmp_path)
    assert result.project_doc().content == "top\n\ninner"


def test_agents_md_paths_preserve_symlinked_cwd(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"real/.git/": "", "real/AGENTS.md": "doc"})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    result = scan_tree(tmp_path / "link", home=home, profile="codex")
    assert result.snapshot.work_dir == str(tmp_path / "link")
    assert doc_paths(result) == [str(tmp_path / "link" / "AGENTS.md")]


def test_instruction_sources_include_global_before_agents_md_docs(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".codex/AGENTS.md": "  global rules  \n"})
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "proj doc"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().content == "global rules\n\n--- project-doc ---\n\nproj doc"
    assert doc_paths(result) == [str(home / ".codex" / "AGENTS.md"), str(tmp_path / "AGENTS.md")]


def test_keeps_existing_instructions_when_doc_missing(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".codex/AGENTS.md": "base instructions"})
    make_workspace(tmp_path, {".git/": ""})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().content == "base instructions"


def test_global_override_beats_agents_md_and_first_non_empty_wins(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".codex/AGENTS.override.md": "override", ".codex/AGENTS.md": "plain"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().global_text == "override"
    assert by_path(result, home / ".codex" / "AGENTS.md").status is Status.SHADOWED
    make_workspace(home, {".codex/AGENTS.override.md": "   \n"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().global_text == "plain"
    assert "empty or whitespace only; skipped" in by_path(result, home / ".codex" / "AGENTS.override.md").warnings


def test_codex_home_environment_variable_moves_the_global_file(tmp_path: Path, home: Path) -> None:
    codex_home = tmp_path / "elsewhere"
    make_workspace(codex_home, {"AGENTS.md": "from codex home"})
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home)}
    result = scan_tree(tmp_path, home=home, profile="codex", environ=env)
    assert result.project_doc().global_text == "from codex home"


def test_agents_local_md_preferred(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.override.md": "local", "AGENTS.md": "shared"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert doc_paths(result) == [str(tmp_path / "AGENTS.override.md")]
    shadowed = by_path(result, tmp_path / "AGENTS.md")
    assert shadowed.status is Status.SHADOWED
    assert shadowed.error == f"shadowed by {tmp_path / 'AGENTS.override.md'} (one instruction file per directory)"


def test_uses_configured_fallback_when_agents_missing(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "EXAMPLE.md": "example"})
    result = scan_tree(
        tmp_path, home=home, profile="codex", settings={"project_doc.fallback_filenames": ["EXAMPLE.md"]}
    )
    assert result.project_doc().content == "example"


def test_agents_md_preferred_over_fallbacks(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "agents", "CLAUDE.md": "claude", ".cursorrules": "cursor"})
    result = scan_tree(tmp_path, home=home)
    assert result.project_doc().content == "agents"
    assert by_path(result, tmp_path / "CLAUDE.md").status is Status.SHADOWED
    assert by_path(result, tmp_path / ".cursorrules").status is Status.SHADOWED


def test_default_profile_falls_back_to_claude_md_then_cursorrules(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "CLAUDE.md": "claude", ".cursorrules": "cursor", "sub/.cursorrules": "c2"})
    result = scan_tree(tmp_path / "sub", home=home)
    assert result.project_doc().content == "claude\n\nc2"


def test_codex_profile_has_no_fallbacks(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "CLAUDE.md": "claude"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().empty
    assert instruction_files(result) == []


def test_agents_md_directory_is_ignored(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md/": "", "CLAUDE.md": "claude"})
    result = scan_tree(tmp_path, home=home)
    assert result.project_doc().content == "claude"
    listed = by_path(result, tmp_path / "AGENTS.md")
    assert (listed.status, listed.error) == (Status.INVALID, "a directory, not a file; ignored")


def test_agents_md_special_file_is_ignored(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": ""})
    os.mkfifo(tmp_path / "AGENTS.md")
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert result.project_doc().empty
    listed = by_path(result, tmp_path / "AGENTS.md")
    assert (listed.status, listed.error) == (Status.INVALID, "a FIFO, not a regular file; ignored")


def test_override_directory_falls_back_to_agents_md_file(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.override.md/": "", "AGENTS.md": "plain"})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert doc_paths(result) == [str(tmp_path / "AGENTS.md")]


def test_doc_paths_searches_only_work_dir_without_marker(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"AGENTS.md": "above", "work/AGENTS.md": "here"})
    result = scan_tree(tmp_path / "work", home=home, profile="codex")
    assert result.snapshot.project_root is None
    assert doc_paths(result) == [str(tmp_path / "work" / "AGENTS.md")]


def test_empty_marker_list_disables_the_upward_walk(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "sub/AGENTS.md": "sub"})
    result = scan_tree(tmp_path / "sub", home=home, settings={"project_doc.root_markers": []})
    assert doc_paths(result) == [str(tmp_path / "sub" / "AGENTS.md")]


def test_doc_paths_stops_at_project_root(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"AGENTS.md": "outside", "repo/.git/": "", "repo/AGENTS.md": "inside"})
    result = scan_tree(tmp_path / "repo", home=home)
    assert doc_paths(result) == [str(tmp_path / "repo" / "AGENTS.md")]


def test_doc_paths_honours_configured_markers_and_fallbacks(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"package.json": "{}", "CONTRIBUTING.md": "contrib", "pkg/AGENTS.md": "agents"})
    result = scan_tree(
        tmp_path / "pkg",
        home=home,
        profile="codex",
        settings={"project_doc.root_markers": ["package.json"], "project_doc.fallback_filenames": ["CONTRIBUTING.md"]},
    )
    assert doc_paths(result) == [str(tmp_path / "CONTRIBUTING.md"), str(tmp_path / "pkg" / "AGENTS.md")]


def test_load_doc_skips_whitespace_only_without_spending_budget(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "   \n\n  ", "sub/AGENTS.md": "12345"})
    result = scan_tree(tmp_path / "sub", home=home, profile="codex", settings={"project_doc.max_bytes": 5})
    assert result.project_doc().content == "12345"
    assert doc_paths(result) == [str(tmp_path / "sub" / "AGENTS.md")]
    blank = by_path(result, tmp_path / "AGENTS.md")
    assert blank.status is Status.OK
    assert "empty or whitespace only; skipped without spending the doc budget" in blank.warnings


def test_load_doc_counts_bytes_not_chars(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "ééé"})
    result = scan_tree(tmp_path, home=home, profile="codex", settings={"project_doc.max_bytes": 4})
    assert result.project_doc().content == "éé"


def test_a_cut_inside_a_character_decodes_to_the_replacement_character(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "aé"})
    result = scan_tree(tmp_path, home=home, profile="codex", settings={"project_doc.max_bytes": 2})
    assert result.project_doc().content == "a\ufffd"
    assert not any("invalid UTF-8" in w for w in by_path(result, tmp_path / "AGENTS.md").warnings)


def test_load_doc_defaults_to_32kib(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "x" * 40_000})
    result = scan_tree(tmp_path, home=home, profile="codex")
    assert len(result.project_doc().content) == 32 * 1024


def test_a_huge_agents_md_still_contributes_its_first_budget_bytes(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "y" * 200_000})
    result = scan_tree(tmp_path, home=home, profile="codex")
    resource = by_path(result, tmp_path / "AGENTS.md")
    assert resource.status is Status.TRUNCATED
    assert resource.size_bytes == 200_000
    assert result.project_doc().content == "y" * 32 * 1024


@pytest.mark.parametrize(
    "encoded",
    [
        b"Line one\nLine two\n",
        b"\xef\xbb\xbf" + b"Line one\nLine two\n",
        b"Line one\r\nLine two\r\n",
        b"Line one\rLine two\r",
        "Line one\nLine two\n".encode("utf-16"),
        "\ufeffLine one\r\nLine two\r\n".encode("utf-16-be"),
    ],
    ids=["utf8", "utf8-bom", "crlf", "cr", "utf16-le-bom", "utf16-be-bom"],
)
def test_bom_crlf_and_utf16_decode_to_the_same_text(tmp_path: Path, home: Path, encoded: bytes) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": encoded})
    result = scan_tree(tmp_path, home=home)
    assert by_path(result, tmp_path / "AGENTS.md").content == "Line one\nLine two\n"


@pytest.mark.parametrize("profile", ["codex", "coder"])
def test_a_utf16_agents_md_is_invalid_under_codex_which_reads_it_as_utf8_and_decoded_elsewhere(
    tmp_path: Path, home: Path, profile: str
) -> None:
    # what PowerShell's `>` writes; Codex 0.171.0 sends it as UTF-8, its BOM two U+FFFD and its NUL bytes kept
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "Use tabs.\n".encode("utf-16")})
    found = by_path(scan_tree(tmp_path, home=home, profile=profile), tmp_path / "AGENTS.md")
    if profile == "codex":
        assert (found.status, found.content, found.warnings) == (Status.INVALID, None, ())
        assert found.error == (
            "UTF-16 (byte order mark): Codex reads it as UTF-8, NUL bytes and all, so its text arrives garbled;"
            " not loaded: save it as UTF-8"
        )
    else:
        assert (found.status, found.content) == (Status.OK, "Use tabs.\n")


def test_unreadable_file_is_reported_and_other_docs_still_load(tmp_path: Path, home: Path) -> None:
    from tests.helpers import as_unprivileged_user

    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "sub/AGENTS.md": "secret"})
    os.chmod(tmp_path / "sub" / "AGENTS.md", 0)
    statuses = as_unprivileged_user(tmp_path / "sub", home)
    assert statuses[str(tmp_path / "sub" / "AGENTS.md")] == ("unreadable", "Permission denied")
    assert statuses[str(tmp_path / "AGENTS.md")] == ("ok", None)


def test_a_file_that_vanishes_between_listing_and_reading_is_skipped(tmp_path: Path, home: Path) -> None:
    from agentcontext.fs.files import Reader
    from agentcontext.instructions import chain as instructions

    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "sub/AGENTS.md": "gone soon"})
    original = Reader.read

    def vanish_then_read(self: Reader, entry: object, limit: int) -> bytes:
        path = getattr(entry, "real_path", "")
        if path.endswith(os.path.join("sub", "AGENTS.md")):
            os.unlink(path)
        return original(self, entry, limit)  # type: ignore[arg-type]

    Reader.read = vanish_then_read  # type: ignore[method-assign]
    try:
        result = scan_tree(tmp_path / "sub", home=home)
    finally:
        Reader.read = original  # type: ignore[method-assign]
    assert result.project_doc().content == "root"
    gone = by_path(result, tmp_path / "sub" / "AGENTS.md")
    assert (gone.status, gone.error) == (Status.UNREADABLE, "No such file or directory")
    assert instructions.discover is not None


def test_symlinked_agents_md_inside_the_project_is_read(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "docs/AGENTS.md": "linked doc"})
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "docs" / "AGENTS.md")
    result = scan_tree(tmp_path, home=home)
    assert result.project_doc().content == "linked doc"


def test_symlinked_agents_md_escaping_the_project_is_invalid_and_never_read(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"secret.txt": "TOKEN", "repo/.git/": "", "repo/CLAUDE.md": "fallback"})
    (tmp_path / "repo" / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    result = scan_tree(tmp_path / "repo", home=home)
    escaped = by_path(result, tmp_path / "repo" / "AGENTS.md")
    assert escaped.status is Status.INVALID
    assert escaped.content is None and escaped.content_hash == ""
    assert "escapes scan root" in (escaped.error or "")
    assert result.project_doc().content == "fallback"
