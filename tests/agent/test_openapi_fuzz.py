"""Schemathesis over the workspace agent's ``/openapi.json``: no 5xx, answers as the document says.

A real agent runs over a workspace with instructions, two skills (one with supporting files),
a plan file, a declared source and a real MCP server (``mcp-server-time``); its app is served
by uvicorn on loopback in a thread of its own, so the agent's loop is the app's loop.

No answer is a 5xx except the one docs/agent.md promises: 502 ``MCP tool call failed.`` when
the upstream MCP server refuses a call. Each operation gets schema-conforming and
schema-violating requests. Each is sent without a token and with a wrong one (both must be
401), with a foreign ``Host`` (a DNS-rebinding page) and the token (421), with
a body over the limit (401 without the token, 413 with it: never read), then with the token
as generated (random names and paths: the not-found and refused answers), once more with its
path pointed at things that exist (the skill, one of its files or a path that escapes it,
the declared source, the plan file, the MCP tool), so 200s are fuzzed too, and once with
hostile text in those places (NUL, traversal, newlines, lone surrogates, tag characters).
Every answer is checked for a status the document lists, its content type and its body's
schema.

The event stream never ends for an authorized client; it is fuzzed without credentials, and
with them only where the guard refuses it first.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agentcontext.agent.api import create_app
from agentcontext.testing import make_workspace, skill_md
from agentcontext.web.guard import Edge
from tests.agent.conftest import AUTO_TRUST, make_agent, ready, running, serving, time_server_config

pytestmark = pytest.mark.timeout(600)

TOKEN = "agent-fuzz-token"
MAX_BODY = 32 * 1024  # small, so an oversized body costs little; no generated body comes near it
MAX_EXAMPLES = 20
CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance]
# The one 5xx the docs promise (docs/agent.md): the upstream MCP server refused the call (here: an unknown tool).
UPSTREAM_FAILED = (502, "MCP tool call failed.")
FUZZ_SETTINGS = hypothesis.settings(
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    database=None,
    derandomize=True,
    phases=[hypothesis.Phase.generate, hypothesis.Phase.shrink],
)
SKILL_FILES = ("references/guide.md", "SKILL.md", "scripts/run.sh", "../lint/SKILL.md", "/etc/passwd", "nope.md")
TOOLS = ("time__get_current_time", "time__convert_time", "time__nothing", "other__x", "bad name")


@dataclass(frozen=True)
class Served:
    url: str
    document: dict[str, Any]
    work: Path
    source: str
    plan: str


def _workspace(root: Path) -> Path:
    return make_workspace(
        root / "work",
        {
            ".git/": "",
            "AGENTS.md": "# Rules\n\nUse pytest. <!-- a comment -->\n",
            ".mcp.json": time_server_config(),
            ".agents/skills/review/SKILL.md": skill_md("review", "Reviews a change", body="Read the guide.\n"),
            ".agents/skills/review/references/guide.md": "# Guide\n",
            ".agents/skills/review/scripts/run.sh": "#!/bin/sh\necho hi\n",
            ".agents/skills/lint/SKILL.md": skill_md("lint", "Lints the code"),
            "docs/notes/AGENTS.md": "Notes rules.\n",
            "PLAN.md": "# Plan\n\n1. Do it.\n",
        },
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("agent-fuzz")
    home = root / "home"
    home.mkdir()
    work = _workspace(root)
    agent = make_agent(work, home, settings=AUTO_TRUST)
    app = create_app(agent, token=TOKEN, startup_wait=1.0, edge=Edge(max_body=MAX_BODY))
    started: list[str] = []
    up, stop, failed = threading.Event(), threading.Event(), []

    async def serve() -> None:
        async with running(agent), serving(app) as url:
            await ready(agent)
            started.append(url)
            up.set()
            while not stop.is_set():
                await anyio.sleep(0.05)

    def thread_main() -> None:
        try:
            anyio.run(serve)
        except BaseException as exc:  # reported by the fixture below, not lost in the thread
            failed.append(exc)
            up.set()

    thread = threading.Thread(target=thread_main, name="agent-fuzz", daemon=True)
    thread.start()
    assert up.wait(60), "the agent did not start"
    if failed:
        raise failed[0]
    source = str(work / "docs" / "notes")
    try:
        yield Served(started[0], app.openapi(), work, source, str(work / "PLAN.md"))
    finally:
        stop.set()
        thread.join(30)


@pytest.fixture(scope="module")
def api_schema(served: Served) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(served.document)


def _operations() -> list[tuple[str, str]]:
    """(method, path) of every operation the document lists (the app builds it without an agent running)."""
    document = create_app(None, token=TOKEN).openapi()  # type: ignore[arg-type]  # only the routes are read
    return sorted((method.upper(), path) for path, operations in document["paths"].items() for method in operations)


OPERATIONS = _operations()


def test_every_route_of_the_api_is_fuzzed() -> None:
    assert len(OPERATIONS) == 18
    assert ("POST", "/api/v0/context/instructions") in OPERATIONS and ("GET", "/api/v0/context/agents") in OPERATIONS
    assert ("GET", "/api/v0/skills/{name}/files/{path}") in OPERATIONS and ("GET", "/api/v0/events") in OPERATIONS


def _pick(case: schemathesis.Case[Any], choices: tuple[str, ...]) -> str:
    """One of ``choices``, chosen by the case's content, so runs are repeatable."""
    digest = hashlib.sha256(repr((case.path_parameters, case.query, case.body)).encode()).hexdigest()
    return choices[int(digest, 16) % len(choices)]


def _existing(case: schemathesis.Case[Any], served: Served) -> dict[str, Any] | None:
    """Where to point the case at things that exist: path, query and body overrides; None when nothing does."""
    params = dict(case.path_parameters or {})
    if case.path.startswith("/api/v0/skills/"):
        params["name"] = "review"
        if "path" in params:
            params["path"] = _pick(case, SKILL_FILES)
        return {"path_parameters": params}
    if case.path == "/api/v0/context/sources/{path}":
        params["path"] = served.source.lstrip("/")
        return {"path_parameters": params}
    if case.path == "/api/v0/plan-file":
        return {"query": {**(case.query or {}), "path": served.plan}}
    if case.path == "/api/v0/context/sources" and case.method == "POST":
        return {"body": {"path": _pick(case, (served.source, str(served.work), "/etc", "~/", "relative"))}}
    if case.path == "/api/v0/mcp/call-tool" and isinstance(case.body, dict):
        return {"body": {**case.body, "tool_name": _pick(case, TOOLS)}}
    if case.path == "/api/v0/mcp/approve" and isinstance(case.body, dict):  # a real server, a digest not its own
        return {"body": {**case.body, "server": "time"}}
    return None


# What random text rarely draws: NUL (no file system can name it), traversal, newlines (no route matches them),
# lone surrogates (JSON can escape them), invisible and tag characters. No bare "..": the client resolves it,
# so the request reaches another route (test_api sends traversal unresolved).
HOSTILE = ("\x00", "a\x00b", "../../etc/passwd", "~", "~/x", "\n", " ", "a/../../b", "\u202e", "\U000e0041")
HOSTILE_BODY = (*HOSTILE, "..", "\ud800", "/a\x00b", "/\udcff")


def _hostile(case: schemathesis.Case[Any], served: Served) -> dict[str, Any] | None:
    """Overrides that put hostile text where names and paths go; None when the case has no such place."""
    if case.path_parameters:
        return {"path_parameters": {key: _pick(case, HOSTILE) for key in case.path_parameters}}
    if case.path == "/api/v0/plan-file":
        return {"query": {"path": _pick(case, ("/a\x00.md", "/\n.md", "/dev/zero.md", f"{served.work}/../x.md"))}}
    if case.path == "/api/v0/context/sources" and case.method == "POST":
        return {"body": {"path": _pick(case, HOSTILE_BODY)}}
    if case.path == "/api/v0/mcp/call-tool":
        tool = _pick(case, (*HOSTILE_BODY, *TOOLS))
        return {"body": {"tool_name": tool, "arguments": {"timezone": _pick(case, HOSTILE_BODY)}}}
    if case.path == "/api/v0/mcp/approve":
        return {"body": {"server": _pick(case, HOSTILE_BODY), "digest": _pick(case, HOSTILE_BODY)}}
    return None


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_request_makes_the_agent_answer_5xx_or_off_its_schema(
    api_schema: schemathesis.BaseSchema,
    served: Served,
    method: str,
    path: str,
    request: pytest.FixtureRequest,
) -> None:
    operation = api_schema[path][method]
    authorized = {"Authorization": f"Bearer {TOKEN}"}
    cases = st.one_of(
        operation.as_strategy(schemathesis.GenerationMode.POSITIVE),
        operation.as_strategy(schemathesis.GenerationMode.NEGATIVE),
    )
    calls = 0

    def call(case: schemathesis.Case[Any], headers: dict[str, str] | None, *, unauthorized: bool = False) -> None:
        nonlocal calls
        calls += 1
        response = case.call(base_url=served.url, headers=headers or {}, timeout=30)
        case.validate_response(response, checks=CHECKS)
        if response.status_code >= 500:  # no 5xx but the documented upstream failure
            assert path == "/api/v0/mcp/call-tool", response.text
            assert (response.status_code, response.json()["message"]) == UPSTREAM_FAILED, response.text
        if unauthorized:  # the guard asks for the token before any route is matched
            assert response.status_code == 401, response.text

    @hypothesis.given(case=cases)
    @hypothesis.settings(FUZZ_SETTINGS, max_examples=MAX_EXAMPLES)
    def no_server_error(case: schemathesis.Case[Any]) -> None:
        call(case, None, unauthorized=True)
        call(case, {"Authorization": "Bearer wrong"}, unauthorized=True)
        nonlocal calls
        calls += _refused_before_any_work(case, served)
        if path == "/api/v0/events":
            return  # an authorized stream never ends
        if method == "DELETE":  # a random delete may find nothing; make sure the declared source is there
            call(_with(api_schema, "POST", "/api/v0/context/sources", body={"path": served.source}), authorized)
        call(case, authorized)
        for overrides in (_existing(case, served), _hostile(case, served)):
            if overrides is None:
                continue
            if method == "DELETE":
                call(_with(api_schema, "POST", "/api/v0/context/sources", body={"path": served.source}), authorized)
            drawn = {key: getattr(case, key) for key in overrides}
            for key, value in overrides.items():
                setattr(case, key, value)
            try:
                call(case, authorized)
            finally:
                for key, value in drawn.items():  # hypothesis may show or replay the case as it was drawn
                    setattr(case, key, value)

    no_server_error()
    request.node.user_properties.append(("api_calls", calls))  # in --junitxml with junit_family=xunit1
    print(f"\n{method} {path}: {calls} API calls")


def _refused_before_any_work(case: schemathesis.Case[Any], served: Served) -> int:
    """The case from a DNS-rebinding page (even with the token: 421; without it, tests/attacks/test_rebinding.py)
    and with a body over the limit (401 without the token, 413 with it); the number of requests sent."""
    authorized = {"Authorization": f"Bearer {TOKEN}"}
    attempts = [
        ({**authorized, "Host": "attacker.example"}, None, 421),
        ({}, b"x" * (MAX_BODY + 1), 401),
        (authorized, b"x" * (MAX_BODY + 1), 413),
    ]
    for headers, body, status in attempts:
        sent = case.as_transport_kwargs(base_url=served.url, headers=headers)
        response = httpx.request(
            sent["method"], sent["url"], params=sent["params"], headers=sent["headers"], content=body, timeout=30
        )
        case.validate_response(response, checks=CHECKS)
        assert response.status_code == status, response.text
        assert response.headers["connection"] == "close"
    return len(attempts)


def _with(schema: schemathesis.BaseSchema, method: str, path: str, **parts: Any) -> schemathesis.Case[Any]:
    return schema[path][method].Case(**parts)


# --- what the fuzzing found, as plain regressions ----------------------------------------------------


def test_a_path_no_route_matches_answers_in_the_agents_error_shape(served: Served) -> None:
    response = httpx.get(f"{served.url}/api/v0/context/sources/a%0Ab", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 404
    body = response.json()
    assert body["message"] == "Not Found." and body["detail"].startswith("GET /api/v0/context/sources/a")


@pytest.mark.parametrize("body", [b"{", b"x=1"], ids=["not-json", "form"])
def test_a_body_that_cannot_be_parsed_is_401_before_anything_else_without_the_token(
    served: Served, body: bytes
) -> None:
    kind = "application/json" if body.startswith(b"{") else "application/x-www-form-urlencoded"
    response = httpx.post(f"{served.url}/api/v0/context/sources", content=body, headers={"Content-Type": kind})
    assert response.status_code == 401
    assert response.json() == {"message": "Unauthorized.", "detail": "A valid bearer token is required."}


def test_a_nul_in_a_source_or_skill_file_path_is_refused_not_a_500(served: Served) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    added = httpx.post(f"{served.url}/api/v0/context/sources", json={"path": "/a\x00b"}, headers=auth)
    assert (added.status_code, added.json()["detail"]) == (400, 'path "/a\x00b" is not a valid file name')
    assert httpx.get(f"{served.url}/api/v0/context/sources/a%00", headers=auth).status_code == 404
    assert httpx.delete(f"{served.url}/api/v0/context/sources/a%00", headers=auth).status_code == 404
    read = httpx.get(f"{served.url}/api/v0/skills/review/files/a%00.md", headers=auth)
    assert (read.status_code, read.json()["message"]) == (400, "read skill file: invalid argument")
