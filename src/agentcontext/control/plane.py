"""The control plane's operations, one method each, for the HTTP API (and tests) to call.

Each request's database work is one function run in one worker thread (the driver is
synchronous) inside one transaction: a request hops to a thread once, and waits for a
worker in the event loop, never for a connection (the workers are as many as the pool's
connections). Against a near PostgreSQL or a SQLite file short work runs on the loop itself
first, and in a thread only when it would wait there (``loop_store``; ``_near``). The events a write
produces are published after it commits. Access rules live here: a user reaches only their
own chats and skills and the workspaces open to them; an agent token only pushes for its
own agent.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

import anyio
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from agentcontext import __version__
from agentcontext.control import (
    chats,
    contents,
    discovered,
    identity,
    ingest,
    overview,
    personal_skills,
    rediscovery,
    rows,
    sessions,
    tools,
)
from agentcontext.control import discovered_answer as answers
from agentcontext.control import tables as t
from agentcontext.control.agent_link import AgentAddress, AgentLink, AgentReplyError
from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.control.agent_secret import ForeignSeal, SecretBox
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.chat_view import ChatView
from agentcontext.control.db import Database
from agentcontext.control.events import Broker, Event, agent_topic, chat_topic, snapshot_topic
from agentcontext.control.loop_store import MISSED, Kind
from agentcontext.control.models import ChatFile, PersonalSkill, Workspace, now
from agentcontext.control.prompt import ChatContext, Toolset, TurnContext
from agentcontext.control.turn_cache import AUTH_TTL_SECONDS, Expiring, Recent
from agentcontext.control.turns import Inputs, TurnRow, Turns, load_context, turn_and_inputs, turn_row
from agentcontext.errors import ForbiddenError, InvalidRequestError, NotFoundError, UnavailableError
from agentcontext.snapshot import Diff, diff
from agentcontext.wire.sync import AgentInfo, ContractError, HeartbeatRequest, PushRequest, validated
from agentcontext.wire.views import AgentViewsBody

log = logging.getLogger("agentcontext.control")
T = TypeVar("T")
SYNC_DISABLED = "workspace agent context sync is disabled on this deployment"
LOOP_PUSH_RESOURCES = 200  # SQLite: a push of at most so many resources is written on the event loop


class SyncDisabled(UnavailableError):
    """The deployment switched context sync off: agents should stop pushing (HTTP 501)."""


@dataclass(frozen=True, slots=True)
class ControlSettings:
    chat_suffix: str = DEFAULT_SUFFIX
    sync_enabled: bool = True
    offline_after: float = 45.0  # seconds without a push or heartbeat before an agent is offline
    sweep_every: float = 5.0
    auth_ttl: float = AUTH_TTL_SECONDS  # seconds a checked token is trusted before it is checked again
    recheck_every: float = 10.0  # at most one recheck of an agent's discovered files this often (on heartbeats)
    store_on_loop: bool = True  # short store work on the event loop where the database is near (``loop_store``)
    mcp_sessions_per_user: int = 32  # handshake-era MCP sessions one user may hold at once (``chat_mcp.sessions``)
    mcp_session_idle: float = 300.0  # seconds an MCP session may stay without a request or an open stream
    agent_networks: AgentNetworks = AgentNetworks.default()  # where agents may be called (``agent_networks``)


@dataclass(frozen=True, slots=True)
class Prompt:
    """A turn's prompt as answered: its JSON, and whether this replica had it already."""

    body: bytes
    cached: bool


@dataclass(frozen=True, slots=True)
class _Call:
    """What a tool call read in its one transaction."""

    row: TurnRow
    toolset: Toolset
    skill_text: str | None
    unreadable: bool = False  # the skill's text could not be read


class ControlPlane:
    def __init__(
        self,
        db: Database,
        broker: Broker,
        settings: ControlSettings | None = None,
        link: AgentLink | None = None,
        secrets: SecretBox | None = None,
    ) -> None:
        self.db = db
        self.broker = broker
        self.settings = settings or ControlSettings()
        self.link = link or AgentLink()
        self.secrets = secrets or SecretBox.ephemeral()
        self.turns = Turns()
        self._written: Recent[ingest.Written] = Recent()  # by agent: the snapshot rows this replica wrote last
        self._pinned: Recent[chats.Pinned] = Recent()  # by chat: the pinned rows this replica wrote last
        self._principals: Expiring[identity.Principal] = Expiring(self.settings.auth_ttl)
        self._sessions: Expiring[sessions.SessionUser] = Expiring(self.settings.auth_ttl)  # by the secret's hash
        # by agent: its per-run secret as last unsealed, keyed by the sealed text (a new run seals a new one); the
        # server key that unseals every one of them is in this process anyway
        self._opened: Recent[str] = Recent()
        self._workers = anyio.CapacityLimiter(db.pool_size)
        self.loop_store = db.loop_store() if self.settings.store_on_loop else None
        self._rechecked: dict[str, float] = {}  # agent id -> when its discovered files were last rechecked

    async def aclose(self) -> None:
        if self.loop_store is not None:
            self.loop_store.close()
        await self.link.aclose()
        await self.broker.aclose()

    # --- plumbing ---------------------------------------------------------------------

    async def _thread(self, work: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(work, limiter=self._workers)

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
        return await self._thread(partial(in_thread, work))

    async def _read(self, work: Callable[[Connection], T]) -> T:
        return await self._near("read", self.db.read_rows, work)

    async def _read_one(self, work: Callable[[Connection], T]) -> T:
        """``_read`` for work of one statement: no transaction around it (``Database.read_one``)."""
        return await self._near("statements", self.db.read_one, work)

    async def _write(self, work: Callable[[Connection], T], *, near: bool = True) -> T:
        """``near``: False for large work (a push), always run in a worker thread."""
        if not near:
            return await self._thread(partial(self.db.write_rows, work))
        return await self._near("write", self.db.write_rows, work)

    async def _write_events(self, work: Callable[[Connection], tuple[T, Sequence[Event]]], *, near: bool = True) -> T:
        """``_write`` of work that hands back events: they go out with its transaction where the broker can
        (``Broker.send_with``), else once it has committed."""

        def run(connection: Connection) -> tuple[T, Sequence[Event]]:
            result, events = work(connection)
            return result, self.broker.send_with(connection, events)

        result, left = await self._write(run, near=near)
        await self._publish(left)
        return result

    async def _write_orm(self, work: Callable[[Session], T]) -> T:
        return await self._thread(partial(self.db.write, work))

    async def read(self, work: Callable[[Session], T]) -> T:
        """Run the read-only ``work`` in a worker thread (read models such as the dashboard's)."""

        def run() -> T:
            with self.db.read() as session:
                return work(session)

        return await self._thread(run)

    async def _publish(self, events: Sequence[Event]) -> None:
        if events:
            await self.broker.publish(events)

    async def authenticate(self, token: str) -> identity.Principal:
        """Raises: AuthError."""
        digest = identity.token_hash(token)
        known = self._principals.get(digest)
        if known is not None:
            return known
        principal = await self._read_one(lambda c: identity.authenticate(c, token))
        self._principals.put(digest, principal)
        return principal

    # --- dashboard sessions (``sessions``) ----------------------------------------------------

    async def begin_login(self, token: str) -> sessions.Issued:
        """A login waiting for the user's yes. Raises: AuthError (not a user's API token)."""
        return await self._write(lambda c: sessions.begin(c, token, now=now()))

    async def confirm_login(self, secret: str) -> sessions.Issued:
        """Raises: AuthError (no such login waiting, or expired)."""
        return await self._write(lambda c: sessions.confirm(c, secret, now=now()))

    async def session(self, secret: str) -> sessions.SessionUser:
        """Who a dashboard session signs in as. Raises: AuthError (no such session, or expired)."""
        digest = identity.token_hash(secret)
        known = self._sessions.get(digest)
        if known is not None:
            return known
        found = await self._read_one(lambda c: sessions.find(c, secret, now=now()))
        self._sessions.put(digest, found)
        return found

    async def end_session(self, secret: str) -> None:
        """Log out: the session is deleted (another replica may take ``auth_ttl`` to notice)."""
        self._sessions.discard(identity.token_hash(secret))
        await self._write(lambda c: sessions.end(c, secret))

    def agent_address(self, agent_id: str, url: str | None, sealed_secret: str | None) -> AgentAddress | None:
        """Where and how to call the agent: its URL and its per-run secret, unsealed (unusable: a URL the agent may
        not advertise, kept from before the check or from before the operator narrowed ``agent_networks``)."""
        if not url:
            return None
        refused = self.settings.agent_networks.refusal(url)
        if refused is not None:
            return AgentAddress(url, None, unusable=f"the control plane does not call this agent: {refused}")
        if sealed_secret is None:
            return AgentAddress(url, None)
        opened = self._opened.get(agent_id, sealed_secret)
        if opened is not None:
            return AgentAddress(url, opened)
        try:
            opened = self.secrets.open(agent_id, sealed_secret)
        except ForeignSeal as exc:
            log.error("agent %s: %s", agent_id, exc)
            return AgentAddress(url, None, unusable=str(exc))
        self._opened.put(agent_id, sealed_secret, opened)
        return AgentAddress(url, opened)

    # --- agents -----------------------------------------------------------------------

    async def push(self, agent: identity.AgentPrincipal, body: PushRequest | Mapping[str, Any]) -> ingest.Outcome:
        """Raises: UnavailableError (sync disabled), ContractError (a push that breaks the contract, refused whole)."""
        if not self.settings.sync_enabled:
            raise SyncDisabled(SYNC_DISABLED)
        checked = body if isinstance(body, PushRequest) else validated(PushRequest, body)
        self._check_reach(checked.agent or AgentInfo())
        written = self._written.get(agent.agent_id, None)

        def work(connection: Connection) -> tuple[ingest.Outcome, list[Event]]:
            outcome = ingest.ingest(connection, agent.agent_id, checked, now=now(), box=self.secrets, written=written)
            events = list(outcome.events)
            if outcome.accepted:
                data = {"agent_id": agent.agent_id, "version": outcome.version}
                events.append(Event(snapshot_topic(agent.agent_id), "snapshot", data))
            return outcome, events

        # on PostgreSQL tens of statements, each a round trip: a worker thread's; on SQLite the library's own
        # work, on the loop unless the push is large (a run there stops at 50 ms and is done again in a thread)
        near = self.db.is_sqlite and len(checked.checked_resources) <= LOOP_PUSH_RESOURCES
        outcome = await self._write_events(work, near=near)
        if outcome.written is not None:  # committed: the next push compares against these without reading them
            self._written.put(agent.agent_id, None, outcome.written)
        return outcome

    async def heartbeat(self, agent: identity.AgentPrincipal, body: HeartbeatRequest | Mapping[str, Any]) -> None:
        """Raises: UnavailableError (sync disabled), ContractError."""
        if not self.settings.sync_enabled:
            raise SyncDisabled(SYNC_DISABLED)
        beat = body if isinstance(body, HeartbeatRequest) else validated(HeartbeatRequest, body)
        info = beat.agent or AgentInfo()
        self._check_reach(info)
        if beat.online:
            await self._write_events(
                lambda c: (None, ingest.touch_agent(c, agent.agent_id, info, now=now(), box=self.secrets))
            )
            await self.recheck_discovered(agent.agent_id)
        else:
            await self._write_events(lambda c: (None, _go_offline(c, agent.agent_id)))

    def _check_reach(self, info: AgentInfo) -> None:
        """Raises: ContractError for a URL outside the hosts and networks agents may advertise (refused whole)."""
        refused = self.settings.agent_networks.refusal(info.url) if info.url is not None else None
        if refused is not None:
            raise ContractError(refused)

    async def recheck_discovered(self, agent_id: str, *, force: bool = False) -> list[str]:
        """Ask the agent again about the discovered files of its chats; mark those whose files changed out of
        date (no push shows such a change). At most once every ``recheck_every`` seconds an agent, unless
        ``force``; an agent that cannot answer is skipped (its chats keep their pins). Returns the chats marked."""
        clock = anyio.current_time()
        if not force and clock - self._rechecked.get(agent_id, -1e18) < self.settings.recheck_every:
            return []
        self._rechecked[agent_id] = clock
        found = await self._read(lambda c: rediscovery.watched(c, agent_id))
        if found is None:
            return []
        address = self.agent_address(agent_id, found.url, found.sealed_secret)
        try:
            answer = await answers.ask(self.link, address, found.causes)
        except (UnavailableError, InvalidRequestError) as exc:
            log.info("agent %s: discovered files not rechecked: %s", agent_id, exc)
            return []
        changed = rediscovery.stale(found, answer)
        if not changed:
            return []

        def work(connection: Connection) -> tuple[list[Event], list[Event]]:
            events = rediscovery.mark(connection, changed, now=now())
            return events, events

        return [event.data["chat_id"] for event in await self._write_events(work)]

    async def sweep(self) -> list[str]:
        """Mark agents silent for ``offline_after`` seconds offline; returns their ids."""
        cutoff = now() - dt.timedelta(seconds=self.settings.offline_after)
        gone = await self._write_orm(lambda s: identity.offline_before(s, cutoff))
        await self._publish([_offline_event(agent_id) for agent_id in gone])
        return gone

    async def run_sweeper(self) -> None:
        while True:
            await anyio.sleep(self.settings.sweep_every)
            try:
                await self.sweep()
            except Exception:
                log.exception("marking silent agents offline")

    # --- chats ------------------------------------------------------------------------

    async def create_chat(self, user: identity.UserPrincipal, new: chats.NewChat) -> ChatView:
        def work(connection: Connection) -> tuple[ChatView, list[Event]]:
            chat = chats.create(connection, user, new, suffix=self.settings.chat_suffix, now=now())
            pinned = [Event(chat_topic(chat.id), "pinned", {"chat_id": chat.id, "pinned_hash": chat.pinned_hash})]
            return chats.summary(connection, chat), pinned if chat.pinned_hash else []

        return await self._write_events(work)

    async def get_chat(self, user: identity.UserPrincipal, chat_id: str) -> ChatView:
        return await self._read(lambda c: chats.owned_summary(c, user, chat_id))

    async def list_chats(self, user: identity.UserPrincipal, *, archived: bool = False) -> list[ChatView]:
        return await self._read(lambda c: chats.summaries(c, chats.list_chats(c, user, archived=archived)))

    async def update_chat(
        self,
        user: identity.UserPrincipal,
        chat_id: str,
        *,
        status: str | None = None,
        archived: bool | None = None,
        title: str | None = None,
    ) -> ChatView:
        def work(connection: Connection) -> ChatView:
            chat = chats.update(connection, user, chat_id, status=status, archived=archived, title=title, now=now())
            return chats.summary(connection, chat)

        return await self._write(work)

    async def refresh(self, user: identity.UserPrincipal, chat_id: str) -> ChatView:
        """The chat re-pinned, with ``diff``: what changed (added, removed, changed paths); its discovered files
        re-resolved (``discovered_error`` says why they were kept as they were, when the agent could not say)."""
        pinned = self._pinned.get(chat_id, None)

        def work(
            answer: answers.Answer | None, kept_because: str | None, asked: bool, connection: Connection
        ) -> tuple[chats.Refreshed, Sequence[Event]]:
            suffix = self.settings.chat_suffix
            latest = partial(self._written.get, key=None)
            done = chats.refresh(
                connection, user, chat_id, suffix=suffix, now=now(), pinned=pinned, latest=latest,
                rediscovered=answer, kept_because=kept_because, asked=asked,
            )  # fmt: skip
            return done, done.events

        # most chats have no discovered files to ask the agent about: tried without asking, unless this replica
        # saw them last time; a chat that has them is refused before anything is written, then asked for
        done: chats.Refreshed | None = None
        if pinned is None or not pinned.discovered:
            with contextlib.suppress(chats.MustAsk):
                done = await self._write_events(partial(work, None, None, False))
        if done is None:
            done = await self._write_events(partial(work, *await self._rediscover(user, chat_id), True))
        if done.pinned is not None:  # committed: the next refresh compares against these without reading them
            self._pinned.put(chat_id, None, done.pinned)
        self.turns.forget(chat_id)  # re-pinned: its next turn is a new one
        kept = {"discovered_error": done.discovered_kept} if done.discovered_kept else {}
        return {**done.view, "diff": done.diff.to_dict(), **kept}

    async def _rediscover(self, user: identity.UserPrincipal, chat_id: str) -> tuple[answers.Answer | None, str | None]:
        """The agent's answer now for the causes of the chat's discovered files, or why there is none."""
        target, causes = await self._read_one(lambda c: rediscovery.refresh_target(c, user.user_id, chat_id))
        if target is None:
            return None, None
        if len(causes) > rediscovery.MAX_RECHECKED:
            return None, f"{len(causes)} touched paths are more than a refresh asks about again"
        address = self.agent_address(target.agent_id, target.url, target.sealed_secret)
        try:
            return await answers.ask(self.link, address, causes), None
        except (UnavailableError, InvalidRequestError) as exc:
            return None, f"discovered files kept as pinned: the workspace agent could not be asked ({exc})"

    async def touched(self, user: identity.UserPrincipal, chat_id: str, paths: Sequence[str]) -> dict[str, Any]:
        """Pin the instruction files that apply to the paths the chat touched (``discovered``); what it added.

        Raises:
            InvalidRequestError: bad paths, or every one refused by the agent. NotFoundError: not this user's chat.
            ConflictError: the chat is not pinned yet. UnavailableError: the agent cannot be asked.
        """
        asked = answers.check_paths(paths)
        target = await self._read_one(lambda c: discovered.target(c, user.user_id, chat_id))
        address = self.agent_address(target.agent_id, target.url, target.sealed_secret)
        answer = await answers.ask(self.link, address, asked)
        refused = {path for path, _ in answer.refused}
        if not answer.files and refused >= set(asked):
            reasons = "; ".join(f"{path}: {reason}" for path, reason in answer.refused[:5])
            raise InvalidRequestError(f"no path was looked at by the workspace agent: {reasons}")
        done = await self._write_events(lambda c: discovered.pin(c, user.user_id, chat_id, answer, now=now()))
        if done.added:
            self.turns.forget(chat_id)  # its next turn carries them (other replicas: the turn key moved)
        return done.to_dict()

    async def pending_changes(self, chat_id: str) -> str:
        """What a refresh of the chat would change, in words ("changed /w/AGENTS.md"); for notices."""

        def work(connection: Connection) -> str:
            agent_id = connection.execute(
                sa.select(t.chats.c.agent_id).where(t.chats.c.id == chat_id)
            ).scalar_one_or_none()
            if agent_id is None:
                return "the workspace changed"
            pinned = rows.chat_resources(connection, chat_id, with_content=False, origin=rows.SNAPSHOT)
            latest = rows.snapshot_resources(connection, agent_id, with_content=False)
            return describe_diff(diff([r for r in pinned if r.kind.drifts], [r for r in latest if r.kind.drifts]))

        return await self._read(work)

    def _bind(self, connection: Connection, user: identity.UserPrincipal, chat_id: str) -> list[Event]:
        """Bind and pin a chat that is not yet (its first turn), in a write transaction."""
        chat = chats.owned_chat(connection, user, chat_id)
        _, events = chats.bind(connection, chat, suffix=self.settings.chat_suffix, now=now())
        return events

    async def _turn(self, user: identity.UserPrincipal, chat_id: str, work: Callable[[Connection, TurnRow], T]) -> T:
        """``work`` on the chat's turn row, in one read; a chat not bound and pinned yet is first, in one write."""

        def read(connection: Connection) -> tuple[bool, T | None]:
            row = turn_row(connection, user, chat_id)
            return (True, work(connection, row)) if row.ready else (False, None)

        done, result = await self._read(read)
        if done:
            return cast(T, result)

        def bind_then(connection: Connection) -> tuple[T, list[Event]]:
            events = self._bind(connection, user, chat_id)
            return work(connection, turn_row(connection, user, chat_id)), events

        return await self._write_events(bind_then)

    async def prompt_json(self, user: identity.UserPrincipal, chat_id: str) -> Prompt:
        """The prompt as JSON bytes: one small query, outside any transaction, when the chat's turn key has not
        moved; else the key read again with the render's inputs in one statement (a chat to bind first, or a user
        with personal skills: in one transaction), and the prompt rendered from them or shared."""

        def quick(connection: Connection) -> Prompt | None:
            row = turn_row(connection, user, chat_id)
            turn = self.turns.cached(row, prompt=True) if row.ready else None
            return Prompt(turn.body, True) if turn is not None and turn.body is not None else None

        if self.turns.kept(chat_id) is not None:
            found = await self._read_one(quick)
            if found is not None:
                return found

        def keyed(connection: Connection) -> Prompt | None:
            row, inputs = turn_and_inputs(connection, user, chat_id)
            return work(connection, row, inputs) if inputs is not None else None

        def work(connection: Connection, row: TurnRow, inputs: Inputs | None = None) -> Prompt:
            turn, cached = self.turns.prompt(connection, user, row, inputs)
            assert turn.body is not None
            return Prompt(turn.body, cached)

        found = await self._read_one(keyed)  # the key and the inputs in one statement: no BEGIN and COMMIT
        return found if found is not None else await self._turn(user, chat_id, work)

    async def context(self, user: identity.UserPrincipal, chat_id: str) -> ChatContext:
        """The chat's whole turn context, every pinned text with it (what serves skills as documents)."""

        def work(connection: Connection, row: TurnRow) -> ChatContext:
            return load_context(connection, user, row, texts=True, all_texts=True)

        return await self._turn(user, chat_id, work)

    async def prompt(self, user: identity.UserPrincipal, chat_id: str) -> TurnContext:
        return await self._turn(user, chat_id, lambda c, row: self.turns.prompt(c, user, row)[0].context())

    async def call_tool(
        self, user: identity.UserPrincipal, chat_id: str, name: str, arguments: Any
    ) -> tools.ToolResult:
        if not isinstance(arguments, Mapping):
            return tools.error("invalid JSON input: the arguments must be a JSON object")

        def work(connection: Connection, row: TurnRow) -> _Call:
            toolset = self.turns.tools(connection, user, row)
            wanted = tools.wanted_skill(toolset, name, arguments)
            if wanted is None:
                return _Call(row, toolset, None)
            if not wanted.personal:
                pinned = toolset.pinned_skills.get(wanted.name)
                text = _pinned_text(connection, row.chat_id, pinned.id) if pinned is not None else None
                return _Call(row, toolset, text)
            try:
                return _Call(row, toolset, personal_skills.text_of(connection, user.user_id, wanted.name))
            except DBAPIError:  # the database's (a lock or time limit, a lost connection): the transaction's to retry
                raise
            except Exception:  # what went wrong inside the control plane is logged, never shown
                log.exception("loading personal skill %r", wanted.name)
                return _Call(row, toolset, None, unreadable=True)

        found = await self._quick_call(user, chat_id, name, arguments)
        if found is None:
            found = await self._turn(user, chat_id, work)
        row = found.row
        call = tools.ToolCall(
            chat_id=row.chat_id,
            root=row.parent_id is None,
            plan_mode=row.plan_mode,
            home=row.home,
            toolset=found.toolset,
            address=self.agent_address(row.agent_id or "", row.url, row.sealed_secret),
            store_plan=partial(self._store_plan, row.chat_id),
            skill_text=found.skill_text,
            skill_unreadable=found.unreadable,
        )
        return await tools.run(self.link, call, name, arguments)

    async def _quick_call(
        self, user: identity.UserPrincipal, chat_id: str, name: str, arguments: Mapping[str, Any]
    ) -> _Call | None:
        """A tool call's turn in one statement outside any transaction, when the chat's turn is kept and its key
        has not moved: the pinned skill it reads (guessed from the kept turn) comes in the same statement."""
        kept = self.turns.kept(chat_id)
        if kept is None:
            return None
        wanted = tools.wanted_skill(kept.tools, name, arguments)
        if wanted is not None and wanted.personal:
            return None  # a second statement: the transaction's path
        pinned = kept.tools.pinned_skills.get(wanted.name) if wanted is not None else None
        if wanted is not None and pinned is None:
            return None

        def quick(connection: Connection) -> _Call | None:
            row = turn_row(connection, user, chat_id, source=pinned.id if pinned is not None else None)
            turn = self.turns.cached(row) if row.ready else None
            if turn is None or turn.tools is not kept.tools:  # the key moved: the guess may be wrong
                return None
            return _Call(row, turn.tools, row.text)

        return await self._read_one(quick)

    async def _store_plan(self, chat_id: str, name: str, path: str, text: str) -> str:
        def work(session: Session) -> str:
            key = contents.put(session, [text])[text]
            size = len(text.encode("utf-8"))
            file = ChatFile(
                chat_id=chat_id, name=name, kind="plan", media_type=tools.PLAN_MEDIA_TYPE, path=path,
                content_key=key, size_bytes=size,
            )  # fmt: skip
            session.add(file)
            session.flush()
            return file.id

        return await self._write_orm(work)

    async def chat_file(self, user: identity.UserPrincipal, chat_id: str, file_id: str) -> tuple[ChatFile, str]:
        def work(session: Session) -> tuple[ChatFile, str]:
            chats.owned_chat(session, user, chat_id)
            file = session.scalar(sa.select(ChatFile).where(ChatFile.id == file_id, ChatFile.chat_id == chat_id))
            if file is None:
                raise NotFoundError(f'file "{file_id}" not found')
            return file, contents.get(session, [file.content_key])[file.content_key]

        return await self.read(work)

    async def chat_files(self, user: identity.UserPrincipal, chat_id: str) -> list[ChatFile]:
        def work(session: Session) -> list[ChatFile]:
            chats.owned_chat(session, user, chat_id)
            return list(
                session.scalars(sa.select(ChatFile).where(ChatFile.chat_id == chat_id).order_by(ChatFile.created_at))
            )

        return await self.read(work)

    async def event_topics(self, user: identity.UserPrincipal, chat_id: str) -> tuple[list[str], dict[str, Any]]:
        """The topics a chat's event stream listens on, and the chat's state to send first."""
        return await self._read_one(lambda c: chat_state(c, user, chat_id))

    # --- personal skills ----------------------------------------------------------------

    async def list_personal_skills(self, user: identity.UserPrincipal) -> list[PersonalSkill]:
        return await self.read(lambda s: list(personal_skills.list_skills(s, user.user_id)))

    async def get_personal_skill(self, user: identity.UserPrincipal, name: str) -> tuple[PersonalSkill, str]:
        return await self.read(lambda s: personal_skills.get(s, user.user_id, name))

    async def create_personal_skill(self, user: identity.UserPrincipal, text: str) -> PersonalSkill:
        return await self._write_orm(lambda s: personal_skills.create(s, user.user_id, text, now=now()))

    async def update_personal_skill(self, user: identity.UserPrincipal, name: str, text: str) -> PersonalSkill:
        return await self._write_orm(lambda s: personal_skills.update(s, user.user_id, name, text, now=now()))

    async def delete_personal_skill(self, user: identity.UserPrincipal, name: str) -> None:
        await self._write_orm(lambda s: personal_skills.delete(s, user.user_id, name))

    # --- workspaces and administration ------------------------------------------------

    async def list_workspaces(self, user: identity.UserPrincipal) -> list[dict[str, Any]]:
        return await self.read(lambda s: _workspaces_json(s, user))

    async def overview(self, user: identity.UserPrincipal) -> dict[str, Any]:
        """Server, the user's workspaces with agents, snapshots and MCP servers, chat counts, problems."""
        return await self.read(lambda s: overview.build(s, user, version=__version__, database=self.db.dialect))

    async def create_user(self, caller: identity.UserPrincipal, name: str, *, admin: bool) -> identity.Issued:
        _admin_only(caller)
        return await self._write_orm(lambda s: identity.create_user(s, name, admin=admin))

    async def create_agent(
        self, caller: identity.UserPrincipal, workspace: str, name: str, *, parent: str | None = None
    ) -> identity.Issued:
        _admin_only(caller)
        return await self._write_orm(lambda s: identity.create_agent(s, workspace, name, parent=parent))

    # --- MCP approvals -------------------------------------------------------------------

    async def approve_mcp(
        self, user: identity.UserPrincipal, agent_id: str, server: str, digest: str, tool_set: str = ""
    ) -> str:
        """Relay an approval to the agent, which records it in its own user's trust store.

        Approving runs code on the workspace's machine, so only the workspace's owner may (an
        administrator, for a workspace nobody owns). The agent checks that the entry (``digest``)
        and, for a changed server, the tools (``tool_set``) are still what the user was shown.

        Raises:
            NotFoundError: no such agent for this user. ForbiddenError: not the workspace's owner.
            UnavailableError: the agent cannot be reached. AgentReplyError: the agent refused (changed since).
        """
        row = await self._read(lambda c: _approver_row(c, user, agent_id))
        address = self.agent_address(agent_id, row.url, row.sealed_secret)
        if address is None:
            raise UnavailableError("the workspace agent has not said where to reach it")
        return await self.link.approve_mcp(address, server, digest, tool_set)

    # --- each agent's view ------------------------------------------------------------------

    async def agent_views(self, user: identity.UserPrincipal, agent_id: str) -> AgentViewsBody:
        """What each agent profile loads in the workspace, computed by its agent from the work dir.

        The database holds the snapshot of the agent's own profile only; the others need the
        live work dir, so the agent must be online.

        Raises:
            NotFoundError: no such agent for this user. UnavailableError: the agent is offline or
                unreachable, or answered with an error (its detail says which).
        """
        row = await self._read(lambda c: _visible_agent_row(c, user, agent_id))
        if not row.online:
            raise UnavailableError(OFFLINE_VIEWS)
        address = self.agent_address(agent_id, row.url, row.sealed_secret)
        if address is None:
            raise UnavailableError("the workspace agent has not said where to reach it")
        try:
            return await self.link.agent_views(address)
        except AgentReplyError as exc:
            raise UnavailableError(f"the workspace agent answered {exc.status}: {exc}") from None


OFFLINE_VIEWS = "the workspace agent is offline: each agent's view is computed by the agent from the work dir"


def _visible_agent_row(connection: Connection, user: identity.UserPrincipal, agent_id: str) -> Any:
    """The agent's URL, sealed secret, online flag and workspace owner, once the user may see its workspace."""
    agents, workspaces = t.agents, t.workspaces
    query = (
        sa.select(agents.c.url, agents.c.sealed_secret, agents.c.online, workspaces.c.owner_id)
        .join(workspaces, workspaces.c.id == agents.c.workspace_id)
        .where(agents.c.id == agent_id)
    )
    row = connection.execute(query).first()
    if row is None or not (user.is_admin or row.owner_id in (None, user.user_id)):
        raise NotFoundError(f'agent "{agent_id}" not found')
    return row


def _approver_row(connection: Connection, user: identity.UserPrincipal, agent_id: str) -> Any:
    """The agent's URL and sealed secret, once the user is found to own its workspace."""
    row = _visible_agent_row(connection, user, agent_id)
    if row.owner_id != user.user_id and not (row.owner_id is None and user.is_admin):
        raise ForbiddenError("only the workspace's owner may approve its MCP servers")
    return row


def describe_diff(changes: Diff, *, limit: int = 5) -> str:
    """``changed /w/AGENTS.md; added /w/.agents/skills/x/SKILL.md`` with at most ``limit`` paths named."""
    parts = []
    for label, paths in (("changed", changes.changed), ("added", changes.added), ("removed", changes.removed)):
        if paths:
            named = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
            parts.append(f"{label} {named}")
    return "; ".join(parts) or "the workspace changed"


def _admin_only(caller: identity.UserPrincipal) -> None:
    if not caller.is_admin:
        raise ForbiddenError("only an administrator may do this")


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


_PINNED_TEXT = (
    sa.select(t.contents.c.text)
    .select_from(t.chat_resources.join(t.contents, t.contents.c.hash == t.chat_resources.c.content_key))
    .where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.source == sa.bindparam("source"))
)


def _pinned_text(connection: Connection, chat_id: str, source: str) -> str | None:
    text: str | None = connection.scalar(_PINNED_TEXT, {"chat_id": chat_id, "source": source})
    return text


_STATE = (
    sa.select(t.chats.c.id, t.chats.c.agent_id, t.chats.c.pinned_hash, t.chats.c.dirty_since, t.agents.c.online)
    .select_from(t.chats.outerjoin(t.agents, t.agents.c.id == t.chats.c.agent_id))
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
)


def chat_state(connection: Connection, user: identity.UserPrincipal, chat_id: str) -> tuple[list[str], dict[str, Any]]:
    """A chat's event topics and its state, in one query.

    Raises:
        NotFoundError: no such chat of this user.
    """
    row = connection.execute(_STATE, {"chat_id": chat_id, "user_id": user.user_id}).first()
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    topics = [chat_topic(row.id)] + ([agent_topic(row.agent_id)] if row.agent_id else [])
    state = {
        "chat_id": row.id,
        "pinned_hash": row.pinned_hash,
        "dirty": row.dirty_since is not None,
        "dirty_since": row.dirty_since.isoformat() if row.dirty_since else None,
        "agent_id": row.agent_id,
        "agent_online": bool(row.online),
    }
    return topics, state


def _workspaces_json(session: Session, user: identity.UserPrincipal) -> list[dict[str, Any]]:
    from agentcontext.control.models import Agent

    query = sa.select(Workspace).order_by(Workspace.name)
    if not user.is_admin:
        query = query.where(sa.or_(Workspace.owner_id.is_(None), Workspace.owner_id == user.user_id))
    out = []
    for workspace in session.scalars(query):
        agents = session.scalars(sa.select(Agent).where(Agent.workspace_id == workspace.id).order_by(Agent.name))
        out.append(
            {
                "id": workspace.id,
                "name": workspace.name,
                "agents": [
                    {
                        "id": a.id,
                        "name": a.name,
                        "online": a.online,
                        "last_seen_at": a.last_seen_at.isoformat() if a.last_seen_at else None,
                        "url": a.url,
                        "os": a.os,
                    }
                    for a in agents
                ],
            }
        )
    return out
