"""A hostile repository swaps files and folders for symlinks to outside secrets while they are read.

Another process (:mod:`tests.attacks.file_swapper`) exchanges a legitimate file, or a folder
on the way to one, with a symlink to an outside secret as fast as it can, while each surface
that reads workspace files reads it again and again. Every read must come back with the
legitimate bytes or a refusal, never the secret's. Each surface also has to have met both
(the race was really run).
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import mcp.types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from agentcontext.agent.api import create_app
from agentcontext.agent.context import ContextAgent
from agentcontext.fs.files import Reader
from agentcontext.mcp import tools
from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.workspace import Workspace
from agentcontext.scan import Scanner, scan_full
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config
from tests.agent.conftest import make_agent, ready, running
from tests.attacks.file_swapper import Answer, plant, race, race_async
from tests.containment import outside_the_roots
from tests.control.live import control_plane, workspace

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(300)]

READS = 10_000  # per scenario, for the surfaces called directly
SDK_READS = 5_000  # per scenario through the HTTP app or the SDK client: 10,000 per surface
END_TO_END_READS = 50  # per scenario through the control plane and a real agent (about 65 ms a call)
IN_FLIGHT = 8  # concurrent MCP requests
SECRET = f"OUTSIDE-SECRET-{secrets.token_hex(8)}"
LEGIT = "legitimate-content"
SKILL = ".agents/skills/s"
TOKEN = "race-token"
Get = Callable[..., Awaitable[str]]
SCENARIOS = pytest.mark.parametrize("swapped", ["file", "folder"])


def hostile_repo(tmp_path: Path) -> Path:
    """A repository whose files have outside twins holding the secret, ready to be swapped in."""
    outside = outside_the_roots(tmp_path)
    make_workspace(
        outside,
        {
            "secret.md": f"{SECRET}\n",
            "docs/AGENTS.md": f"{SECRET}\n",
            "s/SKILL.md": skill_md("s", "does a thing"),
            "s/notes.md": f"{SECRET}\n",
            "plans/design.md": f"# {SECRET}\n",
        },
    )
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": f"{LEGIT}\n",
            "docs/AGENTS.md": f"{LEGIT}\n",
            f"{SKILL}/SKILL.md": skill_md("s", "does a thing"),
            f"{SKILL}/notes.md": f"{LEGIT}\n",
            "design.md": f"# {LEGIT}\n",
            "plans/design.md": f"# {LEGIT}\n",
        },
    )


def skill_pair(repo: Path, swapped: str) -> tuple[Path, Path]:
    """``notes.md`` itself, or the skill's folder on the way to it, paired with a link out."""
    outside = outside_the_roots(repo.parent)
    if swapped == "file":
        return plant(repo / SKILL / "notes.md", outside / "secret.md")
    return plant(repo / SKILL, outside / "s")


def plan_pair(repo: Path, swapped: str) -> tuple[tuple[Path, Path], Path]:
    """The pair to swap and the plan path to read through it."""
    outside = outside_the_roots(repo.parent)
    if swapped == "file":
        return plant(repo / "design.md", outside / "secret.md"), repo / "design.md"
    return plant(repo / "plans", outside / "plans"), repo / "plans" / "design.md"


@contextlib.asynccontextmanager
async def agent_app(agent: ContextAgent) -> AsyncIterator[Get]:
    """The agent's API in process, its first scan done: a GET straight through ASGI (no HTTP
    client in between, so 10,000 requests take seconds)."""
    app = create_app(agent, token=TOKEN)

    async def get(path: str, query: str = "") -> str:
        body: list[bytes] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.body":
                body.append(message.get("body", b""))

        headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {TOKEN}".encode())]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)
        return b"".join(body).decode("utf-8", errors="replace")

    async with running(agent):
        await ready(agent)
        yield get


# --- the scan: Reader and Scanner ---------------------------------------------------------


@SCENARIOS
def test_the_reader_never_reads_a_file_swapped_for_a_link_out(tmp_path: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    outside = outside_the_roots(tmp_path)
    if swapped == "file":
        pair, path = plant(repo / "AGENTS.md", outside / "secret.md"), repo / "AGENTS.md"
    else:
        pair, path = plant(repo / "docs", outside / "docs"), repo / "docs" / "AGENTS.md"
    reader = Reader()

    def read() -> Answer:
        reader.begin()
        entry = reader.probe(str(path), str(repo))
        try:
            return reader.read(entry, 1024) if entry.is_file else entry.error or ""
        except OSError as exc:  # the file changed between the probe and the read: refused
            return str(exc)

    race(pair, READS, read, secret=SECRET, legit=LEGIT)


@SCENARIOS
def test_a_scan_never_puts_a_swapped_in_outside_file_in_the_snapshot(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    outside = outside_the_roots(tmp_path)
    if swapped == "file":
        pair = plant(repo / "AGENTS.md", outside / "secret.md")
    else:  # the skill container's parent: every SKILL.md below it is reached through it
        make_workspace(outside, {".agents/skills/s/SKILL.md": skill_md("s", SECRET)})
        pair = plant(repo / ".agents", outside / ".agents")
    scanner = Scanner(repo, test_config(repo, home=home), environ=isolated_environ(home))
    scans = READS // 5  # a scan reads several files: 2,000 scans are 10,000 reads and more
    legit = LEGIT if swapped == "file" else "does a thing"
    race(pair, scans, lambda: scanner.run().snapshot.to_json(), secret=SECRET, legit=legit)


@SCENARIOS
def test_a_claude_scan_never_puts_a_swapped_in_rule_in_the_snapshot(tmp_path: Path, home: Path, swapped: str) -> None:
    # A rule is opened as its folder's listing showed it, without a probe first: a swap in between
    # must still be refused (O_NOFOLLOW) or meet the legitimate file, never the outside one.
    outside = outside_the_roots(tmp_path)
    make_workspace(outside, {"rule.md": f"{SECRET}\n", "rules/rule.md": f"{SECRET}\n"})
    repo = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "x\n", ".claude/rules/rule.md": f"{LEGIT}\n"})
    rules = repo / ".claude" / "rules"
    pair = plant(rules / "rule.md", outside / "rule.md") if swapped == "file" else plant(rules, outside / "rules")
    env = isolated_environ(home)
    scanner = Scanner(repo, test_config(repo, home=home, environ=env, profile="claude"), environ=env)
    race(pair, READS // 5, lambda: scanner.run().snapshot.to_json(), secret=SECRET, legit=LEGIT)


# --- skills_read's path rules, called directly -----------------------------------------------


@SCENARIOS
def test_skills_read_never_reads_through_a_swapped_link(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    result = scan_full(repo, test_config(repo, home=home), environ=isolated_environ(home))
    arguments = {"name": "s", "resource": "notes.md"}
    race(
        skill_pair(repo, swapped),
        READS,
        lambda: tools.skills_read(result, arguments, tools.Limits()).text,
        secret=SECRET,
        legit=LEGIT,
    )


# --- the agent's HTTP API --------------------------------------------------------------------


@SCENARIOS
async def test_the_agent_skill_file_route_never_serves_a_swapped_in_file(
    tmp_path: Path, home: Path, swapped: str
) -> None:
    repo = hostile_repo(tmp_path)
    async with agent_app(make_agent(repo, home)) as get:
        read = partial(get, "/api/v0/skills/s/files/notes.md")
        await race_async(skill_pair(repo, swapped), SDK_READS, read, secret=SECRET, legit=LEGIT)


@SCENARIOS
async def test_the_plan_file_route_never_reads_a_swapped_in_file(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    pair, path = plan_pair(repo, swapped)
    async with agent_app(make_agent(repo, home)) as get:
        read = partial(get, "/api/v0/plan-file", urlencode({"path": str(path)}))
        await race_async(pair, SDK_READS, read, secret=SECRET, legit=LEGIT)


async def test_a_planted_plan_link_to_a_private_key_is_refused(tmp_path: Path, home: Path) -> None:
    repo = hostile_repo(tmp_path)
    key = outside_the_roots(tmp_path) / "id_rsa"
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (repo / "plan.md").symlink_to(key)
    (repo / "docs" / "notes.md").symlink_to(key)
    (repo / "keys").symlink_to(key.parent)
    paths = [repo / "plan.md", repo / "docs" / "notes.md", repo / "keys" / "secret.md", Path(f"{key}.md")]
    async with agent_app(make_agent(repo, home)) as get:
        answers = [json.loads(await get("/api/v0/plan-file", urlencode({"path": str(p)}))) for p in paths]
    assert SECRET not in json.dumps(answers)
    assert [a.get("message") for a in answers] == ["Invalid plan path."] * 4
    roots = f"{home / '.agentcontext' / 'plans'} and {repo}"
    assert [a["detail"] for a in answers] == [f"a symlink in {p} leads outside {roots}" for p in paths[:3]] + [
        f"{paths[3]} is not inside {roots}: plans are read only from the plan directory or the work dir"
    ]


# --- the MCP server, through the SDK client in memory ---------------------------------------


def mcp_server(repo: Path, home: Path) -> ContextServer:
    config = test_config(repo, home=home)
    return ContextServer(Workspace(str(repo), config=config, environ=isolated_environ(home)))


def _text(result: types.CallToolResult | types.ReadResourceResult) -> str:
    """Everything an answer carries, base64 blobs decoded."""
    if isinstance(result, types.CallToolResult):
        return json.dumps(result.model_dump(mode="json"))
    blobs = [c.blob for c in result.contents if isinstance(c, types.BlobResourceContents)]
    decoded = "".join(base64.b64decode(b).decode("utf-8", errors="replace") for b in blobs)
    return json.dumps([c.model_dump(mode="json") for c in result.contents]) + decoded


@SCENARIOS
async def test_mcp_skills_read_never_returns_a_swapped_in_file(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    async with Client(mcp_server(repo, home), mode="legacy") as client:
        await client.list_tools()

        async def read() -> Answer:  # a tool answers with isError; a protocol error is a crash
            return _text(await client.call_tool("skills_read", {"name": "s", "resource": "notes.md"}))

        pair = skill_pair(repo, swapped)
        await race_async(pair, SDK_READS, read, secret=SECRET, legit=LEGIT, in_flight=IN_FLIGHT)


@SCENARIOS
async def test_mcp_resources_read_never_returns_a_swapped_in_file(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    async with Client(mcp_server(repo, home), mode="legacy") as client:
        await client.list_resources()

        async def read() -> Answer:
            try:
                return _text(await client.read_resource("skill://s/notes.md"))
            except MCPError as exc:  # resources/read refuses with INVALID_PARAMS; anything else is a crash
                if exc.error.code != types.INVALID_PARAMS:
                    raise
                return exc.error.message

        pair = skill_pair(repo, swapped)
        await race_async(pair, SDK_READS, read, secret=SECRET, legit=LEGIT, in_flight=IN_FLIGHT)


# --- the control plane, end to end through a real agent ---------------------------------------


@SCENARIOS
async def test_read_skill_file_through_the_control_plane_never_returns_a_swapped_in_file(
    tmp_path: Path, home: Path, swapped: str
) -> None:
    repo = hostile_repo(tmp_path)
    async with control_plane(tmp_path) as control, workspace(control, repo, {}, home=home):
        chat = await control.chat()

        async def read() -> Answer:
            return (await control.call(chat, "read_skill_file", {"name": "s", "path": "notes.md"})).content

        await race_async(skill_pair(repo, swapped), END_TO_END_READS, read, secret=SECRET, legit=LEGIT)


@SCENARIOS
async def test_propose_plan_never_stores_a_swapped_in_file(tmp_path: Path, home: Path, swapped: str) -> None:
    repo = hostile_repo(tmp_path)
    pair, path = plan_pair(repo, swapped)
    async with control_plane(tmp_path) as control, workspace(control, repo, {}, home=home):
        chat = await control.chat()

        async def read() -> Answer:  # the plan is stored, not echoed: what was stored is what was read
            result = await control.call(chat, "propose_plan", {"path": str(path)})
            if result.is_error:
                return result.content
            return (await control.plane.chats.file(control.user, chat, json.loads(result.content)["file_id"])).text

        await race_async(pair, END_TO_END_READS, read, secret=SECRET, legit=LEGIT)
