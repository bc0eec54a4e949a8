"""A repository's plugin manifest (Codex's ``<plugin>:<name>``) cannot make the scan read outside the repository."""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.resource import Kind
from agentcontext.testing import make_workspace, scan_tree, skill_md


def test_a_manifest_linked_out_of_the_repository_or_above_it_is_not_read(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(tmp_path / "outside", {"plugin.json": json.dumps({"name": "secret-name"})})
    make_workspace(tmp_path, {".claude-plugin/plugin.json": json.dumps({"name": "above-the-repository"})})
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", ".agents/skills/a/SKILL.md": skill_md("a"), ".agents/skills/a/.codex-plugin/": ""},
    )
    (work / ".agents/skills/a/.codex-plugin/plugin.json").symlink_to(outside / "plugin.json")
    skills = scan_tree(work, home=home, profile="codex").snapshot.of_kind(Kind.SKILL)
    assert [s.name for s in skills if s.path.startswith(str(work))] == ["a"]


def test_a_huge_or_hostile_manifest_names_nothing(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".agents/skills/a/SKILL.md": skill_md("a"),
            ".agents/skills/a/.claude-plugin/plugin.json": '{"name": "' + "x" * 100_000 + '"}',  # cut: no JSON
            ".agents/skills/b/SKILL.md": skill_md("b"),
            ".agents/skills/b/.claude-plugin/plugin.json": "[" * 100_000,  # too deep for the parser
        },
    )
    skills = scan_tree(work, home=home, profile="codex").snapshot.of_kind(Kind.SKILL)
    assert sorted(s.name or "" for s in skills if s.path.startswith(str(work))) == ["a", "b"]
