"""Test helpers that need a real operating system rather than a fake one."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from agentcontext.testing import backdate as backdate  # re-exported: the tests import it from here

T = TypeVar("T")

# What `agents`, the agent's views route and the dashboard's tabs show, in this order: written out, not read from
# VIEW_PROFILES, so a profile dropped or moved there fails the tests
AGENT_VIEWS = ("codex", "claude", "gemini", "opencode", "copilot", "cursor", "coder", "default")

_SCAN_SCRIPT = """
import json, sys
from pathlib import Path
from agentcontext.testing import scan_tree
result = scan_tree(Path(sys.argv[1]), home=Path(sys.argv[2]), profile=sys.argv[3])
print(json.dumps({r.path: [str(r.status), r.error] for r in result.snapshot.resources}))
"""


def unprivileged(command: list[str]) -> list[str]:
    """Run ``command`` so file permissions apply: as root, drop the capabilities that bypass them."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise RuntimeError("running as root without setpriv: permission tests cannot run")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]


def as_unprivileged_user(work_dir: Path, home: Path, profile: str = "default") -> dict[str, tuple[str, str | None]]:
    """Scan in a subprocess where chmod 000 really denies reading; returns path -> (status, error)."""
    output = subprocess.run(
        unprivileged([sys.executable, "-c", _SCAN_SCRIPT, str(work_dir), str(home), profile]),
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    return {path: (status, error) for path, (status, error) in json.loads(output).items()}


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie has ended; only its exit status is left)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc/<pid>/task/*/children)."""
    found: set[int] = set()
    stack = [pid]
    while stack:
        current = stack.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                for child in map(int, (task / "children").read_text().split()):
                    if child not in found:
                        found.add(child)
                        stack.append(child)
    return found


def terminate(process: subprocess.Popen[Any], timeout: float = 20) -> None:
    """SIGTERM a child that still runs and reap it; SIGKILL if it outlives ``timeout``."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def poll(fetch: Callable[[], T], accept: Callable[[T], bool], what: str, timeout: float = 30.0) -> T:
    """``fetch()`` until ``accept`` takes its value (for what has no event of its own), bounded."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last value: {value!r}")
        time.sleep(0.05)


@contextlib.contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served from a thread on a free loopback port, for the block: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
