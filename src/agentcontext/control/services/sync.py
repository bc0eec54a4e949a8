"""Sync and ingest: what agents push and beat, agents marked offline, discovered files rechecked.

A push is checked against the contract whole (``wire.sync``), its URL against where agents may
be called, and written in one transaction (``ingest``) that marks the agent's chats out of date;
an agent token only pushes for its own agent. With context sync switched off every push and
heartbeat is refused (501), so agents stop.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentcontext.control import contents, identity, ingest, rediscovery
from agentcontext.control import discovered_answer as answers
from agentcontext.control import tables as t
from agentcontext.control.agent_reach import AgentReach
from agentcontext.control.events import Event, agent_topic, snapshot_topic
from agentcontext.control.models import now
from agentcontext.control.settings import ControlSettings
from agentcontext.control.store import Store
from agentcontext.control.turn_cache import Recent
from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.wire.sync import (
    AgentInfo,
    DiscoveredWatchInfo,
    HeartbeatRequest,
    PushRequest,
    PushResponse,
    validated,
)

log = logging.getLogger("agentcontext.control")
SYNC_DISABLED = "workspace agent context sync is disabled on this deployment"
LOOP_PUSH_RESOURCES = 200  # SQLite: a push of at most so many resources is written on the event loop
# seconds between rechecks of an agent that watches its chats' discovered files (it says when one changes): a
# backstop for a change its watch could not see (one an overflowing inotify queue lost, say)
WATCHED_RECHECK_EVERY = 300.0
COLLECT_FIRST, COLLECT_EVERY = 60.0, 600.0  # seconds to the first deletion of unreferenced texts, and between two


class SyncDisabled(UnavailableError):
    """The deployment switched context sync off: agents should stop pushing (HTTP 501)."""


class SyncService:
    def __init__(
        self, store: Store, reach: AgentReach, settings: ControlSettings, written: Recent[ingest.Written]
    ) -> None:
        self._store = store
        self._reach = reach
        self._settings = settings
        self._written = written  # by agent: the snapshot rows this replica wrote last (a refresh reads them too)
        self._rechecked: dict[str, float] = {}  # agent id -> when its discovered files were last rechecked
        self._taught: dict[str, str | None] = {}  # agent id -> its run asked about every discovered file here

    def check_enabled(self) -> None:
        """Raises: SyncDisabled (context sync is switched off on this deployment)."""
        if not self._settings.sync_enabled:
            raise SyncDisabled(SYNC_DISABLED)

    async def push(self, agent: identity.AgentPrincipal, body: PushRequest | Mapping[str, Any]) -> PushResponse:
        """Raises: UnavailableError (sync disabled), ContractError (a push that breaks the contract, refused whole)."""
        self.check_enabled()
        checked = body if isinstance(body, PushRequest) else validated(PushRequest, body)
        self._reach.check(checked.agent or AgentInfo())
        written = self._written.get(agent.agent_id, None)

        def work(connection: Connection) -> tuple[ingest.Outcome, list[Event]]:
            outcome = ingest.ingest(
                connection, agent.agent_id, checked, now=now(), box=self._reach.secrets, written=written
            )
            events = list(outcome.events)
            if outcome.accepted:
                data = {"agent_id": agent.agent_id, "version": outcome.version}
                events.append(Event(snapshot_topic(agent.agent_id), "snapshot", data))
            return outcome, events

        # on PostgreSQL tens of statements, each a round trip: a worker thread's; on SQLite the library's own
        # work, on the loop unless the push is large (a run there stops at 50 ms and is done again in a thread)
        near = self._store.db.is_sqlite and len(checked.checked_resources) <= LOOP_PUSH_RESOURCES
        outcome = await self._store.write_events(work, near=near)
        if outcome.written is not None:  # committed: the next push compares against these without reading them
            self._written.put(agent.agent_id, None, outcome.written)
        return PushResponse(accepted=outcome.accepted, version=outcome.version, stored_version=outcome.stored_version)

    async def heartbeat(self, agent: identity.AgentPrincipal, body: HeartbeatRequest | Mapping[str, Any]) -> None:
        """Raises: UnavailableError (sync disabled), ContractError."""
        self.check_enabled()
        beat = body if isinstance(body, HeartbeatRequest) else validated(HeartbeatRequest, body)
        info = beat.agent or AgentInfo()
        self._reach.check(info)
        if beat.online:
            box = self._reach.secrets
            if self._store.db.is_sqlite or not await self._store.write_one(
                lambda c: ingest.beat(c, agent.agent_id, info, box=box)
            ):
                await self._store.write_events(
                    lambda c: (None, ingest.touch_agent(c, agent.agent_id, info, now=now(), box=box, last=True))
                )
            await self._recheck_on_beat(agent.agent_id, info.run_id, beat.discovered)
        else:
            await self._store.write_events(lambda c: (None, _go_offline(c, agent.agent_id)))

    async def _recheck_on_beat(self, agent_id: str, run_id: str | None, watch: DiscoveredWatchInfo | None) -> None:
        """A heartbeat's recheck: at once when the agent saw a discovered file change; rarely while it watches
        every one this replica asked it about in this run (``WATCHED_RECHECK_EVERY``, a backstop); else at most
        every ``recheck_every`` seconds (an older agent, one past its watch cap, a new run not asked yet)."""
        if watch is not None and watch.changed:
            await self.recheck_discovered(agent_id, force=True, run_id=run_id)
            return
        watching = watch is not None and watch.watching and run_id is not None and self._taught.get(agent_id) == run_id
        every = max(WATCHED_RECHECK_EVERY, self._settings.recheck_every) if watching else None
        await self.recheck_discovered(agent_id, every=every, run_id=run_id)

    async def recheck_discovered(
        self, agent_id: str, *, force: bool = False, every: float | None = None, run_id: str | None = None
    ) -> list[str]:
        """Ask the agent again about the discovered files of its chats; mark those whose files changed out of
        date (no push shows such a change). At most once every ``every`` (``recheck_every``) seconds an agent,
        unless ``force``; an agent that cannot answer is skipped (its chats keep their pins). Returns the chats
        marked. ``run_id``: the agent's run, which now watches every file asked about (when all were)."""
        clock = anyio.current_time()
        interval = self._settings.recheck_every if every is None else every
        if not force and clock - self._rechecked.get(agent_id, -1e18) < interval:
            return []
        self._rechecked[agent_id] = clock
        found = await self._store.read_one(lambda c: rediscovery.watched(c, agent_id))
        if found is None:
            self._taught[agent_id] = run_id
            return []
        address = self._reach.address(agent_id, found.url, found.sealed_secret)
        try:
            answer = await answers.ask(self._reach.link, address, found.causes)
        except (UnavailableError, InvalidRequestError) as exc:
            log.info("agent %s: discovered files not rechecked: %s", agent_id, exc)
            return []
        if found.complete:  # every cause asked: that run watches them all from now on
            self._taught[agent_id] = run_id
        changed, new = rediscovery.stale(found, answer)
        if new:  # files that apply and are not pinned: new, unless the snapshot holds them
            appeared = await self._store.read(lambda c: rediscovery.appeared(c, agent_id, new))
            changed = {chat: changed.get(chat, []) + appeared.get(chat, []) for chat in {*changed, *appeared}}
        if not changed:
            return []

        def work(connection: Connection) -> tuple[list[Event], list[Event]]:
            events = rediscovery.mark(connection, changed, now=now())
            return events, events

        return [event.data["chat_id"] for event in await self._store.write_events(work)]

    async def sweep(self) -> list[str]:
        """Mark agents silent for ``offline_after`` seconds offline; returns their ids. On PostgreSQL silence is told
        by the database's clock, not this replica's (``identity.offline_after``)."""
        silence = dt.timedelta(seconds=self._settings.offline_after)
        gone = await self._store.write_orm(lambda s: identity.offline_after(s, silence, now=now()))
        await self._store.publish([_offline_event(agent_id) for agent_id in gone])
        return gone

    async def collect_contents(self) -> int:
        """Delete the texts nothing points at any more (a push that changes a file leaves its old text); returns
        how many. A page of keys is read without a lock, then deleted in a short write that rechecks each under
        its row lock (``contents``), so pushes go on meanwhile and SQLite's one writer is held a page at a time."""
        removed, after = 0, ""
        while True:
            page = await self._store.thread(
                partial(self._store.db.read_rows, partial(contents.unreferenced_page, after=after))
            )
            if page.unreferenced:
                delete = partial(contents.delete_unreferenced, keys=page.unreferenced)
                removed += await self._store.write(delete, near=False)
            if page.last is None:
                return removed
            after = page.last

    async def run_collector(self) -> None:
        wait = COLLECT_FIRST
        while True:
            await anyio.sleep(wait)
            wait = COLLECT_EVERY
            try:
                removed = await self.collect_contents()
            except Exception:  # the database busy or gone: the next round starts over
                log.exception("deleting the texts nothing points at")
            else:
                if removed:
                    log.info("deleted %d stored texts nothing pointed at any more", removed)

    async def run_sweeper(self) -> None:
        while True:
            await anyio.sleep(self._settings.sweep_every)
            try:
                await self.sweep()
            except Exception:
                log.exception("marking silent agents offline")


_GO_OFFLINE = (
    sa.update(t.agents)
    .where(t.agents.c.id == sa.bindparam("agent_id"), t.agents.c.online.is_(True))
    .values(online=False)
    .returning(t.agents.c.id)
)


def _go_offline(connection: Connection, agent_id: str) -> list[Event]:
    changed = connection.execute(_GO_OFFLINE, {"agent_id": agent_id}).first()
    return [_offline_event(agent_id)] if changed else []


def _offline_event(agent_id: str) -> Event:
    return Event(agent_topic(agent_id), "agent_offline", {"agent_id": agent_id, "at": now().isoformat()})
