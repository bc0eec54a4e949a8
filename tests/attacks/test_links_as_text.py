"""A file that looks like a link checked out as a file (its whole text a path) can name anything: the scan looks
the path up only beneath the root the file was read from, never reads or follows it, and echoes no hidden text."""

from __future__ import annotations

from pathlib import Path

from agentcontext.resource import Kind, Status
from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.containment import OUTSIDE, outside_the_roots

SECRET = "SECRET-41d9"


def test_a_path_out_of_the_repository_in_a_file_is_neither_looked_up_nor_read(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(
        outside_the_roots(tmp_path), {"AGENTS.md": SECRET, "skills/x/SKILL.md": skill_md("x", SECRET)}
    )
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            "CLAUDE.md": f"../{OUTSIDE}/AGENTS.md",
            "AGENTS.md": str(outside / "AGENTS.md"),
            ".claude/skills": str(outside / "skills"),
            ".agents/skills/linked": f"../../../{OUTSIDE}/skills/x",
            ".mcp.json": "/etc/passwd",
        },
    )
    for profile in ("default", "claude", "codex"):
        result = scan_tree(work, home=home, profile=profile)
        text = result.snapshot.to_json()
        assert SECRET not in text and "checked out as a file" not in text, profile
        assert not [r for r in result.snapshot.of_kind(Kind.SKILL) if r.status is Status.OK], profile


def test_a_text_link_is_never_followed_the_file_stays_what_the_agent_reads(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "private/notes.md", "private/notes.md": SECRET})
    [claude] = scan_tree(work, home=home, profile="claude").snapshot.of_kind(Kind.INSTRUCTION_FILE)
    assert claude.content == "private/notes.md"  # named in a warning, not loaded in its place
    assert SECRET not in scan_tree(work, home=home, profile="claude").snapshot.to_json()
    assert any('holds only "private/notes.md"' in w for w in claude.warnings)


def test_hidden_characters_in_a_would_be_target_are_not_echoed_into_a_warning(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", "CLAUDE.md": "AGENTS.md\u202e\u200b", "AGENTS.md\u202e\u200b": "x", "AGENTS.md": "rules\n"},
    )
    [*_, claude] = scan_tree(work, home=home, profile="claude").snapshot.of_kind(Kind.INSTRUCTION_FILE)
    assert not any("checked out as a file" in w for w in claude.warnings)
    assert not any("\u202e" in w for w in claude.warnings if not w.startswith("hidden text"))
