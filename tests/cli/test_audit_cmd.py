"""``agentcontext audit`` as CI runs it: exit codes by severity, output that never leaks a secret.

Typer's runner in-process for speed; a real subprocess where the console entry point's
error handling (exit code 2) is what is tested.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from agentcontext.cli import app
from agentcontext.testing import make_workspace
from tests.audit.test_report import HEADER_SECRET, TOKEN, hostile_workspace


class Ran(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def run(*args: str, home: Path, agents: str = "none") -> Ran:
    """The audit, comparing no agents unless ``agents`` says which (blind spots have tests of their own)."""
    chosen = [] if "--agents" in args else ["--agents", agents] if agents else []
    result = CliRunner().invoke(app, ["audit", *args, *chosen], env={"COLUMNS": "200", "HOME": str(home)})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def run_process(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agentcontext", "audit", *args], capture_output=True, text=True, env=env, timeout=60
    )


def clean(root: Path) -> Path:
    return make_workspace(root, {".git/": "", "AGENTS.md": "# Rules\nUse pytest.\n"})


def test_a_hostile_workspace_fails_with_a_table_grouped_by_file(tmp_path: Path, home: Path) -> None:
    root = hostile_workspace(tmp_path / "repo")
    result = run(str(root), home=home)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert out.index("AGENTS.md") < out.index("U+202E RIGHT-TO-LEFT OVERRIDE")
    assert "tag-characters" in out and 'spelling "ignore previous rules"' in out
    assert ".agents/skills/deploy/scripts/run.sh" in out and "skill-allowed-tools" in out
    assert "11 findings in 4 files: 5 errors, 4 warnings, 2 info (failing on error)" in out


def test_json_lists_every_finding_with_code_severity_path_line_column_and_message(tmp_path: Path, home: Path) -> None:
    root = hostile_workspace(tmp_path / "repo")
    result = run(str(root), "--json", home=home)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert set(data) == {"dir", "project_root", "findings", "counts", "complete"}
    assert data["dir"] == str(root) and data["counts"] == {"info": 2, "warning": 4, "error": 5}
    assert all(set(f) == {"code", "severity", "path", "line", "column", "message"} for f in data["findings"])
    spawn = next(f for f in data["findings"] if f["code"] == "mcp-spawn")
    assert spawn["path"] == str(root / ".mcp.json") and spawn["line"] == 3
    assert "env keys: GITHUB_TOKEN" in spawn["message"]


@pytest.mark.parametrize("as_json", [False, True])
def test_secret_values_appear_nowhere_in_the_output(tmp_path: Path, home: Path, as_json: bool) -> None:
    root = hostile_workspace(tmp_path / "repo")
    result = run(str(root), *(["--json"] if as_json else []), home=home)
    assert "mcp-secret-inline" in result.stdout
    for secret in (TOKEN, HEADER_SECRET, HEADER_SECRET.split()[1]):
        assert secret not in result.stdout and secret not in result.stderr


def test_a_clean_workspace_passes_with_no_findings(tmp_path: Path, home: Path) -> None:
    root = clean(tmp_path / "repo")
    human = run(str(root), "--fail-on", "info", home=home)
    assert human.returncode == 0 and "No findings." in human.stdout
    data = json.loads(run(str(root), "--json", home=home).stdout)
    assert data["findings"] == [] and data["counts"] == {"info": 0, "warning": 0, "error": 0}


@pytest.mark.parametrize(
    ("fail_on", "code"), [(None, 0), ("error", 0), ("warning", 1), ("info", 1), ("never", 0), ("WARNING", 1)]
)
def test_fail_on_sets_the_severity_that_fails_the_run(
    tmp_path: Path, home: Path, fail_on: str | None, code: int
) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", "AGENTS.md": "# Rules\n<!-- a note -->\n"})
    result = run(str(root), *(["--fail-on", fail_on] if fail_on else []), home=home)
    assert result.returncode == code, result.stdout + result.stderr


def test_never_passes_even_with_errors(tmp_path: Path, home: Path) -> None:
    root = hostile_workspace(tmp_path / "repo")
    assert run(str(root), "--fail-on", "never", home=home).returncode == 0


def test_a_malformed_mcp_json_is_a_finding_not_a_crash(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", ".mcp.json": '{"mcpServers": {"x": '})
    result = run_process(str(root), "--json", home=home)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["code"] == "scan-invalid" and finding["severity"] == "error"


def test_usage_and_configuration_errors_exit_with_2(tmp_path: Path, home: Path) -> None:
    missing = run_process(str(tmp_path / "nowhere"), home=home)
    assert missing.returncode == 2 and "work dir does not exist" in missing.stderr
    assert run(str(clean(tmp_path / "repo")), "--fail-on", "sometimes", home=home).returncode == 2
    bad_profile = run_process(str(tmp_path / "repo"), "--profile", "nope", home=home)
    assert bad_profile.returncode == 2 and "Traceback" not in bad_profile.stderr


def test_files_only_some_of_the_named_agents_load_are_blind_spots_naming_who_misses_them_and_why(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {".git/": "", "AGENTS.md": "# Rules\n", "CLAUDE.md": "Claude only\n", ".gemini/skills/g/SKILL.md": SKILL},
    )
    data = json.loads(run(str(root), "--json", "--agents", "codex,claude,gemini", home=home).stdout)
    spots = {f["path"]: f for f in data["findings"] if f["code"] == "agent-blind-spot"}
    assert set(spots) == {str(root / "AGENTS.md"), str(root / "CLAUDE.md"), str(root / ".gemini/skills/g/SKILL.md")}
    assert all(f["severity"] == "warning" for f in spots.values())
    agents_md = spots[str(root / "AGENTS.md")]["message"]
    assert agents_md.startswith("Codex loads this instruction file; never loaded by Claude Code: AGENTS.md is read")
    assert "Gemini CLI: it reads only GEMINI.md" in agents_md
    skill = spots[str(root / ".gemini/skills/g/SKILL.md")]["message"]
    assert skill.startswith("Gemini CLI loads this skill; never loaded by Codex: its skill folders are .codex/skills")


def test_a_nested_agents_md_codex_reads_when_started_there_is_not_a_blind_spot_for_codex(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "@sub/AGENTS.md\n", "sub/AGENTS.md": "Sub\n"})
    data = json.loads(run(str(root), "--json", "--agents", "codex,claude", home=home).stdout)
    assert [f for f in data["findings"] if f["code"] == "agent-blind-spot" and "sub" in f["path"]] == []


def test_without_named_agents_every_agent_is_compared_and_blind_spots_are_only_information(
    tmp_path: Path, home: Path
) -> None:
    root = clean(tmp_path / "repo")
    data = json.loads(run(str(root), "--json", home=home, agents="").stdout)
    (spot,) = data["findings"]
    assert spot["code"] == "agent-blind-spot" and spot["severity"] == "info"
    assert "never loaded by Gemini CLI" in spot["message"]
    assert run(str(root), home=home, agents="").returncode == 0


def test_the_agents_setting_names_the_team_s_agents(tmp_path: Path, home: Path) -> None:
    root = clean(tmp_path / "repo")
    config = tmp_path / "user.toml"
    config.write_text('agents = ["codex", "cursor"]\n', encoding="utf-8")
    data = json.loads(run(str(root), "--json", "--config", str(config), home=home, agents="").stdout)
    assert data["findings"] == []  # both read the root AGENTS.md


def test_an_unknown_agent_is_a_usage_error_naming_the_choices(tmp_path: Path, home: Path) -> None:
    done = run(str(clean(tmp_path / "repo")), "--agents", "codex,vim", home=home)
    assert done.returncode == 2 and "unknown agent vim" in done.stderr


SKILL = "---\nname: g\ndescription: Gemini's own skill.\n---\nBody\n"
