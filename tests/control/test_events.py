"""Chat events: the brokers (in-process and PostgreSQL LISTEN/NOTIFY) and the server-sent event stream.

The stream is served by a real uvicorn on a loopback port with the application's lifespan
(so the broker's LISTEN loop runs), and read with httpx as a client would read it.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import socket
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.abc
import httpx
import psycopg
import pytest
import uvicorn
from anyio.streams.memory import MemoryObjectReceiveStream

from agentcontext.control import identity, migrate
from agentcontext.control.api import create_app
from agentcontext.control.db import Database
from agentcontext.control.events import (
    BUFFER,
    Event,
    LocalBroker,
    PostgresBroker,
    agent_topic,
    chat_topic,
)
from agentcontext.control.plane import ControlPlane
from agentcontext.control.service import broker_for
from agentcontext.control.settings import ControlSettings
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash
from tests.helpers import free_port
from tests.pg_cluster import TempCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

WAIT = 10.0  # seconds any single wait may take before the test fails
WORK = "/srv/work"
AGENTS_MD = f"{WORK}/AGENTS.md"


def drain(receive: MemoryObjectReceiveStream[Event]) -> list[Event]:
    """Everything queued for a subscriber right now."""
    out = []
    while True:
        try:
            out.append(receive.receive_nowait())
        except anyio.WouldBlock:
            return out


async def next_event(receive: MemoryObjectReceiveStream[Event], timeout: float = WAIT) -> Event:
    with anyio.fail_after(timeout):
        return await receive.receive()


# --- the in-process broker -------------------------------------------------------------------


async def test_a_subscriber_hears_only_the_topics_it_subscribed_to() -> None:
    broker = LocalBroker()
    chat_a, chat_b, agent_x = chat_topic("a"), chat_topic("b"), agent_topic("x")
    with broker.subscribe([chat_a, agent_x]) as first, broker.subscribe([chat_b]) as second:
        await broker.publish(
            [
                Event(chat_a, "pinned", {"chat_id": "a"}),
                Event(chat_b, "out_of_date", {"chat_id": "b"}),
                Event(agent_x, "agent_online", {"agent_id": "x"}),
                Event(chat_topic("c"), "refreshed", {"chat_id": "c"}),  # nobody listens
            ]
        )
        assert [(e.topic, e.kind) for e in drain(first)] == [(chat_a, "pinned"), (agent_x, "agent_online")]
        assert [(e.topic, e.kind) for e in drain(second)] == [(chat_b, "out_of_date")]
        assert broker.fanout.topics == 3
    assert broker.fanout.topics == 0  # leaving unsubscribes


async def test_every_subscriber_of_a_topic_hears_each_event_once_in_order() -> None:
    broker = LocalBroker()
    topic = chat_topic("a")
    with broker.subscribe([topic]) as first, broker.subscribe([topic, topic]) as second:
        await broker.publish([Event(topic, "out_of_date", {"n": 1}), Event(topic, "refreshed", {"n": 2})])
        assert [e.data["n"] for e in drain(first)] == [1, 2]
        assert [e.data["n"] for e in drain(second)] == [1, 2]


async def test_a_slow_subscriber_gets_lagged_and_never_blocks_the_publisher() -> None:
    broker = LocalBroker()
    topic = chat_topic("a")
    with broker.subscribe([topic]) as slow, broker.subscribe([topic]) as fast:
        heard = []
        with anyio.fail_after(5):  # the publisher never waits for the slow one
            for n in range(BUFFER + 50):
                await broker.publish([Event(topic, "out_of_date", {"n": n})])
                heard += drain(fast)
        assert [e.data["n"] for e in heard] == list(range(BUFFER + 50))  # the one keeping up lost nothing

        queued = drain(slow)
        assert [e.data["n"] for e in queued[:BUFFER]] == list(range(BUFFER))
        assert [e.kind for e in queued[BUFFER:]] == ["lagged"]  # told once, however much it missed

        await broker.publish([Event(topic, "refreshed", {"n": "after"})])
        assert [(e.kind, e.data) for e in drain(slow)] == [("refreshed", {"n": "after"})]  # caught up: hears again


async def test_closing_the_broker_ends_every_subscription_now_and_later() -> None:
    broker = LocalBroker()
    with broker.subscribe([chat_topic("a")]) as before:
        broker.close()
        with anyio.fail_after(WAIT):
            assert [event async for event in before] == []
    with broker.subscribe([chat_topic("a")]) as after, anyio.fail_after(WAIT):
        assert [event async for event in after] == []
    assert broker.fanout.topics == 0


# --- the PostgreSQL broker -------------------------------------------------------------------


@contextlib.asynccontextmanager
async def pg_broker(conninfo: str) -> AsyncIterator[PostgresBroker]:
    """A replica's broker with its LISTEN loop running (listening before the block starts)."""
    broker = PostgresBroker(conninfo, retry_after=0.05)
    async with anyio.create_task_group() as group:
        await group.start(broker.run)
        assert broker.listening.is_set()
        yield broker
        group.cancel_scope.cancel()


def terminate_backend(admin_url: str, pid: int) -> None:
    with psycopg.connect(admin_url, autocommit=True) as connection:
        row = connection.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
        assert row == (True,)


async def test_a_notify_through_one_replica_reaches_the_subscribers_of_both(pg_database: str) -> None:
    url = pg_database
    topic, other = chat_topic("a"), chat_topic("b")
    async with pg_broker(url) as one, pg_broker(url) as two:
        with one.subscribe([topic]) as on_one, two.subscribe([topic]) as on_two, two.subscribe([other]) as elsewhere:
            await one.publish([Event(topic, "out_of_date", {"chat_id": "a", "n": 1})])
            assert (await next_event(on_two)).data == {"chat_id": "a", "n": 1}
            assert (await next_event(on_one)).data == {"chat_id": "a", "n": 1}  # heard back, not delivered twice

            await two.publish([Event(topic, "refreshed", {"n": 2}), Event(other, "pinned", {"n": 3})])
            assert [(await next_event(on_one)).data["n"], (await next_event(on_two)).data["n"]] == [2, 2]
            assert (await next_event(elsewhere)).data == {"n": 3}
            assert drain(on_one) + drain(on_two) + drain(elsewhere) == []  # each event exactly once


async def test_the_listener_reconnects_after_its_connection_is_killed_and_says_lagged(
    pg_cluster: TempCluster,
) -> None:
    url = pg_cluster.create_database()
    topic = chat_topic("a")
    async with pg_broker(url) as publisher, pg_broker(url) as replica:
        with replica.subscribe([topic]) as receive:
            killed = replica.listener_pid
            assert killed is not None
            terminate_backend(pg_cluster.admin_url, killed)

            assert (await next_event(receive)).kind == "lagged"  # back, and it may have missed something
            assert replica.listening.is_set() and replica.listener_pid not in (None, killed)
            await publisher.publish([Event(topic, "out_of_date", {"after": "reconnect"})])
            assert (await next_event(receive)).data == {"after": "reconnect"}


async def test_publishing_reconnects_after_its_connection_is_killed(pg_cluster: TempCluster) -> None:
    url = pg_cluster.create_database()
    topic = chat_topic("a")
    async with pg_broker(url) as publisher, pg_broker(url) as replica:
        with replica.subscribe([topic]) as receive:
            await publisher.publish([Event(topic, "pinned", {"n": 1})])
            assert (await next_event(receive)).data == {"n": 1}
            connection = publisher._publisher
            assert connection is not None
            terminate_backend(pg_cluster.admin_url, connection.info.backend_pid)

            await publisher.publish([Event(topic, "out_of_date", {"n": 2})])
            assert (await next_event(receive)).data == {"n": 2}
            assert drain(receive) == []


def open_backends(admin_url: str, database_url: str, settle_at: int = 0) -> int:
    """Connections to the database of ``database_url`` other than the asking one, waiting a moment for the count
    to reach ``settle_at`` (a backend leaves a moment after its client closed the socket)."""
    name = psycopg.conninfo.conninfo_to_dict(database_url)["dbname"]
    with psycopg.connect(admin_url, autocommit=True) as connection:
        count = -1
        for _ in range(100):
            row = connection.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (name,)
            ).fetchone()
            count = row[0] if row else -1
            if count == settle_at:
                break
            time.sleep(0.02)
        return count


@contextlib.contextmanager
def no_connection_left_to_the_collector() -> Iterator[None]:
    """Fails if a connection is found open only when it is garbage (psycopg warns from ``__del__`` then)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


class HeldReplies:
    """A loopback relay to PostgreSQL that can hold the server's replies: a client's handshake or statement then
    waits, its backend busy with it, for as long as a test needs (a slow network, made to order)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answered = anyio.Event()  # the server replied while replies were held
        self.released = anyio.Event()
        self.released.set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        """Relay on a loopback port, yielding its ``host:port``."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, self._relay)
            yield f"127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
            group.cancel_scope.cancel()

    def hold(self) -> None:
        """From now on, replies wait for ``release``."""
        self.answered, self.released = anyio.Event(), anyio.Event()

    def release(self) -> None:
        self.released.set()

    async def _relay(self, client: anyio.abc.SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.port) as server:

            async def to_server() -> None:
                async for data in client:
                    await server.send(data)
                await server.send_eof()

            async def to_client() -> None:
                async for data in server:
                    if not self.released.is_set():
                        self.answered.set()
                        await self.released.wait()
                    await client.send(data)

            async with anyio.create_task_group() as group:
                group.start_soon(to_server)
                await to_client()
                group.cancel_scope.cancel()


def through(url: str, relay: str) -> str:
    """``url`` with its host and port replaced by the relay's; no TLS or GSS negotiation first, so the server's
    first reply is to the startup message, from a backend that has started."""
    parts = psycopg.conninfo.conninfo_to_dict(url)
    host, _, port = relay.partition(":")
    return psycopg.conninfo.make_conninfo(
        "", **{**parts, "host": host, "port": port, "sslmode": "disable", "gssencmode": "disable"}
    )


@pytest.mark.parametrize("work", ["listen", "publish"])
async def test_a_broker_cancelled_while_its_connection_is_being_made_leaves_none_open(
    pg_cluster: TempCluster, work: str
) -> None:
    url = pg_cluster.create_database()
    relay = HeldReplies(pg_cluster.port)
    broker = PostgresBroker(url, retry_after=0.05)
    count = partial(open_backends, pg_cluster.admin_url, url)
    with no_connection_left_to_the_collector():
        async with relay.running() as address:
            relay.hold()
            async with anyio.create_task_group() as group:
                broker.conninfo = through(url, address)
                if work == "listen":
                    group.start_soon(broker.run)
                else:
                    group.start_soon(broker.publish, [Event(chat_topic("a"), "out_of_date", {"n": 1})])
                with anyio.fail_after(WAIT):
                    await relay.answered.wait()  # the backend is up; the client still waits for its reply
                assert await anyio.to_thread.run_sync(partial(count, settle_at=1)) == 1
                group.cancel_scope.cancel()
                relay.release()
            # counted while the relay still carries whatever the broker left open
            assert await anyio.to_thread.run_sync(count) == 0
        del broker


async def test_a_listener_stopped_at_any_moment_closes_its_connection(pg_cluster: TempCluster) -> None:
    url = pg_cluster.create_database()
    async with pg_broker(url):
        pass
    started = time.perf_counter()
    async with pg_broker(url):
        until_listening = time.perf_counter() - started  # connecting, then LISTEN
    with no_connection_left_to_the_collector():
        for step in range(60):  # from before the connection is made to after LISTEN
            broker = PostgresBroker(url, retry_after=0.05)
            async with anyio.create_task_group() as group:
                group.start_soon(broker.run)
                await anyio.sleep(until_listening * step / 40)
                group.cancel_scope.cancel()
            del broker
    assert open_backends(pg_cluster.admin_url, url) == 0


async def test_a_publish_cancelled_while_its_statement_is_unanswered_leaves_no_connection_open(
    pg_cluster: TempCluster,
) -> None:
    url = pg_cluster.create_database()
    relay = HeldReplies(pg_cluster.port)
    count = partial(open_backends, pg_cluster.admin_url, url)
    event = Event(chat_topic("a"), "out_of_date", {"n": 1})
    with no_connection_left_to_the_collector():
        async with relay.running() as address:
            broker = PostgresBroker(through(url, address))  # no LISTEN loop: its end would close the connection
            await broker.publish([event])  # connected, and kept for the publishes after it
            assert await anyio.to_thread.run_sync(partial(count, settle_at=1)) == 1
            relay.hold()
            async with anyio.create_task_group() as group:
                group.start_soon(broker.publish, [event])
                with anyio.fail_after(WAIT):
                    await relay.answered.wait()  # the statement ran; its answer has not reached the broker
                group.cancel_scope.cancel()
            relay.release()
            assert await anyio.to_thread.run_sync(count) == 0  # while the relay still carries what is left
            await broker.publish([event])  # the next publish opens a fresh one
            assert await anyio.to_thread.run_sync(partial(count, settle_at=1)) == 1
            await broker.aclose()
            assert await anyio.to_thread.run_sync(count) == 0
            del broker


async def test_publish_falls_back_to_local_delivery_when_postgresql_is_unreachable() -> None:
    broker = PostgresBroker(f"postgresql://postgres@127.0.0.1:{free_port()}/nothing", retry_after=0.05)
    topic = chat_topic("a")
    async with anyio.create_task_group() as group:
        await group.start(broker.run)  # starts (and keeps retrying) even without a database
        assert not broker.listening.is_set()
        with broker.subscribe([topic]) as receive, anyio.fail_after(WAIT):
            await broker.publish([Event(topic, "out_of_date", {"chat_id": "a"})])
            assert [(e.kind, e.data) for e in drain(receive)] == [("out_of_date", {"chat_id": "a"})]
        group.cancel_scope.cancel()


async def test_events_sent_with_a_write_go_out_when_it_commits_in_order_and_not_when_it_rolls_back(
    pg_database: str,
) -> None:
    url = pg_database
    topic = chat_topic("a")
    db = Database(url)
    async with pg_broker(url) as one, pg_broker(url) as two:
        with two.subscribe([topic]) as receive:

            def rolled_back(connection: Any) -> None:
                assert one.send_with(connection, [Event(topic, "pinned", {"n": 0})]) == ()
                raise RuntimeError("the write fails after its events were handed over")

            with pytest.raises(RuntimeError):
                await anyio.to_thread.run_sync(db.write_rows, rolled_back)
            sent = [Event(topic, "out_of_date", {"n": n}) for n in (1, 2, 3)]
            left = await anyio.to_thread.run_sync(db.write_rows, lambda c: one.send_with(c, sent))
            assert left == ()
            assert [(await next_event(receive)).data["n"] for _ in range(3)] == [1, 2, 3]
            await anyio.sleep(0.2)
            assert drain(receive) == []  # the rolled-back write's event never went out
    db.dispose()


async def test_a_burst_of_notifications_sent_in_one_transaction_all_arrive_in_order(
    pg_database: str,
) -> None:
    url = pg_database
    topic = chat_topic("a")
    count = BUFFER - 6  # all queued before the subscriber reads one, none lagged
    async with pg_broker(url) as replica:
        with replica.subscribe([topic]) as receive:
            payloads = [Event(topic, "out_of_date", {"n": n, "pad": "x" * 300}).to_json() for n in range(count)]
            with psycopg.connect(url, autocommit=True) as other:  # one transaction: one burst of bytes
                other.execute(
                    "SELECT pg_notify(%s, p) FROM unnest(%s::text[]) WITH ORDINALITY AS e(p, n) ORDER BY n",
                    (PostgresBroker.CHANNEL, payloads),
                )
            heard = [(await next_event(receive)).data["n"] for _ in range(count)]
            assert heard == list(range(count))
            await anyio.sleep(0.2)
            assert drain(receive) == []


async def test_a_malformed_notification_is_skipped_and_the_next_one_delivered(pg_database: str) -> None:
    url = pg_database
    topic = chat_topic("a")
    async with pg_broker(url) as replica:
        with replica.subscribe([topic]) as receive:
            with psycopg.connect(url, autocommit=True) as other:
                for payload in ("{not json", '{"topic": "chat:a"}', Event(topic, "pinned", {"n": 1}).to_json()):
                    other.execute("SELECT pg_notify(%s, %s)", (PostgresBroker.CHANNEL, payload))
            assert (await next_event(receive)).data == {"n": 1}
            assert replica.listening.is_set()  # the listener kept its connection


async def test_a_local_broker_leaves_a_writes_events_to_publish_after_commit() -> None:
    events = [Event(chat_topic("a"), "pinned", {})]
    assert LocalBroker().send_with(None, events) is events  # type: ignore[arg-type]


async def test_an_event_too_large_for_a_notification_arrives_truncated(pg_database: str) -> None:
    url = pg_database
    topic = chat_topic("a")
    changed = [f"/srv/work/.agents/skills/skill-{n:04d}/SKILL.md" for n in range(1000)]
    async with pg_broker(url) as one, pg_broker(url) as two, anyio.create_task_group():
        with two.subscribe([topic]) as receive:
            await one.publish([Event(topic, "refreshed", {"chat_id": "a", "version": 7, "changed": changed})])
            assert (await next_event(receive)).data == {"chat_id": "a", "version": 7, "truncated": True}


# --- the event stream over HTTP --------------------------------------------------------------


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Deployment:
    plane: ControlPlane
    url: str
    alice: str  # user tokens
    bob: str
    agent_id: str
    agent_token: str

    def client(self, token: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=WAIT)


@contextlib.asynccontextmanager
async def deployment(db_url: str, settings: ControlSettings | None = None) -> AsyncIterator[Deployment]:
    """The control plane's app on a loopback port, with its lifespan (broker loop and sweeper)."""
    db = Database(db_url)
    migrate.upgrade(db)
    alice = db.write(lambda s: identity.create_user(s, "alice"))
    bob = db.write(lambda s: identity.create_user(s, "bob"))
    agent = db.write(lambda s: identity.create_agent(s, "ws", "dev"))
    plane = ControlPlane(db, broker_for(db), settings)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(plane), log_level="warning", timeout_graceful_shutdown=2)
    server = _Server(config)
    try:
        with sock:
            async with anyio.create_task_group() as group:
                group.start_soon(server.serve, [sock])
                with anyio.fail_after(WAIT):
                    while not server.started:  # uvicorn offers no event for it
                        await anyio.sleep(0.01)
                yield Deployment(
                    plane, f"http://127.0.0.1:{sock.getsockname()[1]}", alice.token, bob.token, agent.id, agent.token
                )
                server.should_exit = True
                plane.broker.close()
    finally:
        await plane.aclose()
        db.dispose()


@pytest.fixture
async def served(db_url: str) -> AsyncIterator[Deployment]:
    async with deployment(db_url) as running:
        yield running


def snapshot_body(version: int, text: str, *, initial: bool = False) -> dict[str, Any]:
    data = text.encode()
    resource = Resource(
        Kind.INSTRUCTION_FILE, AGENTS_MD, Scope.PROJECT, Status.OK, len(data), hashlib.sha256(data).hexdigest(), text
    )
    return {
        "version": version,
        "aggregate_hash": aggregate_hash([resource]),
        "initial": initial,
        "work_dir": WORK,
        "payload_bytes": len(data),
        "resources": [resource.to_dict()],
        "agent": {"url": "http://127.0.0.1:9/", "run_id": "run-1"},
    }


async def push(env: Deployment, version: int, text: str, *, initial: bool = False) -> dict[str, Any]:
    async with env.client(env.agent_token) as client:
        response = await client.post("/api/v1/agent/context", json=snapshot_body(version, text, initial=initial))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["accepted"], answer
    return answer


async def heartbeat(env: Deployment, *, online: bool) -> None:
    async with env.client(env.agent_token) as client:
        response = await client.post("/api/v1/agent/heartbeat", json={"online": online})
    assert response.status_code == 204, response.text


async def new_chat(env: Deployment) -> dict[str, Any]:
    async with env.client(env.alice) as client:
        response = await client.post("/api/v1/chats", json={"workspace": "ws"})
    assert response.status_code == 201, response.text
    chat: dict[str, Any] = response.json()
    return chat


class EventStream:
    """A chat's server-sent events as ``(kind, data)``, read one at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self, timeout: float = WAIT) -> tuple[str, dict[str, Any]]:
        kind = "message"
        with anyio.fail_after(timeout):
            async for line in self._lines:
                if line.startswith("event:"):
                    kind = line.partition(":")[2].strip()
                elif line.startswith("data:"):
                    return kind, json.loads(line.partition(":")[2].strip())
        raise EOFError("the event stream ended")

    async def rest(self, timeout: float = WAIT) -> list[str]:
        """The kinds of the events left, once the stream ends."""
        kinds = []
        with anyio.fail_after(timeout):
            while True:
                try:
                    kinds.append((await self.next(timeout))[0])
                except EOFError:
                    return kinds


@contextlib.asynccontextmanager
async def events(env: Deployment, chat_id: str, token: str | None = None) -> AsyncIterator[EventStream]:
    async with (
        env.client(token or env.alice) as client,
        client.stream("GET", f"/api/v1/chats/{chat_id}/events", timeout=httpx.Timeout(WAIT, read=None)) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        yield EventStream(response)


async def test_the_stream_starts_with_the_chats_state(served: Deployment) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with events(served, chat["id"]) as stream:
        kind, state = await stream.next()
    assert kind == "state"
    assert state == {
        "chat_id": chat["id"],
        "pinned_hash": chat["context"]["pinned_hash"],
        "dirty": False,
        "dirty_since": None,
        "agent_id": served.agent_id,
        "agent_online": True,
    }


async def test_a_chat_created_before_any_push_hears_pinned_on_the_first(served: Deployment) -> None:
    chat = await new_chat(served)
    assert chat["context"]["pinned_hash"] is None and chat["agent_id"] == served.agent_id
    async with events(served, chat["id"]) as stream:
        assert await stream.next() == (
            "state",
            {
                "chat_id": chat["id"],
                "pinned_hash": None,
                "dirty": False,
                "dirty_since": None,
                "agent_id": served.agent_id,
                "agent_online": False,
            },
        )
        await push(served, 1, "Use pytest.", initial=True)
        kind, pinned = await stream.next()
        if kind == "agent_online":  # the same push brought the agent online (ordering across topics is free)
            kind, pinned = await stream.next()
        assert (kind, pinned["pinned_hash"]) == ("pinned", snapshot_body(1, "Use pytest.")["aggregate_hash"])


async def test_a_push_that_changes_the_hash_sends_out_of_date_and_one_that_does_not_sends_nothing(
    served: Deployment,
) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with events(served, chat["id"]) as stream:
        assert (await stream.next())[0] == "state"
        await push(served, 2, "Use pytest.")  # a rescan with nothing new: same hash
        await push(served, 3, "Use pytest -x.")
        kind, data = await stream.next()
        assert kind == "out_of_date"  # and nothing came before it for version 2
        assert data["pinned_hash"] == chat["context"]["pinned_hash"]
        assert data["latest_hash"] == snapshot_body(3, "Use pytest -x.")["aggregate_hash"]
        assert data["dirty_since"]

        await push(served, 4, "Use pytest -q.")  # already out of date: not said again
        await push(served, 5, "Use pytest.")  # the edit reverted: up to date again
        assert await stream.next() == ("up_to_date", {"chat_id": chat["id"], "pinned_hash": data["pinned_hash"]})


async def test_a_refresh_sends_refreshed_with_what_changed(served: Deployment) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with events(served, chat["id"]) as stream:
        assert (await stream.next())[0] == "state"
        await push(served, 2, "Use pytest -x.")
        assert (await stream.next())[0] == "out_of_date"
        async with served.client(served.alice) as client:
            response = await client.put(f"/api/v1/chats/{chat['id']}/context")
        assert response.status_code == 200, response.text
        kind, data = await stream.next()
    assert kind == "refreshed"
    assert data == {
        "chat_id": chat["id"],
        "pinned_hash": snapshot_body(2, "Use pytest -x.")["aggregate_hash"],
        "version": 2,
        "added": [],
        "removed": [],
        "changed": [AGENTS_MD],
    }


async def test_heartbeats_send_agent_offline_and_agent_online_on_changes_only(served: Deployment) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with events(served, chat["id"]) as stream:
        assert (await stream.next())[1]["agent_online"] is True
        await heartbeat(served, online=True)  # already online: nothing
        await heartbeat(served, online=False)
        kind, data = await stream.next()
        assert (kind, data["agent_id"]) == ("agent_offline", served.agent_id)
        await heartbeat(served, online=False)  # already offline: nothing
        await heartbeat(served, online=True)
        kind, data = await stream.next()
        assert (kind, data["agent_id"]) == ("agent_online", served.agent_id)


async def test_an_event_between_the_state_read_and_the_subscription_is_not_lost(
    served: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream reads the chat's state once, then subscribes: what was delivered in between makes it read
    again, so the first event never says "online" about an agent that went offline meanwhile."""
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    plane = served.plane
    read = plane.chats.event_start
    reads = 0

    async def read_then_go_offline(*args: Any) -> Any:
        nonlocal reads
        reads += 1
        found = await read(*args)
        if reads == 1:  # the agent leaves after the state was read, before the stream subscribes
            mark = plane.broker.mark()
            await heartbeat(served, online=False)
            with anyio.fail_after(WAIT):  # delivered here (through PostgreSQL too) before this returns
                while not plane.broker.delivered_since([agent_topic(served.agent_id)], mark):
                    await anyio.sleep(0.01)
        return found

    monkeypatch.setattr(plane.chats, "event_start", read_then_go_offline)
    async with events(served, chat["id"]) as stream:
        kind, state = await stream.next()
    assert (kind, state["agent_online"], reads) == ("state", False, 2)
    monkeypatch.setattr(plane.chats, "event_start", read)
    reads = 0
    async with events(served, chat["id"]) as stream:
        kind, state = await stream.next()
    assert (kind, state["agent_online"]) == ("state", False)  # nothing in between: read once


async def test_the_sweeper_marks_a_silent_agent_offline_and_a_heartbeat_brings_it_back(db_url: str) -> None:
    settings = ControlSettings(offline_after=4.0, sweep_every=3600)  # sweeps only when the test asks
    async with deployment(db_url, settings) as env:
        await push(env, 1, "Use pytest.", initial=True)
        chat = await new_chat(env)
        async with events(env, chat["id"]) as stream:
            assert (await stream.next())[1]["agent_online"] is True
            assert await env.plane.sync.sweep() == []  # just heard from: stays online
            with anyio.fail_after(WAIT):
                while await env.plane.sync.sweep() == []:  # polls: silence has no event of its own
                    await anyio.sleep(0.05)
            kind, data = await stream.next()
            assert (kind, data["agent_id"]) == ("agent_offline", env.agent_id)
            assert await env.plane.sync.sweep() == []  # once

            await heartbeat(env, online=True)
            assert (await stream.next())[0] == "agent_online"


async def test_another_users_chat_is_not_found_before_any_stream_starts(served: Deployment) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with served.client(served.bob) as client:
        theirs = await client.get(f"/api/v1/chats/{chat['id']}/events")
        missing = await client.get("/api/v1/chats/00000000-0000-0000-0000-000000000000/events")
    async with served.client(served.agent_token) as client:
        as_agent = await client.get(f"/api/v1/chats/{chat['id']}/events")
    async with httpx.AsyncClient(base_url=served.url, timeout=WAIT) as client:
        anonymous = await client.get(f"/api/v1/chats/{chat['id']}/events")

    for response, status in ((theirs, 404), (missing, 404), (as_agent, 403), (anonymous, 401)):
        assert response.status_code == status
        assert response.headers["content-type"] == "application/json"
        assert chat["id"] not in response.text or response is theirs  # the id asked for, nothing more
    assert theirs.json() == {"message": "Not found.", "detail": f'chat "{chat["id"]}" not found'}
    broker = served.plane.broker
    assert isinstance(broker, LocalBroker | PostgresBroker)
    assert broker.fanout.topics == 0  # nobody subscribed on their behalf


async def test_a_stopping_server_ends_the_open_streams(served: Deployment) -> None:
    await push(served, 1, "Use pytest.", initial=True)
    chat = await new_chat(served)
    async with events(served, chat["id"]) as stream:
        assert (await stream.next())[0] == "state"
        served.plane.broker.close()  # what the server does on SIGTERM
        assert await stream.rest() == []
