"""The workspace's own MCP servers through UpstreamManager, against real processes.

Real peers (mcp-server-time; server-everything over stdio and streamable HTTP), our
misbehaving peer (tests/mcp_servers/misbehaving.py) in each of its modes, differential reloads,
process cleanup read from the process table, tool-name routing, schemas and Coder's
result mapping (coder.md 3.2-3.5, 8.5).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest

from agentcontext.resource import Status
from agentcontext.settings.config import McpSettings
from agentcontext.testing import isolated_environ, test_config
from agentcontext.workspace_mcp.client.pinning import input_schema
from agentcontext.workspace_mcp.client.results import CallOutcome, convert_result
from agentcontext.workspace_mcp.client.upstream import RESTARTING, Backoff, ServerStatus, UpstreamError, UpstreamManager
from agentcontext.workspace_mcp.config import ServerSpec, parse
from agentcontext.workspace_mcp.launch import child_environment
from agentcontext.workspace_mcp.tool_names import MAX_NAME, InvalidToolName, UnknownServer
from tests.helpers import free_port
from tests.mcp.conftest import ROOT, wait_for_port
from tests.mcp_servers import crashloop, misbehaving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PEER = Path(misbehaving.__file__)
CRASHLOOP = Path(crashloop.__file__)
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
TIME = Path(sys.executable).parent / "mcp-server-time"
CONNECT_TIMEOUT = 10  # generous: a loaded machine must not fail a connect this suite expects to succeed
HANG_TIMEOUT = 8  # the connect timeout of tests that wait for it: three peers start within it on a busy CI
CALL_TIMEOUT = 2
MAX_OUTPUT = 100_000
EVERYTHING_BASE_TOOLS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# --- helpers -------------------------------------------------------------------------


def peer(mode: str, **entry: Any) -> dict[str, Any]:
    """A ``.mcp.json`` entry running our misbehaving peer in ``mode``."""
    return {"command": sys.executable, "args": [str(PEER), mode], **entry}


def everything_stdio(**entry: Any) -> dict[str, Any]:
    return {"command": "node", "args": [str(EVERYTHING), "stdio"], **entry}


class Workspace:
    """A work dir, its settings and environment, and ``.mcp.json`` entries turned into specs."""

    def __init__(self, tmp_path: Path, home: Path) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        self.home = home
        self.environ = isolated_environ(home, AGENT_VISIBLE="from the agent", AGENTCONTEXT_TOKEN="agent-secret")

    def settings(self, **overrides: Any) -> McpSettings:
        values = {
            "mcp.trust": "auto",  # these tests are about connections; approval has its own (tests/attacks)
            "mcp.connect_timeout": CONNECT_TIMEOUT,
            "mcp.call_timeout": CALL_TIMEOUT,
            "mcp.max_output_bytes": MAX_OUTPUT,
            **{f"mcp.{key}": value for key, value in overrides.items()},
        }
        return test_config(self.work, home=self.home, settings=values).mcp

    def specs(self, servers: Mapping[str, Mapping[str, Any]]) -> tuple[ServerSpec, ...]:
        document = json.dumps({"mcpServers": servers}).encode()
        parsed = parse(document, str(self.work / ".mcp.json"), self.environ)
        assert parsed.entry_errors == ()
        return parsed.servers

    @asynccontextmanager
    async def manager(
        self, on_change: Callable[[], None] = lambda: None, backoff: Backoff | None = None, **settings: Any
    ) -> AsyncIterator[UpstreamManager]:
        async with UpstreamManager(
            self.settings(**settings),
            work_dir=str(self.work),
            environ=self.environ,
            on_change=on_change,
            backoff=backoff,
        ) as manager:
            yield manager


@pytest.fixture
def space(tmp_path: Path, home: Path) -> Workspace:
    return Workspace(tmp_path, home)


class Changes:
    """The manager's ``on_change`` callback; ``until`` waits (bounded) for a condition after changes."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    def __call__(self) -> None:
        self.count += 1
        self._event.set()
        self._event = anyio.Event()

    async def until(self, condition: Callable[[], bool], timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while not condition():
                await self._event.wait()


def status(manager: UpstreamManager, name: str) -> ServerStatus:
    return {s.name: s for s in manager.statuses()}[name]


class Seen(Changes):
    """``Changes`` that also keeps each status of one server, as published at each change."""

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server
        self.manager: UpstreamManager | None = None
        self.states: list[tuple[str, str]] = []

    def __call__(self) -> None:
        if self.manager is not None:
            now = {s.name: s for s in self.manager.statuses()}.get(self.server)
            self.states.append((now.state, now.error or "") if now is not None else ("absent", ""))
        super().__call__()

    def now(self) -> tuple[str, str]:
        return self.states[-1] if self.states else ("absent", "")


def crash_loop(starts: Path) -> dict[str, Any]:
    """A ``.mcp.json`` entry that exits at once at every start, adding its start time to ``starts``."""
    return {"command": sys.executable, "args": [str(CRASHLOOP), str(starts)]}


def start_times(starts: Path) -> list[float]:
    return [float(line) for line in starts.read_text().split()] if starts.exists() else []


def tool_names(status: ServerStatus) -> set[str]:
    return {tool.name for tool in status.tools}


def text_of(outcome: CallOutcome) -> str:
    texts = [block["text"] for block in outcome.content if block["type"] == "text"]
    assert texts, outcome
    return "\n".join(texts)


async def pid_of(manager: UpstreamManager, server: str) -> int:
    return int(text_of(await manager.call_tool(f"{server}__pid", {})))


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid``, from /proc/<pid>/task/*/children."""
    found: set[int] = set()
    pending = [pid]
    while pending:
        for children in Path(f"/proc/{pending.pop()}/task").glob("*/children"):
            try:
                kids = {int(kid) for kid in children.read_text().split()}
            except OSError:  # the task ended while we looked
                continue
            new = {kid for kid in kids if alive(kid)} - found
            found |= new
            pending += new
    return found


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


async def wait_gone(pids: set[int], timeout: float = 10) -> None:
    """Poll the process table (bounded) until none of ``pids`` is alive."""
    with anyio.fail_after(timeout):
        while any(alive(pid) for pid in pids):
            await anyio.sleep(0.05)


@dataclass
class HttpPeer:
    url: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def everything_http(tmp_path: Path) -> Iterator[HttpPeer]:
    """server-everything over streamable HTTP on a free port (it listens on all interfaces; we use loopback)."""
    port = free_port()
    with (tmp_path / "everything.log").open("wb") as log:
        process = subprocess.Popen(
            ["node", str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)}, stdout=log, stderr=log
        )
        server = HttpPeer(f"http://127.0.0.1:{port}/mcp", process)
        try:
            wait_for_port(port, process)
            yield server
        finally:
            server.stop()


# --- real peers ----------------------------------------------------------------------


async def test_mcp_server_time_over_stdio_lists_its_tools_and_answers_with_json(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"time": {"command": str(TIME)}}))
        time_server = status(manager, "time")
        assert (time_server.state, time_server.error) == ("connected", None)
        assert {"get_current_time", "convert_time"} <= tool_names(time_server)
        outcome = await manager.call_tool("time__get_current_time", {"timezone": "UTC"})
    assert outcome.is_error is False
    answer = json.loads(text_of(outcome))
    assert answer["timezone"] == "UTC"
    assert answer["datetime"].endswith("+00:00")


async def test_server_everything_over_stdio_offers_the_base_tools_echoes_and_returns_an_image(
    space: Workspace,
) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"everything": everything_stdio()}))
        everything = status(manager, "everything")
        assert everything.state == "connected"
        assert tool_names(everything) >= EVERYTHING_BASE_TOOLS
        echoed = await manager.call_tool("everything__echo", {"message": "hello upstream"})
        summed = await manager.call_tool("everything__get-sum", {"a": 2, "b": 40})
        image = await manager.call_tool("everything__get-tiny-image", {})
    assert text_of(echoed) == "Echo: hello upstream"
    assert "42" in text_of(summed)
    images = [block for block in image.content if block["type"] == "image"]
    assert len(images) == 1
    assert images[0]["media_type"] == "image/png"
    assert base64.b64decode(images[0]["data"]).startswith(PNG_MAGIC)


async def test_server_everything_over_streamable_http_offers_the_base_tools_and_echoes(
    space: Workspace, everything_http: HttpPeer
) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"remote": {"type": "http", "url": everything_http.url}}))
        remote = status(manager, "remote")
        assert (remote.state, remote.transport, remote.error) == ("connected", "http", None)
        assert tool_names(remote) >= EVERYTHING_BASE_TOOLS
        echoed = await manager.call_tool("remote__echo", {"message": "over http"})
    assert text_of(echoed) == "Echo: over http"


async def test_an_http_server_that_goes_away_fails_the_call_and_turns_failed(
    space: Workspace, everything_http: HttpPeer
) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"remote": {"type": "http", "url": everything_http.url}}))
        assert status(manager, "remote").state == "connected"
        everything_http.stop()
        with anyio.fail_after(CALL_TIMEOUT + 3), pytest.raises(UpstreamError, match='^MCP server "remote"'):
            await manager.call_tool("remote__echo", {"message": "anyone?"})
        assert status(manager, "remote").state == "failed"


async def test_an_http_server_nobody_listens_on_fails_without_hanging(space: Workspace) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with space.manager() as manager:
        with anyio.fail_after(CONNECT_TIMEOUT + 5):
            await manager.reload(space.specs({"remote": {"type": "http", "url": url}}))
        remote = status(manager, "remote")
    assert remote.state == "failed"
    assert remote.error


async def test_a_server_gets_a_clean_environment_plus_its_entry_env_and_never_the_agent_secrets(
    space: Workspace,
) -> None:
    space.environ["CODER_AGENT_EXP_FLAG"] = "agent-only"
    servers = {
        "everything": everything_stdio(env={"DECLARED": "declared value", "FROM_AGENT": "${AGENT_VISIBLE}"}),
        "ours": peer("fine", env={"DECLARED": "ours too"}),
    }
    async with space.manager() as manager:
        await manager.reload(space.specs(servers))
        seen = json.loads(text_of(await manager.call_tool("everything__get-env", {})))
        ours = {
            name: text_of(await manager.call_tool("ours__env", {"name": name}))
            for name in ("DECLARED", "AGENT_VISIBLE", "AGENTCONTEXT_TOKEN", "CODER_AGENT_EXP_FLAG", "HOME")
        }
    assert seen["DECLARED"] == "declared value"
    assert seen["FROM_AGENT"] == "from the agent"  # what the approved entry names explicitly
    assert set(seen) <= {"DECLARED", "FROM_AGENT", "HOME", "PATH"}  # the agent's others stay with the agent
    assert ours == {
        "DECLARED": "ours too",
        "AGENT_VISIBLE": "<unset>",
        "AGENTCONTEXT_TOKEN": "<unset>",
        "CODER_AGENT_EXP_FLAG": "<unset>",
        "HOME": str(space.home),
    }


async def test_the_users_inherit_env_setting_hands_more_variables_on_but_never_ours(space: Workspace) -> None:
    servers = {"ours": peer("fine")}
    async with space.manager(inherit_env=["AGENT_*", "AGENTCONTEXT_*"]) as manager:
        await manager.reload(space.specs(servers))
        ours = {
            name: text_of(await manager.call_tool("ours__env", {"name": name}))
            for name in ("AGENT_VISIBLE", "AGENTCONTEXT_TOKEN")
        }
    assert ours == {"AGENT_VISIBLE": "from the agent", "AGENTCONTEXT_TOKEN": "<unset>"}


def test_child_environment_keeps_the_allowlist_drops_the_agent_secrets_and_lets_the_entry_override() -> None:
    environ = {"PATH": "/bin", "AGENTCONTEXT_TOKEN": "t", "CODER_AGENT_EXP_X": "x", "LANG": "C", "AWS_KEY": "k"}
    assert child_environment(environ, [("LANG", "en_US.UTF-8"), ("AGENTCONTEXT_MODE", "declared")]) == {
        "PATH": "/bin",
        "LANG": "en_US.UTF-8",
        "AGENTCONTEXT_MODE": "declared",  # what the entry declares is the user's choice
    }
    assert child_environment(environ, inherit=["AWS_*"])["AWS_KEY"] == "k"


async def test_stdio_servers_run_in_the_work_dir_or_their_cwd_else_the_home_dir(space: Workspace) -> None:
    (space.work / "sub").mkdir()
    servers = {"plain": peer("fine"), "sub": peer("fine", cwd="sub"), "missing": peer("fine", cwd="missing")}
    async with space.manager() as manager:
        await manager.reload(space.specs(servers))
        cwd = {name: os.readlink(f"/proc/{await pid_of(manager, name)}/cwd") for name in servers}
    assert cwd == {"plain": str(space.work), "sub": str(space.work / "sub"), "missing": str(space.home)}


# --- misbehaving servers -------------------------------------------------------------


async def test_a_server_that_crashes_on_start_is_failed_with_its_stderr_tail(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"crash": peer("crash-on-start"), "good": peer("fine")}))
        crash = status(manager, "crash")
        good = status(manager, "good")
    assert crash.state == "failed"
    assert crash.error
    assert misbehaving.CRASH_MESSAGE in crash.stderr_tail
    resource = crash.resource()
    assert resource.status is Status.UNREADABLE
    assert resource.error == crash.error
    assert any(misbehaving.CRASH_MESSAGE in warning for warning in resource.warnings)
    assert good.state == "connected"


async def test_a_server_that_never_answers_initialize_times_out_and_the_others_still_connect(
    space: Workspace,
) -> None:
    servers = {"hang": peer("hang-initialize"), "hang2": peer("hang-initialize"), "good": peer("fine")}
    async with space.manager(connect_timeout=HANG_TIMEOUT) as manager:
        started = time.monotonic()
        await manager.reload(space.specs(servers))
        elapsed = time.monotonic() - started  # the two hangs time out side by side, not one after the other
        hangs = [status(manager, "hang"), status(manager, "hang2")]
        good = status(manager, "good")
        assert text_of(await manager.call_tool("good__echo", {"text": "still here"})) == "still here"
    assert [s.state for s in hangs] == ["failed"] * 2
    for hang in hangs:  # each waits for its next start
        assert hang.error and hang.error == f"timed out after {HANG_TIMEOUT}s connecting; {RESTARTING}"
    assert HANG_TIMEOUT - 0.5 <= elapsed < HANG_TIMEOUT + 2.5
    assert good.state == "connected"


async def test_connect_server_stdio_process_survives_connect(space: Workspace) -> None:
    """Coder's regression test: the connect timeout bounds the handshake, not the process's life."""
    # 5 s: a Python peer starting on a busy 2-CPU CI machine missed 2 s (stop 26's CI)
    async with space.manager(connect_timeout=5) as manager:
        await manager.reload(space.specs({"srv": peer("fine")}))
        pid = await pid_of(manager, "srv")
        await anyio.sleep(5.5)  # outlive the connect timeout: nothing may cut the session then
        assert await pid_of(manager, "srv") == pid
        assert status(manager, "srv").state == "connected"


async def test_a_call_that_hangs_times_out_and_the_server_stays_usable(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"hang": peer("hang-call")}))
        started = time.monotonic()
        with pytest.raises(UpstreamError, match="timed out") as caught:
            await manager.call_tool("hang__slow", {})
        elapsed = time.monotonic() - started
        assert str(caught.value).startswith('MCP server "hang"')
        assert CALL_TIMEOUT - 0.2 <= elapsed < CALL_TIMEOUT + 1.5
        assert text_of(await manager.call_tool("hang__echo", {"text": "next call"})) == "next call"
        assert status(manager, "hang").state == "connected"


async def test_a_server_that_exits_mid_call_raises_and_turns_failed_and_a_refresh_restarts_it_at_once(
    space: Workspace,
) -> None:
    changes = Changes()
    async with space.manager(on_change=changes, backoff=Backoff(first=60)) as manager:
        await manager.reload(space.specs({"dying": peer("exit-mid-call"), "good": peer("fine")}))
        pid = await pid_of(manager, "dying")
        with anyio.fail_after(CALL_TIMEOUT + 3):
            with pytest.raises(UpstreamError, match='^MCP server "dying" connection lost'):
                await manager.call_tool("dying__die", {})
        dying = status(manager, "dying")
        assert dying.state == "failed"
        assert dying.error and dying.error.startswith("connection lost")
        assert "dying__echo" not in {name for name, _, _ in manager.tools()}
        with pytest.raises(UpstreamError, match="not connected"):
            await manager.call_tool("dying__echo", {})
        assert status(manager, "good").state == "connected"
        await wait_gone({pid})
        with anyio.fail_after(CONNECT_TIMEOUT + 5):
            await manager.refresh()  # a failed server is retried now, not after its minute's wait: it comes back
        assert status(manager, "dying").state == "connected"
        assert await pid_of(manager, "dying") != pid


async def test_a_server_killed_with_sigkill_is_failed_at_once_and_comes_back_by_itself_with_its_tools(
    space: Workspace,
) -> None:
    seen = Seen("srv")
    async with space.manager(on_change=seen) as manager:
        seen.manager = manager
        await manager.reload(space.specs({"srv": peer("fine"), "good": peer("fine")}))
        pid = await pid_of(manager, "srv")
        os.kill(pid, signal.SIGKILL)  # no call follows: the agent notices the exit itself
        await seen.until(lambda: seen.now()[0] == "failed", timeout=CONNECT_TIMEOUT)
        assert "srv__echo" not in {name for name, _, _ in manager.tools()}
        await seen.until(lambda: seen.now()[0] == "connected", timeout=CONNECT_TIMEOUT + 5)
        assert "srv__echo" in {name for name, _, _ in manager.tools()}
        assert text_of(await manager.call_tool("srv__echo", {"text": "back"})) == "back"
        assert await pid_of(manager, "srv") != pid
        assert status(manager, "good").state == "connected"
    failed = [error for state, error in seen.states if state == "failed"]
    assert any(error == f"connection lost: the server was killed by SIGKILL; {RESTARTING}" for error in failed), failed


async def test_a_server_that_exits_at_every_start_is_started_again_with_growing_waits_and_says_why(
    space: Workspace, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"  # outside the work dir: its lines are no repository file the approval binds
    seen = Seen("loop")
    async with space.manager(on_change=seen) as manager:
        seen.manager = manager
        await manager.reload(space.specs({"loop": crash_loop(starts), "good": peer("fine")}))
        await seen.until(lambda: len(start_times(starts)) >= 4 and seen.now()[0] == "failed", timeout=40)
        loop = status(manager, "loop")
        times = start_times(starts)
        assert text_of(await manager.call_tool("good__echo", {"text": "unbothered"})) == "unbothered"
    assert len(times) == 4  # a tight loop would have started it hundreds of times by now
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert all(gap >= 0.9 * wait for gap, wait in zip(gaps, (1, 2, 4), strict=True)), gaps
    assert loop.state == "failed"
    assert loop.error == f"Connection closed: the server exited with code 3; {RESTARTING}", loop.error
    assert crashloop.CRASH_MESSAGE in loop.stderr_tail
    assert loop.resource().error == loop.error  # the snapshot says why and when too


async def test_a_server_revoked_while_it_waits_to_start_again_is_not_started_and_turns_pending(
    space: Workspace,
) -> None:
    seen = Seen("srv")
    specs = space.specs({"srv": peer("fine")})
    async with space.manager(on_change=seen, backoff=Backoff(first=2), trust="approve") as manager:
        seen.manager = manager
        manager.store.approve([manager.launch(specs[0])])
        await manager.reload(specs)
        pid = await pid_of(manager, "srv")
        os.kill(pid, signal.SIGKILL)
        await seen.until(lambda: seen.now()[0] == "failed", timeout=CONNECT_TIMEOUT)
        assert manager.store.revoke(specs) == [specs[0]]
        await seen.until(lambda: seen.now()[0] == "pending", timeout=CONNECT_TIMEOUT)
        after = seen.states[[state for state, _ in seen.states].index("failed") :]
        assert {state for state, _ in after} <= {"failed", "pending"}, after  # never connecting again
        assert (status(manager, "srv").error or "").startswith("pending approval: ")


async def test_leaving_the_manager_while_a_server_waits_to_start_again_ends_at_once(
    space: Workspace, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    async with space.manager(backoff=Backoff(first=60)) as manager:
        await manager.reload(space.specs({"loop": crash_loop(starts)}))
        loop = status(manager, "loop")
        assert loop.error and loop.error.endswith(RESTARTING), loop.error
        left = time.monotonic()
    assert time.monotonic() - left < 3  # not the minute's wait
    assert len(start_times(starts)) == 1


async def test_a_server_removed_from_the_config_while_it_waits_to_start_again_is_not_started(
    space: Workspace, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    async with space.manager(backoff=Backoff(first=1)) as manager:
        await manager.reload(space.specs({"loop": crash_loop(starts), "good": peer("fine")}))
        assert status(manager, "loop").state == "failed"
        await manager.reload(space.specs({"good": peer("fine")}))
        await anyio.sleep(2)  # past the wait it had: nothing starts it
        assert [s.name for s in manager.statuses()] == ["good"]
    assert len(start_times(starts)) == 1


async def test_a_server_that_prints_garbage_on_stdout_connects_and_answers(space: Workspace) -> None:
    async with space.manager() as manager:
        with anyio.fail_after(CONNECT_TIMEOUT + 5):
            await manager.reload(space.specs({"garbage": peer("garbage"), "good": peer("fine")}))
        assert status(manager, "garbage").state == "connected"
        assert status(manager, "good").state == "connected"
        with anyio.fail_after(CALL_TIMEOUT + 3):
            assert text_of(await manager.call_tool("garbage__echo", {"text": "one"})) == "one"
            assert text_of(await manager.call_tool("garbage__echo", {"text": "two"})) == "two"


async def test_tool_output_over_the_limit_is_cut_with_a_marker(space: Workspace) -> None:
    size = MAX_OUTPUT + 20_000  # over the output limit, under the message cap (limit + 64 KiB)
    async with space.manager() as manager:
        await manager.reload(space.specs({"huge": peer("huge")}))
        outcome = await manager.call_tool("huge__flood", {"bytes": size})
    assert [block["type"] for block in outcome.content] == ["text", "text"]
    assert outcome.content[0]["text"] == "x" * MAX_OUTPUT
    assert outcome.content[1]["text"] == f"[output truncated: 20000 bytes over the {MAX_OUTPUT}-byte limit]"
    assert outcome.is_error is False


async def test_a_message_over_the_cap_is_cut_as_it_is_read_with_a_marker(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"huge": peer("huge")}))
        outcome = await manager.call_tool("huge__flood", {})  # 3 MB in one message
        assert text_of(await manager.call_tool("huge__echo", {"text": "still here"})) == "still here"
    [block] = outcome.content
    text = block["text"]
    cap = MAX_OUTPUT + 64 * 1024
    assert text.startswith("x" * (MAX_OUTPUT - 1000)) and len(text.encode()) <= MAX_OUTPUT
    assert text.endswith(f"is over the {cap}-byte message limit; cut as it was read]")
    assert "[output truncated: the server's answer of 30000" in text
    assert outcome.is_error is False


async def test_tools_list_changed_is_noticed_without_a_reload_and_an_added_tool_waits_for_approval(
    space: Workspace,
) -> None:
    changes = Changes()
    async with space.manager(on_change=changes) as manager:
        await manager.reload(space.specs({"changing": peer("changing")}))
        assert "changing__added" not in {name for name, _, _ in manager.tools()}
        generation = manager.generation
        await manager.call_tool("changing__add", {})
        await changes.until(lambda: status(manager, "changing").state == "changed")
        assert manager.generation > generation
        assert "added" not in tool_names(status(manager, "changing"))
        approval = status(manager, "changing").approval
        assert approval is not None and [(c.tool, c.change) for c in approval.changes] == [("added", "added")]
        await manager.approve("changing", approval.digest, approval.tool_set)
        assert status(manager, "changing").state == "connected"
        assert text_of(await manager.call_tool("changing__added", {})) == "added"


async def test_a_server_with_no_tools_is_connected_with_a_warning_not_failed(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"empty": peer("empty"), "crash": peer("crash-on-start")}))
        empty = status(manager, "empty")
        crash = status(manager, "crash")
    assert (empty.state, empty.error, empty.tools) == ("connected", None, ())
    resource = empty.resource()
    assert resource.status is Status.OK
    assert resource.error is None
    assert resource.warnings == ("connected; the server offers no tools",)
    assert crash.resource().status is Status.UNREADABLE
    assert "connected; the server offers no tools" not in crash.resource().warnings


# --- reloads and processes -----------------------------------------------------------


async def test_reload_keeps_unchanged_servers_reconnects_changed_ones_and_closes_removed_ones(
    space: Workspace,
) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"kept": peer("fine"), "changed": peer("fine"), "removed": peer("fine")}))
        before = {name: await pid_of(manager, name) for name in ("kept", "changed", "removed")}
        await manager.reload(space.specs({"kept": peer("fine"), "changed": peer("fine", env={"NEW": "1"})}))
        assert [s.name for s in manager.statuses()] == ["changed", "kept"]
        assert await pid_of(manager, "kept") == before["kept"]
        assert await pid_of(manager, "changed") != before["changed"]
        assert text_of(await manager.call_tool("changed__env", {"name": "NEW"})) == "1"
        await wait_gone({before["removed"], before["changed"]})
        assert alive(before["kept"])
        with pytest.raises(UnknownServer, match='^unknown MCP server: "removed"$'):
            await manager.call_tool("removed__pid", {})


async def test_a_changed_server_whose_new_config_fails_keeps_serving_with_the_old_connection(
    space: Workspace,
) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"srv": peer("fine")}))
        pid = await pid_of(manager, "srv")
        await manager.reload(space.specs({"srv": peer("crash-on-start")}))
        srv = status(manager, "srv")
        assert srv.state == "connected"
        assert srv.error and srv.error.startswith("reconnect with the new configuration failed: ")
        assert srv.resource().status is Status.OK
        assert srv.resource().warnings == (srv.error,)  # the snapshot shows it too
        assert await pid_of(manager, "srv") == pid
        assert text_of(await manager.call_tool("srv__echo", {"text": "old config"})) == "old config"


async def test_leaving_the_manager_leaves_no_child_process_nor_grandchild(space: Workspace) -> None:
    before = descendants(os.getpid())
    async with space.manager() as manager:
        await manager.reload(
            space.specs({"parent": peer("spawn-child"), "fine": peer("fine"), "hang": peer("hang-call")})
        )
        servers = {await pid_of(manager, name) for name in ("parent", "fine", "hang")}
        grandchild = int(text_of(await manager.call_tool("parent__child", {})))
        running = descendants(os.getpid())
        assert servers | {grandchild} <= running
    await wait_gone(servers | {grandchild})
    assert descendants(os.getpid()) <= before


async def test_a_removed_server_takes_its_grandchildren_with_it(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"parent": peer("spawn-child")}))
        grandchild = int(text_of(await manager.call_tool("parent__child", {})))
        assert alive(grandchild)
        await manager.reload(space.specs({}))
        await wait_gone({grandchild})
        assert manager.statuses() == []


# --- tool names through the manager --------------------------------------------------


async def test_tools_are_exposed_as_server__tool_and_route_at_the_first_separator(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"ours": peer("fine")}))
        assert [name for name, _, _ in manager.tools()] == ["ours__echo", "ours__env", "ours__pid"]
        assert text_of(await manager.call_tool("ours__echo", {"text": "routed"})) == "routed"
        with pytest.raises(UpstreamError, match='^MCP server "ours" offers no tool "echo__x"$'):
            await manager.call_tool("ours__echo__x", {})  # tool "echo__x", which it never listed: not passed on
        with pytest.raises(UnknownServer, match='^unknown MCP server: "nosuch"$'):
            await manager.call_tool("nosuch__echo", {})
        with pytest.raises(InvalidToolName):
            await manager.call_tool("ours-echo", {})


async def test_an_80_character_tool_name_is_shortened_and_still_routes(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"long": peer("long-names")}))
        long_tools = {tool.name: exposed for exposed, _, tool in manager.tools() if len(tool.name) > MAX_NAME - 6}
        assert set(long_tools) == {f"{misbehaving.LONG_PREFIX}_one", f"{misbehaving.LONG_PREFIX}_two"}
        assert all(len(f"long__{tool}") == 80 for tool in long_tools)
        assert all(len(exposed) <= MAX_NAME for exposed in long_tools.values())
        assert len(set(long_tools.values())) == 2
        for tool, exposed in long_tools.items():
            assert text_of(await manager.call_tool(exposed, {})) == tool


# --- schemas and results -------------------------------------------------------------


def test_tool_input_schema_map_preserves_empty_properties() -> None:
    assert input_schema({"type": "object"}) == {"type": "object", "properties": {}}
    assert input_schema({"type": "object", "properties": None}) == {"type": "object", "properties": {}}
    assert input_schema(None) == {"type": "object", "properties": {}}
    assert json.dumps(input_schema({"type": "object"})) == '{"type": "object", "properties": {}}'
    full = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "file"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    assert input_schema(full) == full


async def test_input_schemas_of_a_real_server_pass_through(space: Workspace) -> None:
    async with space.manager() as manager:
        await manager.reload(space.specs({"ours": peer("fine"), "time": {"command": str(TIME)}}))
        tools = {exposed: tool for exposed, _, tool in manager.tools()}
    assert tools["ours__pid"].input_schema == {"type": "object", "properties": {}}
    convert = tools["time__convert_time"].input_schema
    assert convert["type"] == "object"
    assert {"source_timezone", "time", "target_timezone"} <= set(convert["properties"])
    assert set(convert["required"]) == {"source_timezone", "time", "target_timezone"}


RESOURCE_TEXT = types.TextResourceContents(uri="file:///notes.txt", text="notes")


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        pytest.param(None, CallOutcome([], False), id="NilInput"),
        pytest.param(
            types.CallToolResult(content=[types.TextContent(type="text", text="hello")]),
            CallOutcome([{"type": "text", "text": "hello"}], False),
            id="TextContent",
        ),
        pytest.param(
            types.CallToolResult(content=[types.ImageContent(type="image", data="aW1n", mime_type="image/png")]),
            CallOutcome([{"type": "image", "data": "aW1n", "media_type": "image/png"}], False),
            id="ImageContent",
        ),
        pytest.param(
            types.CallToolResult(content=[types.AudioContent(type="audio", data="d2F2", mime_type="audio/wav")]),
            CallOutcome([{"type": "audio", "data": "d2F2", "media_type": "audio/wav"}], False),
            id="AudioContent",
        ),
        pytest.param(
            types.CallToolResult(content=[types.TextContent(type="text", text="boom")], is_error=True),
            CallOutcome([{"type": "text", "text": "boom"}], True),
            id="IsErrorPropagation",
        ),
        pytest.param(
            types.CallToolResult(
                content=[
                    types.TextContent(type="text", text="first"),
                    types.ImageContent(type="image", data="aW1n", mime_type="image/jpeg"),
                    types.TextContent(type="text", text="second"),
                ]
            ),
            CallOutcome(
                [
                    {"type": "text", "text": "first"},
                    {"type": "image", "data": "aW1n", "media_type": "image/jpeg"},
                    {"type": "text", "text": "second"},
                ],
                False,
            ),
            id="MultipleContentItems",
        ),
        pytest.param(
            types.CallToolResult(
                content=[types.ResourceLink(type="resource_link", uri="file:///readme.md", name="readme")]
            ),
            CallOutcome([{"type": "resource", "text": "[resource link: file:///readme.md]"}], False),
            id="ResourceLink",
        ),
        pytest.param(
            types.CallToolResult(content=[types.EmbeddedResource(type="resource", resource=RESOURCE_TEXT)]),
            CallOutcome([{"type": "resource", "text": "[embedded resource: file:///notes.txt]"}], False),
            id="EmbeddedResource",
        ),
    ],
)
def test_convert_result(result: types.CallToolResult | None, expected: CallOutcome) -> None:
    assert convert_result(result, MAX_OUTPUT) == expected


def test_convert_result_cuts_text_on_a_character_boundary() -> None:
    result = types.CallToolResult(content=[types.TextContent(type="text", text="aé" * 10)])  # 30 bytes
    outcome = convert_result(result, 5)  # "aéa" is 4 bytes; the next "é" would be cut in half, so it goes
    assert outcome.content == [
        {"type": "text", "text": "aéa"},
        {"type": "text", "text": "[output truncated: 25 bytes over the 5-byte limit]"},
    ]


def test_convert_result_drops_binary_blocks_past_the_limit_whole() -> None:
    image = types.ImageContent(type="image", data="A" * 40, mime_type="image/png")
    result = types.CallToolResult(content=[types.TextContent(type="text", text="0123456789"), image], is_error=True)
    outcome = convert_result(result, 20)
    assert outcome.content == [
        {"type": "text", "text": "0123456789"},
        {"type": "text", "text": "[output truncated: 40 bytes over the 20-byte limit]"},
    ]
    assert outcome.is_error is True
