"""Tokens other local users could read: on a command line (``ps``), or in a file left open to them.

Every command that takes a token reads it from ``--token-file`` or its environment variable
without a word; ``--token`` still works but warns that ``ps`` shows it. The workspace agent
always has a token: without one it makes one per run and keeps it 0600 in the data dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from agentcontext.agent.token_file import issue, token_path
from agentcontext.testing import make_workspace
from tests.agent.test_service import agent_process
from tests.helpers import free_port, http_server
from tests.mcp.conftest import wait_for_port

pytestmark = pytest.mark.timeout(120)
SECRET = "acu_secret-token-value"
OVERVIEW = {
    "server": {"version": "0", "database": "sqlite"},
    "workspaces": [],
    "chats": {"total": 0, "out_of_date": 0},
    "problems": [],
}
WARNING = "agentcontext: warning: --token shows the token to every local user (`ps`)"


@contextlib.contextmanager
def control_plane_stub() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering ``GET /api/v1/chats`` (no chats) and ``/api/v1/overview`` (nothing yet);
    the Authorization headers it saw."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            body = json.dumps([] if self.path.startswith("/api/v1/chats") else OVERVIEW).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with http_server(Handler) as url:
        yield url, seen


def agentcontext(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentcontext", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_a_token_on_the_command_line_works_but_warns_that_ps_shows_it(tmp_path: Path) -> None:
    with control_plane_stub() as (url, seen):
        result = agentcontext("chats", "list", "--server", url, "--token", SECRET, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [] and seen == [f"Bearer {SECRET}"]
    assert result.stderr.startswith(WARNING)
    assert "--token-file" in result.stderr and "AGENTCONTEXT_TOKEN" in result.stderr
    assert SECRET not in result.stderr


def test_a_token_from_a_file_or_the_environment_is_used_without_a_warning(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"  {SECRET}\n", encoding="utf-8")
    token_file.chmod(0o600)
    with control_plane_stub() as (url, seen):
        from_file = agentcontext("chats", "list", "--server", url, "--token-file", str(token_file), "--json")
        from_env = agentcontext("status", "--server", url, env={"AGENTCONTEXT_TOKEN": SECRET})
    assert from_file.returncode == 0 and from_file.stderr == "", from_file.stderr
    assert seen[0] == f"Bearer {SECRET}"
    assert from_env.returncode == 0 and from_env.stderr == "", from_env.stderr
    assert "no problems" in from_env.stdout and seen[1:] == [f"Bearer {SECRET}"]


def test_a_token_file_other_users_may_read_is_warned_about_and_an_empty_one_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET, encoding="utf-8")
    token_file.chmod(0o644)
    with control_plane_stub() as (url, seen):
        shared = agentcontext("chats", "list", "--server", url, "--token-file", str(token_file), "--json")
    assert shared.returncode == 0 and seen == [f"Bearer {SECRET}"]
    assert f"{token_file} may be read by other users (mode 644): `chmod 600 {token_file}`" in shared.stderr
    token_file.write_text("\n", encoding="utf-8")
    empty = agentcontext("chats", "list", "--server", "http://127.0.0.1:1", "--token-file", str(token_file))
    assert (empty.returncode, empty.stderr) == (2, f"agentcontext: error: {token_file}: the token file is empty\n")


@pytest.mark.parametrize("command", [["agent"], ["mcp", "--http", "127.0.0.1:1"], ["chats", "list"], ["status"]])
def test_a_token_and_a_token_file_together_are_refused(tmp_path: Path, command: list[str]) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET, encoding="utf-8")
    result = agentcontext(*command, "--token", SECRET, "--token-file", str(token_file))
    assert result.returncode == 2
    assert "give --token or --token-file, not both" in result.stderr


def test_an_agent_without_a_token_makes_one_only_its_user_can_read(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home) as agent:
        port = int(agent.url.rpartition(":")[2])
        path = token_path(port, {"HOME": str(home)})
        log = agent.log.read_text(encoding="utf-8")
        assert f"no token given, so this run made one, kept in {path} (mode 0600)" in log
        assert f"clients send it as: Authorization: Bearer $(cat {path})" in log
        assert agent.token not in log  # stderr is not a terminal here: a log may be read by others
        assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
        assert len(agent.token) >= 40
        assert httpx.get(agent.url + "/api/v0/context", timeout=10).status_code == 401
        assert httpx.get(agent.url + "/api/v0/context", headers=agent.auth, timeout=10).status_code == 200
    assert issue(port, {"HOME": str(home)})[0] != agent.token  # every run makes a new one


def test_an_agent_given_a_token_file_keeps_it_off_its_command_line(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    token_file = tmp_path / "agent.token"
    token_file.write_text(SECRET + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    port = free_port()
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work), "--listen", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        [*command, "--token-file", str(token_file)],
        env={**os.environ, "HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        assert SECRET.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        auth = {"Authorization": f"Bearer {SECRET}"}
        assert httpx.get(f"http://127.0.0.1:{port}/api/v0/context", headers=auth, timeout=10).status_code == 200
        assert not token_path(port, {"HOME": str(home)}).exists()  # given a token, it makes none
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert b"warning" not in stderr


def test_a_database_password_on_the_command_line_is_warned_about(tmp_path: Path) -> None:
    url = f"postgresql://user:{SECRET}@127.0.0.1:{free_port()}/control"  # nothing listens: the command fails
    flag = agentcontext("db", "current", "--db", url)
    env = agentcontext("db", "current", env={"AGENTCONTEXT_DB": url})
    warning = "agentcontext: warning: --db shows the database password to every local user (`ps`)"
    assert flag.returncode == env.returncode == 2
    assert flag.stderr.startswith(warning) and warning not in env.stderr
    assert SECRET not in flag.stderr + env.stderr


def test_a_token_holding_a_line_break_is_refused_without_being_shown(tmp_path: Path) -> None:
    """A header may not carry it: sent, httpx's error quoted the whole header, token included, and blamed the
    network (`cannot reach the control plane`)."""
    token_file = tmp_path / "token"
    token_file.write_text(f"{SECRET[:10]}\n{SECRET[10:]}\n")
    token_file.chmod(0o600)
    server = f"http://127.0.0.1:{free_port()}"
    for args, env in (
        (("--token-file", str(token_file)), {}),
        ((), {"AGENTCONTEXT_TOKEN": f"{SECRET[:10]}\x01{SECRET[10:]}"}),
    ):
        result = agentcontext("status", "--server", server, *args, env=env)
        assert result.returncode == 2
        assert "holds a line break, a tab, another control character" in result.stderr
        assert SECRET[:10] not in result.stderr and "cannot reach" not in result.stderr
