"""Events said with a write's COMMIT on PostgreSQL are bound into the SQL on this side (``prepared.at_commit``):
text a hostile agent chose (paths in a refresh's diff, a chat's title) must arrive as sent, and never run."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import sqlalchemy as sa

from agentcontext.control import migrate
from agentcontext.control import tables as t
from agentcontext.control.db import Database
from agentcontext.control.events import Event, PostgresBroker, chat_topic

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

HOSTILE = [
    "a'); DROP TABLE chats; --",
    "back\\slash\\'quote",
    "$$; COMMIT; DROP TABLE chats; $$",
    "E'\\x27'",
    "semi;colon\nnew line\ttab",
    "\u2028 line separator, \U0001f600 emoji, \ufeff BOM",
    "%(payload)s %s {} ::text",
]


async def test_hostile_text_in_events_said_with_commit_arrives_as_sent_and_runs_nothing(
    pg_database: str,
) -> None:
    url = pg_database
    db = Database(url)
    migrate.upgrade(db)
    topic = chat_topic("a")
    listener = PostgresBroker(url)
    sender = PostgresBroker(url)
    async with anyio.create_task_group() as group:
        await group.start(listener.run)
        with listener.subscribe([topic]) as receive:
            one = [Event(topic, "refreshed", {"changed": [text], "n": 0}) for text in HOSTILE[:1]]
            many = [Event(topic, "refreshed", {"changed": [text], "n": n}) for n, text in enumerate(HOSTILE, 1)]
            for events in (one, many):  # one event (pg_notify of a text), several (of an array)

                def write(connection: Any, events: list[Event] = events) -> Any:
                    return sender.send_with(connection, events)

                assert await anyio.to_thread.run_sync(db.write_rows, write) == ()
                with anyio.fail_after(10):
                    heard = [await receive.receive() for _ in events]
                assert [event.data for event in heard] == [event.data for event in events]
        group.cancel_scope.cancel()
    assert db.read_rows(lambda c: c.execute(sa.select(sa.func.count()).select_from(t.chats)).scalar()) == 0
    db.dispose()
