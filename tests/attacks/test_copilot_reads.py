"""A repository cannot widen what the ``copilot`` profile reads.

Copilot CLI's custom instruction dirs come from the user's environment
(``COPILOT_CUSTOM_INSTRUCTIONS_DIRS``) and ``~/.copilot``: a repository's ``agentcontext.toml``
naming other folders is refused, and files, folders or ``@`` imports that link out of the
repository are listed with why, never read. Escapes point into ``outside_the_roots``: the suite's
audit hook fails a test that opens or lists anything there.
"""

from __future__ import annotations

from pathlib import Path

from agentcontext.resource import LoadType, Resource, Status
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import load_config
from agentcontext.testing import isolated_environ, make_workspace, scan_tree
from tests.containment import outside_the_roots

GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}  # a repository to git


def copilot(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="copilot")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def test_a_repositorys_config_cannot_add_custom_instruction_dirs(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path)
    (secret / "x.instructions.md").write_text("token\n")
    work = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            "AGENTS.md": "root\n",
            "agentcontext.toml": f'profile = "copilot"\n[project_doc]\ninstruction_dirs = ["{secret}"]\n',
        },
    )
    environ = isolated_environ(home)
    config = load_config(work, environ=environ)
    assert str(secret) not in config.project_doc.instruction_dirs
    result = Scanner(work, config, environ=environ).run()
    assert "token" not in result.project_doc().content
    assert all(not r.path.startswith(str(secret)) for r in result.snapshot.resources)


def test_instruction_files_and_folders_linking_out_of_the_repository_are_listed_not_read(
    tmp_path: Path, home: Path
) -> None:
    secret = outside_the_roots(tmp_path)
    (secret / "s.instructions.md").write_text("token\n")
    (secret / "AGENTS.md").write_text("token\n")
    work = make_workspace(tmp_path / "repo", {**GIT, ".github/": "", ".claude/": ""})
    (work / "AGENTS.md").symlink_to(secret / "AGENTS.md")
    (work / ".github" / "copilot-instructions.md").symlink_to(secret / "AGENTS.md")
    (work / ".github" / "instructions").symlink_to(secret)
    (work / ".claude" / "rules").symlink_to(secret)
    result = copilot(work, home)
    assert "token" not in result.project_doc().content
    files = by_path(result)
    for path in (
        work / "AGENTS.md",
        work / ".github" / "copilot-instructions.md",
        work / ".github" / "instructions",
        work / ".claude" / "rules",
    ):
        listed = files[str(path)]
        assert listed.status is Status.INVALID and listed.load is not None
        assert listed.load.type is LoadType.NOT_LOADED and "refused" in (listed.load.reason or "")


def test_an_import_leaving_the_repository_stays_text_and_is_not_read(tmp_path: Path, home: Path) -> None:
    secret = outside_the_roots(tmp_path) / "secret.md"
    secret.write_text("token\n")
    work = make_workspace(
        tmp_path / "w" / "repo",
        {**GIT, "AGENTS.md": f"@{secret}\n@../../{secret.parent.name}/secret.md\n@link.md\n@dir/secret.md\n"},
    )
    (work / "link.md").symlink_to(secret)
    (work / "dir").symlink_to(secret.parent)
    result = copilot(work, home)
    text = result.project_doc().content
    assert "token" not in text and "<imported_custom_instruction" not in text
    assert str(secret) not in by_path(result)


def test_after_a_read_a_folders_links_and_imports_out_of_the_repository_are_not_read(
    tmp_path: Path, home: Path
) -> None:
    secret = outside_the_roots(tmp_path)
    (secret / "s.instructions.md").write_text("token\n")
    (secret / "AGENTS.md").write_text("token\n")
    work = make_workspace(
        tmp_path / "repo",
        {**GIT, "AGENTS.md": "root\n", "a/CLAUDE.md": f"@{secret}/AGENTS.md, @../../{secret.name}/AGENTS.md\n"},
    )
    (work / "a" / ".github").mkdir()
    (work / "a" / ".github" / "instructions").symlink_to(secret)
    (work / "a" / "AGENTS.md").symlink_to(secret / "AGENTS.md")
    (work / "a" / "code.py").write_text("x = 1\n")
    result = copilot(work, home)
    answer = Scanner(work, result.config, environ=isolated_environ(home)).applicable([str(work / "a" / "code.py")])
    framed = "".join(result.peer.wrap_later(answer) or [])
    assert "token" not in framed and "Custom instructions from a/CLAUDE.md" in framed
    assert all("token" not in (f.resource.content or "") for f in answer.files)
    unused = {f.resource.path: f.resource.status for f in answer.not_loaded}
    assert unused[str(work / "a" / "AGENTS.md")] is Status.INVALID
    assert unused[str(work / "a" / ".github" / "instructions")] is Status.INVALID
