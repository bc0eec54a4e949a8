"""``agentcontext up`` as a user runs it: real server, agent and MCP server processes, checked in the process table."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentcontext.control.client import ControlClient
from tests.helpers import descendants, free_port
from tests.local.running import WAIT, data_dir, environment, make_repo, running, start

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "app")


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path / "logs"


def test_up_serves_the_control_plane_and_the_agent_pushes_the_repository(repo: Path, home: Path, logs: Path) -> None:
    with running(repo, home, logs) as up:
        url, token = up.login()
        with ControlClient(url, token) as client:
            overview = client.overview()
            chat = client.create_chat("app")
        (workspace,) = overview.workspaces
        assert workspace.name == "app"
        assert workspace.agents[0].online is True
        assert str(repo / "AGENTS.md") in [r.path for r in chat.context.resources]
        assert f"Dashboard: {url}/" in up.stdout()
        assert httpx.get(f"{url}/login").status_code == 200  # the page the login link opens


def test_the_state_file_is_private_and_a_second_run_reuses_its_tokens(repo: Path, home: Path, logs: Path) -> None:
    state_file = data_dir(home) / "local.json"
    with running(repo, home, logs) as first:
        first_login = first.login()
    saved = json.loads(state_file.read_text())
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(state_file.parent.stat().st_mode) == 0o700
    with running(repo, home, logs) as second:
        url, token = second.login()
        assert token == first_login[1]
        with ControlClient(url, token) as client:
            assert [w.name for w in client.overview().workspaces] == ["app"]
    assert json.loads(state_file.read_text())["workspaces"] == saved["workspaces"]


def test_a_second_directory_gets_a_workspace_of_its_own(tmp_path: Path, home: Path, logs: Path) -> None:
    other = make_repo(tmp_path / "elsewhere" / "app", mcp=False)
    with running(make_repo(tmp_path / "app"), home, logs):
        pass
    up = start(other, home, logs)
    try:
        up.wait_for(lambda text: "agent online" in text, "agent online")
        url, token = up.login()
        with ControlClient(url, token) as client:
            assert [w.name for w in client.overview().workspaces] == ["app", "app-2"]
    finally:
        assert up.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_everything_with_exit_0_and_leaves_no_process(
    repo: Path, home: Path, logs: Path, sig: signal.Signals
) -> None:
    up = start(repo, home, logs)
    up.wait_running()
    assert len(up.seen) >= 4, "server, agent, MCP server and its grandchild"
    assert up.stop(sig) == 0, up.stderr()
    assert up.left_behind() == []
    assert "Stopped." in up.stderr()


def test_kill_9_of_up_takes_its_children_down_within_seconds(repo: Path, home: Path, logs: Path) -> None:
    up = start(repo, home, logs)
    up.wait_running()
    up.stop(signal.SIGKILL)
    assert up.left_behind(within=15) == []


def test_a_child_that_dies_is_reported_and_the_rest_stopped_with_exit_1(repo: Path, home: Path, logs: Path) -> None:
    up = start(repo, home, logs)
    up.wait_running()
    os.kill(_child(up.process.pid, "server"), signal.SIGKILL)
    assert up.process.wait(timeout=WAIT) == 1
    assert "The server exited with status -9" in up.stderr()
    assert up.left_behind(within=5) == []


def _child(pid: int, command: str) -> int:
    """The child of ``pid`` running ``agentcontext COMMAND``."""
    for child in descendants(pid):
        with contextlib.suppress(OSError):
            if f"\0agentcontext\0{command}\0" in Path(f"/proc/{child}/cmdline").read_text():
                return child
    raise AssertionError(f"no {command} process under {pid}")


def test_a_taken_port_is_a_clear_error(repo: Path, home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "agentcontext", "up", str(repo), "--listen", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env=environment(home),
            timeout=WAIT,
            check=False,
        )
    assert result.returncode == 2
    assert f"127.0.0.1:{port} is already in use" in result.stderr
    assert "--listen" in result.stderr


def test_a_taken_agent_port_is_a_clear_error(repo: Path, home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "agentcontext", "up", str(repo), "--listen", f"127.0.0.1:{free_port()}"]
        result = subprocess.run(
            [*command, "--agent-listen", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env=environment(home),
            timeout=WAIT,
            check=False,
        )
    assert result.returncode == 2
    assert f"127.0.0.1:{port} is already in use" in result.stderr


def test_a_missing_directory_is_a_clear_error(tmp_path: Path, home: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentcontext", "up", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env=environment(home),
        timeout=WAIT,
        check=False,
    )
    assert result.returncode == 2
    assert "is not a directory" in result.stderr


def test_up_in_a_second_folder_joins_the_running_control_plane(tmp_path: Path, home: Path, logs: Path) -> None:
    with running(make_repo(tmp_path / "app"), home, logs) as first:
        url, token = first.login()
        second = start(make_repo(tmp_path / "lib", mcp=False), home, logs, listen=False)
        try:
            second.wait_for(lambda text: "agent online" in text, "the second agent online")
            assert second.login() == (url, token)
            assert "already running" in second.stderr()
            with ControlClient(url, token) as client:
                names = [w.name for w in client.overview().workspaces]
            assert names == ["app", "lib"]
        finally:
            assert second.stop(signal.SIGINT) == 0
        with ControlClient(url, token) as client:
            assert client.overview().server.database == "sqlite"  # the first stack still serves


def test_up_in_a_second_folder_joins_the_running_control_plane_even_when_given_another_listen_address(
    tmp_path: Path, home: Path, logs: Path
) -> None:
    """Two servers on one SQLite file: a chat on the second never heard of the first's pushes, and ``local.json``
    followed the second."""
    with running(make_repo(tmp_path / "app"), home, logs) as first:
        url, token = first.login()
        elsewhere = f"127.0.0.1:{free_port()}"
        second = start(make_repo(tmp_path / "lib", mcp=False), home, logs, "--listen", elsewhere)
        try:
            second.wait_for(lambda text: "agent online" in text, "the second agent online")
            assert second.login() == (url, token)
            assert f"--listen {elsewhere} is not used" in second.stderr()
            assert [pid for pid in descendants(second.process.pid) if _runs(pid, "server")] == []
            with ControlClient(url, token) as client:
                assert [w.name for w in client.overview().workspaces] == ["app", "lib"]
        finally:
            assert second.stop(signal.SIGINT) == 0
        assert json.loads((data_dir(home) / "local.json").read_text())["server_url"] == url


def test_two_ups_started_together_on_one_database_both_run_the_second_joining_the_first(
    tmp_path: Path, home: Path, logs: Path
) -> None:
    """Both once found no control plane and started one each; the second server, refused the database the first
    serves, ended its ``up`` with a failure."""
    first = start(make_repo(tmp_path / "app", mcp=False), home, logs)
    second = start(make_repo(tmp_path / "lib", mcp=False), home, logs)
    try:
        for up in (first, second):
            up.wait_for(lambda text: "agent online" in text, "both agents online")
        assert first.login() == second.login()
        assert first.process.poll() is None and second.process.poll() is None
        url, token = first.login()
        with ControlClient(url, token) as client:
            assert sorted(w.name for w in client.overview().workspaces) == ["app", "lib"]
    finally:
        for up in (second, first):
            if up.process.poll() is None:
                assert up.stop(signal.SIGINT) == 0


def test_a_second_up_of_a_running_folder_is_refused_naming_the_first_and_starts_no_second_agent(
    repo: Path, home: Path, logs: Path
) -> None:
    """A second agent under the same token once joined, and its stop marked the workspace offline under the
    first."""
    with running(repo, home, logs) as first:
        url, token = first.login()
        result = subprocess.run(
            [sys.executable, "-m", "agentcontext", "up", str(repo), "--listen", f"127.0.0.1:{free_port()}"],
            capture_output=True,
            text=True,
            env=environment(home),
            timeout=WAIT,
            check=False,
        )
        assert result.returncode == 2
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"agentcontext: error: an `up` of {repo} is already running (pid {first.process.pid};")
        assert f"dashboard {url}/)" in line and f"kill {first.process.pid})" in line
        with ControlClient(url, token) as client:
            (workspace,) = client.overview().workspaces
        assert [(a.name, a.online) for a in workspace.agents] == [("local", True)]
        assert "agent online" in first.stdout().splitlines()[-1]


def _runs(pid: int, command: str) -> bool:
    with contextlib.suppress(OSError):
        return f"\0agentcontext\0{command}\0" in Path(f"/proc/{pid}/cmdline").read_text()
    return False


def test_a_claude_md_that_imports_agents_md_reaches_the_chats_under_the_claude_profile(
    tmp_path: Path, home: Path, logs: Path
) -> None:
    """Claude Code's own advice (a CLAUDE.md of ``@AGENTS.md``) once gave a snapshot listing AGENTS.md twice, which
    the control plane refuses whole: the workspace never synced. Now its chats get both files."""
    repo = make_repo(tmp_path / "app", mcp=False)  # no MCP server to approve and start: the files are the case
    (repo / "CLAUDE.md").write_text("@AGENTS.md\n", encoding="utf-8")
    config = home / ".config" / "agentcontext" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('profile = "claude"\n', encoding="utf-8")
    up = start(repo, home, logs)
    try:
        up.wait_for(lambda text: "agent online" in text, "agent online")
        url, token = up.login()
        with ControlClient(url, token) as client:
            chat = client.create_chat("app")
    finally:
        assert up.stop() == 0
    paths = {r.path: r.status for r in chat.context.resources}
    assert paths[str(repo / "CLAUDE.md")] == paths[str(repo / "AGENTS.md")] == "ok"
