"""Child processes that never outlive ``agentcontext up``.

Each child runs in a session (and process group) of its own, so a Ctrl-C on the terminal
reaches ``up`` alone and ``up`` decides the order of the stop. On Linux each child also asks
the kernel for SIGTERM when ``up`` dies (``PR_SET_PDEATHSIG``), so even a ``kill -9`` of
``up`` stops the server and the agent, which stop what they started. Stopping sends SIGTERM
to a child's group, waits ``grace`` seconds, then SIGKILLs the group and every descendant
seen while it ran (the agent's MCP servers live in process groups of their own).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_PDEATHSIG = 1
GRACE = 10.0  # seconds a child gets to stop after SIGTERM


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    argv: Sequence[str]
    env: Mapping[str, str]
    log: Path


@dataclass
class Child:
    command: Command
    process: subprocess.Popen[bytes]
    seen: set[tuple[int, str]] = field(default_factory=set)  # (pid, start time) of descendants

    @property
    def name(self) -> str:
        return self.command.name

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.command.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGTERM when this process dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl: nobody would signal us
            os._exit(1)

    return preexec


def start_time(pid: int) -> str | None:
    """The process's start time from /proc (tells a pid from a later process reusing it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def _children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            found += map(int, (task / "children").read_text(encoding="ascii").split())
    return found


def descendants(pid: int) -> set[tuple[int, str]]:
    """``(pid, start time)`` of every live descendant of ``pid`` (empty where /proc has no children files)."""
    found: set[tuple[int, str]] = set()
    stack = [pid]
    while stack:
        for child in _children_of(stack.pop()):
            started = start_time(child)
            if started is not None and (child, started) not in found:
                found.add((child, started))
                stack.append(child)
    return found


class Supervisor:
    """Starts children, notices one that ends, and stops them all (last started first)."""

    def __init__(self, grace: float = GRACE) -> None:
        self.grace = grace
        self.children: list[Child] = []

    def start(self, command: Command) -> Child:
        command.log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with command.log.open("wb") as sink:
            process = subprocess.Popen(
                list(command.argv),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                env=dict(command.env),
                start_new_session=True,
                preexec_fn=_die_with_parent(),  # children start before any thread does
            )
        child = Child(command, process)
        self.children.append(child)
        return child

    def exited(self) -> Child | None:
        """The first child that has ended, if any; remembers the descendants of those that run."""
        for child in self.children:
            if child.process.poll() is not None:
                return child
            child.seen |= descendants(child.process.pid)
        return None

    def stop(self) -> None:
        """Stop the children one by one, the last started first (the agent says goodbye to a server that still
        listens): SIGTERM to its group, the grace period, then SIGKILL for whatever is left of it."""
        for child in reversed(self.children):
            child.seen |= descendants(child.process.pid)
            _signal_group(child.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=self.grace)
            _signal_group(child.process.pid, signal.SIGKILL)
            if child.process.poll() is None:
                child.process.wait()
            _kill_left(child.seen)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill_left(seen: set[tuple[int, str]]) -> None:
    """SIGKILL the descendants that still run (the same process: same pid and start time)."""
    for pid, started in seen:
        if start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
