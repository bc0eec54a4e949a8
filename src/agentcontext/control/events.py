"""Chat events: pinned, out of date, refreshed, agent online and offline; and each accepted snapshot.

A write hands back its events and they are published only once it commits. Subscribers
listen on topics (``chat:<id>``, ``agent:<id>``). On SQLite every subscriber is in the one
server process; on PostgreSQL each replica publishes with ``NOTIFY`` (the hot paths' writes
within their own transaction, ``send_with``: their events go out exactly when it commits) and
delivers what it hears on its own ``LISTEN`` connection, so a push through one replica reaches
an event stream held on another (``PostgresBroker``).

Delivery never blocks a publisher: a subscriber whose buffer is full loses the event and
is told so with a ``lagged`` event (the buffer keeps a slot for it), after which it can
re-read the chat. A subscriber is told ``lagged`` too when a replica's ``LISTEN``
connection was lost and came back: whatever was notified meanwhile did not reach it.
Closing the broker (the server is stopping) ends every subscription, so event streams
end and the server can stop.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio
import anyio.abc
import anyio.lowlevel
import psycopg
import sqlalchemy as sa
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from sqlalchemy.engine import Connection

from agentcontext.control import prepared
from agentcontext.control.prepared import Prepared

log = logging.getLogger("agentcontext.control.events")
Kind = Literal[
    "pinned",
    "out_of_date",
    "up_to_date",
    "refreshed",
    "discovered",
    "agent_online",
    "agent_offline",
    "snapshot",
    "lagged",
]
BUFFER = 256  # ordinary events a subscriber may have queued; one more slot is kept for ``lagged``
NOTIFY_LIMIT = 7900  # PostgreSQL refuses a NOTIFY payload of 8000 bytes or more
LAST_KEPT = 65536  # topics whose last delivery is remembered (``delivered_since``)


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


def snapshot_topic(agent_id: str) -> str:
    """Each accepted push of the agent (the dashboard listens; chat streams do not)."""
    return f"snapshot:{agent_id}"


class Broker(Protocol):
    async def publish(self, events: Sequence[Event]) -> None: ...

    def send_with(self, connection: Connection, events: Sequence[Event]) -> Sequence[Event]:
        """Hand ``events`` to the write transaction on ``connection`` where the broker can (PostgreSQL: they go
        out when it commits, and not at all when it does not); what is left to ``publish`` once it has."""
        ...

    def mark(self) -> int:
        """Where this replica's deliveries stand now (see ``delivered_since``)."""
        ...

    def delivered_since(self, topics: Collection[str], mark: int) -> bool:
        """Whether any of ``topics`` had an event delivered here after ``mark``: a stream that read its state
        before subscribing reads it again only then."""
        ...

    def subscribe(
        self, topics: Collection[str]
    ) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]: ...

    def close(self) -> None:
        """End every subscription, now and later: the server is stopping."""
        ...

    async def aclose(self) -> None:
        """Release what the broker holds open (PostgreSQL: the publishing connection); the plane is closing."""
        ...

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Whatever the broker needs running (the LISTEN loop); returns only when cancelled."""
        ...


class LocalFanout:
    """Delivers events to this process's subscribers."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[MemoryObjectSendStream[Event]]] = {}
        self._closed = False
        self.sequence = 0  # deliveries so far
        self._last: dict[str, int] = {}  # topic -> the delivery that last reached it
        self._forgotten = 0  # topics not in _last may have had deliveries up to this one

    def delivered_since(self, topics: Collection[str], mark: int) -> bool:
        return any(self._last.get(topic, self._forgotten) > mark for topic in topics)

    @contextlib.contextmanager
    def subscribe(self, topics: Collection[str]) -> Iterator[MemoryObjectReceiveStream[Event]]:
        send, receive = anyio.create_memory_object_stream[Event](BUFFER + 1)
        if self._closed:
            send.close()
        for topic in topics if not self._closed else ():
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
        self.sequence += 1
        if len(self._last) >= LAST_KEPT:  # bounded: what is forgotten counts as delivered just now
            self._last.clear()
            self._forgotten = self.sequence
        self._last[event.topic] = self.sequence
        for send in list(self._subscribers.get(event.topic, ())):
            _offer(send, event)

    def lag_all(self) -> None:
        """Tell every subscriber, once each, that it may have missed events."""
        for send in {send for group in self._subscribers.values() for send in group}:
            _offer(send, Event("*", "lagged"))

    def close(self) -> None:
        self._closed = True
        for send in {send for group in self._subscribers.values() for send in group}:
            send.close()
        self._subscribers.clear()

    @property
    def topics(self) -> int:
        return len(self._subscribers)


def _offer(send: MemoryObjectSendStream[Event], event: Event) -> None:
    """Queue ``event`` without waiting; a full subscriber gets ``lagged`` in its last slot instead."""
    try:
        queued = send.statistics().current_buffer_used
        if queued < BUFFER:
            send.send_nowait(event)
        elif queued == BUFFER:  # the first event it misses: say so (later ones go unsaid)
            log.warning("event subscriber on %s is not keeping up; dropped %s", event.topic, event.kind)
            send.send_nowait(Event(event.topic, "lagged"))
    except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass


class LocalBroker:
    """Events within one process (SQLite, or tests)."""

    def __init__(self) -> None:
        self.fanout = LocalFanout()

    async def publish(self, events: Sequence[Event]) -> None:
        for event in events:
            self.fanout.deliver(event)

    def send_with(self, connection: Connection, events: Sequence[Event]) -> Sequence[Event]:
        return events

    async def aclose(self) -> None:
        pass

    def subscribe(self, topics: Collection[str]) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]:
        return self.fanout.subscribe(topics)

    def mark(self) -> int:
        return self.fanout.sequence

    def delivered_since(self, topics: Collection[str], mark: int) -> bool:
        return self.fanout.delivered_since(topics, mark)

    def close(self) -> None:
        self.fanout.close()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep_forever()


class PostgresBroker:
    """Events across replicas: ``NOTIFY`` to publish, one ``LISTEN`` connection per replica to deliver.

    A replica hears its own notifications too, so it delivers only what it hears (one path,
    one order). When the database cannot be reached to publish, the events are delivered
    locally so this replica's subscribers still get them, and the failure is logged. An
    event too large for a notification goes out without its lists (``truncated: true``):
    the subscriber re-reads the chat for the rest. When the ``LISTEN`` connection is lost
    it is opened again, and every subscriber is told ``lagged``.
    """

    CHANNEL = "agentcontext_events"

    def __init__(self, conninfo: str, *, retry_after: float = 1.0, connect_timeout: int = 5) -> None:
        self.conninfo = conninfo
        self.fanout = LocalFanout()
        self.retry_after = retry_after
        self.connect_timeout = connect_timeout
        self._publisher: psycopg.AsyncConnection[Any] | None = None
        self._lock = anyio.Lock()
        self.listening = anyio.Event()
        self.listener_pid: int | None = None  # the backend of the LISTEN connection, while it is up

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        # Cancelled mid-handshake, psycopg leaves the half-made connection open in a generator nobody closes; so
        # the handshake is shielded (``connect_timeout`` bounds it) and what it made is closed if we were cancelled.
        with anyio.CancelScope(shield=True):
            connection = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=True, connect_timeout=self.connect_timeout
            )
        try:
            await anyio.lowlevel.checkpoint_if_cancelled()
        except BaseException:
            await connection.close()
            raise
        return connection

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._publisher is None or self._publisher.closed:
            self._publisher = await self._connect()
        return self._publisher

    async def publish(self, events: Sequence[Event]) -> None:
        async with self._lock:
            for attempt in range(2):
                try:
                    connection = await self._connection()
                    for event in events:
                        await connection.execute("SELECT pg_notify(%s, %s)", (self.CHANNEL, _notification(event)))
                    return
                except (psycopg.Error, OSError) as exc:
                    await self._drop_publisher()
                    if attempt == 1 or not isinstance(exc, psycopg.OperationalError | OSError):
                        log.error("could not publish %d event(s) through PostgreSQL: %s", len(events), exc)
                        break
                except BaseException:  # cancelled mid-statement: the connection's state is unknown, and kept open
                    with anyio.CancelScope(shield=True):
                        await self._drop_publisher()
                    raise
        for event in events:
            self.fanout.deliver(event)

    def send_with(self, connection: Connection, events: Sequence[Event]) -> Sequence[Event]:
        """``NOTIFY`` every event in the writer's transaction, in one statement said with its ``COMMIT`` (in the
        same round trip): delivered on commit, in order, and not at all when it rolls back."""
        if len(events) == 1:  # the usual case: no array to build and unnest
            prepared.at_commit(connection, _NOTIFY_ONE, {"channel": self.CHANNEL, "payload": _notification(events[0])})
        elif events:
            payloads = [_notification(event) for event in events]
            prepared.at_commit(connection, _NOTIFY, {"channel": self.CHANNEL, "payloads": payloads})
        return ()

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._drop_publisher()

    async def _drop_publisher(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await publisher.close()

    def subscribe(self, topics: Collection[str]) -> contextlib.AbstractContextManager[MemoryObjectReceiveStream[Event]]:
        return self.fanout.subscribe(topics)

    def mark(self) -> int:
        return self.fanout.sequence

    def delivered_since(self, topics: Collection[str], mark: int) -> bool:
        return self.fanout.delivered_since(topics, mark)

    def close(self) -> None:
        self.fanout.close()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        started = lost = False

        def ready() -> None:  # once: listening, or found unable to (publishes then deliver locally)
            nonlocal started
            if not started:
                started = True
                task_status.started()

        try:
            while True:
                try:
                    await self._listen(ready, told_lagged=lost)
                except (psycopg.Error, OSError) as exc:
                    self.listener_pid = None
                    if self.listening.is_set():
                        self.listening = anyio.Event()
                    lost = True
                    log.warning("event listener lost PostgreSQL (%s); reconnecting in %.1fs", exc, self.retry_after)
                    ready()
                    await anyio.sleep(self.retry_after)
        finally:
            await self.aclose()

    async def _listen(self, ready: Callable[[], None], *, told_lagged: bool) -> None:
        """One ``LISTEN`` connection, delivering what it hears until it fails. ``told_lagged``: an earlier one
        was lost, and with it what was sent while none listened, so every subscriber is told ``lagged``."""
        connection = await self._connect()
        try:
            await connection.execute(f"LISTEN {self.CHANNEL}")
            self.listener_pid = connection.info.backend_pid
            self.listening.set()
            if told_lagged:
                log.info("event listener is back on PostgreSQL")
                self.fanout.lag_all()
            ready()
            async with contextlib.aclosing(connection.notifies()) as notices:
                async for notice in notices:
                    self._hear(notice.payload)
        finally:
            # Not ``async with connection``: on cancellation its exit awaits a rollback first, which the
            # pending cancel interrupts, and the socket is left open.
            with anyio.CancelScope(shield=True):
                await connection.close()

    def _hear(self, payload: str) -> None:
        try:
            self.fanout.deliver(Event.from_json(payload))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring a malformed event notification: %s", exc)


_NOTIFIED = sa.column("pg_notify", sa.Text)  # what each pg_notify returns (nothing to read: the rows are dropped)
_NOTIFY_ONE = Prepared(sa.text("SELECT pg_notify(:channel, :payload)").columns(_NOTIFIED), only="postgresql")
_NOTIFY = Prepared(
    sa.text(
        "SELECT pg_notify(:channel, e.payload) FROM unnest(CAST(:payloads AS text[])) WITH ORDINALITY AS e(payload, n)"
        " ORDER BY e.n"
    ).columns(_NOTIFIED),
    only="postgresql",
)


def _notification(event: Event) -> str:
    """The event as a NOTIFY payload; one too large loses its lists and says ``truncated``."""
    text = event.to_json()
    if len(text.encode("utf-8")) <= NOTIFY_LIMIT:
        return text
    small = {k: v for k, v in event.data.items() if isinstance(v, str | int | float | bool) or v is None}
    small = {k: v for k, v in small.items() if not isinstance(v, str) or len(v) <= 256}
    return Event(event.topic, event.kind, {**small, "truncated": True}).to_json()
