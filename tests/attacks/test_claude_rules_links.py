"""Claude Code's ``.claude/rules`` folders that are links or hold links, and special files among the rules.

A repository's rules folder linked out of the project once made the folder its own boundary,
so the outside rules were read and loaded (found by the swap race in
``test_file_swap_races.py``). Escapes point into ``outside_the_roots``: the suite's audit hook
fails a test that opens or lists anything there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcontext.resource import Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree
from tests.containment import outside_the_roots

SECRET = "OUTSIDE-RULE-SECRET"


def claude(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="claude")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def test_a_project_rules_folder_linked_out_of_the_project_is_listed_as_refused_and_not_read(
    tmp_path: Path, home: Path
) -> None:
    outside = make_workspace(outside_the_roots(tmp_path), {"rules/secret.md": f"{SECRET}\n"})
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "x\n", ".claude/.keep": ""})
    (work / ".claude" / "rules").symlink_to(outside / "rules", target_is_directory=True)
    result = claude(work, home)
    rules = by_path(result)[str(work / ".claude" / "rules")]
    assert rules.status is Status.INVALID and "escapes" in (rules.error or "")
    assert SECRET not in result.snapshot.to_json()


def test_a_rules_folder_above_the_project_linked_out_of_its_folder_is_refused(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(outside_the_roots(tmp_path), {"rules/secret.md": f"{SECRET}\n"})
    above = make_workspace(tmp_path / "above", {".claude/.keep": ""})
    (above / ".claude" / "rules").symlink_to(outside / "rules", target_is_directory=True)
    work = make_workspace(above / "repo", {".git/": "", "CLAUDE.md": "x\n"})
    result = claude(work, home)
    rules = by_path(result)[str(above / ".claude" / "rules")]
    assert rules.status is Status.INVALID and "escapes" in (rules.error or "")
    assert SECRET not in result.snapshot.to_json()


def test_a_rules_folder_above_the_project_linked_within_its_folder_is_read(tmp_path: Path, home: Path) -> None:
    above = make_workspace(tmp_path / "above", {"shared/team.md": "team rule\n", ".claude/.keep": ""})
    (above / ".claude" / "rules").symlink_to(above / "shared", target_is_directory=True)
    work = make_workspace(above / "repo", {".git/": "", "CLAUDE.md": "x\n"})
    assert str(above / ".claude" / "rules" / "team.md") in [f.path for f in claude(work, home).project_doc().files]


@pytest.mark.timeout(30)
def test_a_fifo_and_a_link_out_among_the_rules_are_listed_with_their_reasons_without_being_opened(
    tmp_path: Path, home: Path
) -> None:
    outside = make_workspace(outside_the_roots(tmp_path), {"secret.md": f"{SECRET}\n"})
    work = make_workspace(tmp_path / "w", {".git/": "", "CLAUDE.md": "x\n", ".claude/rules/ok.md": "fine rule\n"})
    rules = work / ".claude" / "rules"
    os.mkfifo(rules / "pipe.md")  # opening it for reading would block the scan
    (rules / "out.md").symlink_to(outside / "secret.md")
    result = claude(work, home)
    found = by_path(result)
    assert found[str(rules / "ok.md")].status is Status.OK
    assert found[str(rules / "pipe.md")].status is Status.INVALID and "FIFO" in (
        found[str(rules / "pipe.md")].error or ""
    )
    assert found[str(rules / "out.md")].status is Status.INVALID and "escapes" in (
        found[str(rules / "out.md")].error or ""
    )
    assert SECRET not in result.snapshot.to_json()
