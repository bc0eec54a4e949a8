"""Hostile links under the ``cursor`` profile: a rules folder, a rule or a nested AGENTS.md leading out.

Each is listed with why and never read: escapes point into ``outside_the_roots``, which the
suite's audit hook fails a test for opening or listing.
"""

from __future__ import annotations

from pathlib import Path

from agentcontext.resource import LoadType, Status
from agentcontext.scan import Scanner
from agentcontext.settings.config import load_config
from agentcontext.testing import make_workspace, scan_tree
from tests.containment import outside_the_roots

ALWAYS = "---\nalwaysApply: true\n---\n"


def test_a_rule_file_linking_out_of_the_repository_is_invalid_and_unread(tmp_path: Path, home: Path) -> None:
    outside = outside_the_roots(tmp_path)
    (outside / "secret.mdc").write_text(ALWAYS + "SECRET\n", encoding="utf-8")
    root = make_workspace(tmp_path / "repo", {".git/": "", ".cursor/rules/": ""})
    (root / ".cursor/rules/leak.mdc").symlink_to(outside / "secret.mdc")
    result = scan_tree(root, home=home, profile="cursor")
    (leak,) = [r for r in result.snapshot.resources if r.path.endswith("leak.mdc")]
    assert leak.status is Status.INVALID and leak.load is not None and leak.load.type is LoadType.NOT_LOADED
    assert "SECRET" not in result.project_doc().content


def test_a_rules_folder_that_is_a_link_out_is_listed_not_walked(tmp_path: Path, home: Path) -> None:
    outside = outside_the_roots(tmp_path)
    (outside / "a.mdc").write_text(ALWAYS + "SECRET\n", encoding="utf-8")
    root = make_workspace(tmp_path / "repo", {".git/": "", ".cursor/": ""})
    (root / ".cursor/rules").symlink_to(outside, target_is_directory=True)
    result = scan_tree(root, home=home, profile="cursor")
    listed = {r.path: r for r in result.snapshot.resources}
    assert listed[str(root / ".cursor/rules")].status is Status.INVALID
    assert "SECRET" not in result.project_doc().content


def test_a_nested_agents_md_linking_out_is_not_applied_to_files_below_it(tmp_path: Path, home: Path) -> None:
    outside = outside_the_roots(tmp_path)
    (outside / "AGENTS.md").write_text("SECRET\n", encoding="utf-8")
    root = make_workspace(tmp_path / "repo", {".git/": "", "pkg/code.py": ""})
    (root / "pkg/AGENTS.md").symlink_to(outside / "AGENTS.md")
    scanner = Scanner(root, load_config(root, environ={"HOME": str(home)}, overrides={"profile": "cursor"}))
    answer = scanner.applicable([str(root / "pkg/code.py")])
    assert answer.files == ()
    (refused,) = answer.not_loaded
    assert refused.resource.path == str(root / "pkg/AGENTS.md") and refused.resource.status is Status.INVALID
