"""A tree of hostile cases: each gets its status and message, never a crash, a hang or a read outside the roots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcontext.fs.files import Reader
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.settings.profiles import PROFILES
from agentcontext.testing import make_workspace, scan_tree, skill_md
from agentcontext.wire.sync import PushRequest, validated
from tests.containment import outside_the_roots
from tests.helpers import as_unprivileged_user

BILLION_LAUGHS = """---
name: laughs
description: &d a
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &e [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
f: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
g: [*g,*g,*g,*g,*g,*g,*g,*g,*g]
---
boom
"""


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """The hostile workspace of the discovery issue, built for real on disk."""
    repo = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": b"\x00\x01\x02binary\x00garbage",
            "utf16/AGENTS.md": "UTF-16 rules\r\n".encode("utf-16"),
            "badutf8/AGENTS.md": b"ok \xc3\x28 broken",
            ".agents/skills/laughs/SKILL.md": BILLION_LAUGHS,
            ".agents/skills/long/SKILL.md": "---\n"
            + "".join(f"k{i}: v\n" for i in range(10_000))
            + "name: long\ndescription: d\n---\n",
            ".agents/skills/newline/SKILL.md": '---\nname: "new\\nline"\ndescription: "tab\\tand\\u0000nul"\n---\n',
            ".agents/skills/fine/SKILL.md": skill_md("fine"),
            "outside/secret.txt": "TOP SECRET",
        },
    )
    (repo / "huge").mkdir()
    with open(repo / "huge" / "AGENTS.md", "wb") as fh:
        fh.write(b"Rules.\n" * 10_000)
        fh.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, 70 KB of text on disk
    (repo / "CLAUDE.md").symlink_to("/etc/passwd")
    (repo / ".cursorrules").symlink_to(repo / ".cursorrules")  # a loop to itself
    (repo / ".agents" / "skills" / "loop").symlink_to(repo / ".agents" / "skills")
    (repo / ".agents" / "skills" / "escape").symlink_to(tmp_path)
    os.mkfifo(repo / ".agents" / "skills" / "fine" / "fifo")
    fifo_skill = repo / ".agents" / "skills" / "fifo-skill"
    fifo_skill.mkdir()
    os.mkfifo(fifo_skill / "SKILL.md")
    away = make_workspace(
        outside_the_roots(tmp_path),
        {"AGENTS.md": "OUTSIDE RULES", "skill/SKILL.md": skill_md("away"), ".mcp.json": '{"mcpServers": {}}'},
    )
    (repo / "linked").mkdir()
    (repo / "linked" / "AGENTS.md").symlink_to(away / "AGENTS.md")  # every name of the chain, linked away
    (repo / "linked" / "AGENTS.override.md").symlink_to(away / "AGENTS.md")
    (repo / ".mcp.json").symlink_to(away / ".mcp.json")
    (repo / ".agents" / "skills" / "away").symlink_to(away / "skill")
    (repo / ".agents" / "skills" / "fine" / "notes.md").symlink_to(away / "AGENTS.md")
    return repo


def find(result: ScanResult, path: Path) -> Resource:
    resource = result.snapshot.find(str(path))
    assert resource is not None, f"{path} is missing from the inventory"
    return resource


@pytest.fixture
def counted_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many bytes the scan asked the kernel for, per read."""
    sizes: list[int] = []
    original = os.read

    def read(fd: int, n: int) -> bytes:
        data = original(fd, n)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(os, "read", read)
    yield sizes


def test_a_binary_agents_md_is_invalid(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    binary = find(result, hostile / "AGENTS.md")
    assert (binary.status, binary.error) == (Status.INVALID, "binary file (contains NUL bytes); ignored")
    assert binary.content is None


def test_a_100_mb_agents_md_is_cut_by_the_budget_after_reading_at_most_the_resource_cap(
    hostile: Path, home: Path, counted_reads: list[int]
) -> None:
    result = scan_tree(hostile / "huge", home=home)
    huge = find(result, hostile / "huge" / "AGENTS.md")
    assert huge.size_bytes == 100 * 1024 * 1024
    assert huge.status is Status.TRUNCATED
    assert len(result.project_doc().content) == 32 * 1024
    assert sum(counted_reads) <= 2 * (64 * 1024 + 1) + 10_000


def test_a_symlink_to_etc_passwd_is_invalid_and_never_read(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    passwd = find(result, hostile / "CLAUDE.md")
    assert passwd.status is Status.INVALID
    assert passwd.error == f'symlink target "/etc/passwd" escapes scan root "{hostile}"'
    assert "root:" not in result.snapshot.to_json()


def test_a_symlink_loop_is_unreadable(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    loop = find(result, hostile / ".cursorrules")
    assert loop.status is Status.UNREADABLE
    assert (loop.error or "").startswith("symlink resolve:")


def test_a_skills_folder_linking_to_itself_ends_and_an_escape_is_reported(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home, settings={"skills.max_depth": 6})
    skills = {r.path: r for r in result.snapshot.resources if r.kind is Kind.SKILL}
    assert skills[str(hostile / ".agents" / "skills" / "fine" / "SKILL.md")].status is Status.OK
    escape = skills[str(hostile / ".agents" / "skills" / "escape")]
    assert escape.status is Status.INVALID and "escapes scan root" in (escape.error or "")
    assert not any("loop" in path for path in skills)


def test_a_fifo_is_never_opened(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    fifo = find(result, hostile / ".agents" / "skills" / "fifo-skill" / "SKILL.md")
    assert (fifo.status, fifo.error) == (Status.INVALID, "SKILL.md is a FIFO, not a regular file")


def test_a_billion_laughs_frontmatter_is_refused(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    laughs = find(result, hostile / ".agents" / "skills" / "laughs" / "SKILL.md")
    assert laughs.status is Status.INVALID
    assert laughs.error == "invalid YAML: frontmatter expands to more than 10000 values"


def test_a_10000_line_frontmatter_is_over_the_cap_and_oversize(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    long = find(result, hostile / ".agents" / "skills" / "long" / "SKILL.md")
    assert long.status is Status.OVERSIZE
    assert long.error == f"file size {long.size_bytes} exceeds per-resource cap of 65536 bytes"


def test_utf16_and_invalid_utf8_instruction_files_decode_with_warnings(hostile: Path, home: Path) -> None:
    utf16 = find(scan_tree(hostile / "utf16", home=home), hostile / "utf16" / "AGENTS.md")
    assert (utf16.status, utf16.content) == (Status.OK, "UTF-16 rules\n")
    assert "decoded from UTF-16 (byte order mark)" in utf16.warnings
    bad = find(scan_tree(hostile / "badutf8", home=home), hostile / "badutf8" / "AGENTS.md")
    assert bad.content == "ok \ufffd( broken"
    assert any(w.startswith("contains invalid UTF-8") for w in bad.warnings)


def test_names_with_newlines_and_nul_are_not_offered_as_they_are(hostile: Path, home: Path) -> None:
    result = scan_tree(hostile, home=home)
    odd = find(result, hostile / ".agents" / "skills" / "newline" / "SKILL.md")
    assert odd.name is None or "\n" not in odd.name
    assert odd.description is None or "\x00" not in odd.description


def test_unreadable_directories_are_reported_not_fatal(tmp_path: Path, home: Path) -> None:
    repo = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "root",
            "locked/AGENTS.md": "hidden",
            ".agents/skills/open/SKILL.md": skill_md("open"),
            ".claude/skills/shut/SKILL.md": skill_md("shut"),
        },
    )
    os.chmod(repo / "locked", 0)
    os.chmod(repo / ".claude" / "skills", 0)
    try:
        statuses = as_unprivileged_user(repo / "locked", home)
    finally:
        os.chmod(repo / "locked", 0o755)
        os.chmod(repo / ".claude" / "skills", 0o755)
    assert statuses[str(repo / "AGENTS.md")] == ("ok", None)
    assert statuses[str(repo / "locked" / "AGENTS.md")] == ("unreadable", "Permission denied")
    assert statuses[str(repo / ".agents" / "skills" / "open" / "SKILL.md")] == ("ok", None)
    assert statuses[str(repo / ".claude" / "skills")] == ("unreadable", "cannot list directory: Permission denied")


def test_the_whole_hostile_tree_scans_without_reading_outside_it(hostile: Path, home: Path) -> None:
    reader_reads: list[str] = []
    original = Reader.read

    def recording(self: Reader, entry: object, limit: int) -> bytes:
        reader_reads.append(getattr(entry, "real_path", ""))
        return original(self, entry, limit)  # type: ignore[arg-type]

    Reader.read = recording  # type: ignore[method-assign]
    try:
        result = scan_tree(hostile, home=home, settings={"skills.max_depth": 6})
    finally:
        Reader.read = original  # type: ignore[method-assign]
    assert all(path.startswith(str(hostile)) for path in reader_reads)
    assert "TOP SECRET" not in result.snapshot.to_json()


@pytest.mark.parametrize("profile", PROFILES)
def test_the_hostile_trees_snapshot_is_one_the_control_plane_takes_under_every_profile(
    hostile: Path, home: Path, profile: str
) -> None:
    """What a repository holds never keeps its workspace from syncing: the push contract (one resource per id, no
    text a database cannot store, within its sizes) holds for whatever the scan found."""
    snapshot = scan_tree(hostile, home=home, profile=profile).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})
