"""``agentcontext agents``: each agent's view side by side, and ``doc``/``skills prompt`` for Claude Code."""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.cli.test_commands import run
from tests.helpers import AGENT_VIEWS


def workspace(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": "claude rules\n@notes.md\n",
            "notes.md": "notes\n",
            "AGENTS.md": "agents rules\n",
            ".claude/rules/py.md": "---\npaths: src/**/*.py\n---\npython rule\n",
            "src/pkg/CLAUDE.md": "package rules\n",
            ".claude/skills/deploy/SKILL.md": skill_md("deploy", "Ship it"),
        },
    )


def test_agents_shows_each_agents_loads_and_why_not_side_by_side(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    done = run("agents", str(work), "--json", "--path", "src/pkg/x.py", home=home)
    assert done.returncode == 0, done.stderr
    views = {v["profile"]: v for v in json.loads(done.stdout)["agents"]}
    assert list(views) == ["codex", "claude", "gemini", "opencode", "copilot", "cursor", "coder", "default"]
    assert [r["path"] for r in views["codex"]["loads"]] == [str(work / "AGENTS.md")]
    assert [r["path"] for r in views["claude"]["loads"]] == [str(work / "CLAUDE.md"), str(work / "notes.md")]
    not_loaded = {r["path"]: r["reason"] for r in views["claude"]["not_loaded"]}
    assert "only when no CLAUDE.md" in not_loaded[str(work / "AGENTS.md")]
    assert views["claude"]["budget_bytes"] is None and views["codex"]["budget_bytes"] == 32768
    assert [s["name"] for s in views["claude"]["skills"]] == ["deploy"]
    assert views["codex"]["skills"] == []
    assert {r["path"] for r in views["claude"]["when_opened"]} == {
        str(work / ".claude/rules/py.md"),
        str(work / "src/pkg/CLAUDE.md"),
    }
    assert views["codex"]["when_opened"] == []
    assert views["claude"]["when_started_there"] == []


def test_agents_path_names_the_folder_file_a_session_started_there_loads_as_doc_for_does(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "r", {".git/": "", "AGENTS.md": "root\n", "sub/AGENTS.md": "sub\n", "sub/x.py": ""}
    )
    views = {
        v["profile"]: v
        for v in json.loads(run("agents", str(work), "--json", "--path", "sub/x.py", home=home).stdout)["agents"]
    }
    for profile in ("codex", "coder", "default"):
        assert views[profile]["when_opened"] == []
        assert [r["path"] for r in views[profile]["when_started_there"]] == [str(work / "sub" / "AGENTS.md")]
    assert [r["path"] for r in views["claude"]["when_opened"]] == [str(work / "sub" / "AGENTS.md")]
    assert (
        "Contents of " + str(work / "sub" / "AGENTS.md") in run("doc", str(work), "--for", "sub/x.py", home=home).stdout
    )
    text = run("agents", str(work), "--path", "sub/x.py", home=home).stdout
    assert "loads nothing more in the session; a session started in its folder also loads the 1 marked there" in text


def test_a_file_shadowed_as_the_fallback_but_imported_is_listed_once_as_loaded_with_the_fallback_said(
    tmp_path: Path, home: Path
) -> None:
    # This project's own set-up: CLAUDE.md is "@AGENTS.md", so Claude Code loads AGENTS.md by import while the same
    # file is also the AGENTS.md fallback it does not take. One file is one resource (a snapshot repeating an id is
    # one the control plane refuses): loaded, the fallback said in its warnings.
    work = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "@AGENTS.md\n", "AGENTS.md": "agents rules\n"})
    done = run("agents", str(work), "--json", home=home)
    assert done.returncode == 0, done.stderr
    claude = next(v for v in json.loads(done.stdout)["agents"] if v["profile"] == "claude")
    agents_md = str(work / "AGENTS.md")
    assert [(r["path"], r["load"]["type"]) for r in claude["loads"]] == [
        (str(work / "CLAUDE.md"), "startup"),
        (agents_md, "import"),
    ]
    assert claude["not_loaded"] == []
    [resource] = [r for r in scan_tree(work, home=home, profile="claude").snapshot.resources if r.path == agents_md]
    assert resource.warnings == (
        "also looked at on its own: shadowed: AGENTS.md is read only when no CLAUDE.md is found up to / "
        f"(found {work}/CLAUDE.md)",
    )
    table = run("agents", str(work), home=home).stdout
    claude_table = table.split("Claude Code", 1)[1].split("Gemini CLI", 1)[0]
    cells = [[cell.strip() for cell in line.split("│")] for line in claude_table.splitlines() if "│" in line]
    assert [(row[1], row[2]) for row in cells if row[2]] == [("loads", "CLAUDE.md"), ("loads", "AGENTS.md")]


def test_a_file_that_loads_later_is_marked_later_not_as_never_loaded(tmp_path: Path, home: Path) -> None:
    table = run("agents", str(workspace(tmp_path)), home=home).stdout
    claude_table = table.split("Claude Code", 1)[1].split("Gemini CLI", 1)[0]
    cells = [[cell.strip() for cell in line.split("│")] for line in claude_table.splitlines() if "│" in line]
    assert [(row[1], row[2]) for row in cells if row[2]] == [
        ("loads", "CLAUDE.md"),
        ("loads", "notes.md"),
        ("later", ".claude/rules/py.md"),  # path-scoped: when a matching file is read
        ("not", "AGENTS.md"),  # the fallback, not taken
        ("later", "src/pkg/CLAUDE.md"),  # on demand: when Claude Code works under src/pkg
    ]


def test_agents_help_shows_the_views_own_flags() -> None:
    done = run("agents", "--help")
    assert done.returncode == 0 and "--path" in done.stdout and "agents [OPTIONS]" in done.stdout
    assert "--workspace" not in done.stdout


def test_the_workspace_agents_old_spelling_still_works_with_a_deprecation_note(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'control.db'}"
    old = run("agents", "create", "--workspace", "box", "--name", "dev", "--db", db, "--json")
    assert old.returncode == 0, old.stderr
    assert "`agents create` is now `workspace-agents create`" in old.stderr
    assert json.loads(old.stdout)["workspace"] == "box"
    new = run("workspace-agents", "rotate", "--workspace", "box", "--name", "dev", "--db", db, "--json")
    assert new.returncode == 0 and new.stderr == ""
    assert json.loads(new.stdout)["id"] == json.loads(old.stdout)["id"]
    help_text = run("workspace-agents", "create", "--help").stdout
    assert "--workspace" in help_text and "--path" not in help_text


def test_agents_show_the_views_old_spelling_still_shows_the_views(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    shown = run("agents", "show", str(work), "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    assert [v["profile"] for v in json.loads(shown.stdout)["agents"]] == list(AGENT_VIEWS)


def test_doc_wrap_and_skills_prompt_render_claude_codes_text(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path)
    doc = run("doc", str(work), "--wrap", "-p", "claude", home=home).stdout
    assert doc == (
        "<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. "
        "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n"
        f"Contents of {work / 'CLAUDE.md'} (project instructions, checked into the codebase):\n\n"
        "claude rules\n@notes.md\n\n"
        f"Contents of {work / 'notes.md'} (project instructions, checked into the codebase):\n\nnotes\n"
        "</system-reminder>"
    )  # byte for byte what Claude Code sends: piped, nothing is added, not even a final newline
    skills = run("skills", "prompt", str(work), "-f", "claude", "-p", "claude", home=home).stdout
    assert skills == "- deploy: Ship it"
