"""Chat events: pinned, out of date, refreshed, agent online and offline.

A write hands back its events and they are published only after it commits. Subscribers
listen on topics (``chat:<id>``, ``agent:<id>``). On SQLite every subscriber is in the one
server process; on PostgreSQL each replica publishes with ``NOTIFY`` and delivers what it
hears on its own ``LISTEN`` connection, so a push through one replica reaches an event
stream held on another (``PostgresBroker``).

Delivery never blocks a publisher: a subscriber whose buffer is full loses the event and
is told so with a ``lagged`` event, after which it can re-read the chat.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio
import anyio.abc
import psycopg
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

log = logging.getLogger("agentcontext.control.events")
Kind = Literal["pinned", "out_of_date", "up_to_date", "refreshed", "agent_online", "agent_offline", "lagged"]
BUFFER = 256


@dataclass(frozen=True, slots=True)
class Event:
    topic: str
    kind: Kind
    data: dict[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> str:
        return json.dumps({"topic": self.topic, "kind": self.kind, "data": self.data}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Event:
        raw = json.loads(text)
        return cls(str(raw["topic"]), raw["kind"], dict(raw.get("data") or {}))


def chat_topic(chat_id: str) -> str:
    return f"chat:{chat_id}"


def agent_topic(agent_id: str) -> str:
    return f"agent:{agent_id}"


class Broker(Protocol):
    async def publish(self, events: Sequence[Event]) -> None: ...

    def subscribe(
        self, topics: Collection[str]
    ) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]: ...

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Whatever the broker needs running (the LISTEN loop); returns only when cancelled."""
        ...


class LocalFanout:
    """Delivers events to this process's subscribers."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[MemoryObjectSendStream[Event]]] = {}

    @contextlib.contextmanager
    def subscribe(self, topics: Collection[str]) -> Iterator[MemoryObjectReceiveStream[Event]]:
        send, receive = anyio.create_memory_object_stream[Event](BUFFER)
        for topic in topics:
            self._subscribers.setdefault(topic, set()).add(send)
        try:
            with receive:
                yield receive
        finally:
            for topic in topics:
                group = self._subscribers.get(topic)
                if group is not None:
                    group.discard(send)
                    if not group:
                        del self._subscribers[topic]
            send.close()

    def deliver(self, event: Event) -> None:
        for send in list(self._subscribers.get(event.topic, ())):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                log.warning("event subscriber on %s is not keeping up; dropped %s", event.topic, event.kind)
                with contextlib.suppress(anyio.WouldBlock):
                    send.send_nowait(Event(event.topic, "lagged"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    @property
    def topics(self) -> int:
        return len(self._subscribers)


class LocalBroker:
    """Events within one process (SQLite, or tests)."""

    def __init__(self) -> None:
        self.fanout = LocalFanout()

    async def publish(self, events: Sequence[Event]) -> None:
        for event in events:
            self.fanout.deliver(event)

    def subscribe(self, topics: Collection[str]) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]:
        return self.fanout.subscribe(topics)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep_forever()


class PostgresBroker:
    """Events across replicas: ``NOTIFY`` to publish, one ``LISTEN`` connection per replica to deliver.

    A replica hears its own notifications too, so it delivers only what it hears (one path,
    one order). When the database cannot be reached to publish, the events are delivered
    locally so this replica's subscribers still get them, and the failure is logged.
    """

    CHANNEL = "agentcontext_events"

    def __init__(self, conninfo: str, *, retry_after: float = 1.0) -> None:
        self.conninfo = conninfo
        self.fanout = LocalFanout()
        self.retry_after = retry_after
        self._publisher: psycopg.AsyncConnection[Any] | None = None
        self._lock = anyio.Lock()
        self.listening = anyio.Event()

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._publisher is None or self._publisher.closed:
            self._publisher = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
        return self._publisher

    async def publish(self, events: Sequence[Event]) -> None:
        async with self._lock:
            for attempt in range(2):
                try:
                    connection = await self._connection()
                    for event in events:
                        await connection.execute("SELECT pg_notify(%s, %s)", (self.CHANNEL, event.to_json()))
                    return
                except psycopg.OperationalError as exc:
                    self._publisher = None
                    if attempt == 1:
                        log.error("could not publish %d event(s) through PostgreSQL: %s", len(events), exc)
        for event in events:
            self.fanout.deliver(event)

    def subscribe(self, topics: Collection[str]) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]:
        return self.fanout.subscribe(topics)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        started = False
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as connection:
                    await connection.execute(f"LISTEN {self.CHANNEL}")
                    self.listening.set()
                    if not started:
                        started = True
                        task_status.started()
                    async for notice in connection.notifies():
                        try:
                            self.fanout.deliver(Event.from_json(notice.payload))
                        except (ValueError, KeyError) as exc:
                            log.warning("ignoring a malformed event notification: %s", exc)
            except psycopg.OperationalError as exc:
                self.listening = anyio.Event()
                log.warning("event listener lost PostgreSQL (%s); reconnecting in %.1fs", exc, self.retry_after)
                if not started:
                    started = True
                    task_status.started()
                await anyio.sleep(self.retry_after)
