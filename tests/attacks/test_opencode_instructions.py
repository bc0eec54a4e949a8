"""A repository's ``opencode.json`` cannot make the ``opencode`` profile read outside the repository.

OpenCode itself reads whatever a project's ``instructions`` name (``/etc/...``, ``../x``, ``~/x``);
we list such entries, refused, and read nothing of them.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.resource import Status
from agentcontext.testing import make_workspace, scan_tree


def test_a_repositorys_instructions_never_read_outside_it(tmp_path: Path, home: Path) -> None:
    secret = make_workspace(tmp_path / "outside-the-roots", {"secret.md": "secret\n"})
    make_workspace(home, {"private.md": "the user's\n"})
    patterns = [str(secret / "secret.md"), "../outside-the-roots/secret.md", "~/private.md", "inside.md"]
    work = make_workspace(
        tmp_path / "repo",
        {".git/": "", "opencode.json": json.dumps({"instructions": patterns}), "inside.md": "inside\n"},
    )
    result = scan_tree(work, home=home, profile="opencode")
    doc = result.peer.wrap(result.project_doc(), str(work))
    assert doc == f"Instructions from: {work}/inside.md\ninside\n"
    resources = {r.path: r for r in result.snapshot.resources}
    for refused in (str(secret / "secret.md"), str(home / "private.md")):
        assert resources[refused].status is Status.INVALID and "repository's config" in (resources[refused].error or "")
        assert resources[refused].content is None


def test_a_repositorys_instructions_link_out_is_refused(tmp_path: Path, home: Path) -> None:
    secret = make_workspace(tmp_path / "outside-the-roots", {"secret.md": "secret\n"})
    work = make_workspace(tmp_path / "repo", {".git/": "", "opencode.json": json.dumps({"instructions": ["*.md"]})})
    (work / "link.md").symlink_to(secret / "secret.md")
    result = scan_tree(work, home=home, profile="opencode")
    assert result.peer.wrap(result.project_doc(), str(work)) == ""
    link = {r.path: r for r in result.snapshot.resources}[str(work / "link.md")]
    assert link.status is Status.INVALID and link.content is None


def test_a_repository_without_git_has_its_instructions_matched_in_the_work_dir_only(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"up.md": "above the work dir\n"})
    work = make_workspace(tmp_path / "plain", {"opencode.json": json.dumps({"instructions": ["up.md"]})})
    result = scan_tree(work, home=home, profile="opencode")
    assert result.peer.wrap(result.project_doc(), str(work)) == ""


def test_a_repositorys_config_linked_to_a_file_outside_is_listed_not_read(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(tmp_path / "outside-the-roots", {"opencode.json": json.dumps({"instructions": ["x.md"]})})
    work = make_workspace(tmp_path / "repo", {".git/": "", "x.md": "x\n"})
    (work / "opencode.json").symlink_to(outside / "opencode.json")
    result = scan_tree(work, home=home, profile="opencode")
    assert result.peer.wrap(result.project_doc(), str(work)) == ""
    config = {r.path: r for r in result.snapshot.resources}[str(work / "opencode.json")]
    assert config.status is Status.INVALID and "OpenCode's config, not read" in (config.error or "")
