"""Clients without a token that hold connections by not reading, or by trickling a login form.

Found by a review: the control plane's ``/openapi.json`` (72 KB) is public, so 16 sockets that
pipeline requests for it and never read held all 16 connections of ``--max-connections 16`` for
good (a response waiting on its client is not idle, so it never made room), and the workspace
agent's the same; 16 slow bodies posted to the dashboard's ``/login`` held them for the 30 s
body deadline, again and again. Now an answer that waits ``Edge.write_timeout`` on a client that
reads none of it closes its connection (aborted: a close would wait, descriptor held, for the
buffer to drain), and at most ``Edge.public_bodies`` bodies without a token are read at once.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from agentcontext.server.app import build_app
from agentcontext.web.guard import Edge, RequestGuard, Verdict
from agentcontext.web.hosts import ServedHosts
from tests.attacks.http_surfaces import AGENT_HOST, Served, agent_surface, call, control_surface, guarded_serving
from tests.control.test_api import sqlite_world

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
CAP = 16


def unread(port: int, request: bytes) -> socket.socket:
    """A client that sends ``request`` and never reads: a small receive window, so answers back up."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(request)
    return sock


async def open_after(served: Served, count: int, seconds: float) -> int:
    """The connections still open ``seconds`` after ``count`` were, or once none are."""
    with anyio.fail_after(5):
        while served.open_connections() < count:
            await anyio.sleep(0.02)
    with anyio.move_on_after(seconds):
        while served.open_connections():
            await anyio.sleep(0.05)
    return served.open_connections()


async def test_clients_that_never_read_their_answers_are_cut_and_a_fresh_request_is_served(tmp_path: Path) -> None:
    edge = Edge(max_connections=CAP, write_timeout=1.0)
    async with (
        sqlite_world(tmp_path) as world,
        guarded_serving(build_app(world.plane, background=False, edge=edge), edge) as served,
    ):
        request = f"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode()
        held = [unread(served.port, request * 200) for _ in range(CAP)]  # pipelined, no token
        try:
            assert await open_after(served, CAP, 10) == 0
            async with httpx.AsyncClient(base_url=served.url, timeout=5) as client:
                assert (await client.get("/healthz")).status_code == 200
        finally:
            for sock in held:
                sock.close()


@pytest.mark.parametrize("ending", ["keep-alive", "close"])
async def test_a_connection_closed_with_its_answer_unread_lets_go_of_its_socket(tmp_path: Path, ending: str) -> None:
    """An answer that went whole into a buffer its client never drains: the response is complete, and the close
    that ends it (keep-alive's end, or the ``Connection: close`` the client asked for) would wait for that buffer
    to be read, socket held, for good."""
    edge = Edge(max_connections=CAP, keep_alive=0.5, write_timeout=1.0)
    async with sqlite_world(tmp_path) as world:
        app = build_app(world.plane, background=False, edge=edge)
        async with guarded_serving(app, edge, send_buffer=4096) as served:
            request = f"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nConnection: {ending}\r\n\r\n"
            held = [unread(served.port, request.encode()) for _ in range(4)]
            try:
                assert await open_after(served, 4, 10) == 0
            finally:
                for sock in held:
                    sock.close()


@pytest.mark.parametrize("path", ["/login", "/login/confirm"])
async def test_slow_login_forms_without_a_token_cannot_hold_every_connection(
    tmp_path: Path, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    edge = Edge(max_connections=CAP, public_bodies=4)
    async with (
        sqlite_world(tmp_path) as world,
        guarded_serving(build_app(world.plane, background=False, edge=edge), edge) as served,
    ):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\n"
        ).encode()
        slow = [await anyio.connect_tcp("127.0.0.1", served.port) for _ in range(CAP)]
        for stream in slow:
            await stream.send(head + b"t")  # and a byte now and then: the body never ends
        with anyio.fail_after(10):
            answers = [await stream.receive() for stream in slow[4:]]
        assert all(answer.startswith(b"HTTP/1.1 503 ") for answer in answers), answers[:2]
        assert b"4 requests without a token are sending their bodies already" in answers[0]
        async with httpx.AsyncClient(base_url=served.url, timeout=5) as client:
            for _ in range(3):
                for stream in slow[:4]:
                    await stream.send(b"o")
                assert (await client.get("/healthz")).status_code == 200
        with caplog.at_level(logging.ERROR):
            for stream in slow:
                await stream.aclose()  # gone mid-body: nobody to answer, and nothing to log
            await anyio.sleep(0.3)
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_no_page_of_the_control_plane_or_the_agent_loads_a_script_from_another_site(
    tmp_path: Path, home: Path
) -> None:
    """FastAPI's /docs and /redoc load Swagger UI and ReDoc from a CDN, unpinned: any script served there would
    run on the dashboard's origin, with its session. Programs read /openapi.json, still served without a token."""
    async with control_surface(tmp_path / "c") as control, agent_surface(tmp_path / "a", home) as agent:
        for app, host, title in (
            (control.app, "control", "agentcontext control plane"),
            (agent.app, AGENT_HOST, "agentcontext workspace agent"),
        ):
            for page in ("/docs", "/redoc", "/docs/oauth2-redirect"):
                answer = await call(app, "GET", page, {"Host": host})
                assert answer.status in (401, 404) and b"cdn." not in answer.body, (host, page, answer.status)
            assert (await call(app, "GET", "/openapi.json", {"Host": host})).json()["info"]["title"] == title


SIZE = 2 * 1024 * 1024


def steady_reader(port: int, rate: int) -> tuple[int, str]:
    """Reads a 2 MiB answer at ``rate`` bytes a second; what it got, and how it ended."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /big HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    got, started = 0, time.monotonic()
    while got < SIZE:
        try:
            chunk = sock.recv(8192)
        except ConnectionResetError:
            return got, "reset"
        if not chunk:
            return got, "closed"
        got += len(chunk)
        time.sleep(max(0.0, got / rate - (time.monotonic() - started)))
    sock.close()
    return got, "complete"


async def test_a_client_reading_slowly_but_steadily_is_never_cut() -> None:
    """Found by a second review: the deadline ran from the first pause, so a client reading a 2 MiB answer at
    400 KB/s was cut at the deadline, 811 KB in. Each drained byte now starts the wait again."""

    async def big(request: Request) -> Response:
        return Response(b"x" * SIZE, media_type="application/octet-stream")  # one write, as any response

    edge = Edge(write_timeout=2.0)
    async with guarded_serving(Starlette(routes=[Route("/big", big)]), edge, send_buffer=4096) as served:
        got, ended = await anyio.to_thread.run_sync(steady_reader, served.port, 400_000)
    assert ended == "complete" and got > SIZE, (got, ended)  # the head, then every byte


async def test_a_public_body_read_in_full_frees_its_place_for_the_next() -> None:
    """The cap counts bodies being read, not handlers at work: a dashboard form whose handler waits on an agent
    must not make the next form a 503."""

    async def slow(request: Request) -> Response:
        await request.body()
        await anyio.sleep(1.0)  # an approval or a refresh waiting on the agent
        return PlainTextResponse("ok")

    async def public(headers: Mapping[str, str], path: str) -> Verdict:
        return Verdict.PUBLIC

    edge = Edge(hosts=ServedHosts(frozenset({"control"})), public_bodies=1)
    app = RequestGuard(Starlette(routes=[Route("/ui/x", slow, methods=["POST"])]), edge, authenticate=public)
    statuses: list[int] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://control") as client:

        async def post() -> None:
            statuses.append((await client.post("/ui/x", content=b"a=1")).status_code)

        async with anyio.create_task_group() as group:
            group.start_soon(post)
            await anyio.sleep(0.2)  # the first body is in; its handler waits
            group.start_soon(post)
    assert statuses == [200, 200]
