"""The control plane's HTTP API (issue 5's contract), on SQLite and on a real PostgreSQL.

Requests go through httpx's ASGI transport to ``create_app(plane, background=False)``; the
workspace agent the plane calls back is a mock transport. Every route is tried with no
token, a malformed header, an unknown token, the wrong kind of token and another user's
token: each answers 401, 403 or 404 with ``{"message", "detail"}`` and changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
import sqlalchemy as sa
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from agentcontext.control import identity
from agentcontext.control import tables as t
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.api import MAX_BODY, create_app
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.models import Base
from agentcontext.control.plane import ControlPlane
from agentcontext.control.settings import ControlSettings
from agentcontext.resource import Kind, Resource
from agentcontext.server.app import build_app
from agentcontext.testing import skill_md
from tests.agent.conftest import serving
from tests.control.conftest import (
    AGENT_INFO,
    AGENT_URL,
    CONTROL_EDGE,
    NOTES,
    REVIEW,
    WORK,
    fake_agent,
    first_push,
    mcp_server,
    push_body,
    text_resource,
)
from tests.migrated import fresh_sqlite
from tests.web.test_direct_route import solving_counted

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CHAT_KEYS = {"id", "status", "workspace_id", "agent_id", "context"}
CONTEXT_KEYS = {"pinned_hash", "dirty", "dirty_since", "error", "resources"}


# --- the world: users, workspaces, agents, and a fake workspace agent -----------------------------


@dataclass
class World:
    db: Database
    plane: ControlPlane
    client: httpx.AsyncClient
    tokens: dict[str, str] = field(default_factory=dict)  # admin, alice, bob, agent, bobs_agent

    async def call(
        self, method: str, path: str, token: str | None = None, *, json: Any = None, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {self.tokens.get(token, token)}"
        return await self.client.request(method, path, headers=headers, json=json, **kwargs)

    async def push(self, body: Mapping[str, Any], token: str = "agent") -> httpx.Response:
        return await self.call("POST", "/api/v1/agent/context", token, json=body)

    async def chat(self, token: str = "alice", **body: Any) -> dict[str, Any]:
        response = await self.call("POST", "/api/v1/chats", token, json={"workspace": "shared", **body})
        assert response.status_code == 201, response.text
        chat: dict[str, Any] = response.json()
        return chat


@contextlib.asynccontextmanager
async def open_world(
    db: Database, settings: ControlSettings | None = None, agent: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[World]:
    """Users admin (an administrator), alice and bob; workspace ``shared`` with the chat agent
    ``dev-coderd-chat``; workspace ``bobs-box``, bob's own, with the agent ``box``. The plane calls
    workspace agents through ``agent`` (default: the fake agent ``fake_agent``)."""

    def setup(session: Any) -> dict[str, str]:
        tokens = {
            "admin": identity.create_user(session, "admin", admin=True).token,
            "alice": identity.create_user(session, "alice").token,
        }
        bob = identity.create_user(session, "bob")
        tokens["bob"] = bob.token
        tokens["agent"] = identity.create_agent(session, "shared", "dev-coderd-chat").token
        tokens["bobs_agent"] = identity.create_agent(session, "bobs-box", "box", owner_id=bob.id).token
        return tokens

    tokens = db.write(setup)
    plane = ControlPlane(db, LocalBroker(), settings, AgentLink(transport=agent or httpx.MockTransport(fake_agent)))
    app = build_app(plane, background=False, edge=CONTROL_EDGE)  # the API and the dashboard, as served
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://control") as client:
            yield World(db, plane, client, tokens)
    finally:
        await plane.aclose()


@contextlib.asynccontextmanager
async def sqlite_world(tmp_path: Path) -> AsyncIterator[World]:
    """``open_world`` over a fresh SQLite file in ``tmp_path``."""
    database = Database(fresh_sqlite(tmp_path / "control.db"))
    try:
        async with open_world(database) as opened:
            yield opened
    finally:
        database.dispose()


@pytest.fixture
async def world(db: Database) -> AsyncIterator[World]:
    async with open_world(db) as opened:
        yield opened


@dataclass(frozen=True)
class Alices:
    """What alice owns: a pinned chat with a proposed plan attached, and a personal skill."""

    chat_id: str
    file_id: str
    skill: str
    chat: dict[str, Any]

    def ids(self) -> dict[str, str]:
        ids = {"chat_id": self.chat_id, "file_id": self.file_id, "name": self.skill, "workspace": "shared"}
        return {**ids, "agent_id": self.chat["agent_id"]}


@pytest.fixture
async def alices(world: World) -> Alices:
    return await make_alices(world)


async def make_alices(world: World) -> Alices:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat(title="alice's secret chat")
    plan = await world.call(
        "POST",
        f"/api/v1/chats/{chat['id']}/tools/propose_plan",
        "alice",
        json={"path": "/home/dev/project/design.md"},
    )
    assert plan.json()["is_error"] is False, plan.text
    created = await world.call("POST", "/api/v1/users/me/skills", "alice", json={"content": NOTES})
    assert created.status_code == 201, created.text
    return Alices(chat["id"], json.loads(plan.json()["content"])["file_id"], "notes", chat)


def state(db: Database) -> list[tuple[str, list[str]]]:
    """Every row of every table: what "nothing changed" compares."""
    with db.read() as session:
        return [
            (table.name, sorted(repr(tuple(row)) for row in session.execute(sa.select(table))))
            for table in Base.metadata.sorted_tables
        ]


def error(response: httpx.Response) -> tuple[int, str, Any]:
    body = response.json()
    assert set(body) == {"message", "detail"}, body
    return response.status_code, body["message"], body["detail"]


# --- every route ------------------------------------------------------------------------------------

USER_ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/api/v1/users/me", None),
    ("POST", "/api/v1/users", {"name": "carol"}),
    ("GET", "/api/v1/workspaces", None),
    ("GET", "/api/v1/overview", None),
    ("POST", "/api/v1/workspaces/{workspace}/agents", {"name": "extra"}),
    ("GET", "/api/v1/agents/{agent_id}/views", None),
    ("POST", "/api/v1/chats", {"workspace": "shared"}),
    ("GET", "/api/v1/chats", None),
    ("GET", "/api/v1/chats/{chat_id}", None),
    ("PATCH", "/api/v1/chats/{chat_id}", {"title": "renamed"}),
    ("PUT", "/api/v1/chats/{chat_id}/context", None),
    ("GET", "/api/v1/chats/{chat_id}/prompt", None),
    ("POST", "/api/v1/chats/{chat_id}/touched", {"paths": ["services/billing/api.py"]}),
    ("POST", "/api/v1/chats/{chat_id}/tools/{name}", {"name": "review"}),
    ("GET", "/api/v1/chats/{chat_id}/files", None),
    ("GET", "/api/v1/chats/{chat_id}/files/{file_id}", None),
    ("GET", "/api/v1/chats/{chat_id}/events", None),
    ("GET", "/api/v1/users/me/skills", None),
    ("POST", "/api/v1/users/me/skills", {"content": skill_md("fresh", "Brand new")}),
    ("GET", "/api/v1/users/me/skills/{name}", None),
    ("PUT", "/api/v1/users/me/skills/{name}", {"content": skill_md("notes", "Changed")}),
    ("DELETE", "/api/v1/users/me/skills/{name}", None),
]
AGENT_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/api/v1/agent/context", first_push(version=7)),
    ("POST", "/api/v1/agent/heartbeat", {"online": True}),
]
ROUTES = USER_ROUTES + AGENT_ROUTES
OWNED = [r for r in USER_ROUTES if "{chat_id}" in r[1] or "{name}" in r[1] and "/skills/" in r[1]]


def route_id(route: tuple[str, str, Any]) -> str:
    return f"{route[0]} {route[1]}"


def fill(path: str, ids: Mapping[str, str]) -> str:
    if "/tools/{name}" in path:
        path = path.replace("{name}", "read_skill")
    return path.format(**ids)


def test_the_route_tables_here_cover_every_route_of_the_app(db: Database) -> None:
    plane = ControlPlane(db, LocalBroker())
    app = create_app(plane, background=False)
    api = [route for route in flat_routes(app.routes) if route.include_in_schema]  # the dashboard's pages are not API
    served = {(method, route.path_format) for route in api for method in route.methods or ()}
    assert served == {(method, path) for method, path, _ in ROUTES} | {("GET", "/healthz")}


def flat_routes(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """Every API route, including those of included routers (FastAPI may include them lazily)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from flat_routes(included.routes)


BAD_CREDENTIALS: list[dict[str, str]] = [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer    "},
    {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    {"Authorization": "acu_not-a-scheme"},
    {"Authorization": "Token acu_wrong-scheme"},
    {"Authorization": "Bearer acu_unknown-user-token"},
    {"Authorization": "Bearer aca_unknown-agent-token"},
    {"Authorization": "Bearer something-we-never-issued"},
    {"Authorization": "Bearer \u00e9\u00e8-latin-1"},
]


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
async def test_every_route_answers_401_without_a_valid_token_and_changes_nothing(
    world: World, alices: Alices, route: tuple[str, str, Any]
) -> None:
    method, template, body = route
    before = state(world.db)
    for headers in BAD_CREDENTIALS:
        encoded = {k.encode(): v.encode("latin-1") for k, v in headers.items()}
        response = await world.client.request(method, fill(template, alices.ids()), json=body, headers=encoded)
        assert error(response)[:2] == (401, "Unauthorized."), headers
        assert response.headers["www-authenticate"] == "Bearer"
        assert alices.chat_id not in response.text and "secret" not in response.text
    assert state(world.db) == before


@pytest.mark.parametrize("route", USER_ROUTES, ids=route_id)
async def test_user_routes_refuse_an_agent_token_with_403(
    world: World, alices: Alices, route: tuple[str, str, Any]
) -> None:
    method, template, body = route
    before = state(world.db)
    response = await world.call(method, fill(template, alices.ids()), "agent", json=body)
    assert error(response) == (403, "Forbidden.", "this route needs a user's API token, not an agent token")
    assert state(world.db) == before


@pytest.mark.parametrize("route", AGENT_ROUTES, ids=route_id)
async def test_agent_routes_refuse_a_user_token_with_403(world: World, route: tuple[str, str, Any]) -> None:
    method, path, body = route
    before = state(world.db)
    for user in ("alice", "admin"):
        response = await world.call(method, path, user, json=body)
        assert error(response) == (403, "Forbidden.", "this route needs an agent token")
    assert state(world.db) == before


def anonymised(response: httpx.Response, *ids: str) -> tuple[int, str]:
    text = response.text
    for value in ids:
        text = text.replace(value, "<id>")
    return response.status_code, text


@pytest.mark.parametrize("route", OWNED, ids=route_id)
async def test_another_users_chat_or_skill_is_404_exactly_like_one_that_does_not_exist(
    world: World, alices: Alices, route: tuple[str, str, Any]
) -> None:
    method, template, body = route
    before = state(world.db)
    theirs = await world.call(method, fill(template, alices.ids()), "bob", json=body)
    nobody = {"chat_id": str(uuid.uuid4()), "file_id": str(uuid.uuid4()), "name": "no-such-skill"}
    missing = await world.call(method, fill(template, {**alices.ids(), **nobody}), "bob", json=body)
    assert error(theirs)[:2] == (404, "Not found.")
    assert anonymised(theirs, alices.chat_id, alices.skill) == anonymised(missing, nobody["chat_id"], nobody["name"])
    assert "secret" not in theirs.text and "Keeps notes" not in theirs.text
    assert state(world.db) == before


async def test_lists_show_only_the_callers_own_chats_and_skills(world: World, alices: Alices) -> None:
    bobs = await world.chat("bob", title="bob's chat")
    listed = (await world.call("GET", "/api/v1/chats", "bob")).json()
    assert [c["id"] for c in listed] == [bobs["id"]]
    assert (await world.call("GET", "/api/v1/users/me/skills", "bob")).json() == []
    assert [c["id"] for c in (await world.call("GET", "/api/v1/chats", "alice")).json()] == [alices.chat_id]
    assert [s["name"] for s in (await world.call("GET", "/api/v1/users/me/skills", "alice")).json()] == ["notes"]


async def test_a_child_of_another_users_chat_is_404(world: World, alices: Alices) -> None:
    response = await world.call("POST", "/api/v1/chats", "bob", json={"parent_id": alices.chat_id})
    assert error(response) == (404, "Not found.", f'chat "{alices.chat_id}" not found')


async def test_a_workspace_owned_by_another_user_is_404_on_chat_creation_like_a_missing_one(world: World) -> None:
    before = state(world.db)
    bobs_box = next(w for w in (await world.call("GET", "/api/v1/workspaces", "bob")).json() if w["name"] == "bobs-box")
    for key in ("bobs-box", bobs_box["id"]):
        theirs = await world.call("POST", "/api/v1/chats", "alice", json={"workspace": key})
        assert error(theirs) == (404, "Not found.", f'workspace "{key}" not found')
    missing = await world.call("POST", "/api/v1/chats", "alice", json={"workspace": "no-such-box"})
    assert error(missing) == (404, "Not found.", 'workspace "no-such-box" not found')
    assert state(world.db) == before
    assert [w["name"] for w in (await world.call("GET", "/api/v1/workspaces", "alice")).json()] == ["shared"]
    mine = await world.call("POST", "/api/v1/chats", "bob", json={"workspace": "bobs-box"})
    assert mine.status_code == 201


# --- administrators -----------------------------------------------------------------------------


async def test_only_administrators_create_users_and_agents(world: World) -> None:
    before = state(world.db)
    for path, body in (
        ("/api/v1/users", {"name": "carol"}),
        ("/api/v1/workspaces/new-box/agents", {"name": "dev"}),
        ("/api/v1/users", {"nonsense": True}),  # not even the body is looked at
    ):
        response = await world.call("POST", path, "alice", json=body)
        assert error(response) == (403, "Forbidden.", "only an administrator may do this"), path
    assert state(world.db) == before

    user = await world.call("POST", "/api/v1/users", "admin", json={"name": "carol"})
    assert user.status_code == 201
    assert set(user.json()) == {"id", "name", "token"}
    me = await world.call("GET", "/api/v1/users/me", user.json()["token"])
    assert me.json() == {"id": user.json()["id"], "name": "carol", "is_admin": False}

    agent = await world.call("POST", "/api/v1/workspaces/new-box/agents", "admin", json={"name": "dev"})
    assert agent.status_code == 201
    pushed = await world.push(first_push(), agent.json()["token"])
    assert pushed.json() == {"accepted": True, "version": 1, "stored_version": 1}
    names = [w["name"] for w in (await world.call("GET", "/api/v1/workspaces", "admin")).json()]
    assert names == ["bobs-box", "new-box", "shared"]

    again = await world.call("POST", "/api/v1/users", "admin", json={"name": "carol"})
    assert error(again) == (409, "Conflict.", 'user "carol" already exists')
    bad = await world.call("POST", "/api/v1/users", "admin", json={"name": "no spaces"})
    assert error(bad)[:2] == (400, "Invalid request.")


async def test_users_me_says_who_the_token_belongs_to(world: World) -> None:
    me = (await world.call("GET", "/api/v1/users/me", "admin")).json()
    assert (me["name"], me["is_admin"]) == ("admin", True)


# --- the contract's shapes ----------------------------------------------------------------------


async def test_a_chat_created_before_any_push_is_unpinned_and_pins_with_the_first_push(world: World) -> None:
    chat = await world.chat()
    assert set(chat) >= CHAT_KEYS and set(chat["context"]) >= CONTEXT_KEYS
    assert chat["status"] == "pending"
    assert chat["context"]["pinned_hash"] is None and chat["context"]["resources"] == []
    body = first_push()
    await world.push(body)
    shown = (await world.call("GET", f"/api/v1/chats/{chat['id']}", "alice")).json()
    assert shown["context"]["pinned_hash"] == body["aggregate_hash"]
    assert shown["context"]["dirty"] is False


async def test_chat_create_show_refresh_prompt_and_tools_follow_the_contract(world: World) -> None:
    body = first_push()
    assert (await world.push(body)).json() == {"accepted": True, "version": 1, "stored_version": 1}
    created = await world.call("POST", "/api/v1/chats", "alice", json={"workspace": "shared", "status": "running"})
    assert created.status_code == 201
    chat = created.json()
    assert set(chat) >= CHAT_KEYS
    assert set(chat["context"]) >= CONTEXT_KEYS
    assert chat["status"] == "running"
    workspaces = (await world.call("GET", "/api/v1/workspaces", "alice")).json()
    assert chat["workspace_id"] == workspaces[0]["id"]
    assert chat["agent_id"] == workspaces[0]["agents"][0]["id"]
    context = chat["context"]
    assert (context["pinned_hash"], context["dirty"], context["dirty_since"], context["error"]) == (
        body["aggregate_hash"],
        False,
        None,
        None,
    )
    by_path = {r["path"]: r for r in context["resources"]}
    assert by_path[f"{WORK}/AGENTS.md"]["kind"] == "instruction_file"
    skill = by_path[f"{WORK}/.agents/skills/review/SKILL.md"]
    assert (skill["skill_name"], skill["skill_description"], skill["status"]) == ("review", "Reviews a change", "ok")
    assert by_path["docs"]["tools"] == [{"name": "search", "description": "search of docs"}]
    assert (await world.call("GET", f"/api/v1/chats/{chat['id']}", "alice")).json() == chat

    turn = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()
    assert set(turn) == {"system", "tools"}
    assert "<workspace-context>" in turn["system"] and "Use pytest." in turn["system"]
    assert "- review: Reviews a change" in turn["system"]
    for tool in turn["tools"]:
        assert set(tool) == {"name", "description", "input_schema"}
        assert tool["input_schema"]["type"] == "object"
    names = [t["name"] for t in turn["tools"]]
    assert names[:3] == ["read_skill", "read_skill_file", "propose_plan"]
    [mcp_tool] = names[3:]
    assert "search" in mcp_tool

    read = await world.call("POST", f"/api/v1/chats/{chat['id']}/tools/read_skill", "alice", json={"name": "review"})
    assert read.status_code == 200 and set(read.json()) == {"content", "is_error"}
    assert read.json()["is_error"] is False
    skill_read = json.loads(read.json()["content"])
    assert "Read the diff first." in skill_read["body"]
    assert skill_read["files"] == ["SKILL.md", "roles/reviewer.md"]
    proxied = await world.call("POST", f"/api/v1/chats/{chat['id']}/tools/{mcp_tool}", "alice", json={"q": "x"})
    assert proxied.json() == {"content": 'docs__search got {"q": "x"}', "is_error": False}

    await world.push(first_push(2, agents_md="Use tox.\n"))
    dirty = (await world.call("GET", f"/api/v1/chats/{chat['id']}", "alice")).json()["context"]
    assert dirty["dirty"] is True and dirty["dirty_since"] is not None
    stale = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()
    assert "Use pytest." in stale["system"] and "Use tox." not in stale["system"]

    refreshed = await world.call("PUT", f"/api/v1/chats/{chat['id']}/context", "alice")
    assert refreshed.status_code == 200
    data = refreshed.json()
    assert set(data) >= CHAT_KEYS and data["diff"] == {"added": [], "removed": [], "changed": [f"{WORK}/AGENTS.md"]}
    assert (data["context"]["dirty"], data["context"]["dirty_since"]) == (False, None)
    assert data["context"]["pinned_hash"] != body["aggregate_hash"]
    fresh = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()
    assert "Use tox." in fresh["system"]
    again = (await world.call("PUT", f"/api/v1/chats/{chat['id']}/context", "alice")).json()
    assert again["diff"] == {"added": [], "removed": [], "changed": []}


async def test_a_turn_and_an_agents_pushes_are_answered_without_fastapis_dependency_solving(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hot routes are served directly (``web.direct_route``) in the app as composed, answers unchanged."""
    solved = solving_counted(monkeypatch)
    assert (await world.push(first_push())).json()["accepted"] is True
    chat = await world.chat()
    turn = f"/api/v1/chats/{chat['id']}"
    prompt = await world.call("GET", f"{turn}/prompt", "alice")
    assert "Use pytest." in prompt.json()["system"] and prompt.headers["x-prompt-cache"] == "miss"
    skill = await world.call("POST", f"{turn}/tools/read_skill", "alice", json={"name": "review"})
    assert skill.json()["is_error"] is False and "Read the diff first." in skill.json()["content"]
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"agent": AGENT_INFO})
    assert (beat.status_code, beat.content) == (204, b"")
    assert (await world.push(first_push(2, agents_md="Use tox.\n"))).json()["accepted"] is True
    refreshed = await world.call("PUT", f"{turn}/context", "alice")
    assert refreshed.json()["diff"]["changed"] == [f"{WORK}/AGENTS.md"]
    assert solved == []
    listed = await world.call("GET", "/api/v1/chats?archived=false", "alice")
    assert [c["id"] for c in listed.json()] == [chat["id"]]
    assert solved == ["/api/v1/chats"]  # a route with a query parameter is FastAPI's: what this test tells apart


async def test_tool_failures_are_results_with_is_error_not_http_errors(world: World) -> None:
    await world.push(first_push())
    chat = await world.chat()
    path = f"/api/v1/chats/{chat['id']}/tools"
    cases: list[tuple[str, Any, str]] = [
        ("no_such_tool", {}, 'tool "no_such_tool" is not available in this chat'),
        ("read_skill", {}, "name is required"),
        ("read_skill", {"name": "nope"}, 'skill "nope" not found'),
        ("read_skill", ["not", "an", "object"], "invalid JSON input: the arguments must be a JSON object"),
        ("read_skill_file", {"name": "review", "path": "../etc/passwd"}, "path traversal is not allowed"),
        ("propose_plan", {"path": "notes.txt"}, "path must end with .md"),
    ]
    for name, arguments, content in cases:
        response = await world.call("POST", f"{path}/{name}", "alice", json=arguments)
        assert (response.status_code, response.json()) == (200, {"content": content, "is_error": True}), name
    without_body = await world.call("POST", f"{path}/read_skill", "alice")
    assert without_body.json() == {"content": "name is required", "is_error": True}
    odd = await world.call("POST", f"{path}/a%2Fb%0Ac", "alice", json={})  # any name reaches the tools
    assert odd.json() == {"content": 'tool "a/b\nc" is not available in this chat', "is_error": True}


async def test_a_proposed_plan_becomes_an_attachment_of_the_chat(world: World, alices: Alices) -> None:
    files = (await world.call("GET", f"/api/v1/chats/{alices.chat_id}/files", "alice")).json()
    assert [(f["id"], f["name"], f["kind"], f["media_type"]) for f in files] == [
        (alices.file_id, "design.md", "plan", "text/markdown")
    ]
    content = await world.call("GET", f"/api/v1/chats/{alices.chat_id}/files/{alices.file_id}", "alice")
    assert (content.status_code, content.text) == (200, "# Plan\n\n1. Do it.\n")
    assert content.headers["content-type"].startswith("text/markdown")
    missing = await world.call("GET", f"/api/v1/chats/{alices.chat_id}/files/{uuid.uuid4()}", "alice")
    assert error(missing)[:2] == (404, "Not found.")


async def test_a_plan_file_named_in_any_script_downloads_with_its_name(world: World, alices: Alices) -> None:
    for path in ('/home/dev/project/план "первый".md', "/home/dev/project/a;b=c.md"):
        plan = await world.call(
            "POST", f"/api/v1/chats/{alices.chat_id}/tools/propose_plan", "alice", json={"path": path}
        )
        assert plan.json()["is_error"] is False, plan.text
        file_id = json.loads(plan.json()["content"])["file_id"]
        content = await world.call("GET", f"/api/v1/chats/{alices.chat_id}/files/{file_id}", "alice")
        assert (content.status_code, content.text) == (200, "# Plan\n\n1. Do it.\n")
        disposition = content.headers["content-disposition"]
        assert disposition.startswith("inline;")
        assert "filename*=UTF-8''" + quote(path.rsplit("/", 1)[1], safe="") in disposition


async def test_a_tool_call_to_an_agent_known_to_be_offline_is_answered_at_once_without_dialling_it(
    world: World, alices: Alices
) -> None:
    """An agent whose host hangs took each call its whole 90 s, turn after turn, while its chats said offline."""
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"online": False})
    assert beat.status_code == 204
    plan = await world.call(
        "POST", f"/api/v1/chats/{alices.chat_id}/tools/propose_plan", "alice", json={"path": "/home/dev/p.md"}
    )
    assert plan.json() == {
        "content": "workspace connection failed: the workspace agent is offline (no heartbeat lately): try again"
        " once it is back",
        "is_error": True,
    }
    await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"agent": AGENT_INFO})
    back = await world.call(
        "POST", f"/api/v1/chats/{alices.chat_id}/tools/propose_plan", "alice", json={"path": "/home/dev/p.md"}
    )
    assert "offline" not in back.json()["content"]


async def test_a_chat_whose_agent_never_pushed_still_answers_every_chat_route(world: World) -> None:
    chat = await world.chat("bob", workspace="bobs-box")
    assert (chat["agent_id"] is not None, chat["context"]["pinned_hash"]) == (True, None)
    path = f"/api/v1/chats/{chat['id']}"
    refreshed = (await world.call("PUT", f"{path}/context", "bob")).json()
    assert refreshed["diff"] == {"added": [], "removed": [], "changed": []}
    turn = (await world.call("GET", f"{path}/prompt", "bob")).json()
    assert turn == {"system": "", "tools": [turn["tools"][0]]} and turn["tools"][0]["name"] == "propose_plan"
    plan = await world.call("POST", f"{path}/tools/propose_plan", "bob", json={"path": "/home/bob/p.md"})
    assert plan.json() == {
        "content": "workspace connection failed: the workspace agent has not connected",
        "is_error": True,
    }


async def test_two_chat_agents_in_one_workspace_make_chat_creation_a_409(world: World) -> None:
    second = await world.call("POST", "/api/v1/workspaces/shared/agents", "admin", json={"name": "b-coderd-chat"})
    assert second.status_code == 201
    response = await world.call("POST", "/api/v1/chats", "alice", json={"workspace": "shared"})
    status, message, detail = error(response)
    assert (status, message) == (409, "Conflict.")
    assert 'multiple agents match the chat suffix "-coderd-chat": b-coderd-chat, dev-coderd-chat' in detail


async def test_chats_are_updated_archived_and_listed(world: World, alices: Alices) -> None:
    path = f"/api/v1/chats/{alices.chat_id}"
    updated = await world.call("PATCH", path, "alice", json={"status": "completed", "title": "done"})
    assert (updated.status_code, updated.json()["status"], updated.json()["title"]) == (200, "completed", "done")
    bad = await world.call("PATCH", path, "alice", json={"status": "sleeping"})
    assert error(bad)[:2] == (400, "Invalid request.")
    await world.call("PATCH", path, "alice", json={"archived": True})
    assert (await world.call("GET", "/api/v1/chats", "alice")).json() == []
    archived = (await world.call("GET", "/api/v1/chats", "alice", params={"archived": "true"})).json()
    assert [c["id"] for c in archived] == [alices.chat_id]


async def test_a_child_chat_inherits_the_parents_binding_and_pin(world: World, alices: Alices) -> None:
    child = await world.call("POST", "/api/v1/chats", "alice", json={"parent_id": alices.chat_id})
    assert child.status_code == 201
    data = child.json()
    parent = alices.chat
    assert (data["parent_id"], data["workspace_id"], data["agent_id"]) == (
        alices.chat_id,
        parent["workspace_id"],
        parent["agent_id"],
    )
    assert data["context"]["pinned_hash"] == parent["context"]["pinned_hash"]
    assert data["context"]["resources"] == parent["context"]["resources"]
    turn = (await world.call("GET", f"/api/v1/chats/{data['id']}/prompt", "alice")).json()
    assert "propose_plan" not in [t["name"] for t in turn["tools"]]


# --- personal skills ----------------------------------------------------------------------------


async def test_personal_skills_are_created_listed_read_updated_and_deleted(world: World) -> None:
    base = "/api/v1/users/me/skills"
    created = await world.call("POST", base, "alice", json={"content": NOTES})
    assert created.status_code == 201
    assert set(created.json()) == {"name", "description", "size_bytes", "created_at", "updated_at"}
    assert (created.json()["name"], created.json()["description"]) == ("notes", "Keeps notes")
    listed = (await world.call("GET", base, "alice")).json()
    assert [s["name"] for s in listed] == ["notes"]
    detail = (await world.call("GET", f"{base}/notes", "alice")).json()
    assert detail["content"] == NOTES

    duplicate = await world.call("POST", base, "alice", json={"content": NOTES})
    assert error(duplicate) == (409, "Conflict.", 'you already have a skill named "notes"')
    for invalid in ("no frontmatter", skill_md("Not_Kebab", "x"), "x" * (64 * 1024 + 1)):
        response = await world.call("POST", base, "alice", json={"content": invalid})
        assert error(response)[:2] == (400, "Invalid request."), invalid[:20]

    changed = skill_md("notes", "Keeps better notes")
    updated = await world.call("PUT", f"{base}/notes", "alice", json={"content": changed})
    assert (updated.status_code, updated.json()["description"]) == (200, "Keeps better notes")
    assert (await world.call("GET", f"{base}/notes", "alice")).json()["content"] == changed

    await world.push(first_push())
    chat = await world.chat()
    turn = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()
    assert "- notes: Keeps better notes" in turn["system"]
    read = await world.call("POST", f"/api/v1/chats/{chat['id']}/tools/read_skill", "alice", json={"name": "notes"})
    assert read.json()["is_error"] is False

    deleted = await world.call("DELETE", f"{base}/notes", "alice")
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert (await world.call("GET", base, "alice")).json() == []
    gone = await world.call("DELETE", f"{base}/notes", "alice")
    assert error(gone) == (404, "Not found.", 'skill "notes" not found')


async def test_a_personal_skill_named_like_a_workspace_skill_gets_qualified_aliases(world: World) -> None:
    await world.push(first_push())
    await world.call("POST", "/api/v1/users/me/skills", "alice", json={"content": skill_md("review", "My review")})
    chat = await world.chat()
    system = (await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")).json()["system"]
    assert "- workspace/review: Reviews a change" in system and "- personal/review: My review" in system
    tools = f"/api/v1/chats/{chat['id']}/tools/read_skill"
    ambiguous = (await world.call("POST", tools, "alice", json={"name": "review"})).json()
    assert ambiguous["is_error"] is True and "personal/review" in ambiguous["content"]
    mine = (await world.call("POST", tools, "alice", json={"name": "personal/review"})).json()
    assert mine["is_error"] is False


# --- the push endpoint --------------------------------------------------------------------------


async def test_push_is_accepted_once_per_version_and_again_when_initial(world: World) -> None:
    assert (await world.push(first_push(1))).json() == {"accepted": True, "version": 1, "stored_version": 1}
    before = state(world.db)
    same = await world.push(first_push(1, agents_md="Something else.\n"))
    assert (same.status_code, same.json()) == (200, {"accepted": False, "version": 1, "stored_version": 1})
    assert [row for row in state(world.db) if row[0] != "agents"] == [row for row in before if row[0] != "agents"]
    assert (await world.push(first_push(3))).json() == {"accepted": True, "version": 3, "stored_version": 3}
    older = await world.push(first_push(2))
    assert older.json() == {"accepted": False, "version": 2, "stored_version": 3}
    restarted = await world.push(first_push(1, initial=True))
    assert restarted.json() == {"accepted": True, "version": 1, "stored_version": 1}


async def test_a_push_marks_the_agent_online_and_a_last_heartbeat_offline(world: World) -> None:
    await world.push(first_push())
    agents = (await world.call("GET", "/api/v1/workspaces", "alice")).json()[0]["agents"]
    assert (agents[0]["online"], agents[0]["url"], agents[0]["os"]) == (True, AGENT_URL, "linux")
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"online": False})
    assert (beat.status_code, beat.content) == (204, b"")
    assert (await world.call("GET", "/api/v1/workspaces", "alice")).json()[0]["agents"][0]["online"] is False
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"agent": AGENT_INFO})
    assert beat.status_code == 204
    assert (await world.call("GET", "/api/v1/workspaces", "alice")).json()[0]["agents"][0]["online"] is True


async def test_a_heartbeat_records_what_the_agent_says_and_seals_a_new_per_run_secret_once(world: World) -> None:
    await world.push(first_push())
    agent = await world.plane.access.authenticate(world.tokens["agent"])
    assert isinstance(agent, identity.AgentPrincipal)

    def agent_row() -> Any:
        with world.db.engine.connect() as connection:
            return connection.execute(sa.select(t.agents).where(t.agents.c.id == agent.agent_id)).one()

    before = agent_row()
    said = {"run_id": "run-2", "os": "darwin", "home": "/Users/dev", "api_token": "second-run-secret"}
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"agent": said})
    assert beat.status_code == 204
    sealed = agent_row().sealed_secret
    assert sealed != before.sealed_secret
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"agent": said})
    assert beat.status_code == 204
    after = agent_row()
    assert after.sealed_secret == sealed, "the same secret again is not sealed again"
    assert world.plane.reach.secrets.open(after.id, after.sealed_secret) == "second-run-secret"
    assert (after.run_id, after.os, after.home, after.url) == ("run-2", "darwin", "/Users/dev", AGENT_URL)
    assert after.online is True and after.last_seen_at > before.last_seen_at
    beat = await world.call("POST", "/api/v1/agent/heartbeat", "agent", json={"online": True})
    assert beat.status_code == 204
    kept = agent_row()
    assert (kept.run_id, kept.os, kept.url, kept.sealed_secret) == ("run-2", "darwin", AGENT_URL, sealed)


def _resources(body: dict[str, Any], *changes: tuple[int, str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(body))
    for index, key, value in changes:
        copy["resources"][index][key] = value
    return copy


def _many(count: int, size: int = 10) -> dict[str, Any]:
    return push_body([text_resource(Kind.INSTRUCTION_FILE, f"/w/{i}/AGENTS.md", "x" * size) for i in range(count)])


def invalid_pushes() -> list[tuple[str, dict[str, Any], str]]:
    good = first_push()
    skill = next(i for i, r in enumerate(good["resources"]) if r["kind"] == "skill")
    duplicate = json.loads(json.dumps(good))
    duplicate["resources"].append(duplicate["resources"][0])
    nul = push_body([text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "before\x00after")])
    return [
        ("version zero", {**good, "version": 0}, "version must be at least 1"),
        ("version not a number", {**good, "version": "one"}, "version must be an integer"),
        ("version a boolean", {**good, "version": True}, "version must be an integer"),
        ("version a numeric string", {**good, "version": "7", "initial": "yes"}, "version must be an integer"),
        ("initial not a boolean", {**good, "initial": "yes"}, "initial must be true or false"),
        ("an unknown field", {**good, "extra": 1}, "extra is not a field of this body"),
        ("version past int64", {**good, "version": 2**63}, "version must be at most 9223372036854775807"),
        ("no aggregate hash", {k: v for k, v in good.items() if k != "aggregate_hash"}, "aggregate_hash is required"),
        ("wrong aggregate hash", {**good, "aggregate_hash": "0" * 64}, "does not match the resources"),
        ("resources not a list", {**good, "resources": {"a": 1}}, "resources must be a list"),
        ("resource not an object", {**good, "resources": ["AGENTS.md"]}, "resources[0] must be an object"),
        ("unknown kind", _resources(good, (0, "kind", "binary")), "resources[0].kind 'binary' is not one of"),
        ("unknown status", _resources(good, (0, "status", "fine")), "resources[0].status 'fine' is not one of"),
        ("unknown scope", _resources(good, (0, "scope", "galaxy")), "resources[0].scope 'galaxy' is not one of"),
        ("empty path", _resources(good, (0, "path", ""), (0, "id", "instruction_file:")), "resources[0].path is empty"),
        ("path too long", _resources(good, (0, "path", "/" + "p" * 1024)), "resources[0].path is longer than 1024"),
        ("id not kind:path", _resources(good, (0, "id", "instruction_file:/elsewhere")), "resources[0]: id must be"),
        ("duplicate source", duplicate, 'duplicate source "instruction_file:'),
        ("hash not hex", _resources(good, (0, "content_hash", "Z" * 64)), "resources[0].content_hash must be"),
        ("negative size", _resources(good, (0, "size_bytes", -1)), "resources[0].size_bytes must be at least 0"),
        ("warnings not strings", _resources(good, (0, "warnings", [1])), "resources[0].warnings[0] must be a string"),
        ("tools malformed", _resources(good, (skill, "tools", [1])), f"resources[{skill}].tools[0]"),
        ("doc_order not a number", _resources(good, (0, "doc_order", "first")), "resources[0].doc_order"),
        ("error too long", _resources(good, (0, "error", "e" * 5000)), "resources[0].error is longer than 4096"),
        ("body over 256 KiB", _resources(good, (0, "content", "c" * (256 * 1024))), "resources[0] is larger than"),
        ("over 1,000 resources", _many(1001), "resources has 1001 items (at most 1000)"),
        ("over 4 MiB in all", _many(17, 250 * 1024), "resources are larger than 4194304 bytes in all"),
        ("agent url not http", {**good, "agent": {"url": "ftp://agent"}}, "agent.url must be an http"),
        ("agent not an object", {**good, "agent": "me"}, "agent must be an object"),
        ("a NUL character", nul, "resources[0].content: contains a NUL character"),
        ("a lone surrogate", _resources(good, (0, "error", "\ud800")), "resources[0].error: contains a lone surrogate"),
    ]


@pytest.mark.parametrize("case", invalid_pushes(), ids=lambda case: case[0])
async def test_an_invalid_push_is_refused_whole_with_422_naming_the_field(
    world: World, case: tuple[str, dict[str, Any], str]
) -> None:
    """Text no database can store is 400 wherever it is; anything else that breaks the contract is 422."""
    name, body, detail = case
    before = state(world.db)
    content = json.dumps(body, ensure_ascii=True).encode()
    response = await world.call(
        "POST",
        "/api/v1/agent/context",
        "agent",
        content=content,
        headers={"Content-Type": "application/json"},
    )
    status, message, text = error(response)
    assert (status, message) == (400 if name in ("a NUL character", "a lone surrogate") else 422, "Invalid request.")
    assert detail in text
    assert state(world.db) == before


async def test_resources_of_an_odd_but_valid_shape_are_served_without_error(world: World) -> None:
    """Values the agent never sends but the validation lets through must not break the prompt later."""
    instruction = text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/CLAUDE.md", "Be terse.\n")
    body = push_body(
        [
            text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Use pytest.\n"),
            instruction,
            text_resource(Kind.SKILL, f"{WORK}/skills/x/SKILL.md", "no frontmatter", name=None),
            text_resource(Kind.SKILL, f"{WORK}/skills/y/SKILL.md", skill_md("y", "why"), name="bad/name"),
            Resource(Kind.MCP_SERVER, "odd", instruction.scope, instruction.status),
        ],
        agent=AGENT_INFO,
    )
    for resource in body["resources"]:
        if resource["kind"] == "mcp_server":
            resource["tools"] = [
                {"name": "t", "input_schema": {}},
                {"name": "u/v", "description": None},
                {"name": "line\nbreak"},
            ]
        if resource["kind"] == "instruction_file":
            resource["doc_order"] = None
    assert (await world.push(body)).json()["accepted"] is True
    chat = await world.chat()
    turn = await world.call("GET", f"/api/v1/chats/{chat['id']}/prompt", "alice")
    assert turn.status_code == 200
    assert "Be terse." in turn.json()["system"] and "Use pytest." in turn.json()["system"]
    tools = [t["name"] for t in turn.json()["tools"]]
    assert "read_skill" not in tools  # neither skill has a usable name
    reached = set()
    for tool in tools:
        if tool != "propose_plan":  # each exposed name, however it was made safe, routes to its tool
            called = await world.call(
                "POST", f"/api/v1/chats/{chat['id']}/tools/{quote(tool, safe='')}", "alice", json={"q": 1}
            )
            assert called.json()["is_error"] is False, called.text
            reached.add(called.json()["content"])
    assert reached == {f'odd__{name} got {{"q": 1}}' for name in ("t", "u/v", "line\nbreak")}
    shown = (await world.call("GET", f"/api/v1/chats/{chat['id']}", "alice")).json()
    assert f"{WORK}/skills/y/SKILL.md" not in [r["path"] for r in shown["context"]["resources"]]


async def test_sync_disabled_answers_501_to_push_and_heartbeat(db: Database) -> None:
    async with open_world(db, ControlSettings(sync_enabled=False)) as world:
        before = state(world.db)
        for path, body in (
            ("/api/v1/agent/context", first_push()),
            ("/api/v1/agent/context", {"not": "a push"}),
            ("/api/v1/agent/heartbeat", {"online": True}),
        ):
            response = await world.call("POST", path, "agent", json=body)
            assert error(response) == (
                501,
                "Context sync is disabled.",
                "workspace agent context sync is disabled on this deployment",
            ), path
            anonymous = await world.call("POST", path, json=body)
            assert anonymous.status_code == 401
        assert state(world.db) == before
        chat = await world.chat()
        assert chat["context"]["pinned_hash"] is None


# --- limits and malformed requests --------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/agent/context", "/api/v1/users/me/skills"])
async def test_a_body_over_8_mib_is_413_with_content_length_and_chunked(world: World, path: str) -> None:
    token = "agent" if "agent" in path else "alice"
    big = b'{"content": "' + b"x" * MAX_BODY + b'"}'
    declared = await world.call("POST", path, token, content=big, headers={"Content-Type": "application/json"})
    assert error(declared) == (413, "Request body too large.", f"at most {MAX_BODY} bytes")

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"content": "'
        for _ in range(9):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    chunked = await world.call("POST", path, token, content=chunks(), headers={"Content-Type": "application/json"})
    assert "content-length" not in chunked.request.headers
    assert error(chunked) == (413, "Request body too large.", f"at most {MAX_BODY} bytes")
    just_under = b'{"content": "' + b"x" * (MAX_BODY - 20) + b'"}'
    allowed = await world.call("POST", path, token, content=just_under, headers={"Content-Type": "application/json"})
    assert allowed.status_code in (400, 422)  # parsed and refused on its merits, not for its size


async def test_a_large_body_without_a_token_is_refused_401_before_it_is_read(world: World) -> None:
    response = await world.call("POST", "/api/v1/agent/context", content=b"x" * (MAX_BODY + 1))
    assert response.status_code == 401  # who asks comes first: a stranger learns nothing of the limits


@pytest.mark.parametrize(
    ("method", "path", "content", "where"),
    [
        ("POST", "/api/v1/chats", b"{not json", "body is not valid JSON"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "status": "sleeping"}', "status 'sleeping' is not one of"),
        ("POST", "/api/v1/chats", b'{"title": "t"}', "workspace is required"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "title": "' + b"t" * 257 + b'"}', "title is longer"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared\\u0000"}', "workspace: contains a NUL character"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "title": "\\udfff"}', "title: contains a lone surrogate"),
        ("PATCH", "/api/v1/chats/{chat_id}", b'{"title": "a\\u0000b"}', "title: contains a NUL character"),
        ("POST", "/api/v1/users/me/skills", b'{"content": "\\ud83d"}', "content: contains a lone surrogate"),
        ("GET", "/api/v1/chats/%00", b"", "chat_id: contains a NUL character"),
        ("GET", "/api/v1/users/me/skills/a%00b", b"", "name: contains a NUL character"),
    ],
)
async def test_malformed_requests_are_400_invalid_request_with_a_detail(
    world: World, alices: Alices, method: str, path: str, content: bytes, where: str
) -> None:
    before = state(world.db)
    response = await world.call(
        method,
        path.replace("{chat_id}", alices.chat_id),
        "alice",
        content=content,
        headers={"Content-Type": "application/json"},
    )
    status, message, detail = error(response)
    assert (status, message) == (400, "Invalid request."), response.text
    assert where in detail
    assert state(world.db) == before


async def test_a_body_sent_in_chunks_without_a_length_is_checked_like_one_with_a_length(
    world: World, alices: Alices
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"title": "a'
        yield b'\\u0000b"}'

    before = state(world.db)
    path = f"/api/v1/chats/{alices.chat_id}"
    response = await world.call("PATCH", path, "alice", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    status, _, detail = error(response)
    assert status == 400 and "title: contains a NUL character" in detail
    assert state(world.db) == before


@pytest.mark.parametrize(
    ("method", "path", "content", "where"),
    [
        ("POST", "/api/v1/chats", b'{"workspace": 5, "plan_mode": "maybe"}', "workspace must be a string"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "plan_mode": "maybe"}', "plan_mode must be true or false"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "plan_mode": 1}', "plan_mode must be true or false"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "title": 7}', "title must be a string"),
        ("POST", "/api/v1/chats", b'{"workspace": "shared", "colour": "red"}', "colour is not a field of this body"),
        ("POST", "/api/v1/chats", b'["shared"]', "body must be an object"),
        ("POST", "/api/v1/users/me/skills", b"{}", "content is required"),
        ("POST", "/api/v1/users/me/skills", b'{"content": 5}', "content must be a string"),
        ("PUT", "/api/v1/users/me/skills/{skill}", b'{"content": ["x"]}', "content must be a string"),
        ("PATCH", "/api/v1/chats/{chat_id}", b'{"archived": "sometimes"}', "archived must be true or false"),
        ("PATCH", "/api/v1/chats/{chat_id}", b'{"archived": 0}', "archived must be true or false"),
        ("PATCH", "/api/v1/chats/{chat_id}", b'{"status": 3}', "status must be a string"),
        ("POST", "/api/v1/users", b'{"name": "carol", "admin": "yes"}', "admin must be true or false"),
        ("POST", "/api/v1/users", b'{"name": 1}', "name must be a string"),
        ("POST", "/api/v1/workspaces/shared/agents", b'{"name": "x", "parent": 2}', "parent must be a string"),
        ("POST", "/api/v1/workspaces/shared/agents", b'{"name": "x", "role": "y"}', "role is not a field of this body"),
        ("POST", "/api/v1/agent/heartbeat", b'{"online": "no"}', "online must be true or false"),
        ("POST", "/api/v1/agent/heartbeat", b'{"agent": {"run_id": 5}}', "agent.run_id must be a string"),
        ("POST", "/api/v1/agent/heartbeat", b'{"agent": {"token": "x"}}', "agent.token is not a field of this body"),
        ("GET", "/api/v1/chats?archived=perhaps", b"", "query.archived"),
    ],
)
async def test_a_coerced_or_mistyped_body_is_refused_with_422_naming_the_field(
    world: World, alices: Alices, method: str, path: str, content: bytes, where: str
) -> None:
    """No route coerces: a number is not a string, a string or number is not a boolean, an unknown field is refused."""
    before = state(world.db)
    token = "agent" if "/agent/" in path else "admin" if path in ("/api/v1/users",) or "/agents" in path else "alice"
    response = await world.call(
        method,
        path.replace("{chat_id}", alices.chat_id).replace("{skill}", alices.skill),
        token,
        content=content,
        headers={"Content-Type": "application/json"},
    )
    status, message, detail = error(response)
    assert (status, message) == (422, "Invalid request."), response.text
    assert where in detail
    assert state(world.db) == before


async def test_a_surrogate_pair_written_as_escapes_is_ordinary_text(world: World, alices: Alices) -> None:
    response = await world.call(
        "PATCH",
        f"/api/v1/chats/{alices.chat_id}",
        "alice",
        content=b'{"title": "smile \\ud83d\\ude00 and a backslash \\\\u0000"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["title"] == "smile \U0001f600 and a backslash \\u0000"


async def test_unknown_routes_and_methods_answer_in_the_error_shape(world: World) -> None:
    assert error(await world.call("GET", "/api/v1/nothing-here", "alice"))[:2] == (404, "Not found.")
    assert error(await world.call("DELETE", "/api/v1/chats", "alice"))[:2] == (405, "Method not allowed.")


# --- health, documentation, events ----------------------------------------------------------------


async def test_healthz_needs_no_token(world: World) -> None:
    response = await world.call("GET", "/healthz")
    assert response.status_code == 200
    assert response.json()["ok"] is True
    assert response.json()["database"] == world.db.dialect


async def test_openapi_lists_every_route_and_documents_the_error_shape(world: World) -> None:
    response = await world.call("GET", "/openapi.json")
    assert response.status_code == 200
    document = response.json()
    documented = {(method.upper(), path) for path, operations in document["paths"].items() for method in operations}
    assert documented == {(method, path) for method, path, _ in ROUTES} | {("GET", "/healthz")}
    chat = document["paths"]["/api/v1/chats"]["post"]
    assert "201" in chat["responses"] and "401" in chat["responses"] and "404" in chat["responses"]
    assert "501" in document["paths"]["/api/v1/agent/context"]["post"]["responses"]
    assert document["components"]["securitySchemes"]["token"] == {
        "type": "http",
        "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["token"]["description"],
    }
    assert chat["security"] == [{"token": []}]
    assert "security" not in document["paths"]["/healthz"]["get"]
    for operations in document["paths"].values():
        for operation in operations.values():
            if "422" in operation["responses"]:  # a body or query that breaks its model: our error shape
                assert operation["responses"]["422"]["content"]["application/json"] == {
                    "schema": {"$ref": "#/components/schemas/ErrorBody"}
                }
    schemas = document["components"]["schemas"]
    assert set(schemas["ErrorBody"]["properties"]) == {"message", "detail"}
    assert document["paths"]["/api/v1/chats"]["post"]["responses"]["400"]["content"]["application/json"] == {
        "schema": {"$ref": "#/components/schemas/ErrorBody"}
    }
    assert schemas["Kind"]["enum"] == [str(kind) for kind in Kind]
    for name in ("ChatResponse", "ContextSummary", "RefreshResponse", "PromptResponse", "ToolResultBody"):
        assert name in schemas


async def test_the_event_stream_starts_with_the_state_and_reports_out_of_date(db: Database) -> None:
    async with open_world(db) as world:
        await world.push(first_push())
        chat = await world.chat()
        app = create_app(world.plane, background=False)
        headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
        async with (
            serving(app) as url,
            httpx.AsyncClient(base_url=url, headers=headers, timeout=20) as client,
            client.stream("GET", f"/api/v1/chats/{chat['id']}/events") as stream,
        ):
            assert stream.status_code == 200
            events = sse(stream.aiter_lines())
            with anyio.fail_after(20):
                kind, data = await anext(events)
                assert kind == "state"
                assert (data["chat_id"], data["dirty"], data["agent_online"]) == (chat["id"], False, True)
                await world.push(first_push(2, agents_md="Changed.\n"))
                kind, data = await anext(events)
                assert kind == "out_of_date"
                assert data["chat_id"] == chat["id"]


async def sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    kind = "message"
    async for line in lines:
        if line.startswith("event:"):
            kind = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            yield kind, json.loads(line.partition(":")[2].strip())


# --- a prompt served again follows every change it depends on --------------------------------------


async def test_a_prompt_asked_again_follows_pushes_personal_skills_and_refreshes(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat_id = (await world.chat())["id"]

    async def prompt() -> dict[str, Any]:
        response = await world.call("GET", f"/api/v1/chats/{chat_id}/prompt", "alice")
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/json"
        served: dict[str, Any] = response.json()
        return served

    def tools(served: Mapping[str, Any]) -> list[str]:
        return [tool["name"] for tool in served["tools"]]

    first = await prompt()
    assert first == await prompt()  # served again: the same body
    assert "Use pytest." in first["system"] and "docs__search" in tools(first)

    # an MCP-only push reaches the tools without a refresh; the pinned text stays
    mcp_only = push_body(
        [
            text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", "Use pytest.\n"),
            text_resource(
                Kind.SKILL,
                f"{WORK}/.agents/skills/review/SKILL.md",
                REVIEW,
                name="review",
                description="Reviews a change",
            ),
            mcp_server("docs", "search", "fetch"),
        ],
        version=2,
        agent=AGENT_INFO,
    )
    assert (await world.push(mcp_only)).json()["accepted"] is True
    assert "docs__fetch" in tools(await prompt())

    # a personal skill created, then deleted
    assert (await world.call("POST", "/api/v1/users/me/skills", "alice", json={"content": NOTES})).status_code == 201
    assert "notes" in (await prompt())["system"]
    assert (await world.call("DELETE", "/api/v1/users/me/skills/notes", "alice")).status_code == 204
    assert "notes" not in (await prompt())["system"]

    # an edit stays out of the prompt until the chat is refreshed
    assert (await world.push(first_push(3, agents_md="Use nox.\n"))).json()["accepted"] is True
    assert "Use pytest." in (await prompt())["system"]
    assert (await world.call("PUT", f"/api/v1/chats/{chat_id}/context", "alice")).status_code == 200
    refreshed = await prompt()
    assert "Use nox." in refreshed["system"] and "Use pytest." not in refreshed["system"]


async def test_a_prompt_served_before_is_still_not_found_for_another_user(world: World) -> None:
    assert (await world.push(first_push())).json()["accepted"] is True
    chat_id = (await world.chat())["id"]
    assert (await world.call("GET", f"/api/v1/chats/{chat_id}/prompt", "alice")).status_code == 200
    other = await world.call("GET", f"/api/v1/chats/{chat_id}/prompt", "bob")
    assert other.status_code == 404 and "Use pytest." not in other.text


async def test_a_rotated_agent_token_is_refused_once_the_authentication_ttl_has_passed(db: Database) -> None:
    async with open_world(db, ControlSettings(auth_ttl=0.2)) as world:
        assert (await world.push(first_push())).status_code == 200
        db.write(lambda s: identity.rotate_agent_token(s, "shared", "dev-coderd-chat"))
        await anyio.sleep(0.3)
        refused = await world.push(first_push(2))
        assert refused.status_code == 401


async def test_a_checked_token_is_not_looked_up_again_while_no_token_changed(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_up: list[str] = []
    real = identity.authenticate

    def counted(executor: Any, token: str) -> identity.Principal:
        looked_up.append(token)
        return real(executor, token)

    monkeypatch.setattr(identity, "authenticate", counted)
    async with open_world(db, ControlSettings(auth_ttl=0.2)) as world:
        beat = {"agent": {"run_id": "r1"}, "online": True}
        for _ in range(3):  # each past the time a token was trusted until the database's count of changes
            assert (await world.call("POST", "/api/v1/agent/heartbeat", "agent", json=beat)).status_code == 204
            await anyio.sleep(0.3)
        assert looked_up.count(world.tokens["agent"]) == 1


async def test_a_deleted_user_token_is_refused_once_the_authentication_ttl_has_passed(db: Database) -> None:
    async with open_world(db, ControlSettings(auth_ttl=0.2)) as world:
        assert (await world.call("GET", "/api/v1/chats", "alice")).status_code == 200
        digest = identity.token_hash(world.tokens["alice"])
        with db.engine.begin() as connection:  # as an operator's SQL would: no server told
            connection.execute(sa.text("DELETE FROM api_tokens WHERE token_hash = :d"), {"d": digest})
        await anyio.sleep(0.3)
        assert (await world.call("GET", "/api/v1/chats", "alice")).status_code == 401
        assert (await world.call("GET", "/api/v1/chats", "bob")).status_code == 200  # looked up again, still good
