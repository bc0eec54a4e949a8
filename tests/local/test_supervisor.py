"""Children of ``agentcontext up`` never outlive it: stopped in groups, or by the kernel when it dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from agentcontext.local.supervisor import Command, Supervisor
from tests.helpers import alive, descendants

# a child that starts a grandchild in a session of its own (as the agent does with MCP servers) and ignores SIGTERM
STUBBORN = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    subprocess.Popen(["sleep", "300"], start_new_session=True)
    print("ready", flush=True)
    time.sleep(300)
    """
)


def _wait_ready(log: Path) -> None:
    deadline = time.monotonic() + 20
    while "ready" not in log.read_text() if log.exists() else True:
        assert time.monotonic() < deadline, "the child did not start"
        time.sleep(0.05)


def test_stop_kills_a_child_that_ignores_sigterm_and_its_grandchild_in_another_session(tmp_path: Path) -> None:
    supervisor = Supervisor(grace=0.5)
    child = supervisor.start(Command("stubborn", [sys.executable, "-c", STUBBORN], {}, tmp_path / "stubborn.log"))
    _wait_ready(tmp_path / "stubborn.log")
    assert supervisor.exited() is None
    tree = descendants(child.process.pid) | {child.process.pid}
    assert len(tree) == 2
    supervisor.stop()
    time.sleep(0.1)
    assert [pid for pid in tree if alive(pid)] == []


def test_exited_names_the_child_that_ended(tmp_path: Path) -> None:
    supervisor = Supervisor(grace=0.5)
    supervisor.start(Command("sleeper", ["sleep", "30"], {}, tmp_path / "sleeper.log"))
    quick = supervisor.start(Command("quick", ["sh", "-c", "echo bye; exit 3"], {}, tmp_path / "quick.log"))
    quick.process.wait(timeout=10)
    assert supervisor.exited() is quick
    assert quick.log_tail() == "bye"
    supervisor.stop()


PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from agentcontext.local.supervisor import Command, Supervisor
    child = Supervisor().start(Command("sleeper", ["sleep", "300"], {}, Path(sys.argv[1])))
    print(child.process.pid, flush=True)
    time.sleep(300)
    """
)


def test_children_get_sigterm_when_the_supervising_process_is_killed(tmp_path: Path) -> None:
    command = [sys.executable, "-c", PARENT, str(tmp_path / "s.log")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)
