"""A chat's turn: its prompt and tools, rebuilt only when something they depend on moved.

A turn is a pure function of a few columns: the chat's pin (hash and time, and when its
discovered files last moved), its binding
and whether it is a root chat, what the agent last said about itself (OS, work dir, home),
a digest of the MCP servers in the agent's latest snapshot (the prompt overlays them), and
the user's personal skills (count, last change). One prebuilt query reads those columns
(the *turn key*), and with them what a tool call needs besides (the agent's address, the
chat's plan mode). A push that changes nothing the chat pinned leaves the key where it was.

Each replica keeps the turns it built, by chat, with their key: a prompt or a tool call whose key has not
moved costs that one query and no other. One whose key moved reads its inputs in one statement (the pinned and
discovered rows as stored, with the texts the prompt shows, and the latest MCP servers; the personal skills'
names and descriptions apart) and digests them, each text standing as its content key, which the server hashed
itself (a pushed hash is never trusted), and a pinned skill without its body's size, hash and key (the prompt
shows its name and description; a call reads the body from the pin): the *render digest*. Chats whose inputs
digest alike share one render (the prompt but its plan file, and the tools), kept by digest, bounded by the
bytes it weighs (``SHARED_BYTES``): several chats of one workspace re-pinned to the same snapshot render once,
and a chat re-pinned after a push that edited a skill's body alone keeps its render. The digest covers every
input of the shared render as it is rendered, and the render is made from exactly those rows, from a context
that holds no chat id; so equal digests mean byte-identical renders, whichever user or agent the chats belong
to, and a chat is only ever served what it would have rendered itself. The chat's own part, its
``<plan-file>`` block, is set in on each request; a prompt answered from a kept render, the chat's or a shared
one, is a hit (nothing was rendered for it). Every replica stays exact without listening for events.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import sys
from collections import namedtuple
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pydantic
import pydantic_core
import sqlalchemy as sa

from agentcontext.control import discovered, rows
from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.prepared import Prepared
from agentcontext.control.prompt import (
    ChatContext,
    DiscoveredFile,
    Toolset,
    TurnContext,
    plan_file,
    shared_text,
    toolset,
    with_plan_file,
)
from agentcontext.control.turn_cache import Recent, Weighed
from agentcontext.control.visibility import OWNED_CHAT
from agentcontext.control.wire import ToolSpecBody
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
        t.agents.c.online,
        t.snapshots.c.mcp_hash,
        sa.select(sa.func.count()).where(_MINE).scalar_subquery().label("personal_count"),
        sa.select(sa.func.max(t.personal_skills.c.updated_at)).where(_MINE).scalar_subquery().label("personal_last"),
    )
    .select_from(
        t.chats.outerjoin(t.agents, t.agents.c.id == t.chats.c.agent_id).outerjoin(
            t.snapshots, t.snapshots.c.agent_id == t.chats.c.agent_id
        )
    )
    .where(OWNED_CHAT)
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
    online: bool | None  # the agent's, as its heartbeats left it (not part of the key: a call's, not the prompt's)
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
    "sealed_secret", "online", "mcp_hash", "personal_last",
)  # fmt: skip


def turn_row(executor: Executor, user: UserPrincipal, chat_id: str, *, source: str | None = None) -> TurnRow:
    """The chat's turn row; with ``source``, the text of that pinned resource in the same statement.

    Raises: NotFoundError (no such chat of this user).
    """
    values = {"chat_id": chat_id, "user_id": user.user_id}
    row = _RUN_KEY.first(executor, values) if source is None else _RUN_KEY_AND_TEXT.first(
        executor, {**values, "source": source}
    )  # fmt: skip
    if row is None:
        raise NotFoundError(f'chat "{chat_id}" not found')
    return _turn_row_of(row, row.text if source is not None else None)


def _turn_row_of(row: Any, text: str | None = None) -> TurnRow:
    found = {name: getattr(row, name) for name in _FROM_ROW}
    return TurnRow(chat_id=row.id, personal_count=int(row.personal_count or 0), text=text, **found)


_PERSONAL = Prepared(
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
        (r.name, r.description) for r in _PERSONAL.all(executor, {"user_id": user.user_id})
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


# --- the render's inputs, read in one statement, and their digest -----------------------------------------

LATEST = "latest"  # the origin given to the MCP servers of the agent's latest snapshot among a turn's rows
_RAW = (*rows.ROW_COLUMNS, "origin", "caused_by", "text")  # ``meta`` and ``caused_by`` as their JSON text
_DIGESTED = tuple(name for name in _RAW if name != "text")  # the text stands as its content key
Input: Any = namedtuple("Input", _RAW)  # type: ignore[misc]  # one row a turn's render reads, as read, by name
_SHOWN = sa.or_(t.chat_resources.c.origin == rows.DISCOVERED, t.chat_resources.c.kind == PROMPT_TEXTS[0])


def _inputs(agent_id: Any) -> sa.CompoundSelect[Any]:
    """The rows a turn's render reads: the chat's pinned and discovered rows (with the texts the prompt shows),
    and the MCP servers of the latest snapshot of ``agent_id`` (a parameter, or the chat's agent)."""
    return sa.union_all(
        sa.select(
            *(t.chat_resources.c[name] for name in rows.SCALAR_COLUMNS),
            sa.cast(t.chat_resources.c.meta, sa.Text).label("meta"),  # as stored: the digest takes it as it is
            t.chat_resources.c.origin,
            sa.cast(t.chat_resources.c.caused_by, sa.Text).label("caused_by"),
            t.contents.c.text,
        )
        .select_from(
            t.chat_resources.outerjoin(t.contents, sa.and_(t.contents.c.hash == t.chat_resources.c.content_key, _SHOWN))
        )
        .where(t.chat_resources.c.chat_id == sa.bindparam("chat_id")),
        sa.select(
            *(t.snapshot_resources.c[name] for name in rows.SCALAR_COLUMNS),
            sa.cast(t.snapshot_resources.c.meta, sa.Text).label("meta"),
            sa.literal(LATEST).label("origin"),
            sa.null().label("caused_by"),
            sa.null().label("text"),
        ).where(t.snapshot_resources.c.agent_id == agent_id, t.snapshot_resources.c.kind == str(Kind.MCP_SERVER)),
    )


_INPUTS = Prepared(_inputs(sa.bindparam("agent_id")).order_by(sa.literal_column("origin"), sa.literal_column("source")))
# the turn key and the inputs in one statement (one snapshot of the database, so they agree without a
# transaction): each input row comes with the key's columns; a chat without inputs is one row of the key alone
_CHAT_AGENT = sa.select(t.chats.c.agent_id).where(t.chats.c.id == sa.bindparam("chat_id")).scalar_subquery()
_KEY_PART = _KEY.subquery("turn_key")
_INPUT_PART = _inputs(_CHAT_AGENT).subquery("turn_inputs")
_KEY_AND_INPUTS = (
    sa.select(*_KEY_PART.c, *_INPUT_PART.c)
    .select_from(_KEY_PART.outerjoin(_INPUT_PART, sa.true()))
    .order_by(_INPUT_PART.c.origin, _INPUT_PART.c.source)
)
_RUN_KEY, _RUN_KEY_AND_TEXT, _RUN_KEY_AND_INPUTS = Prepared(_KEY), Prepared(_KEY_AND_TEXT), Prepared(_KEY_AND_INPUTS)
_DIGEST_FORM = 2  # bumped whenever what the shared render reads, or how, changes
_SKILL = str(Kind.SKILL)


def input_of(found: Any) -> Any:
    """A row as read (with the turn key's columns too, or not) as an ``Input``: its columns by name."""
    return Input._make([getattr(found, name) for name in _RAW])


def as_rendered(raw: Any) -> Any:
    """An ``Input`` as the render may see it: a pinned skill without what only its body decides (size, content
    hash and key). The prompt shows a skill's name and description, and a call reads its body from the pin by
    source, so a push that edits a skill's body alone leaves the digest, and the render, where they were."""
    if raw.kind != _SKILL or raw.origin != rows.SNAPSHOT:
        return raw
    return raw._replace(size_bytes=0, content_hash="", content_key=None)


@dataclass(frozen=True, slots=True)
class Inputs:
    """Everything a turn's shared render is made of, as read in one statement."""

    row: TurnRow
    stored: tuple[Any, ...]  # pinned, discovered and latest MCP rows, as ``Input``s
    personal: tuple[tuple[str, str], ...]
    digest: str

    def complete(self) -> bool:
        """Every text the prompt shows was found (a text gone meanwhile leaves it out of this render)."""
        return all(raw.text is not None for raw in self.stored if _needs_text(raw))

    def context(self) -> ChatContext:
        """The context these inputs make; it holds no chat id: nothing built from it can name the chat."""
        pinned: list[Resource] = []
        latest: list[Resource] = []
        found: list[DiscoveredFile] = []
        for raw in self.stored:
            resource = _resource(rows.row_of(raw), raw.text)
            if raw.origin == rows.DISCOVERED:
                found.append(DiscoveredFile(resource, tuple(json.loads(raw.caused_by or "null") or ())))
            else:
                (latest if raw.origin == LATEST else pinned).append(resource)
        row = self.row
        return ChatContext(
            chat_id="", root=row.parent_id is None, pinned=tuple(pinned), latest_mcp=tuple(latest),
            discovered=tuple(found), personal=self.personal, os_name=row.os or "", directory=row.work_dir or "",
            home=row.home,
        )  # fmt: skip


def _resource(row: Any, text: str | None) -> Resource:
    """The resource of a ``rows.Row`` (``meta`` as its JSON text) and its text."""
    return _textless(row) if text is None else rows.to_resource(row, text)


@functools.lru_cache(maxsize=2048)
def _textless(row: Any) -> Resource:
    """A row without text (a skill, an MCP server and its tools): built once, as most rows were read before; rows
    with texts are not kept here, so what this holds stays small."""
    return rows.to_resource(row, None)


def _needs_text(raw: Any) -> bool:
    shown = raw.origin == rows.DISCOVERED or (raw.origin == rows.SNAPSHOT and raw.kind == PROMPT_TEXTS[0])
    return shown and raw.content_key is not None


def read_inputs(executor: Executor, user: UserPrincipal, row: TurnRow) -> Inputs:
    """The turn's inputs, in one statement (and the personal skills' names in a second, when the user has any), and
    their digest: taken over every row as read but its text, which its content key (hashed here) stands for."""
    found = _INPUTS.all(executor, {"chat_id": row.chat_id, "agent_id": row.agent_id})
    stored = tuple(input_of(raw) for raw in found)
    personal = tuple(
        (r.name, r.description) for r in _PERSONAL.all(executor, {"user_id": user.user_id})
    ) if row.personal_count else ()  # fmt: skip
    return _digested(row, stored, personal)


def turn_and_inputs(executor: Executor, user: UserPrincipal, chat_id: str) -> tuple[TurnRow, Inputs | None]:
    """The chat's turn row and its inputs in one statement, which needs no transaction to make them agree; no
    inputs (``None``) for a chat not bound and pinned yet, or one whose user has personal skills (they take a
    second statement, so a transaction: ``turn_row`` and ``read_inputs``).

    Raises: NotFoundError (no such chat of this user).
    """
    found = _RUN_KEY_AND_INPUTS.all(executor, {"chat_id": chat_id, "user_id": user.user_id})
    if not found:
        raise NotFoundError(f'chat "{chat_id}" not found')
    row = _turn_row_of(found[0])
    if not row.ready or row.personal_count:
        return row, None
    stored = tuple(input_of(raw) for raw in found if raw.source is not None)  # a source: an input
    return row, _digested(row, stored, ())


def _digested(row: TurnRow, stored: tuple[Any, ...], personal: tuple[tuple[str, str], ...]) -> Inputs:
    stored = tuple([as_rendered(raw) for raw in stored])  # what the digest covers is all the render is made of
    form = [
        _DIGEST_FORM, row.parent_id is None, row.plan_mode, row.os, row.work_dir, row.home,
        [[getattr(raw, name) for name in _DIGESTED] for raw in stored], [list(p) for p in personal],
    ]  # fmt: skip
    encoded = json.dumps(form, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()
    return Inputs(row, stored, personal, digest)


# --- turns ------------------------------------------------------------------------------------------------

_TOOL_BODIES = pydantic.TypeAdapter(list[ToolSpecBody])
SHARED_BYTES = 32 * 1024 * 1024  # the renders shared across chats, in all (about: text, tools JSON, overhead)
SHARED_ENTRIES = 2048


@dataclass(frozen=True, slots=True)
class Shared:
    """What chats whose inputs digest alike share: their tools, and once a prompt asked, the rendered prompt but
    the plan file, with the tools as JSON."""

    tools: Toolset
    text: str | None = None
    tools_json: bytes | None = None

    def weight(self) -> int:
        return sys.getsizeof(self.text) + 2 * len(self.tools_json or b"") + 1024 * (1 + len(self.tools.tools))


@dataclass(frozen=True, slots=True)
class Turn:
    """A built turn: its tools always, its rendered prompt once a prompt asked for it."""

    tools: Toolset
    system: str | None = None
    body: bytes | None = None  # the prompt's JSON, exactly as answered (``wire.PromptResponse``)

    def context(self) -> TurnContext:
        assert self.system is not None
        return TurnContext(self.system, self.tools)


def tools_json(bodies: list[ToolSpecBody]) -> bytes:
    return _TOOL_BODIES.dump_json(bodies)


def prompt_body(system: str, tools: bytes) -> bytes:
    """``wire.PromptResponse`` as JSON, its tools already serialised (``tools_json``): as pydantic writes it."""
    return b'{"system":' + pydantic_core.to_json(system) + b',"tools":' + tools + b"}"


class Turns:
    """The turns this replica built, by chat, each kept with the key it was built for; and the renders shared
    by chats whose inputs digest alike, by digest."""

    def __init__(
        self, capacity: int = 4096, *, shared_bytes: int = SHARED_BYTES, shared_entries: int = SHARED_ENTRIES
    ) -> None:
        self._recent: Recent[Turn] = Recent(capacity)
        self.shared: Weighed[Shared] = Weighed(Shared.weight, max_bytes=shared_bytes, max_entries=shared_entries)
        self.hits = 0
        self.misses = 0
        self.shared_hits = 0  # of ``hits``: a chat's turn found among the shared renders

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
        inputs = read_inputs(executor, user, row)
        shared = self.shared.get(inputs.digest)
        if shared is not None:
            self.hits += 1
            self.shared_hits += 1
        else:
            self.misses += 1
            shared = Shared(toolset(inputs.context()))
            self.shared.put(inputs.digest, shared)
        self._recent.put(row.chat_id, row.key, Turn(shared.tools))
        return shared.tools

    def prompt(
        self, executor: Executor, user: UserPrincipal, row: TurnRow, inputs: Inputs | None = None
    ) -> tuple[Turn, bool]:
        """The turn with its prompt rendered, and whether it was served from what this replica kept (the chat's
        turn, or a render shared with chats whose inputs digest alike): a miss is a render made now. ``inputs``:
        read with ``row`` already (``turn_and_inputs``), else read here."""
        found = self._recent.get(row.chat_id, row.key)
        if found is not None and found.body is not None:
            self.hits += 1
            return found, True
        if inputs is None:
            inputs = read_inputs(executor, user, row)
        shared = self.shared.get(inputs.digest)
        cached = shared is not None and shared.text is not None
        if cached:
            self.hits += 1
            self.shared_hits += 1
        else:
            self.misses += 1
            shared = self._render(inputs, shared)
        assert shared is not None and shared.text is not None and shared.tools_json is not None
        system = with_plan_file(shared.text, plan_file(row.home, row.chat_id, root=row.parent_id is None))
        built = Turn(shared.tools, system, prompt_body(system, shared.tools_json))
        self._recent.put(row.chat_id, row.key, built)
        return built, cached

    def _render(self, inputs: Inputs, tools_only: Shared | None) -> Shared:
        """The shared render of ``inputs``, kept by their digest when every text it shows was found."""
        context = inputs.context()
        tools = tools_only.tools if tools_only is not None else toolset(context)
        bodies = [ToolSpecBody(**tool.to_dict()) for tool in tools.tools]
        shared = Shared(tools, shared_text(context, tools.skills), tools_json(bodies))
        if inputs.complete():  # else served to this request alone
            self.shared.put(inputs.digest, shared)
        return shared
