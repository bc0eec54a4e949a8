"""Chats and turns: a chat created bound and pinned, refreshed, its touched paths pinned; each turn's prompt and
tools; tool calls; its attachments and the state its event stream starts with.

A user reaches only their own chats: another user's chat is "not found" like one that does not
exist. A turn is served from what this replica built when the chat's turn key has not moved
(``turns``), in one small query outside any transaction; a chat not bound and pinned yet is
bound and pinned by its first turn, in one write.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from agentcontext.control import chats, contents, discovered, ingest, personal_skills, rediscovery, rows, tools, wire
from agentcontext.control import discovered_answer as answers
from agentcontext.control import tables as t
from agentcontext.control.agent_reach import AgentReach
from agentcontext.control.events import Event, agent_topic, chat_topic
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import ChatFile, now
from agentcontext.control.prepared import Prepared
from agentcontext.control.prompt import ChatContext, Toolset, TurnContext
from agentcontext.control.settings import ControlSettings
from agentcontext.control.store import Store
from agentcontext.control.turn_cache import Recent
from agentcontext.control.turns import Inputs, TurnRow, Turns, load_context, turn_and_inputs, turn_row
from agentcontext.control.visibility import OWNED_CHAT
from agentcontext.errors import InvalidRequestError, NotFoundError, UnavailableError
from agentcontext.snapshot import Diff, diff

log = logging.getLogger("agentcontext.control")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Prompt:
    """A turn's prompt as answered: its JSON (``wire.PromptResponse``), and whether this replica had it already."""

    body: bytes
    cached: bool


@dataclass(frozen=True, slots=True)
class FileText:
    """One attachment of a chat with its text."""

    name: str
    media_type: str
    size_bytes: int
    text: str


@dataclass(frozen=True, slots=True)
class EventStart:
    """What a chat's event stream listens on, and the chat's state it sends first."""

    topics: tuple[str, ...]
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Call:
    """What a tool call read in its one transaction."""

    row: TurnRow
    toolset: Toolset
    skill_text: str | None
    unreadable: bool = False  # the skill's text could not be read


class ChatService:
    def __init__(
        self, store: Store, reach: AgentReach, settings: ControlSettings, written: Recent[ingest.Written]
    ) -> None:
        self._store = store
        self._reach = reach
        self._settings = settings
        self._written = written  # by agent: the snapshot rows this replica wrote last (``SyncService.push``)
        self._pinned: Recent[chats.Pinned] = Recent()  # by chat: the pinned rows this replica wrote last
        self.turns = Turns()

    # --- chats ------------------------------------------------------------------------

    async def create(self, user: UserPrincipal, new: chats.NewChat) -> wire.ChatResponse:
        def work(connection: Connection) -> tuple[wire.ChatResponse, list[Event]]:
            chat = chats.create(connection, user, new, suffix=self._settings.chat_suffix, now=now())
            pinned = [Event(chat_topic(chat.id), "pinned", {"chat_id": chat.id, "pinned_hash": chat.pinned_hash})]
            return chats.summary(connection, chat), pinned if chat.pinned_hash else []

        return await self._store.write_events(work)

    async def get(self, user: UserPrincipal, chat_id: str) -> wire.ChatResponse:
        return await self._store.read(lambda c: chats.owned_summary(c, user, chat_id))

    async def listing(self, user: UserPrincipal, *, archived: bool = False) -> list[wire.ChatResponse]:
        return await self._store.read(lambda c: chats.summaries(c, chats.list_chats(c, user, archived=archived)))

    async def update(
        self,
        user: UserPrincipal,
        chat_id: str,
        *,
        status: str | None = None,
        archived: bool | None = None,
        title: str | None = None,
    ) -> wire.ChatResponse:
        def work(connection: Connection) -> wire.ChatResponse:
            chat = chats.update(connection, user, chat_id, status=status, archived=archived, title=title, now=now())
            return chats.summary(connection, chat)

        return await self._store.write(work)

    async def refresh(self, user: UserPrincipal, chat_id: str) -> wire.RefreshResponse:
        """The chat re-pinned, with ``diff``: what changed (added, removed, changed paths); its discovered files
        re-resolved (``discovered_error`` says why they were kept as they were, when the agent could not say)."""
        pinned = self._pinned.get(chat_id, None)

        def work(
            answer: answers.Answer | None, kept_because: str | None, asked: bool, connection: Connection
        ) -> tuple[chats.Refreshed, Sequence[Event]]:
            suffix = self._settings.chat_suffix
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
                done = await self._store.write_events(partial(work, None, None, False))
        if done is None:
            done = await self._store.write_events(partial(work, *await self._rediscover(user, chat_id), True))
        if done.pinned is not None:  # committed: the next refresh compares against these without reading them
            self._pinned.put(chat_id, None, done.pinned)
        self.turns.forget(chat_id)  # re-pinned: its next turn is a new one
        return done.view

    async def _rediscover(self, user: UserPrincipal, chat_id: str) -> tuple[answers.Answer | None, str | None]:
        """The agent's answer now for the causes of the chat's discovered files, or why there is none."""
        target, causes = await self._store.read_one(lambda c: rediscovery.refresh_target(c, user.user_id, chat_id))
        if target is None:
            return None, None
        if len(causes) > rediscovery.MAX_RECHECKED:
            return None, f"{len(causes)} touched paths are more than a refresh asks about again"
        address = self._reach.address(target.agent_id, target.url, target.sealed_secret)
        try:
            return await answers.ask(self._reach.link, address, causes), None
        except (UnavailableError, InvalidRequestError) as exc:
            return None, f"discovered files kept as pinned: the workspace agent could not be asked ({exc})"

    async def touched(self, user: UserPrincipal, chat_id: str, paths: Sequence[str]) -> wire.TouchedResponse:
        """Pin the instruction files that apply to the paths the chat touched (``discovered``); what it added.

        Raises:
            InvalidRequestError: bad paths, or every one refused by the agent. NotFoundError: not this user's chat.
            ConflictError: the chat is not pinned yet. UnavailableError: the agent cannot be asked.
        """
        asked = answers.check_paths(paths)
        target = await self._store.read_one(lambda c: discovered.target(c, user.user_id, chat_id))
        address = self._reach.address(target.agent_id, target.url, target.sealed_secret)
        answer = await answers.ask(self._reach.link, address, asked)
        refused = {path for path, _ in answer.refused}
        if not answer.files and refused >= set(asked):
            reasons = "; ".join(f"{path}: {reason}" for path, reason in answer.refused[:5])
            raise InvalidRequestError(f"no path was looked at by the workspace agent: {reasons}")
        pin = partial(discovered.pin, user_id=user.user_id, chat_id=chat_id, agent_id=target.agent_id, answer=answer)
        done = await self._store.write_events(lambda c: pin(c, now=now()))
        if done.added:
            self.turns.forget(chat_id)  # its next turn carries them (other replicas: the turn key moved)
        return done.to_wire()

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

        return await self._store.read(work)

    # --- turns ------------------------------------------------------------------------

    def _bind(self, connection: Connection, user: UserPrincipal, chat_id: str) -> list[Event]:
        """Bind and pin a chat that is not yet (its first turn), in a write transaction."""
        chat = chats.owned_chat(connection, user, chat_id)
        _, events = chats.bind(connection, chat, suffix=self._settings.chat_suffix, now=now())
        return events

    async def _turn(self, user: UserPrincipal, chat_id: str, work: Callable[[Connection, TurnRow], T]) -> T:
        """``work`` on the chat's turn row, in one read; a chat not bound and pinned yet is first, in one write."""

        def read(connection: Connection) -> tuple[bool, T | None]:
            row = turn_row(connection, user, chat_id)
            return (True, work(connection, row)) if row.ready else (False, None)

        done, result = await self._store.read(read)
        if done:
            return cast(T, result)

        def bind_then(connection: Connection) -> tuple[T, list[Event]]:
            events = self._bind(connection, user, chat_id)
            return work(connection, turn_row(connection, user, chat_id)), events

        return await self._store.write_events(bind_then)

    async def prompt_json(self, user: UserPrincipal, chat_id: str) -> Prompt:
        """The prompt as JSON bytes: one small query, outside any transaction, when the chat's turn key has not
        moved; else the key read again with the render's inputs in one statement (a chat to bind first, or a user
        with personal skills: in one transaction), and the prompt rendered from them or shared."""

        def quick(connection: Connection) -> Prompt | None:
            row = turn_row(connection, user, chat_id)
            turn = self.turns.cached(row, prompt=True) if row.ready else None
            return Prompt(turn.body, True) if turn is not None and turn.body is not None else None

        if self.turns.kept(chat_id) is not None:
            found = await self._store.read_one(quick)
            if found is not None:
                return found

        def keyed(connection: Connection) -> Prompt | None:
            row, inputs = turn_and_inputs(connection, user, chat_id)
            return work(connection, row, inputs) if inputs is not None else None

        def work(connection: Connection, row: TurnRow, inputs: Inputs | None = None) -> Prompt:
            turn, cached = self.turns.prompt(connection, user, row, inputs)
            assert turn.body is not None
            return Prompt(turn.body, cached)

        found = await self._store.read_one(keyed)  # the key and the inputs in one statement: no BEGIN and COMMIT
        return found if found is not None else await self._turn(user, chat_id, work)

    async def context(self, user: UserPrincipal, chat_id: str) -> ChatContext:
        """The chat's whole turn context, every pinned text with it (what serves skills as documents)."""

        def work(connection: Connection, row: TurnRow) -> ChatContext:
            return load_context(connection, user, row, texts=True, all_texts=True)

        return await self._turn(user, chat_id, work)

    async def prompt(self, user: UserPrincipal, chat_id: str) -> TurnContext:
        """The turn's system prompt and tools, as values (``prompt_json`` answers the same as JSON)."""
        return await self._turn(user, chat_id, lambda c, row: self.turns.prompt(c, user, row)[0].context())

    async def call_tool(self, user: UserPrincipal, chat_id: str, name: str, arguments: Any) -> tools.ToolResult:
        if not isinstance(arguments, Mapping):
            return tools.error("invalid JSON input: the arguments must be a JSON object")
        found = await self._quick_call(user, chat_id, name, arguments)
        if found is None:
            found = await self._turn(user, chat_id, partial(self._call, user, name, arguments))
        row = found.row
        address = self._reach.address(row.agent_id or "", row.url, row.sealed_secret)
        if address is not None and row.online is False and address.unusable is None:  # no waiting out a dead host
            address = replace(address, unusable=tools.AGENT_OFFLINE)
        call = tools.ToolCall(
            chat_id=row.chat_id,
            root=row.parent_id is None,
            plan_mode=row.plan_mode,
            home=row.home,
            toolset=found.toolset,
            address=address,
            store_plan=partial(self.store_plan, row.chat_id),
            skill_text=found.skill_text,
            skill_unreadable=found.unreadable,
        )
        return await tools.run(self._reach.link, call, name, arguments)

    def _call(
        self, user: UserPrincipal, name: str, arguments: Mapping[str, Any], connection: Connection, row: TurnRow
    ) -> _Call:
        """A tool call's toolset and the skill text it reads, in the turn's transaction."""
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

    async def _quick_call(
        self, user: UserPrincipal, chat_id: str, name: str, arguments: Mapping[str, Any]
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

        return await self._store.read_one(quick)

    async def store_plan(self, chat_id: str, name: str, path: str, text: str) -> str:
        """Attach a proposed plan to the chat; its file's id."""

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

        return await self._store.write_orm(work)

    # --- attachments and events ------------------------------------------------------------

    async def file(self, user: UserPrincipal, chat_id: str, file_id: str) -> FileText:
        def work(session: Session) -> FileText:
            chats.owned_chat(session, user, chat_id)
            file = session.scalar(sa.select(ChatFile).where(ChatFile.id == file_id, ChatFile.chat_id == chat_id))
            if file is None:
                raise NotFoundError(f'file "{file_id}" not found')
            text = contents.get(session, [file.content_key])[file.content_key]
            return FileText(file.name, file.media_type, file.size_bytes, text)

        return await self._store.read_orm(work)

    async def files(self, user: UserPrincipal, chat_id: str) -> list[wire.ChatFileEntry]:
        def work(session: Session) -> list[wire.ChatFileEntry]:
            chats.owned_chat(session, user, chat_id)
            found = session.scalars(
                sa.select(ChatFile).where(ChatFile.chat_id == chat_id).order_by(ChatFile.created_at)
            )
            return [_file_entry(file) for file in found]

        return await self._store.read_orm(work)

    async def event_start(self, user: UserPrincipal, chat_id: str) -> EventStart:
        """The topics a chat's event stream listens on, and the chat's state to send first.

        Raises:
            NotFoundError: no such chat of this user.
        """
        return await self._store.read_one(lambda c: _event_start(c, user, chat_id))


def _file_entry(file: ChatFile) -> wire.ChatFileEntry:
    return wire.ChatFileEntry(
        id=file.id,
        name=file.name,
        kind=file.kind,
        media_type=file.media_type,
        path=file.path,
        size_bytes=file.size_bytes,
        created_at=file.created_at.isoformat(),
    )


def describe_diff(changes: Diff, *, limit: int = 5) -> str:
    """``changed /w/AGENTS.md; added /w/.agents/skills/x/SKILL.md`` with at most ``limit`` paths named."""
    parts = []
    for label, paths in (("changed", changes.changed), ("added", changes.added), ("removed", changes.removed)):
        if paths:
            named = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
            parts.append(f"{label} {named}")
    return "; ".join(parts) or "the workspace changed"


_PINNED_TEXT = (
    sa.select(t.contents.c.text)
    .select_from(t.chat_resources.join(t.contents, t.contents.c.hash == t.chat_resources.c.content_key))
    .where(t.chat_resources.c.chat_id == sa.bindparam("chat_id"), t.chat_resources.c.source == sa.bindparam("source"))
)


def _pinned_text(connection: Connection, chat_id: str, source: str) -> str | None:
    text: str | None = connection.scalar(_PINNED_TEXT, {"chat_id": chat_id, "source": source})
    return text


_STATE = Prepared(  # read by every event stream as it opens: after a restart, every chat's at once
    sa.select(t.chats.c.id, t.chats.c.agent_id, t.chats.c.pinned_hash, t.chats.c.dirty_since, t.agents.c.online)
    .select_from(t.chats.outerjoin(t.agents, t.agents.c.id == t.chats.c.agent_id))
    .where(OWNED_CHAT)
)


def _event_start(connection: Connection, user: UserPrincipal, chat_id: str) -> EventStart:
    """A chat's event topics and its state, in one query."""
    row = _STATE.first(connection, {"chat_id": chat_id, "user_id": user.user_id})
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    topics = (chat_topic(row.id), agent_topic(row.agent_id)) if row.agent_id else (chat_topic(row.id),)
    state = {
        "chat_id": row.id,
        "pinned_hash": row.pinned_hash,
        "dirty": row.dirty_since is not None,
        "dirty_since": row.dirty_since.isoformat() if row.dirty_since else None,
        "agent_id": row.agent_id,
        "agent_online": bool(row.online),
    }
    return EventStart(topics, state)
