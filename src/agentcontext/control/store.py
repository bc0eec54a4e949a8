"""Where the services' database work runs: one function in one transaction, on the loop or in a worker thread.

Each request's database work is one function run in one worker thread (the driver is
synchronous) inside one transaction: a request hops to a thread once, and waits for a worker in
the pool's queue, never for a connection (the workers are as many as the pool's connections).
Against a near PostgreSQL or a SQLite file short work runs on the loop itself first, and in a
thread only when it would wait there (``loop_store``; ``near``). The events a write produces are
published after it commits (or with it, where the broker can: ``Broker.send_with``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from typing import TypeVar

import anyio
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentcontext.control.db import Database, asked_at
from agentcontext.control.events import Broker, Event
from agentcontext.control.loop_store import MISSED, Kind, LoopStore

T = TypeVar("T")


class Store:
    def __init__(self, db: Database, broker: Broker, *, on_loop: bool = True) -> None:
        self.db = db
        self.broker = broker
        self._workers = ThreadPoolExecutor(db.pool_size, thread_name_prefix="agentcontext-store")
        self.loop_store: LoopStore | None = db.loop_store() if on_loop else None

    def close(self) -> None:
        if self.loop_store is not None:
            self.loop_store.close()
        self._workers.shutdown(wait=False)

    async def thread(self, work: Callable[[], T]) -> T:
        """``work`` in a worker thread, handed to it at once; awaited to its end even by a cancelled request (a
        write's outcome is known before the request goes). anyio's ``to_thread`` first yields to the loop and
        takes a limiter's token, each a turn of the loop's queue: at 2,000 agents a push waited a median 4.8 ms
        (p99 159-188 ms) before its thread began. Here the pool's queue stands for the limiter."""
        context = copy_context()
        context.run(asked_at, time.monotonic())  # its retries' budget counts its wait for a worker
        future = self._workers.submit(context.run, work)
        with anyio.CancelScope(shield=True):
            done = await asyncio.wrap_future(future)
        return done

    async def _near(
        self, kind: Kind, in_thread: Callable[[Callable[[Connection], T]], T], work: Callable[[Connection], T]
    ) -> T:
        """``work`` on the event loop's own connection where the database is near and nothing makes it wait, else
        (or when it was handed back) ``in_thread(work)`` in a worker thread (``loop_store``)."""
        store = self.loop_store
        if store is not None and await store.ready():
            done = store.run(kind, work)
            if done is not MISSED:
                return done
        return await self.thread(partial(in_thread, work))

    async def read(self, work: Callable[[Connection], T]) -> T:
        return await self._near("read", self.db.read_rows, work)

    async def read_one(self, work: Callable[[Connection], T]) -> T:
        """``read`` for work of one statement: no transaction around it (``Database.read_one``)."""
        return await self._near("statements", self.db.read_one, work)

    async def write_one(self, work: Callable[[Connection], T]) -> T:
        """``write`` for work of one statement, its own transaction (``Database.read_one``'s way, which runs it
        again on a fresh connection when the old one was dropped, even during its commit: it must be safe to)."""
        return await self._near("statements", self.db.read_one, work)

    async def write(self, work: Callable[[Connection], T], *, near: bool = True) -> T:
        """``near``: False for large work (a push), always run in a worker thread."""
        if not near:
            return await self.thread(partial(self.db.write_rows, work))
        return await self._near("write", self.db.write_rows, work)

    async def write_events(self, work: Callable[[Connection], tuple[T, Sequence[Event]]], *, near: bool = True) -> T:
        """``write`` of work that hands back events: they go out with its transaction where the broker can
        (``Broker.send_with``), else once it has committed."""

        def run(connection: Connection) -> tuple[T, Sequence[Event]]:
            result, events = work(connection)
            return result, self.broker.send_with(connection, events)

        result, left = await self.write(run, near=near)
        await self.publish(left)
        return result

    async def read_orm(self, work: Callable[[Session], T]) -> T:
        """Read-only ``work`` on an ORM session in a worker thread (the cold reads: overviews, listings)."""

        def run() -> T:
            with self.db.read() as session:
                return work(session)

        return await self.thread(run)

    async def write_orm(self, work: Callable[[Session], T]) -> T:
        return await self.thread(partial(self.db.write, work))

    async def publish(self, events: Sequence[Event]) -> None:
        if events:
            await self.broker.publish(events)
