"""Symbolic links that git checked out as files (``core.symlinks=false``) are told by their text,
and only a text naming something beneath the root is taken for one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcontext.fs.files import EntryKind, Reader
from agentcontext.fs.text_links import MAX_TARGET, named_target, target_text
from agentcontext.testing import make_workspace
from tests.containment import OUTSIDE, outside_the_roots

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    committer = ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *committer, *args], cwd=cwd, check=True, capture_output=True)


def linked_clone(tmp_path: Path, links: dict[str, str], files: dict[str, str]) -> Path:
    """A clone made with ``core.symlinks=false`` of a repository holding ``files`` and the links ``links``."""
    origin = make_workspace(tmp_path / "origin", files)
    for link, target in links.items():
        (origin / link).parent.mkdir(parents=True, exist_ok=True)
        (origin / link).symlink_to(target)
    git(origin, "init", "-q")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "links")
    git(tmp_path, "-c", "core.symlinks=false", "clone", "-q", str(origin), "clone")
    return tmp_path / "clone"


def test_the_files_git_writes_for_links_it_does_not_make_are_told_with_their_targets(tmp_path: Path) -> None:
    clone = linked_clone(
        tmp_path,
        {"CLAUDE.md": "AGENTS.md", ".claude/skills": "../.agents/skills", "docs/RULES.md": "../AGENTS.md"},
        {"AGENTS.md": "# rules\n", ".agents/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"},
    )
    assert not (clone / "CLAUDE.md").is_symlink()  # what the test is about: git wrote a file
    reader, root = Reader(), str(clone)
    assert named_target(reader, f"{root}/CLAUDE.md", root) == "AGENTS.md"
    assert named_target(reader, f"{root}/docs/RULES.md", root) == "../AGENTS.md"
    assert named_target(reader, f"{root}/.claude/skills", root, kinds=(EntryKind.DIRECTORY,)) == "../.agents/skills"
    assert named_target(reader, f"{root}/.claude/skills", root, kinds=(EntryKind.FILE,)) is None  # a folder, not a file
    assert named_target(reader, f"{root}/AGENTS.md", root) is None  # a real file


@pytest.mark.parametrize(
    "text",
    [
        b"Use tabs.",  # one line, but no such file
        b"AGENTS.md\n",  # git writes no newline
        b" AGENTS.md",
        b"AGENTS.md\t",
        b"AGENTS.md\x00",
        b"AGENTS\r.md",
        b"\xff\xfeA\x00",  # not UTF-8
        "AGENTS\u202e.md".encode(),  # a bidirectional control: not printable
        b"",
        b"./" * MAX_TARGET + b"AGENTS.md",  # longer than any link target
    ],
)
def test_text_that_git_would_not_write_for_a_link_is_not_taken_for_one(tmp_path: Path, text: bytes) -> None:
    root = make_workspace(tmp_path / "w", {"AGENTS.md": "# rules\n", "CLAUDE.md": text})
    assert named_target(Reader(), f"{root}/CLAUDE.md", str(root)) is None


def test_a_target_outside_the_root_or_the_file_itself_is_not_looked_at(tmp_path: Path) -> None:
    outside = make_workspace(outside_the_roots(tmp_path), {"AGENTS.md": "secret\n"})
    root = make_workspace(
        tmp_path / "w",
        {"a.md": f"../{OUTSIDE}/AGENTS.md", "b.md": str(outside / "AGENTS.md"), "c.md": "c.md", "d.md": "/etc/passwd"},
    )
    reader = Reader()
    for name in ("a.md", "b.md", "c.md", "d.md"):
        assert named_target(reader, f"{root}/{name}", str(root)) is None, name
    assert not any(OUTSIDE in path or path == "/etc/passwd" for path, _, _ in reader.observed)  # not even stated


@given(st.binary(max_size=64))
def test_a_text_taken_for_a_target_is_one_printable_line_of_utf8(data: bytes) -> None:
    text = target_text(data)
    if text is not None:
        assert text.encode() == data
        assert text.isprintable() and text == text.strip() and "\n" not in text
