"""Storage fixtures: every test that takes ``db`` runs on SQLite and on a real PostgreSQL.

The PostgreSQL cluster is started once per test session from the installed binaries
(``tests/pg_cluster.py``) and each test gets a fresh database in it. Where no
PostgreSQL is installed those runs are skipped with a message saying so; CI installs
Debian's ``postgresql`` so they always run there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcontext.control.agent_secret import SecretBox
from agentcontext.control.api import MAX_BODY
from agentcontext.control.db import Database
from agentcontext.resource import Kind, Resource, Scope, Status, Tool
from agentcontext.snapshot import Snapshot, aggregate_hash
from agentcontext.testing import skill_md
from agentcontext.web.guard import Edge
from agentcontext.web.hosts import ServedHosts
from tests.migrated import fresh_sqlite

# In-process clients reach the app as http://control: a name it serves, as behind a proxy (--allow-host control)
CONTROL_EDGE = Edge(hosts=ServedHosts(frozenset({"control"})), max_body=MAX_BODY)
BOX = SecretBox.ephemeral()  # the server key of stores that tests drive directly


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'control.db'}"
    url: str = request.getfixturevalue("pg_database")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def migrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database at the newest revision (``tests/migrated.py``)."""
    if request.param == "sqlite":
        return fresh_sqlite(tmp_path / "control.db")
    url: str = request.getfixturevalue("pg_migrated_database")
    return url


@pytest.fixture
def db(migrated_url: str) -> Iterator[Database]:
    database = Database(migrated_url)
    yield database
    database.dispose()


# --- pushes as a workspace agent sends them (for the API, fuzz and CLI tests) ---------------------


def text_resource(
    kind: Kind, path: str, text: str, *, name: str | None = None, description: str | None = None
) -> Resource:
    """An ok instruction file or skill with ``text`` as its content, hashed as the agent hashes it."""
    data = text.encode("utf-8")
    return Resource(
        kind,
        path,
        Scope.PROJECT if kind is Kind.INSTRUCTION_FILE else Scope.REPO,
        Status.OK,
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=text,
        name=name,
        description=description,
        doc_order=0 if kind is Kind.INSTRUCTION_FILE else None,
    )


def mcp_server(name: str, *tools: str) -> Resource:
    """An ok MCP server resource with tools that take one string argument ``q``."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return Resource(
        Kind.MCP_SERVER,
        name,
        Scope.PROJECT,
        Status.OK,
        tools=tuple(Tool(t, f"{t} of {name}", schema) for t in tools),
    )


def push_body(
    resources: list[Resource],
    *,
    version: int = 1,
    initial: bool = False,
    work_dir: str = "/home/dev/project",
    agent: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A push as the workspace agent sends it: ``Snapshot.to_dict()`` plus ``initial`` and ``agent``."""
    ordered = tuple(sorted(resources, key=lambda r: r.id))
    snapshot = Snapshot(
        version=version,
        aggregate_hash=aggregate_hash(ordered),
        work_dir=work_dir,
        project_root=work_dir,
        profile="default",
        resources=ordered,
        payload_bytes=sum(r.payload_bytes for r in ordered),
    )
    return {**snapshot.to_dict(), "initial": initial, "agent": agent}


# --- a workspace as the API and fuzz tests see it, and its agent's API (a mock transport) --------

WORK = "/home/dev/project"
AGENT_URL = "http://10.0.0.7:8766"  # the workspace network: an address the control plane calls by default
AGENT_SECRET = "agent-api-secret"
AGENT_INFO = {"url": AGENT_URL, "api_token": AGENT_SECRET, "os": "linux", "home": "/home/dev"}
REVIEW = skill_md("review", "Reviews a change", body="# Review\n\nRead the diff first.\n")
NOTES = skill_md("notes", "Keeps notes", body="Write things down.\n")


_AGENTS_MD = {"path": f"{WORK}/AGENTS.md", "scope": "project", "status": "ok", "bytes": 12, "reason": None}
AGENT_VIEWS = {  # one profile's view, as the agent's GET /api/v0/context/agents answers
    "work_dir": WORK,
    "version": 1,
    "agents": [
        {
            "profile": "default",
            "agent": "agentcontext default",
            "verified_version": None,
            "doc_bytes": 12,
            "budget_bytes": 32768,
            "loads": [{**_AGENTS_MD, "load": {"type": "startup"}}],
            "not_loaded": [],
            "skills": [],
            "skills_not_offered": [],
        }
    ],
}


def fake_agent(request: httpx.Request) -> httpx.Response:
    """The workspace agent's /api/v0 as far as the chat tools use it."""
    if request.headers.get("authorization") != f"Bearer {AGENT_SECRET}":
        return httpx.Response(401, json={"message": "Unauthorized.", "detail": None})
    path = request.url.path
    if path == "/api/v0/workspace":
        return httpx.Response(200, json={"home": "/home/dev", "work_dir": WORK})
    if path == "/api/v0/plan-file":
        text = "# Plan\n\n1. Do it.\n"
        return httpx.Response(
            200, json={"content": text, "resolved": request.url.params["path"], "size_bytes": len(text)}
        )
    if path == "/api/v0/mcp/call-tool":
        body = json.loads(request.content)
        text = f"{body['tool_name']} got {json.dumps(body['arguments'], sort_keys=True)}"
        return httpx.Response(200, json={"content": [{"type": "text", "text": text}], "is_error": False})
    if path == "/api/v0/context/agents":
        return httpx.Response(200, json=AGENT_VIEWS)
    if path == "/api/v0/context/instructions":  # one nested file that applies wherever the chat works
        dirs = json.loads(request.content)["dirs"]
        text = "Nested rules.\n"
        nested = {
            "path": f"{WORK}/services/AGENTS.md", "scope": "project", "status": "ok",
            "load": {"type": "on_demand", "reason": "nested"}, "reason": "nested", "bytes": len(text),
            "size_bytes": len(text), "content_hash": hashlib.sha256(text.encode()).hexdigest(), "warnings": [],
            "for": dirs, "hook": False, "content": text,
        }  # fmt: skip
        answer = {"work_dir": WORK, "profile": "default", "paths": dirs, "bytes": len(text), "files": [nested]}
        return httpx.Response(200, json={**answer, "excluded": [], "not_loaded": [], "refused": [], "startup": []})
    if path.startswith("/api/v0/skills/") and "/files/" in path:
        return httpx.Response(200, json={"content": "supporting text"})
    if path.startswith("/api/v0/skills/"):
        return httpx.Response(200, json={"files": ["SKILL.md", "roles/reviewer.md"]})
    return httpx.Response(404, json={"message": "Not found.", "detail": path})


def first_push(version: int = 1, *, agents_md: str = "Use pytest.\n", initial: bool = False) -> dict[str, Any]:
    """The agent's push for WORK: AGENTS.md, the skill ``review`` and the MCP server ``docs`` (tool ``search``)."""
    return push_body(
        [
            text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", agents_md),
            text_resource(
                Kind.SKILL,
                f"{WORK}/.agents/skills/review/SKILL.md",
                REVIEW,
                name="review",
                description="Reviews a change",
            ),
            mcp_server("docs", "search"),
        ],
        version=version,
        initial=initial,
        work_dir=WORK,
        agent=AGENT_INFO,
    )
