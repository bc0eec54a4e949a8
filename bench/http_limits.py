"""What an unauthenticated client costs a server: a 200 MB body, and thousands of idle connections.

    .venv/bin/python bench/http_limits.py [--src DIR] [--idle 2000] [--nofile 1024]

``--src`` runs the servers from another checkout's ``src`` (``/work/main/src`` for the figures
before the request guard), with this virtualenv. Each server runs as ``python -m agentcontext``
on loopback:

* body: the workspace agent (token from ``AGENTCONTEXT_AGENT_TOKEN``) is sent
  ``POST /api/v0/context/sources`` with ``Content-Length: 200 MB`` and no token, over a raw
  socket, the body streamed until the server answers or closes; reported: the answer, the
  seconds to it, the bytes the client got to send, and the agent's peak RSS (``VmHWM``)
  before and after;
* idle: the agent and the control plane, started with a soft limit of ``--nofile`` file
  descriptors (as on many desktops), get ``--idle`` connections that never send a byte, then
  one fresh request (5 s timeout); reported: how many idle connections the client could
  open, whether and how fast the fresh request was served, and the sockets the server holds;
* guard: (this checkout only) what the request guard adds to one request, in process: a
  bare ASGI app against the same app behind ``RequestGuard`` (Host, Origin, token hook,
  body counting), medians of 7 rounds of 20,000 calls.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from control import free_port

TOKEN = "bench-http-limits-token"
HUGE = 200 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)


def _limit(nofile: int | None) -> Callable[[], None] | None:
    if nofile is None:
        return None

    def set_limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    return set_limit


@contextlib.contextmanager
def started(
    args: list[str], src: Path | None, root: Path, probe: str, nofile: int | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    env = {**os.environ, "HOME": str(root), "AGENTCONTEXT_AGENT_TOKEN": TOKEN}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [sys.executable, "-m", "agentcontext", *args, "--listen", f"127.0.0.1:{port}"]
    with (root / f"{args[0]}-{port}.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log, preexec_fn=_limit(nofile))
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"http://127.0.0.1:{port}{probe}", timeout=1)
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"{args[0]} did not start; see {root}")
            time.sleep(0.1)
        yield process, port
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
        process.kill()  # nothing when it has ended
        process.wait()


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def socket_fds(pid: int) -> int:
    fds = Path(f"/proc/{pid}/fd")
    count = 0
    for name in os.listdir(fds):
        with contextlib.suppress(OSError):
            count += os.readlink(fds / name).startswith("socket:")
    return count


def huge_body(port: int) -> tuple[str, float, int]:
    head = (
        f"POST /api/v0/context/sources HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {HUGE}\r\n\r\n"
    )
    sent = 0
    started_at = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(head.encode())
        with contextlib.suppress(OSError):
            while sent < HUGE:
                sock.sendall(CHUNK)
                sent += len(CHUNK)
        answer = b""
        with contextlib.suppress(OSError):
            while b"\r\n" not in answer and (chunk := sock.recv(4096)):
                answer += chunk
    return answer.split(b"\r\n")[0].decode(errors="replace"), time.monotonic() - started_at, sent


def body_run(src: Path | None, root: Path) -> None:
    work = root / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("rules\n", encoding="utf-8")
    with started(["agent", "--work-dir", str(work)], src, root, "/api/v0/context") as (process, port):
        time.sleep(1.0)
        rss, peak = vm_kib(process.pid, "VmRSS"), vm_kib(process.pid, "VmHWM")
        status, seconds, sent = huge_body(port)
        time.sleep(0.5)
        after = vm_kib(process.pid, "VmHWM")
    print(f"200 MB body, no token: {status!r} after {seconds:.2f} s; the client sent {sent / 2**20:.0f} MiB")
    print(f"  agent RSS before {rss / 1024:.1f} MiB; peak before {peak / 1024:.1f} MiB, after {after / 1024:.1f} MiB")


def idle_run(name: str, args: list[str], probe: str, src: Path | None, root: Path, idle: int, nofile: int) -> None:
    with started(args, src, root, probe, nofile) as (process, port):
        opened: list[socket.socket] = []
        try:
            for _ in range(idle):
                try:
                    opened.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                except OSError:
                    break
            time.sleep(1.0)
            held = socket_fds(process.pid)
            started_at = time.monotonic()
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}{probe}", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
                )
                fresh = f"{response.status_code} in {time.monotonic() - started_at:.3f} s"
            except httpx.HTTPError as exc:
                fresh = f"failed after {time.monotonic() - started_at:.1f} s ({type(exc).__name__})"
        finally:
            for sock in opened:
                sock.close()
    print(f"{name}, nofile {nofile}: {len(opened)} idle connections opened; server holds {held} sockets;", end=" ")
    print(f"fresh request {fresh}")


def guard_cost() -> None:
    import statistics

    import anyio

    from agentcontext.web.guard import Edge, RequestGuard, Verdict

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def authenticate(headers: Any, path: str) -> Verdict:
        return Verdict.AUTHENTICATED

    guarded = RequestGuard(app, Edge(), authenticate=authenticate)
    scope: dict[str, Any] = {"type": "http", "method": "GET", "path": "/", "scheme": "http"}
    scope["server"] = ("127.0.0.1", 8766)
    scope["headers"] = [(b"host", b"127.0.0.1:8766"), (b"authorization", b"Bearer x"), (b"accept", b"*/*")]

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        pass

    async def rounds() -> tuple[float, float]:
        bare: list[float] = []
        behind: list[float] = []
        for _ in range(7):
            for target, into in ((app, bare), (guarded, behind)):
                started_at = time.perf_counter()
                for _ in range(20_000):
                    await target(scope, receive, send)
                into.append((time.perf_counter() - started_at) / 20_000 * 1e6)
        return statistics.median(bare), statistics.median(behind)

    bare, behind = anyio.run(rounds)
    print(f"guard: a bare ASGI call {bare:.2f} us, behind the guard {behind:.2f} us: +{behind - bare:.2f} us a request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, help="run the servers from this checkout's src")
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--nofile", type=int, default=1024)
    options = parser.parse_args()
    print(f"code: {options.src or 'this checkout'}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        body_run(options.src, root)
        work = root / "work"
        agent = ["agent", "--work-dir", str(work)]
        idle_run("agent", agent, "/api/v0/context", options.src, root, options.idle, options.nofile)
        server = ["server", "--db", f"sqlite:///{root / 'control.db'}"]
        idle_run("control plane", server, "/healthz", options.src, root, options.idle, options.nofile)
    if options.src is None:
        guard_cost()


if __name__ == "__main__":
    main()
