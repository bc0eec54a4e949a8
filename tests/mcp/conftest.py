"""Fixtures for MCP tests: an anyio backend, free ports, and a real `agentcontext mcp --http` process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import free_port, terminate

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s")


def agentcontext_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentcontext", *args]


@dataclass
class HttpServer:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    work: Path


@pytest.fixture
def http_server(tmp_path: Path, home: Path, request: pytest.FixtureRequest) -> Iterator[HttpServer]:
    """`agentcontext mcp --http` on a free loopback port, serving the test's `work` folder."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    port = free_port()
    token = "test-token-1234"
    env = {**os.environ, "HOME": str(home)}
    log = open(tmp_path / "server.log", "wb")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        agentcontext_command("mcp", "--work-dir", str(work), "--http", f"127.0.0.1:{port}", "--token", token),
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        wait_for_port(port, process)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", token, process, work)
    finally:
        terminate(process, timeout=15)
        log.close()


def inspector() -> Path:
    """The MCP Inspector CLI installed by scripts/bootstrap --dev; skip only where Node is missing."""
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed: the MCP Inspector CLI (npm) cannot run here")
    if not INSPECTOR.exists():
        pytest.fail("the MCP Inspector is not installed: run scripts/bootstrap --dev (it runs npm install)")
    return INSPECTOR
