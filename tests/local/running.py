"""A real ``agentcontext up`` in a temporary home, over a fixture repository with an MCP server of its own."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import alive, descendants, free_port

WAIT = 40.0  # seconds for the stack to come up on a busy 2-CPU machine
PEER = Path(__file__).resolve().parents[1] / "mcp_servers" / "misbehaving.py"
LOGIN = re.compile(r"(http://\S+)/login#token=(acu_[A-Za-z0-9_-]+)")


def make_repo(root: Path, *, mcp: bool = True) -> Path:
    """A repository with AGENTS.md, a skill and (``mcp``) a stdio MCP server that starts a grandchild."""
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Project rules\n\nRun the tests.\n", encoding="utf-8")
    skill = root / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: Review a change.\n---\nLook closely.\n")
    if mcp:
        servers = {"peer": {"command": sys.executable, "args": [str(PEER), "spawn-child"]}}
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return root


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTCONTEXT_", "XDG_"))}
    return {**env, "HOME": str(home), "COLUMNS": "200"}


def data_dir(home: Path) -> Path:
    return home / ".local" / "share" / "agentcontext"


@dataclass
class Up:
    process: subprocess.Popen[bytes]
    out: Path
    err: Path
    seen: set[int] = field(default_factory=set)

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_for(self, accept: Callable[[str], bool], what: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.stdout()
            if accept(text):
                return text
            if self.process.poll() is not None:
                break
            self.seen |= descendants(self.process.pid)
            time.sleep(0.1)
        raise AssertionError(f"no {what} (exit {self.process.poll()}):\n{self.stdout()}\n{self.stderr()}")

    def wait_running(self) -> None:
        """Until the agent is online and its MCP server connected; remembers every process of the tree."""
        self.wait_for(lambda text: "agent online" in text and "MCP 1 connected" in text, "agent online")
        self.seen |= descendants(self.process.pid)

    def login(self) -> tuple[str, str]:
        found = LOGIN.search(self.stdout())
        assert found is not None, self.stdout()
        return found.group(1), found.group(2)

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = WAIT) -> int:
        self.seen |= descendants(self.process.pid)
        self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)

    def left_behind(self, within: float = 0.0) -> list[int]:
        """The processes of the tree still alive after ``within`` seconds at most."""
        deadline = time.monotonic() + within
        while True:
            left = sorted(pid for pid in self.seen if alive(pid))
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.1)


def approve(repo: Path, home: Path) -> None:
    """Approve the repository's MCP servers as a user does: look at them (``--list``), approve what was shown."""
    base = [sys.executable, "-m", "agentcontext", "mcp", "trust", "--work-dir", str(repo)]
    env = environment(home)
    listed = subprocess.run([*base, "--list", "--json"], env=env, check=True, capture_output=True, timeout=WAIT)
    digests = [word for row in json.loads(listed.stdout) for word in ("--digest", row["digest"])]
    subprocess.run([*base, *digests], env=env, check=True, capture_output=True, timeout=WAIT)


def start(repo: Path, home: Path, logs: Path, *args: str, listen: bool = True, approved: bool = True) -> Up:
    """``up`` on a free port of its own (``listen``), else on what ``up`` chooses; its MCP servers approved first."""
    logs.mkdir(parents=True, exist_ok=True)
    if approved and (repo / ".mcp.json").exists():
        approve(repo, home)
    stamp = time.monotonic_ns()
    out, err = logs / f"up-{stamp}.out", logs / f"up-{stamp}.err"
    address = ["--listen", f"127.0.0.1:{free_port()}"] if listen and "--listen" not in args else []
    command = [sys.executable, "-m", "agentcontext", "up", str(repo), *address, *args]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=environment(home))
    return Up(process, out, err)


@contextlib.contextmanager
def running(repo: Path, home: Path, logs: Path, *args: str) -> Iterator[Up]:
    """``up`` with its agent online; stopped (and its tree checked) after the block."""
    up = start(repo, home, logs, *args)
    try:
        up.wait_running()
        yield up
    finally:
        if up.process.poll() is None:
            up.stop()
        assert up.left_behind(within=10) == [], "up left processes behind"
