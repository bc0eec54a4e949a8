"""Real ``agentcontext server`` and ``agentcontext agent`` processes, and a chat's event stream read in a thread.

Every process is started by a context manager that stops it (SIGTERM, then SIGKILL if it
hangs, which fails the test) and checks that nothing it started outlives it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from tests.helpers import alive, descendants, free_port

T = TypeVar("T")
WAIT = 30.0  # seconds a process may take to start or stop, or a single wait may take
ADMIN_TOKEN = re.compile(r"\bacu_[A-Za-z0-9_-]+")


def cli(*args: str) -> str:
    """Run ``agentcontext ARGS`` to completion; its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "agentcontext", *args], capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert result.returncode == 0, f"agentcontext {' '.join(args)} failed: {result.stderr}"
    return result.stdout


def create_agent(db_url: str, workspace: str, name: str) -> str:
    """A new agent's token, from ``agentcontext workspace-agents create --json``."""
    token: str = json.loads(
        cli("workspace-agents", "create", "--workspace", workspace, "--name", name, "--json", "--db", db_url)
    )["token"]
    return token


@dataclass
class Process:
    """One running ``agentcontext`` process and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    url: str
    children: set[int] = field(default_factory=set)

    @property
    def pid(self) -> int:
        return self.process.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = WAIT) -> int:
        """SIGTERM and wait; a process that does not stop in time is killed and the test fails."""
        started = time.monotonic()
        self.children |= descendants(self.pid)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(
                    f"{self.name} did not stop within {timeout} s of SIGTERM:\n{self.text()}"
                ) from None
        print(f"{self.name} stopped in {time.monotonic() - started:.2f} s")
        return self.process.returncode

    def kill9(self) -> None:
        self.children |= descendants(self.pid)
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=WAIT)

    def assert_gone(self) -> None:
        assert self.process.poll() is not None, f"{self.name} still runs"
        assert [pid for pid in self.children if alive(pid)] == [], f"{self.name} left processes behind"


def _wait_listening(proc: Process, probe: str) -> None:
    started = time.monotonic()
    deadline = started + WAIT
    while time.monotonic() < deadline:
        if proc.process.poll() is not None:
            raise AssertionError(f"{proc.name} exited with {proc.process.returncode}:\n{proc.text()}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(proc.url + probe, timeout=2)
            print(f"{proc.name} listening after {time.monotonic() - started:.2f} s")
            return
        time.sleep(0.05)
    raise AssertionError(f"{proc.name} did not listen within {WAIT} s:\n{proc.text()}")


@contextlib.contextmanager
def _running(proc: Process, probe: str) -> Iterator[Process]:
    try:
        _wait_listening(proc, probe)
        yield proc
    finally:
        if proc.process.poll() is None:
            proc.stop()
        proc.assert_gone()


def start_server(
    db_url: str, logs: Path, *, port: int | None = None, name: str = "server", extra: tuple[str, ...] = ()
) -> Process:
    """``agentcontext server`` started, not yet waited for (``server`` waits)."""
    port = port or free_port()
    log = logs / f"{name}-{port}-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "agentcontext", "server", "--db", db_url, "--listen", f"127.0.0.1:{port}", *extra]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env={**os.environ, "COLUMNS": "200"})
    return Process(name, process, log, f"http://127.0.0.1:{port}")


@contextlib.contextmanager
def server(
    db_url: str, logs: Path, *, port: int | None = None, name: str = "server", extra: tuple[str, ...] = ()
) -> Iterator[Process]:
    """``agentcontext server --db URL`` on a loopback port, answering before the block starts."""
    with _running(start_server(db_url, logs, port=port, name=name, extra=extra), "/healthz") as proc:
        yield proc


def admin_token(proc: Process) -> str:
    """The token the first start printed on stderr."""
    found = ADMIN_TOKEN.findall(proc.text())
    assert len(found) == 1, f"expected one administrator token in the server's output:\n{proc.text()}"
    return str(found[0])


@contextlib.contextmanager
def agent(
    work: Path, logs: Path, control_plane: str, token: str, *extra: str, name: str = "agent"
) -> Iterator[Process]:
    """``agentcontext agent`` over ``work`` pushing to ``control_plane``, its API answering before the block."""
    port = free_port()
    log = logs / f"{name}-{port}-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "agentcontext", "agent", "--work-dir", str(work)]
    command += ["--listen", f"127.0.0.1:{port}", "--control-plane", control_plane, *extra]
    env = {**os.environ, "AGENTCONTEXT_AGENT_TOKEN": token}  # not --token: it would show in `ps`
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
    proc = Process(name, process, log, f"http://127.0.0.1:{port}")
    with _running(proc, "/api/v0/context"):
        yield proc


def agent_snapshot(proc: Process, token: str) -> dict[str, Any]:
    response = httpx.get(
        proc.url + "/api/v0/context", params={"payloads": "true"}, headers={"Authorization": f"Bearer {token}"}
    )
    response.raise_for_status()
    snapshot: dict[str, Any] = response.json()
    return snapshot


@dataclass(frozen=True)
class Received:
    at: float  # time.monotonic() when it arrived
    kind: str
    data: dict[str, Any]


class EventStream:
    """``GET /api/v1/chats/{id}/events`` read by a thread; the test takes events as they arrive."""

    def __init__(self, base_url: str, token: str, chat_id: str) -> None:
        parts = urlsplit(base_url)
        assert parts.hostname is not None and parts.port is not None
        self._connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=WAIT)
        self._connection.request("GET", f"/api/v1/chats/{chat_id}/events", headers={"Authorization": f"Bearer {token}"})
        response = self._connection.getresponse()
        if response.status != 200:
            body = response.read().decode(errors="replace")
            self._connection.close()
            raise AssertionError(f"the event stream answered {response.status}: {body}")
        assert self._connection.sock is not None
        self._socket: socket.socket = self._connection.sock
        self._socket.settimeout(None)  # events may be far apart; close() ends the wait
        self._response = response
        self._queue: queue.Queue[Received | None] = queue.Queue()
        self.seen: list[Received] = []
        self.ended = False
        self._thread = threading.Thread(target=self._read, name="sse-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        kind, data = "message", ""
        try:
            while True:
                line = self._response.readline()
                if not line:
                    break
                text = line.decode().rstrip("\r\n")
                if text.startswith("event:"):
                    kind = text.partition(":")[2].strip()
                elif text.startswith("data:"):
                    data = text.partition(":")[2].strip()
                elif text == "" and data:
                    self._queue.put(Received(time.monotonic(), kind, json.loads(data)))
                    kind, data = "message", ""
        except Exception:
            pass
        finally:
            self._queue.put(None)

    def next(self, timeout: float = WAIT) -> Received:
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event within {timeout} s; seen: {[e.kind for e in self.seen]}") from None
        if item is None:
            self.ended = True
            raise EOFError("the event stream ended")
        self.seen.append(item)
        return item

    def wait_for(
        self, kind: str, timeout: float = WAIT, accept: Callable[[Received], bool] = lambda e: True
    ) -> Received:
        """The next event of ``kind`` (that ``accept`` takes), passing over the others."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.next(max(0.0, deadline - time.monotonic()))
            if event.kind == kind and accept(event):
                return event

    def wait_end(self, timeout: float = WAIT) -> None:
        """Until the server ends the stream."""
        deadline = time.monotonic() + timeout
        with contextlib.suppress(EOFError):
            while True:
                self.next(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._connection.close()
        self._thread.join(timeout=WAIT)
        assert not self._thread.is_alive()


@contextlib.contextmanager
def event_stream(base_url: str, token: str, chat_id: str) -> Iterator[EventStream]:
    stream = EventStream(base_url, token, chat_id)
    try:
        yield stream
    finally:
        stream.close()


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s content in one step, so a scan never sees half of it."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
