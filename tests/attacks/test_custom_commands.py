"""A repository's custom commands (``.claude/commands``) cannot make the scan read outside it, turn
themselves on, or hand the model files beside them."""

from __future__ import annotations

from pathlib import Path

from agentcontext.mcp import tools
from agentcontext.resource import Kind, Status
from agentcontext.scan import scan_full
from agentcontext.settings.config import load_config
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, test_config

SECRET = "SECRET-6f1c"
GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}  # a repository to git


def command(description: str) -> str:
    return f"---\ndescription: {description}\n---\nbody\n"


def test_a_command_or_commands_folder_linked_out_of_the_repository_is_not_read(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(tmp_path / "outside", {"c.md": command(SECRET), "folder/d.md": command(SECRET)})
    work = make_workspace(tmp_path / "w", {**GIT, ".claude/commands/ok.md": command("fine"), "sub/": ""})
    (work / ".claude/commands/out.md").symlink_to(outside / "c.md")
    (work / ".claude/commands/group").symlink_to(outside / "folder")  # a link to a folder is not followed
    (work / "sub/.claude").mkdir()
    (work / "sub/.claude/commands").symlink_to(outside / "folder")  # the work dir's whole folder, linked out
    for profile in ("claude", "copilot"):
        snapshot = scan_tree(work / "sub", home=home, profile=profile).snapshot
        assert SECRET not in snapshot.to_json(), profile
        found = {r.path: r.status for r in snapshot.of_kind(Kind.SKILL)}
        assert found[str(work / ".claude/commands/out.md")] is Status.INVALID, profile
        assert [r.name for r in snapshot.of_kind(Kind.SKILL) if r.status is Status.OK] == ["ok"], profile


def test_a_repository_cannot_turn_commands_on_or_point_them_elsewhere(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(tmp_path / "outside", {"c.md": command(SECRET)})
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".claude/commands/x.md": command("x"),
            "agentcontext.toml": f'[skills]\ncommands = "claude"\ncommand_dirs = ["{outside}"]\n',
        },
    )
    config = load_config(work, environ=isolated_environ(home))  # the repository's agentcontext.toml read
    assert (config.skills.commands, config.skills.command_dirs) == ("off", ())
    assert any("skills.commands ignored" in warning for warning in config.warnings)
    assert SECRET not in scan_full(work, config, environ=isolated_environ(home)).snapshot.to_json()


def test_a_command_hands_out_no_file_beside_it(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", ".claude/commands/c.md": command("c"), ".claude/commands/private.txt": SECRET, "x.md": SECRET},
    )
    result = scan_full(work, test_config(work, home=home, profile="claude"), environ=isolated_environ(home))
    for resource in ("private.txt", "../../x.md", "c.md/../private.txt", "/etc/passwd"):
        read = tools.skills_read(result, {"name": "c", "resource": resource}, tools.Limits())
        assert read.error, resource
        assert SECRET not in read.text, resource


def test_a_deep_or_looping_commands_tree_ends(tmp_path: Path, home: Path) -> None:
    deep = "/".join(f"d{i}" for i in range(40))
    work = make_workspace(tmp_path / "w", {".git/": "", f".claude/commands/{deep}/x.md": command("deep")})
    (work / ".claude/commands/d0/loop").symlink_to(work / ".claude/commands")
    config = test_config(work, home=home, profile="claude", settings={"skills.max_dirs_per_root": 10})
    found = scan_full(work, config, environ=isolated_environ(home)).snapshot.of_kind(Kind.SKILL)
    assert [r.status for r in found] == [Status.EXCLUDED]
    assert found[0].error == "custom commands scan truncated after 10 directories (skills.max_dirs_per_root)"
