"""``agentcontext status``: the overview of the control plane ``up`` runs, or of any given one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcontext.cli.status_cmd import credentials
from agentcontext.errors import ConfigError
from agentcontext.local import state
from agentcontext.local.state import LocalState
from tests.helpers import free_port
from tests.local.running import WAIT, data_dir, environment, make_repo, running


def _status(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentcontext", "status", *args],
        capture_output=True,
        text=True,
        env={**environment(home), **(env or {})},
        timeout=WAIT,
        check=False,
    )


@pytest.mark.slow
def test_status_after_up_shows_the_agent_and_the_problems_without_any_flag(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "app")
    broken = repo / ".agents" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter here\n", encoding="utf-8")
    with running(repo, home, tmp_path / "logs"):
        shown = _status(home)
        as_json = _status(home, "--json")
    stopped = _status(home)
    assert stopped.returncode == 2 and "is `agentcontext up` running?" in stopped.stderr
    assert shown.returncode == 0, shown.stderr
    assert "app" in shown.stdout and "local" in shown.stdout and "online" in shown.stdout
    assert "1 connected" in shown.stdout
    assert "problems (1)" in shown.stdout and "broken" in shown.stdout
    overview = json.loads(as_json.stdout)
    (agent,) = overview["workspaces"][0]["agents"]
    assert agent["online"] is True and agent["snapshot"]["by_status"]["invalid"] == 1
    assert [p["kind"] for p in overview["problems"]] == ["resource"]


def test_an_unreachable_server_exits_2_with_a_message(home: Path) -> None:
    result = _status(home, "--server", f"http://127.0.0.1:{free_port()}", "--token", "acu_x")
    assert result.returncode == 2
    assert "cannot reach the control plane" in result.stderr


def test_without_up_or_flags_status_says_what_to_do(home: Path) -> None:
    result = _status(home)
    assert result.returncode == 2
    assert "agentcontext up" in result.stderr


def test_a_damaged_state_file_is_a_message_not_a_traceback(home: Path) -> None:
    path = data_dir(home) / "local.json"
    path.parent.mkdir(parents=True)
    path.write_text("{", encoding="utf-8")
    result = _status(home)
    assert result.returncode == 2
    assert "cannot read the local state file" in result.stderr and "Traceback" not in result.stderr


def test_flags_then_environment_then_the_state_of_up(tmp_path: Path) -> None:
    path = tmp_path / "local.json"
    state.save(path, LocalState(server_url="http://local:8765", user_token="acu_local"))
    env = {"AGENTCONTEXT_SERVER": "http://env", "AGENTCONTEXT_TOKEN": "acu_env"}
    assert credentials("http://flag", "acu_flag", env, path) == ("http://flag", "acu_flag")
    assert credentials(None, None, env, path) == ("http://env", "acu_env")
    assert credentials(None, None, {}, path) == ("http://local:8765", "acu_local")


def test_the_local_token_is_never_sent_to_another_server(tmp_path: Path) -> None:
    path = tmp_path / "local.json"
    state.save(path, LocalState(server_url="http://local:8765", user_token="acu_local"))
    with pytest.raises(ConfigError) as caught:
        credentials("http://elsewhere", None, {}, path)
    assert "no token given" in str(caught.value)
