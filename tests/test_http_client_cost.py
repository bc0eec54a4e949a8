"""httpx's async client as ours use it (the workspace agent's pushes and heartbeats, bench/load.py).

httpcore asks ``import sniffio`` on every async request; without the package each ask is a failed import
that searches the whole import path (~75 us, about four a request). ``sniffio`` is a dependency for
that reason: this test fails when it is missing, or when a request starts importing anything else.
"""

from __future__ import annotations

import asyncio
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import httpx

_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok"


class _Recorder(importlib.abc.MetaPathFinder):
    """Every module the import system goes looking for (a cached import never asks a finder)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        self.asked.append(fullname)
        return None


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(_ANSWER)
            await writer.drain()
    except asyncio.IncompleteReadError:
        pass  # the client closed its connection
    finally:
        writer.close()


async def _searches_during_requests(count: int) -> list[str]:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    recorder = _Recorder()
    try:
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"  # the first may import lazily
            sys.meta_path.insert(0, recorder)
            try:
                for _ in range(count):
                    assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
            finally:
                sys.meta_path.remove(recorder)
    finally:
        server.close()
        await server.wait_closed()
    return recorder.asked


def test_httpx_requests_after_the_first_search_the_import_path_for_nothing() -> None:
    assert asyncio.run(_searches_during_requests(5)) == []
