"""Telling a chat's MCP sessions that its context moved: out of date, up to date again, refreshed.

The control plane's event broker already carries each chat's events to every replica
(in-process on SQLite, ``LISTEN/NOTIFY`` on PostgreSQL). For every chat with an open MCP
session this module follows the chat's topic and turns its events into MCP notifications:

* ``out_of_date``: a ``warning`` log message naming what changed (handshake-era sessions)
  and ``tools/list_changed``, since ``refresh_context`` now describes the change;
* ``up_to_date`` (the edit was reverted): an ``info`` log message and ``tools/list_changed``;
* ``refreshed`` (by any client, on any replica) and ``lagged`` (events may have been missed):
  ``tools``, ``resources`` and ``prompts/list_changed``.

Handshake-era (2025) sessions get them on their standalone stream; 2026-07-28 sessions, which
have no standing stream, through ``subscriptions/listen`` (one SDK ``ListenHandler`` per
chat, so a listener hears only its own chat). A chat stops being followed once none of its
sessions is left.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)

from agentcontext.control.events import Broker, Event, chat_topic

log = logging.getLogger("agentcontext.control.chat_mcp")
LOGGER_NAME = "agentcontext"
IDLE_CHECK_SECONDS = 60.0  # how often a followed chat is checked for sessions that are all gone

Describe = Callable[[str], Awaitable[str]]  # chat id -> what changed since the pin, in words


@dataclass
class _Followed:
    sessions: weakref.WeakKeyDictionary[object, ServerSession] = field(default_factory=weakref.WeakKeyDictionary)
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    listen: ListenHandler | None = None

    def __post_init__(self) -> None:
        self.listen = ListenHandler(self.bus, max_subscriptions=64)

    @property
    def idle(self) -> bool:
        assert self.listen is not None
        return not self.sessions and not self.listen._streams  # the SDK offers no count of open streams


class ChatNotices:
    """Follows the chats that have MCP sessions; runs inside the server's task group."""

    def __init__(self, broker: Broker, describe: Describe) -> None:
        self._broker = broker
        self._describe = describe
        self._followed: dict[str, _Followed] = {}
        self._group: anyio.abc.TaskGroup | None = None

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._group = None
                for followed in self._followed.values():
                    assert followed.listen is not None
                    followed.listen.close()

    def attach(self, chat_id: str, session: ServerSession) -> None:
        """Remember a handshake-era session of ``chat_id`` (one per connection) for its notices."""
        connection = getattr(session, "_connection", None)
        if connection is None:
            return
        self._follow(chat_id).sessions[connection] = session

    def listen_handler(self, chat_id: str) -> ListenHandler:
        """The ``subscriptions/listen`` handler of ``chat_id`` (2026-07-28 sessions)."""
        listen = self._follow(chat_id).listen
        assert listen is not None
        return listen

    def _follow(self, chat_id: str) -> _Followed:
        followed = self._followed.get(chat_id)
        if followed is None:
            followed = self._followed[chat_id] = _Followed()
            if self._group is not None:
                self._group.start_soon(self._watch, chat_id)
        return followed

    async def _watch(self, chat_id: str) -> None:
        try:
            with self._broker.subscribe([chat_topic(chat_id)]) as events:
                while True:
                    with anyio.move_on_after(IDLE_CHECK_SECONDS):
                        event = await events.receive()
                        await self._deliver(chat_id, event)
                        continue
                    if self._followed[chat_id].idle:
                        return
        except anyio.EndOfStream:
            return  # the broker is closing: the server is stopping
        finally:
            self._followed.pop(chat_id, None)

    async def _deliver(self, chat_id: str, event: Event) -> None:
        followed = self._followed.get(chat_id)
        if followed is None:
            return
        if event.kind == "out_of_date":
            what = await self._describe(chat_id)
            text = f"The context pinned to this chat is out of date: {what}. Call refresh_context to re-pin it."
            await self._tell(followed, "warning", text, (ToolsListChanged(),))
        elif event.kind == "up_to_date":
            await self._tell(followed, "info", "The chat's context is up to date again.", (ToolsListChanged(),))
        elif event.kind in ("refreshed", "lagged", "pinned"):
            changed = (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged())
            await self._tell(followed, None, None, changed)

    async def _tell(
        self,
        followed: _Followed,
        level: types.LoggingLevel | None,
        text: str | None,
        changed: tuple[ToolsListChanged | ResourcesListChanged | PromptsListChanged, ...],
    ) -> None:
        for event in changed:
            await followed.bus.publish(event)
        notices: list[types.ServerNotification] = []
        if level is not None and text is not None:
            params = types.LoggingMessageNotificationParams(level=level, logger=LOGGER_NAME, data=text)
            notices.append(types.LoggingMessageNotification(params=params))
        notices += [_legacy(event) for event in changed]
        for session in list(followed.sessions.values()):
            for notice in notices:
                try:
                    await session.send_notification(notice)
                except Exception as exc:  # a closed session must not stop the others
                    log.debug("could not notify an MCP session: %s", exc)
                    break


def _legacy(event: Any) -> types.ServerNotification:
    if isinstance(event, ToolsListChanged):
        return types.ToolListChangedNotification()
    if isinstance(event, ResourcesListChanged):
        return types.ResourceListChangedNotification()
    return types.PromptListChangedNotification()
