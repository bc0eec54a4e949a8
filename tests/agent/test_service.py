"""`agentcontext agent` as a real process: live edits, readiness, signals, the listen guard."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from agentcontext.agent.push import PUSH_PATH
from agentcontext.agent.token_file import token_path
from agentcontext.testing import make_workspace, skill_md
from tests.agent.conftest import time_server_config
from tests.helpers import alive, descendants, free_port, http_server, poll, terminate

pytestmark = pytest.mark.timeout(180)

T = TypeVar("T")
WAIT = 30.0


@dataclass
class AgentProcess:
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, **params: str) -> Any:
        response = httpx.get(self.url + path, params=params, headers=self.auth, timeout=10)
        response.raise_for_status()
        return response.json()

    def post(self, path: str) -> httpx.Response:
        return httpx.post(self.url + path, headers=self.auth, timeout=60)

    def snapshot(self) -> dict[str, Any]:
        snapshot: dict[str, Any] = self.get("/api/v0/context", payloads="true")
        return snapshot


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the agent exited with {process.returncode}:\n{log.read_text()}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/api/v0/context", timeout=1)
            return
        time.sleep(0.05)
    raise AssertionError(f"the agent did not listen on {port} within {WAIT} s:\n{log.read_text()}")


@contextlib.contextmanager
def agent_process(work: Path, home: Path, *args: str) -> Iterator[AgentProcess]:
    """``python -m agentcontext agent`` over ``work`` on a free loopback port, with ``home`` as HOME.

    No token is given: the agent makes one and keeps it in the data dir, where the test reads it.
    """
    port = free_port()
    log = work.parent / f"agent-{port}.log"
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work)]
    command += ["--listen", f"127.0.0.1:{port}", *args]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env={**os.environ, "HOME": str(home)}, stdout=sink, stderr=sink)
    try:
        wait_for_port(port, process, log)
        token = token_path(port, {"HOME": str(home)}).read_text(encoding="utf-8").strip()
        yield AgentProcess(process, f"http://127.0.0.1:{port}", log, token)
    finally:
        terminate(process)


def resource(snapshot: dict[str, Any], path: Path | str) -> dict[str, Any] | None:
    return next((r for r in snapshot["resources"] if r["path"] == str(path)), None)


def content_of(snapshot: dict[str, Any], path: Path) -> str | None:
    found = resource(snapshot, path)
    return None if found is None else found.get("content")


def holding(path: Path, text: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a snapshot holds ``text`` for the file ``path``."""
    return lambda snapshot: content_of(snapshot, path) == text


def tool_names(agent: AgentProcess) -> list[str]:
    return [tool["name"] for tool in agent.get("/api/v0/mcp/tools")["tools"]]


# --- (a) edits while it runs ------------------------------------------------------------------


def test_edits_on_disk_reach_the_live_snapshot(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "Use pytest."})
    with agent_process(work, home) as agent:
        first = poll(agent.snapshot, lambda s: s["version"] >= 1, "the first snapshot")
        assert content_of(first, work / "AGENTS.md") == "Use pytest."

        (work / "AGENTS.md").write_text("Use pytest -x.", encoding="utf-8")
        edited = poll(agent.snapshot, lambda s: content_of(s, work / "AGENTS.md") == "Use pytest -x.", "the edit")
        assert edited["version"] > first["version"]
        assert edited["aggregate_hash"] != first["aggregate_hash"]

        skill = work / ".agents" / "skills" / "lint" / "SKILL.md"  # its container does not exist yet
        make_workspace(work, {".agents/skills/lint/SKILL.md": skill_md("lint", "Lints the code")})
        with_skill = poll(agent.snapshot, lambda s: resource(s, skill) is not None, "the new skill")
        found = resource(with_skill, skill)
        assert found is not None and (found["kind"], found["status"], found["name"]) == ("skill", "ok", "lint")
        assert agent.get("/api/v0/skills/lint")["dir"] == str(skill.parent)

        skill.write_text(skill_md("lint", "Lints more code"), encoding="utf-8")
        poll(agent.snapshot, lambda s: (resource(s, skill) or {}).get("description") == "Lints more code", "skill edit")


def test_a_work_dir_moved_away_and_back_is_said_to_be_gone_then_read_again(tmp_path: Path, home: Path) -> None:
    """Outside the home, as in a CI checkout or /workspaces: its parent is no folder the agent reads, yet its
    return (a checkout made again) must be seen; while it is gone the snapshot says so rather than look empty."""
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "Use pytest."})
    with agent_process(work, home) as agent:
        poll(agent.snapshot, holding(work / "AGENTS.md", "Use pytest."), "the first snapshot")
        work.rename(tmp_path / "work.moved")
        gone = poll(agent.snapshot, lambda s: s["error"] is not None, "the snapshot saying the work dir is gone")
        assert gone["resources"] == [] and f"the work dir {work} does not exist" in gone["error"]
        (tmp_path / "work.moved").rename(work)
        back = poll(agent.snapshot, holding(work / "AGENTS.md", "Use pytest."), "the work dir read again")
        assert back["error"] is None
        (work / "AGENTS.md").write_text("Use pytest -x.", encoding="utf-8")
        poll(agent.snapshot, holding(work / "AGENTS.md", "Use pytest -x."), "an edit after its return")


def test_an_edit_in_place_to_any_file_the_snapshot_read_reaches_it(tmp_path: Path, home: Path) -> None:
    """Files read by more than their name (a rule, an import, a custom command), edited where they are."""
    work = make_workspace(
        tmp_path / "work",
        {
            ".git/": "",
            "CLAUDE.md": "See @docs/guide.md\n",
            "docs/guide.md": "guide one\n",
            ".claude/rules/style.md": "style one\n",
            ".claude/commands/review.md": "---\ndescription: Review one\n---\n",
        },
    )
    with agent_process(work, home, "--profile", "claude") as agent:
        poll(agent.snapshot, lambda s: s["version"] >= 1, "the first snapshot")
        for path, text in (
            (work / ".claude/commands/review.md", "---\ndescription: Review two\n---\n"),
            (work / "docs/guide.md", "guide two\n"),
            (work / ".claude/rules/style.md", "style two\n"),
        ):
            with path.open("r+", encoding="utf-8") as file:  # in place: no file appears or goes
                file.write(text)
            poll(agent.snapshot, holding(path, text), f"the edit of {path.name}")


def test_a_skill_folder_removed_and_made_again_is_still_watched(tmp_path: Path, home: Path) -> None:
    # a checkout removes and remakes folders: the kernel's watch of the old folder went with it
    work = make_workspace(tmp_path / "work", {".agents/skills/lint/SKILL.md": skill_md("lint", "Lints the code")})
    skill = work / ".agents" / "skills" / "lint" / "SKILL.md"
    with agent_process(work, home, "-v") as agent:
        poll(agent.snapshot, lambda s: resource(s, skill) is not None, "the skill")
        poll(agent.log.read_text, lambda log: "snapshot: watching" in log, "the watch up")
        shutil.rmtree(skill.parent)
        make_workspace(work, {".agents/skills/lint/SKILL.md": skill_md("lint", "Lints again")})
        poll(agent.snapshot, lambda s: (resource(s, skill) or {}).get("description") == "Lints again", "remade")
        skill.write_text(skill_md("lint", "Lints more code"), encoding="utf-8")
        poll(agent.snapshot, lambda s: (resource(s, skill) or {}).get("description") == "Lints more code", "its edit")


def test_mcp_json_add_change_and_remove_reach_the_catalog(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home, "--mcp-trust", "auto") as agent:  # the operator's flag: servers start unasked
        first = poll(agent.snapshot, lambda s: s["version"] >= 1, "the first snapshot")
        assert tool_names(agent) == []

        (work / ".mcp.json").write_text(time_server_config(), encoding="utf-8")
        poll(lambda: tool_names(agent), lambda names: "time__get_current_time" in names, "the time server")
        # the snapshot follows once the catalog's changes settle (debounced like file changes)
        connected = poll(agent.snapshot, lambda s: (resource(s, "time") or {}).get("status") == "ok", "the time server")
        assert connected["aggregate_hash"] == first["aggregate_hash"]  # MCP never marks pinned chats out of date

        (work / ".mcp.json").write_text(time_server_config().replace('"time"', '"clock"'), encoding="utf-8")
        renamed = poll(
            lambda: tool_names(agent),
            lambda names: names == ["clock__convert_time", "clock__get_current_time"],
            "rename",
        )
        assert renamed == ["clock__convert_time", "clock__get_current_time"]
        poll(agent.snapshot, lambda s: resource(s, "time") is None and resource(s, "clock") is not None, "renamed")

        (work / ".mcp.json").unlink()
        poll(lambda: tool_names(agent), lambda names: names == [], "the servers to go")
        gone = poll(
            agent.snapshot, lambda s: all(r["kind"] not in ("mcp_server", "mcp_config") for r in s["resources"]), "gone"
        )
        assert gone["aggregate_hash"] == first["aggregate_hash"]


# --- (b) readiness ----------------------------------------------------------------------------


def test_wait_ready_publishes_nothing_until_post_ready(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home, "--wait-ready") as agent:
        assert (agent.snapshot()["version"], agent.snapshot()["resources"]) == (0, [])
        (work / "AGENTS.md").write_text("new rules", encoding="utf-8")
        resynced = agent.post("/api/v0/context/resync").json()
        assert (resynced["version"], resynced["resources"]) == (0, [])  # resync is gated too
        assert agent.post("/api/v0/ready").json() == {"ready": True}
        ready = poll(agent.snapshot, lambda s: s["version"] >= 1, "the first snapshot")
        assert content_of(ready, work / "AGENTS.md") == "new rules"


def test_startup_command_gates_until_it_ends(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    # Runs in the work dir and ends when the test creates "go" there.
    startup = "while [ ! -e go ]; do sleep 0.05; done; exit 3"
    with agent_process(work, home, "--startup", startup) as agent:
        assert (agent.snapshot()["version"], agent.snapshot()["resources"]) == (0, [])
        resynced = agent.post("/api/v0/context/resync").json()
        assert resynced["version"] == 0
        (work / "go").write_text("", encoding="utf-8")
        ready = poll(agent.snapshot, lambda s: s["version"] >= 1, "the end of the startup command")
    assert content_of(ready, work / "AGENTS.md") == "rules"  # a failed startup command still ends the wait


def test_startup_sleep_keeps_version_zero_until_it_ends(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home, "--startup", "sleep 1") as agent:
        started = time.monotonic()
        assert agent.snapshot()["version"] == 0
        poll(agent.snapshot, lambda s: s["version"] >= 1, "the end of sleep 1")
        assert time.monotonic() - started < WAIT


# --- (c) signals ------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_agent_and_its_mcp_servers(tmp_path: Path, home: Path, sig: signal.Signals) -> None:
    work = make_workspace(tmp_path / "work", {".mcp.json": time_server_config()})
    with agent_process(work, home, "--mcp-trust", "auto") as agent:
        poll(lambda: tool_names(agent), lambda names: "time__get_current_time" in names, "the time server")
        children = descendants(agent.process.pid)
        assert children, "the time server runs as a child of the agent"
        agent.process.send_signal(sig)
        assert agent.process.wait(timeout=20) == 0, agent.log.read_text()
    assert [pid for pid in children if alive(pid)] == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_a_running_startup_command(tmp_path: Path, home: Path, sig: signal.Signals) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home, "--startup", "sleep 300; sleep 300") as agent:
        children = poll(lambda: descendants(agent.process.pid), lambda pids: len(pids) >= 2, "sh and sleep")
        agent.process.send_signal(sig)
        assert agent.process.wait(timeout=20) == 0, agent.log.read_text()
    assert [pid for pid in children if alive(pid)] == []


# --- (d) the listen guard ---------------------------------------------------------------------


def test_a_non_loopback_listen_address_needs_a_token(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work), "--listen", "0.0.0.0:8766"]
    result = subprocess.run(command, env={**os.environ, "HOME": str(home)}, capture_output=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode() == (
        "agentcontext: error: refusing to listen on 0.0.0.0 without --token: only loopback may go without one\n"
    )


def test_a_control_plane_that_is_no_url_is_refused_before_the_agent_starts(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    command = [sys.executable, "-m", "agentcontext", "agent", "-w", str(work), "--listen", f"127.0.0.1:{free_port()}"]
    command += ["--control-plane", "notaurl"]
    environ = {**os.environ, "HOME": str(home), "AGENTCONTEXT_AGENT_TOKEN": "t" * 32}
    result = subprocess.run(command, env=environ, capture_output=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode() == (
        "agentcontext: error: --control-plane wants the control plane's http:// or https:// URL, not 'notaurl'\n"
    )


@pytest.mark.parametrize("listen", ["127.0.0.1:65536", "127.0.0.1:99999", "127.0.0.1", "127.0.0.1:http"])
def test_a_listen_address_past_the_ports_is_one_line_not_a_traceback(tmp_path: Path, home: Path, listen: str) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    for command in (["agent", "-w", str(work), "--listen", listen], ["mcp", "-w", str(work), "--http", listen]):
        result = subprocess.run(
            [sys.executable, "-m", "agentcontext", *command], env={**os.environ, "HOME": str(home)}, capture_output=True
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.decode().endswith(f"wants HOST:PORT (a port from 0 to 65535), not {listen!r}\n")


def test_an_agent_on_port_0_tells_the_control_plane_the_port_it_was_given(tmp_path: Path, home: Path) -> None:
    import json
    from http.server import BaseHTTPRequestHandler

    pushes: list[dict[str, Any]] = []

    class Plane(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == PUSH_PATH:
                pushes.append(body)
                answer = json.dumps({"accepted": True, "version": body["version"], "stored_version": body["version"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer.encode())
            else:
                self.send_response(204)
                self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    token = "t" * 32
    with http_server(Plane) as plane:
        command = [sys.executable, "-m", "agentcontext", "agent", "-w", str(work), "--listen", "127.0.0.1:0"]
        command += ["--control-plane", plane]
        environ = {**os.environ, "HOME": str(home), "AGENTCONTEXT_AGENT_TOKEN": token}
        process = subprocess.Popen(command, env=environ, stderr=subprocess.DEVNULL)
        try:
            poll(lambda: len(pushes), bool, "the agent's first push", timeout=WAIT)
            url = pushes[0]["agent"]["url"]
            assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
            answer = httpx.get(f"{url}/api/v0/context", headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert answer.status_code == 200
        finally:
            terminate(process)
