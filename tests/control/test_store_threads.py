"""The store's worker threads: work handed over at once, awaited to its end, as many at once as the pool has
connections."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import anyio
import pytest

from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.store import Store

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Database(f"sqlite:///{tmp_path / 'control.db'}", pool_size=2)
    made = Store(db, LocalBroker(), on_loop=False)
    yield made
    made.close()
    db.dispose()


async def test_work_begins_in_its_thread_before_the_loop_takes_another_turn(store: Store) -> None:
    """A busy loop's turn is long: work that waited for one (or two) before its thread began waited that long."""
    began = threading.Event()
    task = asyncio.get_running_loop().create_task(store.thread(began.set))
    await asyncio.sleep(0)  # the task runs once, up to its first wait
    assert began.wait(2), "the work did not begin while the loop was held"  # the loop is held here, blocked
    await task


async def test_a_cancelled_caller_waits_for_its_work_to_end(store: Store) -> None:
    """A write's outcome is known before its request goes, cancelled or not."""
    ended: list[float] = []

    def work() -> None:
        time.sleep(0.3)  # outlasts the caller's deadline
        ended.append(time.monotonic())

    with anyio.move_on_after(0.05):
        await store.thread(work)
    assert len(ended) == 1  # the work had ended when the cancelled caller went on


async def test_work_past_the_pools_size_waits_for_a_worker(store: Store) -> None:
    """No more work runs at once than the pool has connections (2 here): none waits for a connection."""
    running = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(store.thread, work)
    assert most == 2


async def test_an_error_in_the_work_is_raised_to_its_caller(store: Store) -> None:
    def work() -> None:
        raise ValueError("from the worker")

    with pytest.raises(ValueError, match="from the worker"):
        await store.thread(work)


async def test_writes_queued_behind_a_lock_answer_within_the_budget_from_when_they_were_asked(tmp_path: Path) -> None:
    """More writes than workers while another process holds the database: each answers 503 within its budget,
    counted from when it was asked (its wait for a worker with it), and none is written after its client, which
    waits 30 s, has given up."""
    import sqlite3

    import sqlalchemy as sa

    from agentcontext.control.client import TIMEOUT
    from agentcontext.control.db import BUSY_WAIT_MS, RETRY_FOR, StorageUnavailable

    path = tmp_path / "control.db"
    db = Database(f"sqlite:///{path}", pool_size=2)
    db.write_rows(lambda c: c.execute(sa.text("CREATE TABLE t (x INTEGER)")))
    store = Store(db, LocalBroker(), on_loop=False)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    released = threading.Timer(TIMEOUT + 2, lambda: holder.execute("ROLLBACK"))
    released.start()
    answered: list[tuple[int, str, float]] = []
    asked = time.monotonic()

    async def write(i: int) -> None:
        try:
            await store.thread(partial(db.write_rows, lambda c: c.execute(sa.text(f"INSERT INTO t VALUES ({i})"))))
            answered.append((i, "written", time.monotonic() - asked))
        except StorageUnavailable:
            answered.append((i, "busy", time.monotonic() - asked))

    try:
        async with anyio.create_task_group() as group:
            for i in range(6):  # three times the workers
                group.start_soon(write, i)
    finally:
        released.join()
        holder.close()
        store.close()
        db.dispose()
    assert sorted(what for _, what, _ in answered) == ["busy"] * 6, answered
    assert max(at for _, _, at in answered) < min(TIMEOUT, RETRY_FOR + BUSY_WAIT_MS / 1000 + 1), answered
