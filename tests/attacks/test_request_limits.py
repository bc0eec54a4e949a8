"""Requests that cost the server before anyone is known: a 200 MB body, idle and trickling connections, a slow body.

Before the guard the agent read a 200 MB body whole before answering 401 (707 MB of memory),
and 22,000 connections that never sent a request exhausted the agent's and the control
plane's file descriptors. Now authentication and the declared size are checked before the
body is read (none of it is pulled), a body without a declared size is cut at the limit, and
every server keeps at most ``--max-connections`` open, closing the longest idle one for a
new client: a fresh request is served however many idle sockets an attacker holds.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest

from agentcontext.agent.api import create_app as agent_app
from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.transports import http_app
from agentcontext.mcp.workspace import Workspace
from agentcontext.testing import isolated_environ, make_workspace, test_config
from agentcontext.web.guard import Edge, KiB, MiB
from tests.agent.test_service import agent_process
from tests.attacks.http_surfaces import (
    AGENT_HOST,
    AGENT_TOKEN,
    INITIALIZE,
    MCP_HEADERS,
    Served,
    agent_surface,
    call,
    control_surface,
    endless,
    guarded_serving,
    mcp_process,
)
from tests.control.processes import server
from tests.helpers import poll

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]
HUGE = 200 * MiB


def declared(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "Content-Length": str(HUGE), "Content-Type": "application/json"}


async def test_a_200_mb_body_without_a_token_is_answered_401_and_never_read(tmp_path: Path, home: Path) -> None:
    async with agent_surface(tmp_path / "a", home) as agent, control_surface(tmp_path / "c") as control:
        work = make_workspace(tmp_path / "m", {"AGENTS.md": "rules"})
        workspace = Workspace(str(work), config=test_config(work, home=home), environ=isolated_environ(home))
        mcp = http_app(ContextServer(workspace), "127.0.0.1", 8766, "mcp-token")
        surfaces = [
            (agent.app, "/api/v0/context/sources", {"Host": AGENT_HOST}),
            (agent.app, "/api/v0/mcp/call-tool", {"Host": AGENT_HOST, "Authorization": "Bearer wrong"}),
            (control.app, "/api/v1/agent/context", {"Host": "control"}),
            (control.app, "/api/v1/users/me/skills", {"Host": "control", "Authorization": "Bearer acu_wrong"}),
            (mcp, "/mcp", {"Host": AGENT_HOST, **MCP_HEADERS}),
        ]
        for app, path, headers in surfaces:
            for sent in (declared(headers), headers):  # with Content-Length, and streamed without one
                answer = await call(app, "POST", path, sent, endless(HUGE))
                assert answer.status == 401, (path, answer)
                assert answer.pulled == 0, (path, answer.pulled)
                assert answer.headers["connection"] == "close"


async def test_a_200_mb_body_with_a_token_is_cut_at_the_limit(tmp_path: Path, home: Path) -> None:
    async with agent_surface(tmp_path / "a", home) as agent, control_surface(tmp_path / "c") as control:
        token = control.world.tokens["alice"]
        surfaces = [
            (agent.app, "/api/v0/context/sources", {"Host": AGENT_HOST, "Authorization": f"Bearer {AGENT_TOKEN}"}),
            (control.app, "/api/v1/users/me/skills", {"Host": "control", "Authorization": f"Bearer {token}"}),
        ]
        for app, path, headers in surfaces:
            answer = await call(app, "POST", path, declared(headers), endless(HUGE))
            assert (answer.status, answer.pulled) == (413, 0)
            assert answer.json() == {"message": "Request body too large.", "detail": f"at most {8 * MiB} bytes"}
            streamed = await call(app, "POST", path, headers, endless(HUGE))
            assert streamed.status == 413 and streamed.json()["message"] == "Request body too large."
            assert 8 * MiB < streamed.pulled <= 9 * MiB  # read up to the limit and one chunk, no further


async def test_a_form_anyone_may_post_takes_at_most_64_kib(tmp_path: Path) -> None:
    async with control_surface(tmp_path) as control:
        headers = {"Host": "control", "Content-Type": "application/x-www-form-urlencoded"}
        for target in ("/login", "/login/confirm"):
            answer = await call(control.app, "POST", target, headers, endless(HUGE, 16 * KiB))
            assert answer.status == 413 and answer.json()["detail"] == f"at most {64 * KiB} bytes"
            assert answer.pulled <= 80 * KiB


def _vm_peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


def _send_huge_without_token(port: int) -> bytes:
    """POST a 200 MB body without a token over a raw socket; what the server answered (it closes early)."""
    head = f"POST /api/v0/context/sources HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {HUGE}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode() + b"Content-Type: application/json\r\n\r\n")
        with contextlib.suppress(OSError):  # the server answers and closes long before 200 MB
            for chunk in endless(HUGE):
                sock.sendall(chunk)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    return answer


def test_a_real_agent_answers_a_200_mb_body_without_its_memory_growing(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    with agent_process(work, home) as agent:
        pid, port = agent.process.pid, int(agent.url.rpartition(":")[2])
        before = _vm_peak_kib(pid)
        answer = _send_huge_without_token(port)
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
        grown = _vm_peak_kib(pid) - before
        assert grown < 32 * 1024, f"the agent's peak memory grew by {grown} KiB"  # it was 700 MB


def _socket_fds(pid: int) -> int:
    fds = Path(f"/proc/{pid}/fd")
    count = 0
    for name in os.listdir(fds):
        try:
            count += os.readlink(fds / name).startswith("socket:")
        except FileNotFoundError:  # closed between the listing and the read: not held
            continue
    return count


@contextlib.contextmanager
def _idle_sockets(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections to ``port`` that never send a byte."""
    opened: list[socket.socket] = []
    try:
        opened.extend(socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count))
        yield opened
    finally:
        for sock in opened:
            sock.close()


@pytest.mark.parametrize("command", ["agent", "server", "mcp"])
def test_idle_connections_never_keep_a_fresh_request_out(tmp_path: Path, home: Path, command: str) -> None:
    cap = ("--max-connections", "16")
    with contextlib.ExitStack() as stack:
        if command == "agent":
            work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
            agent = stack.enter_context(agent_process(work, home, *cap))
            pid, url, headers = agent.process.pid, agent.url + "/api/v0/context", agent.auth
        elif command == "server":
            proc = stack.enter_context(server(f"sqlite:///{tmp_path / 'c.db'}", tmp_path, extra=cap))
            pid, url, headers = proc.process.pid, proc.url + "/healthz", {}
        else:
            mcp = stack.enter_context(mcp_process(tmp_path, *cap))
            pid, url = mcp.process.pid, mcp.url
            headers = {**MCP_HEADERS, "Authorization": f"Bearer {mcp.token}"}
        port = int(url.split(":")[2].split("/")[0])
        with _idle_sockets(port, 300):
            started = time.monotonic()
            if command == "mcp":
                response = httpx.post(url, json=INITIALIZE, headers=headers, timeout=10)
            else:
                response = httpx.get(url, headers=headers, timeout=10)
            assert response.status_code == 200, response.text
            assert time.monotonic() - started < 5
            held = poll(lambda: _socket_fds(pid), lambda n: n <= 16 + 4, "idle connections to be closed", 10)
            assert held <= 20  # the listener, the cap, and a few of the server's own (was: all 300)


async def test_a_connection_that_trickles_its_request_head_is_closed_at_the_deadline(
    tmp_path: Path, home: Path
) -> None:
    async with (
        agent_surface(tmp_path, home) as agent,
        guarded_serving(agent.app, Edge(header_timeout=0.5, max_connections=64)) as served,
    ):
        streams = [await anyio.connect_tcp("127.0.0.1", served.port) for _ in range(10)]
        closed = 0
        with anyio.fail_after(10):
            for stream in streams:
                try:
                    for byte in b"GET /api/v0/context HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000:
                        await stream.send(bytes([byte]))
                        await anyio.sleep(0.01)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                    closed += 1
                finally:
                    await stream.aclose()
        assert closed == 10
        assert served.open_connections() == 0
        headers = {"Authorization": f"Bearer {AGENT_TOKEN}"}
        async with httpx.AsyncClient(base_url=served.url, headers=headers) as client:
            assert (await client.get("/api/v0/context")).status_code == 200


@pytest.mark.parametrize("h11", [False, True], ids=["httptools", "h11"])
async def test_at_the_cap_the_longest_idle_connection_makes_room(tmp_path: Path, home: Path, h11: bool) -> None:
    async with (
        agent_surface(tmp_path, home) as agent,
        guarded_serving(agent.app, Edge(max_connections=8), h11=h11) as served,
    ):
        idle = [await anyio.connect_tcp("127.0.0.1", served.port) for _ in range(100)]
        headers = {"Authorization": f"Bearer {AGENT_TOKEN}"}
        async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=5) as client:
            assert (await client.get("/api/v0/context")).status_code == 200
            assert served.open_connections() <= 9
        for stream in idle:
            await stream.aclose()


async def test_a_body_that_takes_too_long_is_answered_408(tmp_path: Path, home: Path) -> None:
    edge = Edge(body_timeout=0.5)
    async with agent_surface(tmp_path, home) as agent:
        app = agent_app(agent.agent, token=AGENT_TOKEN, edge=edge)
        async with guarded_serving(app, edge) as served:
            await _send_a_slow_body(served.port)
        assert list(agent.agent.sources) == []


async def _send_a_slow_body(port: int) -> None:
    head = (
        f"POST /api/v0/context/sources HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {AGENT_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    stream = await anyio.connect_tcp("127.0.0.1", port)
    async with stream:
        await stream.send(head.encode() + b'{"path": ')  # and the rest never comes
        with anyio.fail_after(10):
            answer = await stream.receive()
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"did not arrive within 0.5 seconds" in answer


@pytest.mark.parametrize("h11", [False, True], ids=["httptools", "h11"])
async def test_a_request_head_over_64_kib_is_refused_before_it_is_kept(tmp_path: Path, home: Path, h11: bool) -> None:
    async with agent_surface(tmp_path, home) as agent, guarded_serving(agent.app, Edge(), h11=h11) as served:
        line = f"GET /api/v0/context HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n".encode()
        stream = await anyio.connect_tcp("127.0.0.1", served.port)
        async with stream:
            await stream.send(line + b"X-Big: " + b"a" * (70 * KiB) + b"\r\n")  # and the head goes on
            with anyio.fail_after(10):
                answer = await stream.receive()
        assert answer.startswith(b"HTTP/1.1 431 " if not h11 else b"HTTP/1.1 400 "), answer[:100]
        sent, flood = 0, await anyio.connect_tcp("127.0.0.1", served.port)
        with anyio.fail_after(10):
            try:
                await flood.send(line)
                while sent < 512 * MiB:  # a head that never ends: the server closes long before
                    await flood.send(b"X-More: " + b"a" * (64 * KiB) + b"\r\n")
                    sent += 64 * KiB
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                pass
            finally:
                await flood.aclose()
        assert sent < 64 * MiB  # what the socket buffers took before the server had closed
        headers = {"Authorization": f"Bearer {AGENT_TOKEN}", "X-Fine": "a" * (32 * KiB)}
        async with httpx.AsyncClient(base_url=served.url, headers=headers) as client:
            assert (await client.get("/api/v0/context")).status_code == 200


# --- keep-alive: a client's connection kept between its requests, within the same bounds ------------------


async def _get(stream: anyio.abc.SocketStream, port: int) -> bytes:
    """One ``GET /api/v0/context`` on ``stream`` and its whole answer (read by its Content-Length)."""
    auth = f"Authorization: Bearer {AGENT_TOKEN}\r\n"
    await stream.send(f"GET /api/v0/context HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}\r\n".encode())
    answer = b""
    with anyio.fail_after(10):
        while b"\r\n\r\n" not in answer:
            answer += await stream.receive()
        head, _, body = answer.partition(b"\r\n\r\n")
        length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:])
        while len(body) < length:
            body += await stream.receive()
    return head


async def _closed_by_the_server(stream: anyio.abc.SocketStream, within: float) -> bool:
    with anyio.move_on_after(within):
        try:
            return await stream.receive() == b""  # pragma: no cover - anyio raises at the end of the stream
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
            return True
    return False


@contextlib.asynccontextmanager
async def _served_once(
    tmp_path: Path, home: Path, edge: Edge, *, h11: bool = False
) -> AsyncIterator[tuple[Served, anyio.abc.SocketStream]]:
    """The agent's app behind ``edge``, and a connection that one request was answered on (kept open)."""
    async with agent_surface(tmp_path, home) as agent, guarded_serving(agent.app, edge, h11=h11) as served:
        stream = await anyio.connect_tcp("127.0.0.1", served.port)
        async with stream:
            assert (await _get(stream, served.port)).startswith(b"HTTP/1.1 200 ")
            yield served, stream


async def test_a_connection_idle_between_requests_serves_the_next_past_the_head_deadline_until_keep_alive(
    tmp_path: Path, home: Path
) -> None:
    edge = Edge(header_timeout=0.5, keep_alive=2.0, max_connections=64)
    async with _served_once(tmp_path, home, edge) as (served, stream):
        await anyio.sleep(1.0)  # twice the head deadline, idle
        assert (await _get(stream, served.port)).startswith(b"HTTP/1.1 200 ")  # the same connection
        assert await _closed_by_the_server(stream, within=4.0)  # idle past keep-alive
    assert served.open_connections() == 0
    assert served.server.config.census.open == 0  # type: ignore[attr-defined]


async def _trickle_a_head(stream: anyio.abc.SocketStream, *, for_at_most: float) -> float:
    """Send a request's head a byte every 10 ms until the server closes; the seconds that took."""
    started = time.monotonic()
    with anyio.move_on_after(for_at_most), contextlib.suppress(anyio.BrokenResourceError, ConnectionError):
        for byte in b"GET /api/v0/context HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 2000:
            await stream.send(bytes([byte]))
            await anyio.sleep(0.01)
    assert await _closed_by_the_server(stream, within=1.0)
    return time.monotonic() - started


@pytest.mark.parametrize("h11", [False, True], ids=["httptools", "h11"])
async def test_a_kept_connection_that_trickles_its_next_head_is_closed_at_the_head_deadline(
    tmp_path: Path, home: Path, h11: bool
) -> None:
    edge = Edge(header_timeout=0.5, keep_alive=30.0, max_connections=64)
    async with _served_once(tmp_path, home, edge, h11=h11) as (_, stream):
        assert await _trickle_a_head(stream, for_at_most=8.0) < 4  # the head's deadline, not keep-alive's 30 s


@pytest.mark.parametrize("h11", [False, True], ids=["httptools", "h11"])
async def test_a_connection_idle_past_an_idle_check_that_then_trickles_a_head_is_closed_at_the_head_deadline(
    tmp_path: Path, home: Path, h11: bool
) -> None:
    """The check that found it idle set its next one for keep-alive's end; the head's first byte brings it forward."""
    edge = Edge(header_timeout=0.5, keep_alive=30.0, max_connections=64)
    async with _served_once(tmp_path, home, edge, h11=h11) as (_, stream):
        await anyio.sleep(1.0)  # past the first check (0.5 s after the connection opened), idle
        assert await _trickle_a_head(stream, for_at_most=8.0) < 4


@pytest.mark.parametrize("h11", [False, True], ids=["httptools", "h11"])
async def test_at_the_cap_kept_connections_make_room_the_longest_idle_first(
    tmp_path: Path, home: Path, h11: bool
) -> None:
    edge = Edge(max_connections=4, keep_alive=30.0)
    async with agent_surface(tmp_path, home) as agent, guarded_serving(agent.app, edge, h11=h11) as served:
        kept = [await anyio.connect_tcp("127.0.0.1", served.port) for _ in range(4)]
        for stream in kept:  # each served once, then idle: the first the longest
            assert (await _get(stream, served.port)).startswith(b"HTTP/1.1 200 ")
        assert (await _get(kept[1], served.port)).startswith(b"HTTP/1.1 200 ")  # idle again, now the shortest
        fresh = await anyio.connect_tcp("127.0.0.1", served.port)
        assert (await _get(fresh, served.port)).startswith(b"HTTP/1.1 200 ")
        assert await _closed_by_the_server(kept[0], within=5.0)
        newer = await anyio.connect_tcp("127.0.0.1", served.port)
        assert (await _get(newer, served.port)).startswith(b"HTTP/1.1 200 ")
        assert await _closed_by_the_server(kept[2], within=5.0)  # kept[1] was used after it
        for stream in (kept[1], kept[3], fresh):
            assert (await _get(stream, served.port)).startswith(b"HTTP/1.1 200 ")  # still open
        assert served.server.config.census.open == 4  # type: ignore[attr-defined]
        for stream in (*kept, fresh, newer):
            await stream.aclose()
