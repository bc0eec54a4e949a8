"""Schemathesis over ``/openapi.json`` of a real app on SQLite: no 5xx, and every answer as the document says.

Each operation gets schema-conforming and schema-violating requests; every answer is checked
for a status the document lists, its content type and its body's schema. Each request is sent
twice: as generated (random ids: the not-found paths), and with its path pointing at things
that exist (the user's chat, its plan attachment, their personal skill, the workspace's agent,
a tool the chat offers), so the handlers behind the lookups are fuzzed too. User routes get an
administrator's token, agent routes an agent's token. The workspace agent the chat tools
reach is a mock transport.

Random pushes never get past the aggregate hash, so a second property generates pushes
that do (arbitrary resource fields, a correct hash) and then reads the chats they pin.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

import httpx
import hypothesis
import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from agentcontext.control import identity, migrate
from agentcontext.control.agent_link import AgentLink
from agentcontext.control.api import create_app
from agentcontext.control.db import Database
from agentcontext.control.events import LocalBroker
from agentcontext.control.plane import ControlPlane
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash
from agentcontext.web.hosts import ServedHosts
from tests.control.conftest import AGENT_INFO, CONTROL_EDGE, NOTES, fake_agent, first_push

pytestmark = pytest.mark.timeout(300)

MAX_EXAMPLES = 30
# schemathesis reaches an ASGI app as http://testserver: a name served here, as --allow-host would
FUZZ_EDGE = replace(CONTROL_EDGE, hosts=ServedHosts(CONTROL_EDGE.hosts.names | {"testserver"}))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
TOOLS = ("read_skill", "read_skill_file", "propose_plan", "docs__search", "nothing")
FUZZ_SETTINGS = hypothesis.settings(
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    database=None,
    derandomize=True,
    phases=[hypothesis.Phase.generate, hypothesis.Phase.shrink],
)


@dataclass(frozen=True)
class Fuzzed:
    app: FastAPI
    client: TestClient
    user: str
    agent: str
    chat_id: str
    file_id: str
    agent_id: str

    def as_user(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.user}"}

    def as_agent(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.agent}"}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'control.db'}")
    migrate.upgrade(db)

    def setup(session: Any) -> tuple[str, str]:
        user = identity.create_user(session, "fuzzer", admin=True).token
        return user, identity.create_agent(session, "shared", "dev-coderd-chat").token

    user, agent = db.write(setup)
    plane = ControlPlane(db, LocalBroker(), link=AgentLink(transport=httpx.MockTransport(fake_agent)))
    app = create_app(plane, background=False, edge=FUZZ_EDGE)
    with TestClient(app, base_url="http://control") as client:
        auth = {"Authorization": f"Bearer {user}"}
        pushed = client.post("/api/v1/agent/context", json=first_push(), headers={"Authorization": f"Bearer {agent}"})
        assert pushed.json()["accepted"] is True
        chat = client.post("/api/v1/chats", json={"workspace": "shared"}, headers=auth).json()
        plan = client.post(
            f"/api/v1/chats/{chat['id']}/tools/propose_plan", json={"path": "/home/dev/project/x.md"}, headers=auth
        ).json()
        assert plan["is_error"] is False
        file_id = client.get(f"/api/v1/chats/{chat['id']}/files", headers=auth).json()[0]["id"]
        agent_id = client.get("/api/v1/workspaces", headers=auth).json()[0]["agents"][0]["id"]
        yield Fuzzed(app, client, user, agent, chat["id"], file_id, agent_id)
    db.dispose()


@pytest.fixture(scope="module")
def api_schema(fuzzed: Fuzzed) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", fuzzed.app)


def _operations() -> list[tuple[str, str]]:
    """(method, path) of every operation the document lists, known at collection time (it needs no database)."""
    database = Database("sqlite://")
    try:
        document = create_app(ControlPlane(database, LocalBroker()), background=False).openapi()
    finally:
        database.dispose()
    return sorted((method.upper(), path) for path, operations in document["paths"].items() for method in operations)


OPERATIONS = _operations()


def test_every_route_of_the_api_is_fuzzed() -> None:
    assert len(OPERATIONS) == 25
    assert ("POST", "/api/v1/agent/context") in OPERATIONS and ("GET", "/healthz") in OPERATIONS
    assert ("GET", "/api/v1/agents/{agent_id}/views") in OPERATIONS
    assert ("POST", "/api/v1/chats/{chat_id}/touched") in OPERATIONS


def _existing(case: schemathesis.Case[Any], fuzzed: Fuzzed) -> dict[str, Any] | None:
    """The case's path parameters pointed at things that exist; None when it has none."""
    params = dict(case.path_parameters or {})
    if not params:
        return None
    if "chat_id" in params:
        params["chat_id"] = fuzzed.chat_id
    if "file_id" in params:
        params["file_id"] = fuzzed.file_id
    if "name" in params and "/tools/" in case.path:
        pick = int(hashlib.sha256(repr(case.body).encode()).hexdigest(), 16)
        params["name"] = TOOLS[pick % len(TOOLS)]
    elif "name" in params:  # a personal skill: make sure it is there (an earlier case may have deleted it)
        fuzzed.client.post("/api/v1/users/me/skills", json={"content": NOTES}, headers=fuzzed.as_user())
        params["name"] = "notes"
    if "workspace" in params:
        params["workspace"] = "shared"
    if "agent_id" in params:
        params["agent_id"] = fuzzed.agent_id
    if case.path.endswith("/touched"):  # the agent reachable again (a fuzzed heartbeat may have said otherwise)
        beat = {"online": True, "agent": AGENT_INFO}
        fuzzed.client.post("/api/v1/agent/heartbeat", json=beat, headers=fuzzed.as_agent())
    return params


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_request_makes_the_server_answer_5xx_or_off_its_schema(
    api_schema: schemathesis.BaseSchema, fuzzed: Fuzzed, method: str, path: str
) -> None:
    operation = api_schema[path][method]
    headers = fuzzed.as_agent() if path.startswith("/api/v1/agent/") else fuzzed.as_user()
    cases = st.one_of(
        operation.as_strategy(schemathesis.GenerationMode.POSITIVE),
        operation.as_strategy(schemathesis.GenerationMode.NEGATIVE),
    )

    @hypothesis.given(case=cases)
    @hypothesis.settings(FUZZ_SETTINGS, max_examples=MAX_EXAMPLES)
    def no_server_error(case: schemathesis.Case[Any]) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)
        existing = _existing(case, fuzzed)
        if existing is not None and not path.endswith("/events"):  # a real chat's stream never ends
            generated, case.path_parameters = case.path_parameters, existing
            try:
                case.call_and_validate(headers=headers, checks=CHECKS)
            finally:
                case.path_parameters = generated  # hypothesis may show or replay the case as it was drawn

    no_server_error()


# --- pushes that pass the hash check, and the chats they pin ---------------------------------------

# NUL and lone surrogates are always a 400 (test_api has those cases); here they would only hide the rest
_text = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=40)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_tool = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(["search", "fetch", "a__b"]), _text)},
    optional={
        "description": st.one_of(st.none(), _text),
        "input_schema": st.dictionaries(st.sampled_from(["type", "properties", "required"]) | _text, _json_value),
    },
)


@st.composite
def _resource(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(list(Kind)))
    path = draw(st.sampled_from(["/w/AGENTS.md", "/w/CLAUDE.md", "/w/s/a/SKILL.md", "docs", "x"]) | _text.filter(bool))
    status = draw(st.sampled_from([Status.OK] * len(Status) + list(Status)))  # mostly ok: those reach the prompt
    content = draw(st.one_of(st.none(), _text, st.just("---\nname: a\ndescription: d\n---\nbody")))
    raw: dict[str, Any] = {
        "id": f"{kind}:{path}",
        "kind": str(kind),
        "path": path,
        "scope": str(draw(st.sampled_from(list(Scope)))),
        "status": str(status),
        "size_bytes": draw(st.integers(min_value=0, max_value=10**6)),
        "content_hash": draw(st.sampled_from(["", "ab" * 32, "0" * 64])),
        "error": draw(st.one_of(st.none(), _text)),
        "warnings": draw(st.lists(_text, max_size=2)),
    }
    if content is not None:
        raw["content"] = content
    optional = {
        "name": st.one_of(st.sampled_from(["a", "review", "personal/x", "with space"]), st.none(), _text),
        "description": st.one_of(st.none(), _text),
        "doc_order": st.one_of(st.none(), st.integers(min_value=0, max_value=5)),
        "servers": st.lists(_text, max_size=2),
        "connect": st.booleans(),
        "tools": st.lists(_tool, max_size=3),
        "source": st.one_of(st.none(), _text),
    }
    wanted = {Kind.SKILL: "name", Kind.MCP_SERVER: "tools", Kind.INSTRUCTION_FILE: "doc_order"}.get(kind)
    for key, strategy in optional.items():
        if key == wanted or draw(st.booleans()):
            raw[key] = draw(strategy)
    return raw


def _hashed(resources: list[dict[str, Any]], version: int) -> dict[str, Any]:
    try:
        parsed = [Resource.from_dict(r) for r in resources]
        digest = aggregate_hash(parsed)
    except (KeyError, TypeError, ValueError, AttributeError):
        digest = "0" * 64  # refused anyway, before the hash is compared
    return {"version": version, "aggregate_hash": digest, "initial": True, "resources": resources, "agent": AGENT_INFO}


@hypothesis.given(resources=st.lists(_resource(), max_size=6, unique_by=lambda r: str(r["id"])))
@hypothesis.settings(FUZZ_SETTINGS, max_examples=60)
def test_pushes_with_arbitrary_resource_fields_never_make_a_chat_answer_5xx(
    fuzzed: Fuzzed, resources: list[dict[str, Any]]
) -> None:
    client = fuzzed.client
    pushed = client.post("/api/v1/agent/context", json=_hashed(resources, 1), headers=fuzzed.as_agent())
    assert pushed.status_code in (200, 400, 422), pushed.text
    if pushed.status_code != 200:
        return
    assert pushed.json()["accepted"] is True
    chat = client.post("/api/v1/chats", json={"workspace": "shared"}, headers=fuzzed.as_user())
    assert chat.status_code == 201, chat.text
    chat_path = f"/api/v1/chats/{chat.json()['id']}"
    for url in (chat_path, f"{chat_path}/prompt", "/api/v1/chats"):
        response = client.get(url, headers=fuzzed.as_user())
        assert response.status_code == 200, (url, response.text)
    turn = client.get(f"{chat_path}/prompt", headers=fuzzed.as_user()).json()
    names = [r.get("name") for r in resources if isinstance(r.get("name"), str)]
    for tool in turn["tools"]:
        arguments = {"name": names[0] if names else "a", "path": "notes.md", "q": "x"}
        called = client.post(
            f"{chat_path}/tools/{quote(tool['name'], safe='')}", json=arguments, headers=fuzzed.as_user()
        )
        assert called.status_code == 200, (tool["name"], called.text)
        assert set(called.json()) >= {"content", "is_error"}
    json.dumps(turn)  # what the model is given is plain JSON
    refreshed = client.put(f"{chat_path}/context", headers=fuzzed.as_user())
    assert refreshed.status_code == 200, refreshed.text
