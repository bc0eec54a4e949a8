"""The lean HTTP/1.1 client the control plane calls agents with, against scripted servers on loopback.

Each server is a real TCP listener that answers with the bytes a test gives it, so what the
client does with chunked bodies, closed and refused connections, oversized or garbled
answers, silence and hostile header values is seen on the wire.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
import anyio.abc
import pytest

from agentcontext.control import agent_http
from agentcontext.control.agent_http import AgentHttp, AgentHttpError
from tests.helpers import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

Answer = Callable[[bytes], bytes | None]  # the request's bytes -> the answer (None: say nothing)


def ok(body: bytes = b'{"ok": true}', *, close: bool = False) -> Answer:
    extra = b"Connection: close\r\n" if close else b""
    return lambda _: b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


@dataclass
class Server:
    url: str
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0


@contextlib.asynccontextmanager
async def scripted(answer: Answer) -> AsyncIterator[Server]:
    port = free_port()
    server = Server(f"http://127.0.0.1:{port}")

    async def handle(stream: anyio.abc.SocketStream) -> None:
        server.connections += 1
        async with stream:
            while True:
                try:
                    data = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                server.requests.append(data)
                reply = answer(data)
                if reply is None:
                    await anyio.sleep_forever()
                    return
                await stream.send(reply)
                if b"Connection: close" in reply:
                    return

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, handle)
        yield server
        group.cancel_scope.cancel()


async def get(
    client: AgentHttp, url: str, *, timeout: float = 5.0, headers: list[tuple[str, str]] | None = None
) -> tuple[int, bytes]:
    return await client.request("GET", url + "/api/v0/x?a=1", headers or [], None, connect_timeout=2, timeout=timeout)


async def test_keep_alive_connections_are_reused_and_a_closed_one_is_not() -> None:
    client = AgentHttp()
    async with scripted(ok()) as server:
        answers = [await get(client, server.url) for _ in range(3)]
    async with scripted(ok(close=True)) as closing:
        closed = [await get(client, closing.url) for _ in range(2)]
    await client.aclose()
    assert answers == [(200, b'{"ok": true}')] * 3 and server.connections == 1
    assert server.requests[0].startswith(b"GET /api/v0/x?a=1 HTTP/1.1\r\nHost: 127.0.0.1:")
    assert closed == [(200, b'{"ok": true}')] * 2 and closing.connections == 2


async def test_a_post_carries_its_length_and_a_chunked_answer_is_read_whole() -> None:
    chunked = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    client = AgentHttp()
    async with scripted(lambda _: chunked) as server:
        status, body = await client.request(
            "POST", server.url + "/p", [("Content-Type", "application/json")], b'{"a":1}', connect_timeout=2, timeout=5
        )
    await client.aclose()
    assert (status, body) == (201, b"hello world")
    assert b'Content-Length: 7\r\n\r\n{"a":1}' in server.requests[0]


async def test_an_answer_larger_than_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_http, "MAX_BODY", 1000)
    client = AgentHttp()
    async with scripted(ok(b"x" * 5000)) as server:
        with pytest.raises(AgentHttpError, match="larger than 1000 bytes"):
            await get(client, server.url)
    await client.aclose()


async def test_garbage_silence_refusal_and_hostile_headers_are_errors_not_hangs() -> None:
    client = AgentHttp()
    async with scripted(lambda _: b"SSH-2.0-OpenSSH\r\n\r\n") as garbage:
        with pytest.raises(AgentHttpError, match="not HTTP"):
            await get(client, garbage.url)
    async with scripted(lambda _: None) as silent:
        with anyio.fail_after(5):
            with pytest.raises(AgentHttpError, match="timed out") as caught:
                await get(client, silent.url, timeout=0.3)
        assert caught.value.timed_out
    with pytest.raises(AgentHttpError, match="connection refused or unreachable"):
        await get(client, f"http://127.0.0.1:{free_port()}")
    async with scripted(ok()) as server:
        with pytest.raises(ValueError, match="line break"):
            await get(client, server.url, headers=[("Authorization", "Bearer x\r\nX-Injected: 1")])
        assert server.requests == []  # nothing was sent
        with pytest.raises(ValueError, match="not an http:// URL"):
            await get(client, "https://127.0.0.1:1")
    await client.aclose()


async def test_an_answer_that_arrives_in_pieces_is_put_together() -> None:
    port = free_port()

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            for piece in (b"HTTP/1.1 200 OK\r\nCont", b"ent-Length: 4\r\n\r\nab", b"cd"):
                await stream.send(piece)
                await anyio.sleep(0.01)
            await stream.receive()

    client = AgentHttp()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, handle)
        assert await get(client, f"http://127.0.0.1:{port}") == (200, b"abcd")
        group.cancel_scope.cancel()
    await client.aclose()


@pytest.fixture(
    params=[pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"), pytest.param("asyncio", id="asyncio")]
)
def anyio_backend(request: pytest.FixtureRequest) -> object:
    """The server runs on uvloop (its transports are not asyncio's classes); tests run on plain asyncio too."""
    return request.param
