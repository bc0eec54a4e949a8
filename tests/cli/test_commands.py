"""The CLI as a user runs it: a real subprocess for exit codes, Typer's runner for output."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import get_args

from typer.testing import CliRunner

from agentcontext.cli import app, skills_cmd
from agentcontext.settings.config import Validation
from agentcontext.settings.profiles import PROFILES
from agentcontext.testing import make_workspace, skill_md
from tests.helpers import unprivileged

runner = CliRunner()


def run(*args: str, cwd: Path | None = None, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "agentcontext", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


def repo(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "# Root\nuse pytest\n",
            "CLAUDE.md": "claude rules",
            "pkg/AGENTS.md": "pkg rules",
            ".agents/skills/good/SKILL.md": skill_md("good", "Does good things"),
            ".agents/skills/bad/SKILL.md": "no frontmatter\n",
        },
    )


def test_scan_prints_a_table_with_status_and_reason_for_every_file(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = run("scan", str(root / "pkg"), home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "CLAUDE.md" in out and "shadowed" in out
    assert "missing YAML frontmatter delimited by ---" in out
    assert "6 resources" in out or "resources (" in out


def test_scan_json_is_the_snapshot_contract(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    data = json.loads(run("scan", str(root), "--json", home=home).stdout)
    assert set(data) == {
        "version",
        "aggregate_hash",
        "work_dir",
        "project_root",
        "profile",
        "payload_bytes",
        "error",
        "resources",
    }
    assert data["work_dir"] == str(root)
    for resource in data["resources"]:
        assert {"id", "kind", "path", "scope", "status", "size_bytes", "content_hash", "error", "warnings"} <= set(
            resource
        )
        assert os.path.isabs(resource["path"])
        assert ("content" in resource) == (resource["status"] in ("ok", "truncated"))
    skills = [r for r in data["resources"] if r["kind"] == "skill"]
    assert {r["name"] for r in skills if r["status"] == "ok"} == {"good"}


def test_scan_check_exits_1_naming_each_resource_that_needs_fixing(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    failed = run("scan", str(root), "--check", home=home)
    assert failed.returncode == 1
    bad = root / ".agents" / "skills" / "bad" / "SKILL.md"
    assert f"check: {bad} is invalid: " in failed.stderr
    clean = make_workspace(tmp_path / "clean", {".git/": "", "AGENTS.md": "fine"})
    assert run("scan", str(clean), "--check", home=home).returncode == 0


def test_scan_check_passes_a_shadowed_file_unless_strict(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "r", {".git/": "", "AGENTS.md": "rules", "CLAUDE.md": "older rules"})
    statuses = {
        Path(r["path"]).name: r["status"]
        for r in json.loads(run("scan", str(root), "--json", home=home).stdout)["resources"]
    }
    assert statuses["CLAUDE.md"] == "shadowed"
    assert run("scan", str(root), "--check", home=home).returncode == 0
    strict = run("scan", str(root), "--check", "--strict", home=home)
    assert strict.returncode == 1
    assert f"check: {root / 'CLAUDE.md'} is shadowed" in strict.stderr
    alone = run("scan", str(root), "--strict", home=home)  # a stricter --check, not a flag ignored without it
    assert alone.returncode == 1 and f"check: {root / 'CLAUDE.md'} is shadowed" in alone.stderr
    no_window = run("skills", "prompt", str(root), "-f", "codex", "--context-window", "0", home=home)
    assert no_window.returncode == 2 and "--context-window" in no_window.stderr


def test_a_missing_directory_or_bad_config_exits_2_with_one_line(tmp_path: Path, home: Path) -> None:
    missing = run("scan", str(tmp_path / "absent"), home=home)
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"agentcontext: error: work dir does not exist: {tmp_path / 'absent'}"
    root = repo(tmp_path)
    (home / ".config/agentcontext").mkdir(parents=True)
    (home / ".config/agentcontext/config.toml").write_text("[skills]\nvalidation = 'strict'\n", encoding="utf-8")
    bad = run("scan", str(root), home=home)
    assert bad.returncode == 2
    assert "skills.validation must be one of lenient, codex, spec, coder" in bad.stderr


def test_a_bad_repository_config_is_named_on_stderr_and_the_scan_goes_on(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    (root / "agentcontext.toml").write_text("[skills]\nvalidation = 'strict'\n", encoding="utf-8")
    result = run("scan", str(root), home=home)
    assert result.returncode == 0
    assert "skills.validation ignored: skills.validation must be one of lenient, codex, spec, coder" in result.stderr


def test_doc_prints_the_exact_project_doc_and_json_contract(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    text = run("doc", str(root / "pkg"), home=home, cwd=root).stdout
    assert text == "# Root\nuse pytest\n\npkg rules"  # exact: piped, not even a final newline is added
    data = json.loads(run("doc", str(root / "pkg"), "--json", "--profile", "codex", home=home).stdout)
    assert data == {
        "files": [
            {"path": str(root / "AGENTS.md"), "truncated": False},
            {"path": str(root / "pkg" / "AGENTS.md"), "truncated": False},
        ],
        "content": "# Root\nuse pytest\n\n\npkg rules",
    }


def test_doc_wrap_uses_codex_s_wrapper(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    text = run("doc", str(root), "--wrap", "--profile", "codex", home=home).stdout
    assert text.startswith(f"# AGENTS.md instructions for {root}\n\n<INSTRUCTIONS>\n# Root\n")
    assert text.endswith("</INSTRUCTIONS>")


def test_explain_says_why_claude_md_is_ignored(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = run("explain", "CLAUDE.md", cwd=root, home=home)
    assert result.returncode == 1
    assert "is ignored because another file wins: shadowed" in result.stdout
    assert f"shadowed by {root / 'AGENTS.md'}" in result.stdout
    used = run("explain", "AGENTS.md", cwd=root, home=home)
    assert used.returncode == 0
    assert "position 1 in the project doc" in used.stdout


def test_explain_points_at_the_work_dir_for_files_outside_the_chain(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"other/AGENTS.md": "other", "pkg/x.py": ""})
    result = run("explain", "../other/AGENTS.md", "--json", cwd=root / "pkg", home=home)
    data = json.loads(result.stdout)
    assert data["used"] is False
    assert data["summary"] == "is not read: it is not in a directory between the project root and the work dir"
    assert f"pass --work-dir {root / 'other'}" in data["details"][1]


def test_explain_says_a_nested_agents_md_loads_when_the_agent_works_there(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"other/AGENTS.md": "other rules", "other/x.py": ""})
    nested = run("explain", "other/AGENTS.md", "--json", cwd=root, home=home)
    assert nested.returncode == 0
    data = json.loads(nested.stdout)
    assert (data["used"], data["summary"]) == (True, "is loaded on demand")
    assert data["resource"]["load"]["type"] == "on_demand"
    code = run("explain", "other/x.py", cwd=root, home=home)
    assert code.returncode == 0
    assert f"on demand  {root / 'other' / 'AGENTS.md'}" in code.stdout
    assert f"startup    {root / 'AGENTS.md'}" in code.stdout


def test_explain_names_the_profile_rule_for_a_name_it_does_not_read(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "r", {".git/": "", "CLAUDE.md": "x"})
    result = run("explain", "CLAUDE.md", "--profile", "codex", cwd=root, home=home)
    assert "CLAUDE.md is not an instruction file name in the codex profile" in result.stdout
    assert "project_doc.fallback_filenames" in result.stdout


def test_skills_validate_uses_spec_rules_and_exits_1_on_any_error(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    skills = root / ".agents" / "skills"
    result = run("skills", "validate", str(skills / "good"), str(skills / "bad"), "--json", home=home)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"path": str(skills / "good"), "valid": True, "errors": [], "warnings": [], "validation": "spec"},
        {
            "path": str(skills / "bad"),
            "valid": False,
            "errors": ["SKILL.md must start with YAML frontmatter (---)"],
            "warnings": [],
            "validation": "spec",
        },
    ]
    ok = run("skills", "validate", str(skills / "good"), home=home)
    assert (ok.returncode, ok.stdout) == (0, f"Valid skill: {skills / 'good'}\n")
    assert ok.stderr == "(checked with the spec rules: --validation chooses)\n"


def test_skills_list_and_scan_name_the_rules_their_skills_were_checked_with(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    listed = run("skills", "list", str(root), home=home).stdout
    assert "skills checked with the lenient rules (skills.validation, from the default profile)" in listed
    make_workspace(root, {".claude/skills/c/SKILL.md": skill_md("c", "Claude's")})
    claude = run("skills", "list", str(root), "-p", "claude", home=home).stdout
    assert "skills checked with the claude rules (skills.validation, from the claude profile)" in claude
    env_run = subprocess.run(
        [sys.executable, "-m", "agentcontext", "scan", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "HOME": str(home), "AGENTCONTEXT_SKILLS_VALIDATION": "spec"},
        timeout=60,
    )
    assert "skills checked with the spec rules (skills.validation, from environment)" in env_run.stdout


def test_skills_validate_takes_every_validation_mode_the_setting_takes(tmp_path: Path, home: Path) -> None:
    folder = make_workspace(tmp_path, {"noname/SKILL.md": "---\ndescription: Does things\n---\nbody\n"}) / "noname"
    claude = run("skills", "validate", str(folder), "--validation", "claude", home=home)
    assert (claude.returncode, claude.stdout) == (0, f"Valid skill: {folder}\n")  # Claude Code names it by its folder
    spec = run("skills", "validate", str(folder), "--validation", "spec", home=home)
    assert spec.returncode == 1 and "Missing required field in frontmatter: name" in spec.stderr
    assert {m.value for m in skills_cmd.Mode} == set(get_args(Validation))


def test_skills_validate_prints_a_yaml_error_on_its_own_lines(tmp_path: Path, home: Path) -> None:
    text = "---\nname: bad\ndescription: x\n  - y: [\n---\nbody\n"
    folder = make_workspace(tmp_path, {"bad/SKILL.md": text}) / "bad"
    result = run("skills", "validate", str(folder), home=home)
    assert result.returncode == 1
    assert "\\u000a" not in result.stderr
    assert "  - Invalid YAML in frontmatter: mapping values are not allowed here\n" in result.stderr
    assert "\n          - y: [\n             ^ (line: 4)\n" in result.stderr


def test_skills_validate_reports_a_folder_it_cannot_look_inside_instead_of_a_traceback(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path, {"locked/inner/SKILL.md": skill_md("inner", "x"), "noexec/SKILL.md": "x"})
    (root / "locked").chmod(0o000)
    (root / "noexec").chmod(0o644)
    try:
        for target in (root / "locked" / "inner" / "SKILL.md", root / "noexec"):
            command = unprivileged([sys.executable, "-m", "agentcontext", "skills", "validate", str(target), "--json"])
            result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HOME": str(home)})
            assert result.returncode == 1, result.stderr
            [report] = json.loads(result.stdout)
            assert report["valid"] is False and "Traceback" not in result.stderr
            assert report["errors"][0].startswith("cannot look inside ") and "Permission denied" in report["errors"][0]
    finally:
        (root / "locked").chmod(0o755)
        (root / "noexec").chmod(0o755)


def test_a_reader_that_goes_away_ends_the_command_with_141_not_the_code_for_problems_found(
    tmp_path: Path, home: Path
) -> None:
    """``| head`` closes the pipe early: 1 would read as "found a problem" under ``set -o pipefail``."""
    root = make_workspace(tmp_path, {f".agents/skills/s{i}/SKILL.md": skill_md(f"s{i}", "x") for i in range(1500)})
    for command in (["scan", str(root)], ["skills", "list", str(root)], ["scan", str(root), "--json"]):
        process = subprocess.Popen(
            [sys.executable, "-m", "agentcontext", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "HOME": str(home)},
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # far more than a pipe holds is still to come
        assert process.wait(timeout=60) == 141, command
        assert b"Traceback" not in process.stderr.read()
        process.stderr.close()


def test_skills_list_and_prompt_render_the_offered_skills(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    listing = json.loads(run("skills", "list", str(root), "--json", home=home).stdout)
    assert {(s["name"], s["status"]) for s in listing} == {("good", "ok"), (None, "invalid")}
    coder = run("skills", "prompt", str(root), "--format", "coder", home=home).stdout
    assert coder.startswith("<available-skills>\n") and "- good: Does good things\n" in coder
    xml = run("skills", "prompt", str(root), "--format", "xml", home=home).stdout
    assert "<name>\ngood\n</name>" in xml
    codex = run("skills", "prompt", str(root), "--format", "codex", home=home).stdout
    assert f"- `r0` = `{root / '.agents' / 'skills'}`\n" in codex
    assert "- good: Does good things (file: r0/good/SKILL.md)\n</skills_instructions>" in codex
    catalog = run("skills", "prompt", str(root), home=home).stdout
    assert catalog == "## Skills\n- good (repo) — Does good things"


def test_config_show_names_the_source_of_each_value(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "r", {".git/": "", "agentcontext.toml": "[project_doc]\nmax_bytes = 99\n"})
    env_home = home
    result = run("config", "show", str(root), "--json", home=env_home)
    data = json.loads(result.stdout)
    assert (data["project_file"], data["user_file"], data["warnings"]) == (str(root / "agentcontext.toml"), None, [])
    origin = f"project file {root / 'agentcontext.toml'}"
    assert data["settings"]["project_doc.max_bytes"] == {"value": 99, "from": origin}
    assert data["settings"]["project_doc.filename"] == {"value": "AGENTS.md", "from": "default"}


def test_help_teaches_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("scan", "explain", "doc", "skills", "config"):
        assert command in result.output
    scan_help = runner.invoke(app, ["scan", "--help"])
    assert "shadowed" in scan_help.output and "--json" in scan_help.output


def test_the_profile_option_names_every_profile_there_is() -> None:
    scan_help = run("scan", "--help").stdout
    assert all(profile in scan_help for profile in PROFILES), scan_help
    assert "claude" in PROFILES


def test_python_dash_m_and_version_work() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("agentcontext ")


def test_scan_says_how_a_file_that_is_not_loaded_at_startup_loads(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": "@notes.md\n",
            "notes.md": "notes\n",
            ".claude/rules/py.md": "---\npaths: src/**/*.py\n---\npython rule\n",
        },
    )
    table = run("scan", str(work), "-p", "claude", home=home).stdout
    rows = {line.split("│")[2].strip(): line.split("│")[6].strip() for line in table.splitlines() if "│ ok" in line}
    assert rows["notes.md"] == f"imported by {work / 'CLAUDE.md'}"
    assert rows[".claude/rules/py.md"] == "when a file matching src/**/*.py is read"
    assert rows["CLAUDE.md"] == ""


def test_a_busy_port_is_one_line_and_exit_2_and_leaves_the_running_agents_token_alone(
    tmp_path: Path, home: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        token_file = home / ".local" / "share" / "agentcontext" / "agent-tokens" / str(port)
        token_file.parent.mkdir(parents=True)
        token_file.write_text("the running agent's token\n")
        db = ["--db", f"sqlite:///{tmp_path / 'control.db'}"]
        commands = (
            (["agent", "--work-dir", str(tmp_path)], "--listen"),
            (["mcp"], "--http"),
            (["server", *db], "--listen"),
        )
        for command, option in commands:
            result = run(*command, option, f"127.0.0.1:{port}", cwd=tmp_path, home=home)
            said = f"127.0.0.1:{port} is already in use: stop what listens there or pass another {option}"
            assert (result.returncode, result.stderr) == (2, f"agentcontext: error: {said}\n")
        assert token_file.read_text() == "the running agent's token\n"
        assert not (tmp_path / "control.db").exists()  # refused before the database was made
