"""bench/http1.py, the load generator's lean HTTP/1.1 client, against a real socket server that answers as told."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from http1 import Connection, TransportError  # bench/ is not a package

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

Answering = Callable[[bytes, asyncio.StreamWriter], Any]  # what the server does with each request's head


def plain(body: bytes, **headers: str) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n{extra}\r\n".encode() + body


@asynccontextmanager
async def server(answer: Answering) -> AsyncIterator[tuple[str, list[int]]]:
    """A server on loopback calling ``answer`` for each request; its base URL and each connection's request count."""
    served: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(0)
        at = len(served) - 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                served[at] += 1
                sized = [line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
                await reader.readexactly(int(sized[0].split(b":")[1]) if sized else 0)
                await answer(head, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", served
    finally:
        listening.close()


async def test_requests_share_one_keep_alive_connection_and_each_gets_its_own_answer() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(plain(head.split(b" ")[1]))  # the path asked, as the body

    async with server(answer) as (base, served):
        http = Connection.to(base)
        bodies = [(await http.request("GET", f"/{n}")).body for n in range(3)]
        posted = await http.request("POST", "/p", json_body={"a": 1})
        http.close()
    assert bodies == [b"/0", b"/1", b"/2"] and posted.body == b"/p" and posted.ok
    assert http.opened == 1 and served == [4]


async def test_an_answer_that_arrives_in_pieces_is_read_whole_by_its_length_or_its_chunks() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        if b"/chunked" in head:
            whole = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        else:
            whole = plain(b"x" * 5000, **{"x-prompt-cache": "hit"})
        for at in range(0, len(whole), 7):  # a few bytes at a time
            writer.write(whole[at : at + 7])
            await writer.drain()
            await asyncio.sleep(0)

    async with server(answer) as (base, _):
        http = Connection.to(base)
        chunked = await http.request("GET", "/chunked")
        sized = await http.request("GET", "/sized")
        http.close()
    assert chunked.body == b"hello world"
    assert sized.body == b"x" * 5000 and sized.headers[b"x-prompt-cache"] == b"hit"


async def test_a_connection_the_server_closed_while_idle_is_opened_again_for_the_next_request() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(plain(b"ok"))
        writer.close()  # as uvicorn does with a connection idle past its keep-alive

    async with server(answer) as (base, served):
        http = Connection.to(base)
        first = await http.request("GET", "/")
        await asyncio.sleep(0.1)  # the close arrives while nothing is asked
        second = await http.request("GET", "/")
        http.close()
    assert (first.body, second.body) == (b"ok", b"ok")
    assert http.opened == 2 and served == [1, 1]


async def test_a_server_that_never_answers_fails_the_request_and_the_next_opens_a_new_connection() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        if sum(served) == 1:
            return  # the first request is never answered
        writer.write(plain(b"late"))

    async with server(answer) as (base, served):
        http = Connection.to(base, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(TransportError, match="no answer in 0.3 s"):
            await http.request("GET", "/")
        took = time.monotonic() - started
        second = await http.request("GET", "/")
        http.close()
    assert 0.3 <= took < 2 and second.body == b"late"
    assert http.opened == 2


async def test_an_answer_to_a_cancelled_request_is_never_taken_for_the_next_requests() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        if b"/slow" in head:
            await asyncio.sleep(0.3)
        writer.write(plain(head.split(b" ")[1]))

    async with server(answer) as (base, _):
        http = Connection.to(base)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await http.request("GET", "/slow")
        await asyncio.sleep(0.4)  # the slow answer has come by now, to the connection the cancel closed
        after = await http.request("GET", "/next")
        http.close()
    assert after.body == b"/next" and http.opened == 2


async def test_a_closed_connection_fails_the_request_waiting_on_it() -> None:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort")  # five bytes of ten, then gone
        writer.close()

    async with server(answer) as (base, _):
        http = Connection.to(base)
        with pytest.raises(TransportError, match="closed"):
            await http.request("GET", "/")
        http.close()
