"""A chat's turn: its prompt and tools, rebuilt only when something they depend on moved.

A turn is a pure function of a few columns: the chat's pin (hash and time, and when its
discovered files last moved), its binding
and whether it is a root chat, what the agent last said about itself (OS, work dir, home),
a digest of the MCP servers in the agent's latest snapshot (the prompt overlays them), and
the user's personal skills (count, last change). One prebuilt query reads those columns
(the *turn key*), and with them what a tool call needs besides (the agent's address, the
chat's plan mode). A push that changes nothing the chat pinned leaves the key where it was.

Each replica keeps the turns it built, by chat, with their key: a prompt or a tool call
whose key has not moved costs that one query and no other; one whose key moved reads the
pin once (the instruction files' texts only when the prompt is to be rendered), so every
replica stays exact without listening for events.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any

import sqlalchemy as sa

from agentcontext.control import discovered, rows
from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.prompt import ChatContext, Toolset, TurnContext, system_text, toolset
from agentcontext.control.turn_cache import Recent
from agentcontext.control.wire import PromptResponse, ToolSpecBody
from agentcontext.errors import NotFoundError
from agentcontext.resource import Kind, Resource

PROMPT_TEXTS = (str(Kind.INSTRUCTION_FILE),)  # the prompt shows instruction files; skill bodies wait for read_skill

_MINE = t.personal_skills.c.owner_id == sa.bindparam("user_id")
_KEY = (
    sa.select(
        t.chats.c.id,
        t.chats.c.agent_id,
        t.chats.c.pinned_hash,
        t.chats.c.pinned_at,
        t.chats.c.discovered_at,
        t.chats.c.parent_id,
        t.chats.c.plan_mode,
        t.agents.c.os,
        t.agents.c.work_dir,
        t.agents.c.home,
        t.agents.c.url,
        t.agents.c.sealed_secret,
        t.snapshots.c.mcp_hash,
        sa.select(sa.func.count()).where(_MINE).scalar_subquery().label("personal_count"),
        sa.select(sa.func.max(t.personal_skills.c.updated_at)).where(_MINE).scalar_subquery().label("personal_last"),
    )
    .select_from(
        t.chats.outerjoin(t.agents, t.agents.c.id == t.chats.c.agent_id).outerjoin(
            t.snapshots, t.snapshots.c.agent_id == t.chats.c.agent_id
        )
    )
    .where(t.chats.c.id == sa.bindparam("chat_id"), t.chats.c.owner_id == sa.bindparam("user_id"))
)
# the same, and the text of one pinned resource (a skill a tool call reads) in the same statement
_KEY_AND_TEXT = _KEY.add_columns(
    sa.select(t.contents.c.text)
    .select_from(t.chat_resources.join(t.contents, t.contents.c.hash == t.chat_resources.c.content_key))
    .where(t.chat_resources.c.chat_id == t.chats.c.id, t.chat_resources.c.source == sa.bindparam("source"))
    .scalar_subquery()
    .label("text")
)


@dataclass(frozen=True, slots=True)
class TurnRow:
    """The turn key's columns, and what a call needs besides."""

    chat_id: str
    agent_id: str | None
    pinned_hash: str | None
    pinned_at: dt.datetime | None
    discovered_at: dt.datetime | None
    parent_id: str | None
    plan_mode: bool
    os: str | None
    work_dir: str | None
    home: str | None
    url: str | None
    sealed_secret: str | None
    mcp_hash: str | None
    personal_count: int
    personal_last: Any  # a datetime, or its text on SQLite (an aggregate loses the column's type)
    text: str | None = None  # the pinned text ``turn_row`` was asked for (``source``), not part of the key

    @property
    def ready(self) -> bool:
        """Bound and pinned: the first turn of a chat that is not binds and pins it first."""
        return self.agent_id is not None and self.pinned_hash is not None

    @property
    def key(self) -> Hashable:
        return (
            self.agent_id, self.pinned_hash, self.pinned_at, self.discovered_at, self.parent_id, self.os,
            self.work_dir, self.home, self.mcp_hash, self.personal_count, str(self.personal_last),
        )  # fmt: skip


_FROM_ROW = (
    "agent_id", "pinned_hash", "pinned_at", "discovered_at", "parent_id", "plan_mode", "os", "work_dir", "home", "url",
    "sealed_secret", "mcp_hash", "personal_last",
)  # fmt: skip


def turn_row(executor: Executor, user: UserPrincipal, chat_id: str, *, source: str | None = None) -> TurnRow:
    """The chat's turn row; with ``source``, the text of that pinned resource in the same statement.

    Raises: NotFoundError (no such chat of this user).
    """
    values = {"chat_id": chat_id, "user_id": user.user_id}
    row = executor.execute(_KEY, values).first() if source is None else executor.execute(
        _KEY_AND_TEXT, {**values, "source": source}
    ).first()  # fmt: skip
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    found = {name: getattr(row, name) for name in _FROM_ROW}
    text = row.text if source is not None else None
    return TurnRow(chat_id=row.id, personal_count=int(row.personal_count or 0), text=text, **found)


_PERSONAL = (
    sa.select(t.personal_skills.c.name, t.personal_skills.c.description)
    .where(t.personal_skills.c.owner_id == sa.bindparam("user_id"))
    .order_by(t.personal_skills.c.name)
)


def load_context(
    executor: Executor, user: UserPrincipal, row: TurnRow, *, texts: bool, all_texts: bool = False
) -> ChatContext:
    """The chat's turn context, its pin read once (with the instruction files' texts when ``texts``, every
    pinned text with ``all_texts``)."""
    agent_id = row.agent_id if row.mcp_hash else None  # the prompt overlays the agent's latest MCP servers
    latest: list[Resource] = []
    if all_texts:
        pinned = rows.chat_resources(executor, row.chat_id, with_content=True, origin=rows.SNAPSHOT)
        latest = rows.latest_mcp_servers(executor, agent_id) if agent_id else []
    elif agent_id:  # the pin and the servers in one statement
        pinned, latest = rows.pinned_and_mcp_servers(executor, row.chat_id, agent_id, instruction_texts=texts)
    else:
        pinned = rows.pinned_resources(executor, row.chat_id, instruction_texts=texts)
    found = discovered.resources(executor, row.chat_id) if texts and row.discovered_at is not None else []
    personal = tuple(
        (r.name, r.description) for r in executor.execute(_PERSONAL, {"user_id": user.user_id})
    ) if row.personal_count else ()  # fmt: skip
    return ChatContext(
        chat_id=row.chat_id,
        root=row.parent_id is None,
        pinned=tuple(pinned),
        latest_mcp=tuple(latest),
        discovered=tuple(found),
        personal=personal,
        os_name=row.os or "",
        directory=row.work_dir or "",
        home=row.home,
    )


@dataclass(frozen=True, slots=True)
class Turn:
    """A built turn: its tools always, its rendered prompt once a prompt asked for it."""

    tools: Toolset
    system: str | None = None
    body: bytes | None = None  # the prompt's JSON, exactly as answered (``wire.PromptResponse``)

    def context(self) -> TurnContext:
        assert self.system is not None
        return TurnContext(self.system, self.tools)


class Turns:
    """The turns this replica built, by chat, each kept with the key it was built for."""

    def __init__(self, capacity: int = 4096) -> None:
        self._recent: Recent[Turn] = Recent(capacity)
        self.hits = 0
        self.misses = 0

    def kept(self, chat_id: str) -> Turn | None:
        """The turn last built for the chat, whatever its key: what a call may guess it still is."""
        return self._recent.latest(chat_id)

    def cached(self, row: TurnRow, *, prompt: bool = False) -> Turn | None:
        """The turn built for ``row``'s key (with its prompt rendered, with ``prompt``), counted as a hit;
        nothing (and no miss) when its key moved."""
        found = self._recent.get(row.chat_id, row.key)
        if found is None or (prompt and found.body is None):
            return None
        self.hits += 1
        return found

    def forget(self, chat_id: str) -> None:
        """The chat's pin moved here: its next turn is built anew, without first asking whether it was kept."""
        self._recent.discard(chat_id)

    def tools(self, executor: Executor, user: UserPrincipal, row: TurnRow) -> Toolset:
        found = self._recent.get(row.chat_id, row.key)
        if found is not None:
            self.hits += 1
            return found.tools
        self.misses += 1
        built = Turn(toolset(load_context(executor, user, row, texts=False)))
        self._recent.put(row.chat_id, row.key, built)
        return built.tools

    def prompt(self, executor: Executor, user: UserPrincipal, row: TurnRow) -> tuple[Turn, bool]:
        """The turn with its prompt rendered, and whether it was served from what this replica kept."""
        found = self._recent.get(row.chat_id, row.key)
        if found is not None and found.body is not None:
            self.hits += 1
            return found, True
        self.misses += 1
        context = load_context(executor, user, row, texts=True)
        tools = found.tools if found is not None else toolset(context)
        system = system_text(context, tools.skills)
        answer = PromptResponse(system=system, tools=[ToolSpecBody(**tool.to_dict()) for tool in tools.tools])
        body = answer.__pydantic_serializer__.to_json(answer)
        built = replace(found, system=system, body=body) if found is not None else Turn(tools, system, body)
        self._recent.put(row.chat_id, row.key, built)
        return built, False
