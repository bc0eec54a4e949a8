"""The control plane's operations, one method each, for the HTTP API (and tests) to call.

Database work runs in worker threads (the driver is synchronous) inside one transaction;
the events it produces are published after it commits. Access rules live here: a user
reaches only their own chats and skills and the workspaces open to them; an agent token
only pushes for its own agent.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import anyio
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentcontext import __version__
from agentcontext.control import chats, contents, identity, ingest, overview, personal_skills, prompt, rows, tools
from agentcontext.control.agent_link import AgentAddress, AgentLink
from agentcontext.control.agentselect import DEFAULT_SUFFIX
from agentcontext.control.db import Database
from agentcontext.control.events import Broker, Event, agent_topic, chat_topic, snapshot_topic
from agentcontext.control.models import (
    Agent,
    Chat,
    ChatFile,
    PersonalSkill,
    Snapshot,
    SnapshotResource,
    Workspace,
    now,
)
from agentcontext.control.turn_cache import AUTH_TTL_SECONDS, Expiring, Recent
from agentcontext.errors import ForbiddenError, NotFoundError, UnavailableError
from agentcontext.resource import Kind
from agentcontext.snapshot import Diff, diff

log = logging.getLogger("agentcontext.control")
T = TypeVar("T")
SYNC_DISABLED = "workspace agent context sync is disabled on this deployment"


class SyncDisabled(UnavailableError):
    """The deployment switched context sync off: agents should stop pushing (HTTP 501)."""


@dataclass(frozen=True, slots=True)
class ControlSettings:
    chat_suffix: str = DEFAULT_SUFFIX
    sync_enabled: bool = True
    offline_after: float = 45.0  # seconds without a push or heartbeat before an agent is offline
    sweep_every: float = 5.0
    auth_ttl: float = AUTH_TTL_SECONDS  # seconds a checked token is trusted before it is checked again


class ControlPlane:
    def __init__(
        self, db: Database, broker: Broker, settings: ControlSettings | None = None, link: AgentLink | None = None
    ) -> None:
        self.db = db
        self.broker = broker
        self.settings = settings or ControlSettings()
        self.link = link or AgentLink()
        self._principals: Expiring[identity.Principal] = Expiring(self.settings.auth_ttl)
        self._prompts: Recent[bytes] = Recent()

    async def aclose(self) -> None:
        await self.link.aclose()

    # --- plumbing ---------------------------------------------------------------------

    async def _write(self, work: Callable[[Session], T]) -> T:
        return await anyio.to_thread.run_sync(self.db.write, work)

    async def _read(self, work: Callable[[Session], T]) -> T:
        def run() -> T:
            with self.db.read() as session:
                return work(session)

        return await anyio.to_thread.run_sync(run)

    async def read(self, work: Callable[[Session], T]) -> T:
        """Run the read-only ``work`` in a worker thread (read models such as the dashboard's)."""
        return await self._read(work)

    async def _publish(self, events: Sequence[Event]) -> None:
        if events:
            await self.broker.publish(events)

    async def authenticate(self, token: str) -> identity.Principal:
        """Raises: AuthError."""
        digest = identity.token_hash(token)
        known = self._principals.get(digest)
        if known is not None:
            return known
        principal = await self._read(lambda s: identity.authenticate(s, token))
        self._principals.put(digest, principal)
        return principal

    # --- agents -----------------------------------------------------------------------

    async def push(self, agent: identity.AgentPrincipal, raw: Mapping[str, Any]) -> ingest.Outcome:
        """Raises: UnavailableError (sync disabled), InvalidRequestError (a bad push, refused whole)."""
        if not self.settings.sync_enabled:
            raise SyncDisabled(SYNC_DISABLED)
        checked = ingest.check_push(raw)
        outcome = await self._write(lambda s: ingest.ingest(s, agent.agent_id, checked, now=now()))
        await self._publish(outcome.events)
        if outcome.accepted:
            data = {"agent_id": agent.agent_id, "version": outcome.version}
            await self._publish([Event(snapshot_topic(agent.agent_id), "snapshot", data)])
        if outcome.accepted and not self.db.is_sqlite:
            await self._publish(await self._write(lambda s: _recheck_chats(s, agent.agent_id)))
        return outcome

    async def heartbeat(self, agent: identity.AgentPrincipal, raw: Mapping[str, Any]) -> None:
        if not self.settings.sync_enabled:
            raise SyncDisabled(SYNC_DISABLED)
        info = ingest.check_agent_info(raw.get("agent"))
        if raw.get("online", True) is False:
            events = await self._write(lambda s: _go_offline(s, agent.agent_id))
        else:
            events = await self._write(lambda s: ingest.touch_agent(s, agent.agent_id, info, now=now()))
        await self._publish(events)

    async def sweep(self) -> list[str]:
        """Mark agents silent for ``offline_after`` seconds offline; returns their ids."""
        cutoff = now() - dt.timedelta(seconds=self.settings.offline_after)
        gone = await self._write(lambda s: identity.offline_before(s, cutoff))
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

    async def create_chat(self, user: identity.UserPrincipal, new: chats.NewChat) -> dict[str, Any]:
        def work(session: Session) -> tuple[dict[str, Any], list[Event]]:
            chat = chats.create(session, user, new, suffix=self.settings.chat_suffix, now=now())
            events = [Event(chat_topic(chat.id), "pinned", {"chat_id": chat.id, "pinned_hash": chat.pinned_hash})]
            return chats.summary(session, chat), events if chat.pinned_hash else []

        data, events = await self._write(work)
        await self._publish(events)
        if data["context"]["pinned_hash"] is None and data["agent_id"] is not None and not self.db.is_sqlite:
            # A push that committed while this chat was being created could not see it, and its
            # recheck may have run before this commit: look again now that the chat is visible.
            await self._bound(user, data["id"])
            data = await self.get_chat(user, data["id"])
        return data

    async def get_chat(self, user: identity.UserPrincipal, chat_id: str) -> dict[str, Any]:
        return await self._read(lambda s: chats.summary(s, chats.owned_chat(s, user, chat_id)))

    async def list_chats(self, user: identity.UserPrincipal, *, archived: bool = False) -> list[dict[str, Any]]:
        def work(session: Session) -> list[dict[str, Any]]:
            return [chats.summary(session, c) for c in chats.list_chats(session, user, archived=archived)]

        return await self._read(work)

    async def update_chat(
        self,
        user: identity.UserPrincipal,
        chat_id: str,
        *,
        status: str | None = None,
        archived: bool | None = None,
        title: str | None = None,
    ) -> dict[str, Any]:
        def work(session: Session) -> dict[str, Any]:
            chat = chats.update(session, user, chat_id, status=status, archived=archived, title=title, now=now())
            session.flush()
            return chats.summary(session, chat)

        return await self._write(work)

    async def refresh(self, user: identity.UserPrincipal, chat_id: str) -> dict[str, Any]:
        def work(session: Session) -> tuple[dict[str, Any], tuple[Event, ...]]:
            done = chats.refresh(session, user, chat_id, suffix=self.settings.chat_suffix, now=now())
            return {**chats.summary(session, done.chat), "diff": done.diff.to_dict()}, done.events

        data, events = await self._write(work)
        await self._publish(events)
        return data

    async def pending_changes(self, chat_id: str) -> str:
        """What a refresh of the chat would change, in words ("AGENTS.md changed, 1 added"); for notices."""

        def work(session: Session) -> str:
            chat = session.get(Chat, chat_id)
            if chat is None or chat.agent_id is None:
                return "the workspace changed"
            pinned = rows.chat_resources(session, chat_id, with_content=False)
            latest = rows.snapshot_resources(session, chat.agent_id, with_content=False)
            return describe_diff(diff([r for r in pinned if r.kind.drifts], [r for r in latest if r.kind.drifts]))

        return await self._read(work)

    async def _bound(self, user: identity.UserPrincipal, chat_id: str) -> None:
        """Bind and pin a chat that is not yet (its first turn), with a write only when needed."""

        def needs(session: Session) -> bool:
            chat = chats.owned_chat(session, user, chat_id)
            return chat.agent_id is None or chat.pinned_hash is None

        if not await self._read(needs):
            return

        def work(session: Session) -> list[Event]:
            chat = chats.owned_chat(session, user, chat_id, lock=True)
            return chats.ensure_bound(session, chat, suffix=self.settings.chat_suffix, now=now())

        await self._publish(await self._write(work))

    async def context(
        self, user: identity.UserPrincipal, chat_id: str, *, with_content: rows.Contents = True
    ) -> tuple[Chat, prompt.ChatContext, Agent | None]:
        await self._bound(user, chat_id)
        return await self._read(lambda s: _load_context(s, user, chat_id, with_content=with_content))

    async def prompt(self, user: identity.UserPrincipal, chat_id: str) -> prompt.TurnContext:
        _, context, _ = await self.context(user, chat_id, with_content=_PROMPT_CONTENT)
        return prompt.build(context)

    async def prompt_json(self, user: identity.UserPrincipal, chat_id: str) -> bytes:
        """The prompt as JSON bytes: one small query when the chat's turn key has not moved."""

        def cached() -> bytes | None:
            with self.db.read_connection() as connection:
                key = _turn_key(connection, user, chat_id)
            return None if key is None else self._prompts.get(chat_id, key)

        def rendered(session: Session) -> bytes:
            key = _turn_key(session, user, chat_id)  # again: the key of exactly what is loaded
            _, context, _ = _load_context(session, user, chat_id, with_content=_PROMPT_CONTENT)
            body = _json_bytes(prompt.build(context).to_dict())
            if key is not None:
                self._prompts.put(chat_id, key, body)
            return body

        body = await anyio.to_thread.run_sync(cached)
        if body is not None:
            return body
        await self._bound(user, chat_id)  # the first turn binds and pins a chat that is not yet
        return await self._read(rendered)

    async def call_tool(
        self, user: identity.UserPrincipal, chat_id: str, name: str, arguments: Any
    ) -> tools.ToolResult:
        if not isinstance(arguments, Mapping):
            return tools.error("invalid JSON input: the arguments must be a JSON object")
        chat, context, agent = await self.context(user, chat_id)
        address = AgentAddress(agent.url, agent.api_token) if agent is not None and agent.url else None
        call = tools.ToolCall(
            context=context,
            turn=prompt.build(context),
            plan_mode=chat.plan_mode,
            address=address,
            load_personal=partial(self._personal_text, user),
            store_plan=partial(self._store_plan, chat.id),
        )
        return await tools.run(self.link, call, name, arguments)

    async def _personal_text(self, user: identity.UserPrincipal, name: str) -> str:
        return await self._read(lambda s: personal_skills.get(s, user.user_id, name)[1])

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

        return await self._write(work)

    async def chat_file(self, user: identity.UserPrincipal, chat_id: str, file_id: str) -> tuple[ChatFile, str]:
        def work(session: Session) -> tuple[ChatFile, str]:
            chats.owned_chat(session, user, chat_id)
            file = session.scalar(sa.select(ChatFile).where(ChatFile.id == file_id, ChatFile.chat_id == chat_id))
            if file is None:
                raise NotFoundError(f'file "{file_id}" not found')
            return file, contents.get(session, [file.content_key])[file.content_key]

        return await self._read(work)

    async def chat_files(self, user: identity.UserPrincipal, chat_id: str) -> list[dict[str, Any]]:
        def work(session: Session) -> list[dict[str, Any]]:
            chats.owned_chat(session, user, chat_id)
            found = session.scalars(
                sa.select(ChatFile).where(ChatFile.chat_id == chat_id).order_by(ChatFile.created_at)
            )
            return [_file_json(f) for f in found]

        return await self._read(work)

    async def event_topics(self, user: identity.UserPrincipal, chat_id: str) -> tuple[list[str], dict[str, Any]]:
        """The topics a chat's event stream listens on, and the chat's state to send first."""

        def work(session: Session) -> tuple[list[str], dict[str, Any]]:
            chat = chats.owned_chat(session, user, chat_id)
            topics = [chat_topic(chat.id)] + ([agent_topic(chat.agent_id)] if chat.agent_id else [])
            online = session.scalar(sa.select(Agent.online).where(Agent.id == chat.agent_id)) if chat.agent_id else None
            state = {
                "chat_id": chat.id,
                "pinned_hash": chat.pinned_hash,
                "dirty": chat.dirty_since is not None,
                "dirty_since": chat.dirty_since.isoformat() if chat.dirty_since else None,
                "agent_id": chat.agent_id,
                "agent_online": bool(online),
            }
            return topics, state

        return await self._read(work)

    # --- personal skills ----------------------------------------------------------------

    async def list_personal_skills(self, user: identity.UserPrincipal) -> list[dict[str, Any]]:
        return await self._read(lambda s: [_skill_json(k) for k in personal_skills.list_skills(s, user.user_id)])

    async def get_personal_skill(self, user: identity.UserPrincipal, name: str) -> dict[str, Any]:
        def work(session: Session) -> dict[str, Any]:
            skill, text = personal_skills.get(session, user.user_id, name)
            return {**_skill_json(skill), "content": text}

        return await self._read(work)

    async def create_personal_skill(self, user: identity.UserPrincipal, text: str) -> dict[str, Any]:
        return _skill_json(await self._write(lambda s: personal_skills.create(s, user.user_id, text, now=now())))

    async def update_personal_skill(self, user: identity.UserPrincipal, name: str, text: str) -> dict[str, Any]:
        return _skill_json(await self._write(lambda s: personal_skills.update(s, user.user_id, name, text, now=now())))

    async def delete_personal_skill(self, user: identity.UserPrincipal, name: str) -> None:
        await self._write(lambda s: personal_skills.delete(s, user.user_id, name))

    # --- workspaces and administration ------------------------------------------------

    async def list_workspaces(self, user: identity.UserPrincipal) -> list[dict[str, Any]]:
        return await self._read(lambda s: _workspaces_json(s, user))

    async def overview(self, user: identity.UserPrincipal) -> dict[str, Any]:
        """Server, the user's workspaces with agents, snapshots and MCP servers, chat counts, problems."""
        return await self._read(lambda s: overview.build(s, user, version=__version__, database=self.db.dialect))

    async def create_user(self, caller: identity.UserPrincipal, name: str, *, admin: bool) -> identity.Issued:
        _admin_only(caller)
        return await self._write(lambda s: identity.create_user(s, name, admin=admin))

    async def create_agent(
        self, caller: identity.UserPrincipal, workspace: str, name: str, *, parent: str | None = None
    ) -> identity.Issued:
        _admin_only(caller)
        return await self._write(lambda s: identity.create_agent(s, workspace, name, parent=parent))

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
        address = await self._read(lambda s: _approver_address(s, user, agent_id))
        return await self.link.approve_mcp(address, server, digest, tool_set)


def _approver_address(session: Session, user: identity.UserPrincipal, agent_id: str) -> AgentAddress:
    query = sa.select(Agent, Workspace.owner_id).join(Workspace, Workspace.id == Agent.workspace_id)
    row = session.execute(query.where(Agent.id == agent_id)).first()
    if row is None or not (user.is_admin or row.owner_id in (None, user.user_id)):
        raise NotFoundError(f'agent "{agent_id}" not found')
    if row.owner_id != user.user_id and not (row.owner_id is None and user.is_admin):
        raise ForbiddenError("only the workspace's owner may approve its MCP servers")
    agent: Agent = row[0]
    if not agent.url:
        raise UnavailableError("the workspace agent has not said where to reach it")
    return AgentAddress(agent.url, agent.api_token)


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


def _recheck_chats(session: Session, agent_id: str) -> list[Event]:
    """Mark the agent's chats against its latest snapshot again, after a push has committed.

    On PostgreSQL a chat pinned by a transaction that committed while the push ran is not
    seen by the push (REPEATABLE READ); this second, short transaction sees it. (The pin
    itself share-locks the snapshot row: ``chats.pinnable_snapshot``.)
    """
    latest = session.scalar(sa.select(Snapshot.aggregate_hash).where(Snapshot.agent_id == agent_id))
    return ingest.mark_out_of_date(session, agent_id, latest, now=now()) if latest is not None else []


def _go_offline(session: Session, agent_id: str) -> list[Event]:
    changed = session.execute(
        sa.update(Agent).where(Agent.id == agent_id, Agent.online.is_(True)).values(online=False).returning(Agent.id)
    ).first()
    return [_offline_event(agent_id)] if changed else []


def _offline_event(agent_id: str) -> Event:
    return Event(agent_topic(agent_id), "agent_offline", {"agent_id": agent_id, "at": now().isoformat()})


_PROMPT_CONTENT = (str(Kind.INSTRUCTION_FILE),)  # the prompt shows instruction files; skill bodies wait for read_skill


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


_MINE = PersonalSkill.owner_id == sa.bindparam("user_id")
# Built once: constructing this select costs more than running it.
_TURN_KEY = (
    sa.select(
        Chat.agent_id,
        Chat.pinned_hash,
        Chat.pinned_at,
        Chat.parent_id,
        Agent.os,
        Agent.work_dir,
        Agent.home,
        Snapshot.version,
        Snapshot.run_id,
        Snapshot.received_at,
        sa.select(sa.func.count()).where(_MINE).scalar_subquery(),
        sa.select(sa.func.max(PersonalSkill.updated_at)).where(_MINE).scalar_subquery(),
    )
    .outerjoin(Agent, Agent.id == Chat.agent_id)
    .outerjoin(Snapshot, Snapshot.agent_id == Chat.agent_id)
    .where(Chat.id == sa.bindparam("chat_id"), Chat.owner_id == sa.bindparam("user_id"))
)


def _turn_key(session: Session | Connection, user: identity.UserPrincipal, chat_id: str) -> tuple[Any, ...] | None:
    """Every column a chat's prompt depends on, in one query; None while it is unbound or unpinned.

    Raises:
        NotFoundError: no such chat of this user.
    """
    row = session.execute(_TURN_KEY, {"chat_id": chat_id, "user_id": user.user_id}).first()
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    if row.agent_id is None or row.pinned_hash is None:
        return None
    return tuple(row)


def _load_context(
    session: Session, user: identity.UserPrincipal, chat_id: str, *, with_content: rows.Contents = True
) -> tuple[Chat, prompt.ChatContext, Agent | None]:
    chat = chats.owned_chat(session, user, chat_id)
    agent = session.get(Agent, chat.agent_id) if chat.agent_id else None
    pinned = rows.chat_resources(session, chat.id, with_content=with_content)
    latest: list[Any] = []
    if chat.agent_id:
        latest = rows.load(
            session,
            session.scalars(
                sa.select(SnapshotResource).where(
                    SnapshotResource.agent_id == chat.agent_id, SnapshotResource.kind == str(Kind.MCP_SERVER)
                )
            ),
            with_content=False,
        )
    personal = tuple(
        (row.name, row.description)
        for row in session.execute(
            sa.select(PersonalSkill.name, PersonalSkill.description)
            .where(PersonalSkill.owner_id == user.user_id)
            .order_by(PersonalSkill.name)
        )
    )
    directory = (agent.work_dir if agent is not None else None) or ""
    context = prompt.ChatContext(
        chat_id=chat.id,
        root=chat.parent_id is None,
        pinned=tuple(pinned),
        latest_mcp=tuple(latest),
        personal=personal,
        os_name=(agent.os if agent is not None else None) or "",
        directory=directory,
        home=agent.home if agent is not None else None,
    )
    return chat, context, agent


def _skill_json(skill: PersonalSkill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "size_bytes": skill.size_bytes,
        "created_at": skill.created_at.isoformat(),
        "updated_at": skill.updated_at.isoformat(),
    }


def _file_json(file: ChatFile) -> dict[str, Any]:
    return {
        "id": file.id,
        "name": file.name,
        "kind": file.kind,
        "media_type": file.media_type,
        "path": file.path,
        "size_bytes": file.size_bytes,
        "created_at": file.created_at.isoformat(),
    }


def _workspaces_json(session: Session, user: identity.UserPrincipal) -> list[dict[str, Any]]:
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
