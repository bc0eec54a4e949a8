"""The control plane's commands as a user runs them: real ``agentcontext`` subprocesses.

The administrative commands (``users create``, ``tokens create``, ``workspace-agents create|rotate``,
``db upgrade|current``) work on the database named by ``--db``: a SQLite file, and a
database in the PostgreSQL cluster the control tests start. ``agentcontext server`` runs as
a subprocess on a loopback port, stopped by each test; the ``chats`` commands talk to it and
print what the API returns.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from agentcontext.cli import app
from agentcontext.control import identity, migrate
from agentcontext.control.db import Database
from agentcontext.local import state
from agentcontext.local.state import LocalState
from agentcontext.testing import make_workspace
from tests.control.conftest import first_push
from tests.helpers import terminate
from tests.local.running import data_dir

pytestmark = pytest.mark.timeout(180)

START_WITHIN = 30.0  # seconds a server may take to answer /healthz
ADMIN = re.compile(r"\bacu_[A-Za-z0-9_-]+")  # the administrator's token a first start prints
runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agentcontext", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
    )


def run_json(*args: str, env: dict[str, str] | None = None) -> Any:
    result = run(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state' / 'control.db'}"
    url: str = request.getfixturevalue("pg_database")
    return url


def issue(db_url: str, work: Callable[[Session], str]) -> str:
    """A token made directly in the database (migrated first), for tests about other commands."""
    database = Database(db_url)
    try:
        migrate.upgrade(database)
        return database.write(work)
    finally:
        database.dispose()


def principal(db_url: str, token: str) -> identity.Principal:
    """Who ``token`` is, asked of the database directly."""
    database = Database(db_url)
    try:
        with database.read() as session:
            return identity.authenticate(session, token)
    finally:
        database.dispose()


# --- a server subprocess --------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], stderr_path: Path) -> None:
    deadline = time.monotonic() + START_WITHIN
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}: {stderr_path.read_text()}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # polling: a starting server sends no event
    pytest.fail(f"the server did not answer /healthz within {START_WITHIN}s: {stderr_path.read_text()}")


@contextlib.contextmanager
def serving(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``agentcontext server ARGS --listen 127.0.0.1:<free port>``, healthy; stopped with SIGTERM afterwards."""
    port = free_port()
    stderr_path = tmp_path / f"server-{port}.stderr"
    environ = {**os.environ, **(env or {})}
    command = [sys.executable, "-m", "agentcontext", "server", *args, "--listen", f"127.0.0.1:{port}"]
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environ)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, process, stderr_path)
        yield Server(url, process, stderr_path)
    finally:
        terminate(process)


def stop(server: Server) -> int:
    server.process.send_signal(signal.SIGTERM)
    return server.process.wait(timeout=20)


# --- administrative commands ----------------------------------------------------------------------


def test_users_create_prints_the_users_token_once_and_it_works(db_url: str) -> None:
    issued = run_json("users", "create", "alice", "--db", db_url)
    assert set(issued) == {"id", "name", "token"}
    assert issued["name"] == "alice" and issued["token"].startswith("acu_")
    found = principal(db_url, issued["token"])
    assert isinstance(found, identity.UserPrincipal)
    assert (found.user_id, found.name, found.is_admin) == (issued["id"], "alice", False)

    admin = run("users", "create", "root", "--admin", "--db", db_url)
    assert admin.returncode == 0, admin.stderr
    assert "shown once" in admin.stdout
    token = admin.stdout.strip().splitlines()[-1]  # alone on the last line, for copying
    found = principal(db_url, token)
    assert isinstance(found, identity.UserPrincipal) and found.is_admin is True

    again = run("users", "create", "alice", "--db", db_url)
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == 'agentcontext: error: user "alice" already exists\n'


def test_agents_create_makes_the_workspace_and_prints_the_agents_token(db_url: str) -> None:
    first = run_json("workspace-agents", "create", "--workspace", "box", "--name", "dev-coderd-chat", "--db", db_url)
    assert set(first) == {"id", "name", "token", "workspace"}
    assert (first["name"], first["workspace"]) == ("dev-coderd-chat", "box")
    found = principal(db_url, first["token"])
    assert isinstance(found, identity.AgentPrincipal)
    assert (found.agent_id, found.name) == (first["id"], "dev-coderd-chat")

    second = run_json("workspace-agents", "create", "--workspace", "box", "--name", "sidecar", "--db", db_url)
    other = principal(db_url, second["token"])
    assert isinstance(other, identity.AgentPrincipal) and other.workspace_id == found.workspace_id

    rotated = run_json("workspace-agents", "rotate", "--workspace", "box", "--name", "sidecar", "--db", db_url)
    assert rotated["id"] == second["id"] and rotated["token"] != second["token"]
    assert isinstance(principal(db_url, rotated["token"]), identity.AgentPrincipal)
    with pytest.raises(Exception, match="invalid token"):
        principal(db_url, second["token"])
    missing = run("workspace-agents", "rotate", "--workspace", "box", "--name", "nobody", "--db", db_url)
    assert missing.returncode == 2 and 'has no agent named "nobody"' in missing.stderr


def test_tokens_create_gives_a_user_another_working_token(db_url: str) -> None:
    user = run_json("users", "create", "alice", "--db", db_url)
    extra = run_json("tokens", "create", "alice", "--name", "laptop", "--db", db_url)
    assert (extra["id"], extra["name"]) == (user["id"], "alice")
    assert (extra["user"], extra["label"]) == ("alice", "laptop")  # the token's own label, not only its user's name
    shown = run("tokens", "create", "alice", "--name", "ci", "--db", db_url)
    assert "Created token for user alice" in shown.stdout and "labelled ci." in shown.stdout
    assert "AGENTCONTEXT_TOKEN" in shown.stdout  # how to use it, said where it is shown once
    assert extra["token"] != user["token"]
    for token in (user["token"], extra["token"]):
        found = principal(db_url, token)
        assert isinstance(found, identity.UserPrincipal) and found.user_id == user["id"]
    nobody = run("tokens", "create", "nobody", "--db", db_url)
    assert nobody.returncode == 2 and 'user "nobody" not found' in nobody.stderr


def test_db_upgrade_brings_an_empty_database_to_the_newest_revision(db_url: str) -> None:
    head = migrate.head()
    if db_url.startswith("sqlite"):  # a file not made yet is one `db current` reads as missing, and leaves so
        missing = run("db", "current", "--db", db_url)
        assert missing.returncode == 2 and "no database at " in missing.stderr, missing.stderr
        assert not Path(db_url.removeprefix("sqlite:///")).exists()
    else:
        assert run_json("db", "current", "--db", db_url) == {"current": None, "head": head, "up_to_date": False}
    upgraded = run("db", "upgrade", "--db", db_url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"empty -> {head}" in upgraded.stdout
    assert ("A new database: " in upgraded.stderr) == db_url.startswith("sqlite")
    assert run_json("db", "current", "--db", db_url) == {"current": head, "head": head, "up_to_date": True}
    again = run("db", "upgrade", "--db", db_url)
    assert again.returncode == 0 and f"{head} -> {head}" in again.stdout


def test_database_commands_refuse_an_unusable_database_in_one_line_with_exit_2() -> None:
    cases = [
        (
            ("db", "current"),
            "mysql://user@host/db",
            "unsupported database 'mysql': use sqlite:///PATH or postgresql://",
        ),
        (("db", "upgrade"), f"postgresql://nobody@127.0.0.1:{free_port()}/x", "cannot use the database: connection"),
        (("users", "create", "bob"), "sqlite:////proc/no-such-dir/c.db", "cannot open the database: "),
    ]
    for command, url, message in cases:
        result = run(*command, "--db", url)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("agentcontext: error: ") and message in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_a_postgresql_host_that_takes_the_connection_and_never_answers_is_given_up_on() -> None:
    """libpq waited for good there (no ``connect_timeout``): ``db current`` hung, and so would a server's pool."""
    from agentcontext.control.db import PG_CONNECT_TIMEOUT

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # the kernel takes the connection; no startup answer ever comes
        started = time.monotonic()
        result = run("db", "current", env={"AGENTCONTEXT_DB": f"postgresql://u@127.0.0.1:{silent.getsockname()[1]}/x"})
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("agentcontext: error: cannot use the database: ")
    assert time.monotonic() - started < 2 * PG_CONNECT_TIMEOUT + 15  # libpq tries with SSL, then without


def test_the_servers_default_listen_address_is_the_services() -> None:
    from agentcontext.cli import server_cmd
    from agentcontext.server import run

    assert server_cmd.DEFAULT_LISTEN == run.DEFAULT_LISTEN


def test_the_agents_default_listen_address_is_the_services() -> None:
    from agentcontext.agent import service
    from agentcontext.cli import agent_cmd

    assert agent_cmd.DEFAULT_LISTEN == service.DEFAULT_LISTEN


SERVERS_LIBRARIES = {"sqlalchemy", "alembic", "psycopg", "fastapi", "starlette", "uvicorn", "mcp", "httpx"}


def test_the_command_line_loads_no_server_or_database_until_a_command_runs_one() -> None:
    """``agentcontext scan`` (or ``--version``) starts without the agent, the MCP server, the control plane's
    web stack or a database driver: each command imports what it runs (about 1.5 s of imports otherwise)."""
    script = (
        "import json, sys\n"
        "import agentcontext.cli\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(SERVERS_LIBRARIES)!r}))))\n"
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(output) == []


PARSERS_SCRIPT = """
import json, sys
from pathlib import Path
import agentcontext.cli
from agentcontext import scan
from agentcontext.testing import test_config

def loaded():
    print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"strictyaml", "markdown_it"})))

root = Path(sys.argv[1])
loaded()
spec = {"settings": {"skills.validation": "spec"}}
for folder, kwargs in [("plain", {}), ("commented", {"profile": "claude"}), ("plain", spec)]:
    scan(root / folder, test_config(root / folder, home=root / "home", **kwargs))
    loaded()
"""


def test_the_skills_ref_parser_and_the_markdown_parser_load_only_for_a_file_that_needs_them(tmp_path: Path) -> None:
    """strictyaml (with dateutil) and markdown-it cost every process ~80 ms to import: a scan of plain files
    loads neither; Claude's HTML comments load markdown-it, and ``skills.validation = spec`` strictyaml."""
    skill = "---\nname: deploy\ndescription: Ship it.\n---\nSteps.\n"
    make_workspace(tmp_path / "plain", {"AGENTS.md": "# Rules\n", ".agents/skills/deploy/SKILL.md": skill})
    make_workspace(tmp_path / "commented", {"CLAUDE.md": "# Rules\n\n<!-- not for the model -->\n"})
    (tmp_path / "home").mkdir()
    command = [sys.executable, "-c", PARSERS_SCRIPT, str(tmp_path)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    loaded = [json.loads(line) for line in ran.stdout.splitlines()]
    assert loaded == [[], [], ["markdown_it"], ["markdown_it", "strictyaml"]]


def test_admin_commands_and_the_server_share_the_default_database(tmp_path: Path, home: Path) -> None:
    user = run_json("users", "create", "alice")
    assert (home / ".local" / "share" / "agentcontext" / "control.db").is_file()
    with serving(tmp_path) as server, server.client(user["token"]) as client:
        assert client.get("/api/v1/users/me").json()["name"] == "alice"
        assert "First start" not in server.stderr  # alice was there first: no administrator is made


# --- the server ---------------------------------------------------------------------------------


def test_the_first_start_prints_an_admin_token_once_and_a_second_start_does_not(tmp_path: Path, db_url: str) -> None:
    with serving(tmp_path, "--db", db_url) as first:
        lines = first.stderr.splitlines()
        tokens = [line for line in lines if line.startswith("acu_")]
        assert len(tokens) == 1, first.stderr
        assert any("First start" in line and "admin" in line for line in lines)
        with first.client(tokens[0]) as client:
            me = client.get("/api/v1/users/me").json()
            assert (me["name"], me["is_admin"]) == ("admin", True)
            assert client.get("/healthz").json()["database"] == db_url.partition(":")[0]
        assert stop(first) == 0  # SIGTERM stops it cleanly
    with serving(tmp_path, "--db", db_url) as second, second.client(tokens[0]) as client:
        assert "acu_" not in second.stderr and "First start" not in second.stderr
        assert client.get("/api/v1/users/me").status_code == 200  # the token outlives the restart


def test_the_server_refuses_a_bad_listen_address_with_exit_2(tmp_path: Path) -> None:
    result = run("server", "--db", f"sqlite:///{tmp_path / 'c.db'}", "--listen", "nowhere")
    assert result.returncode == 2
    assert "--listen wants HOST:PORT" in result.stderr


@pytest.mark.parametrize("end", ["SIGTERM", "SIGKILL"])
def test_a_second_server_on_a_served_sqlite_file_is_refused_naming_the_first_and_starts_once_it_has_ended(
    tmp_path: Path, end: str
) -> None:
    """Events stay in the server that published them: a second server on the same file would serve chats that
    never hear of the first's pushes. The lock dies with the first however it ends (a SIGKILL too)."""
    url = f"sqlite:///{tmp_path / 'state' / 'control.db'}"
    with serving(tmp_path, "--db", url) as first:
        second = run("server", "--db", url, "--listen", f"127.0.0.1:{free_port()}")
        assert (second.returncode, second.stdout) == (2, "")
        assert second.stderr == (
            f"agentcontext: error: {tmp_path / 'state' / 'control.db'} is already served by the control plane at"
            f" {first.url} (pid {first.process.pid}): a SQLite database has one server at a time (stop that one"
            " first, or use PostgreSQL for several)\n"
        )
        if end == "SIGKILL":
            first.process.kill()
        else:
            assert stop(first) == 0
        first.process.wait(timeout=20)
    with serving(tmp_path, "--db", url) as third, third.client(ADMIN.findall(first.stderr)[0]) as client:
        assert client.get("/api/v1/users/me").status_code == 200


def test_the_administrative_commands_work_on_a_sqlite_file_while_its_server_runs(tmp_path: Path) -> None:
    """The lock is the serving process's only: the CLI's short writes queue on SQLite's own lock."""
    url = f"sqlite:///{tmp_path / 'state' / 'control.db'}"
    with serving(tmp_path, "--db", url) as server:
        user = run_json("users", "create", "carol", "--db", url)
        token = run_json("tokens", "create", "carol", "--db", url)["token"]
        agent = run_json("workspace-agents", "create", "--workspace", "box", "--name", "dev", "--db", url)
        rotated = run_json("workspace-agents", "rotate", "--workspace", "box", "--name", "dev", "--db", url)
        assert run("db", "upgrade", "--db", url).returncode == 0
        assert run_json("db", "current", "--db", url)["up_to_date"] is True
        with server.client(token) as client:
            assert client.get("/api/v1/users/me").json()["name"] == user["name"]
        assert isinstance(principal(url, rotated["token"]), identity.AgentPrincipal)
        assert agent["token"] != rotated["token"]


def test_the_disable_switch_makes_pushes_answer_501(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    token = issue(url, lambda s: identity.create_agent(s, "box", "dev").token)
    with serving(tmp_path, "--db", url, "--disable-context-sync") as server, server.client(token) as client:
        pushed = client.post("/api/v1/agent/context", json=first_push())
        assert pushed.status_code == 501
        assert pushed.json()["message"] == "Context sync is disabled."


# --- chats against a running server -------------------------------------------------------------


@dataclass(frozen=True)
class Plane:
    server: Server
    user: str
    agent: str
    chat_id: str  # a chat of alice's, up to date

    def env(self) -> dict[str, str]:
        return {"AGENTCONTEXT_SERVER": self.server.url, "AGENTCONTEXT_TOKEN": self.user}

    def api(self) -> httpx.Client:
        return self.server.client(self.user)


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """One server for the chats tests, on SQLite, with the user alice and the pushed workspace ``shared``."""
    tmp = tmp_path_factory.mktemp("plane")
    url = f"sqlite:///{tmp / 'control.db'}"
    user = issue(url, lambda s: identity.create_user(s, "alice").token)
    agent = issue(url, lambda s: identity.create_agent(s, "shared", "dev-coderd-chat").token)
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCONTEXT_")} | {"HOME": str(home)}
    with serving(tmp, "--db", url, env=env) as server, server.client(agent) as as_agent:
        assert as_agent.post("/api/v1/agent/context", json=first_push()).json()["accepted"] is True
        with server.client(user) as as_user:
            chat = as_user.post("/api/v1/chats", json={"workspace": "shared"}).json()
        yield Plane(server, user, agent, chat["id"])


def test_chats_commands_print_exactly_what_the_api_returns(plane: Plane) -> None:
    env = plane.env()
    created = run_json("chats", "create", "--workspace", "shared", "--title", "first", env=env)
    assert {"id", "status", "workspace_id", "agent_id", "context"} <= set(created)
    assert created["title"] == "first" and created["context"]["pinned_hash"] is not None
    chat_id = created["id"]
    with plane.api() as api:
        assert run_json("chats", "show", chat_id, env=env) == api.get(f"/api/v1/chats/{chat_id}").json()
        assert api.get(f"/api/v1/chats/{chat_id}").json() == created
        assert run_json("chats", "list", env=env) == api.get("/api/v1/chats").json()
        turn = run_json("chats", "prompt", chat_id, env=env)
        assert turn == api.get(f"/api/v1/chats/{chat_id}/prompt").json()
        assert "Use pytest." in turn["system"]

        with plane.server.client(plane.agent) as as_agent:
            as_agent.post("/api/v1/agent/context", json=first_push(2, agents_md="Use tox.\n"))
        assert run_json("chats", "show", chat_id, env=env)["context"]["dirty"] is True
        refreshed = run_json("chats", "refresh", chat_id, env=env)
        assert refreshed["diff"] == {"added": [], "removed": [], "changed": ["/home/dev/project/AGENTS.md"]}
        assert {k: v for k, v in refreshed.items() if k != "diff"} == api.get(f"/api/v1/chats/{chat_id}").json()
        assert "Use tox." in run_json("chats", "prompt", chat_id, env=env)["system"]


def test_chats_tool_runs_a_tool_and_exits_1_when_the_result_is_an_error(plane: Plane) -> None:
    env = plane.env()
    chat_id = plane.chat_id
    read = run("chats", "tool", chat_id, "read_skill", "--args", '{"name": "review"}', "--json", env=env)
    assert read.returncode == 0, read.stderr
    result = json.loads(read.stdout)
    assert set(result) == {"content", "is_error"} and result["is_error"] is False
    assert "Read the diff first." in json.loads(result["content"])["body"]
    failed = run("chats", "tool", chat_id, "no_such_tool", env=env)
    assert failed.returncode == 1
    assert 'tool "no_such_tool" is not available in this chat' in failed.stdout
    refused = run("chats", "tool", chat_id, "read_skill", "--args", "[1, 2]", env=env)
    assert refused.returncode == 2
    assert refused.stderr == ("agentcontext: error: --args must be a JSON object of the tool's arguments, not list\n")


def test_chats_commands_print_for_people_without_json(plane: Plane) -> None:
    env = plane.env()
    with plane.api() as api:
        api.put(f"/api/v1/chats/{plane.chat_id}/context")  # up to date, whatever another test pushed
    shown = run("chats", "show", plane.chat_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert plane.chat_id in shown.stdout and "up to date" in shown.stdout and "AGENTS.md" in shown.stdout
    prompt = run("chats", "prompt", plane.chat_id, env=env)
    assert prompt.returncode == 0 and "<workspace-context>" in prompt.stdout and "tools: read_skill" in prompt.stdout
    refreshed = run("chats", "refresh", plane.chat_id, env=env)
    assert refreshed.returncode == 0 and "Refreshed: nothing changed." in refreshed.stdout


def test_server_and_token_options_override_the_environment(plane: Plane) -> None:
    wrong = {"AGENTCONTEXT_SERVER": "http://127.0.0.1:9", "AGENTCONTEXT_TOKEN": "acu_wrong"}
    created = run(
        "chats", "create", "-w", "shared", "--server", plane.server.url, "--token", plane.user, "--json", env=wrong
    )
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["status"] == "pending"


def test_chats_commands_without_a_server_or_token_exit_2_saying_what_is_missing(plane: Plane, tmp_path: Path) -> None:
    nowhere = {"HOME": str(tmp_path)}  # and no state of `agentcontext up` either
    no_server = run("chats", "list", env={**nowhere, "AGENTCONTEXT_TOKEN": plane.user})
    assert no_server.returncode == 2
    assert "no control plane given: pass --server URL, set AGENTCONTEXT_SERVER, or run `agentcontext up`" in (
        no_server.stderr
    )
    no_token = run("chats", "list", env={**nowhere, "AGENTCONTEXT_SERVER": plane.server.url})
    assert no_token.returncode == 2
    assert "no token given: pass --token-file FILE or set AGENTCONTEXT_TOKEN" in no_token.stderr
    for result in (no_server, no_token):
        assert result.stdout == "" and "Traceback" not in result.stderr


def test_chats_commands_find_the_server_and_token_that_up_stored_as_status_does(plane: Plane, tmp_path: Path) -> None:
    home = tmp_path / "home"
    state.save(data_dir(home) / "local.json", LocalState(server_url=plane.server.url, user_token=plane.user))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTCONTEXT_", "XDG_"))} | {"HOME": str(home)}
    listed = subprocess.run(
        [sys.executable, "-m", "agentcontext", "chats", "list", "--json"], capture_output=True, text=True, env=env
    )
    assert listed.returncode == 0, listed.stderr
    with plane.api() as api:
        assert json.loads(listed.stdout) == api.get("/api/v1/chats").json()
    shown = run("chats", "show", plane.chat_id, "--json", env={"HOME": str(home)})
    assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == plane.chat_id


def test_chats_commands_report_server_errors_in_one_line_with_exit_2(plane: Plane) -> None:
    env = plane.env()
    cases = [
        (run("chats", "show", "no-such-chat", env=env), 'chat "no-such-chat" not found'),
        (run("chats", "list", env={**env, "AGENTCONTEXT_TOKEN": "acu_wrong"}), "invalid token"),
        (run("chats", "list", env={**env, "AGENTCONTEXT_TOKEN": plane.agent}), "needs a user's API token"),
        (run("chats", "create", "-w", "nowhere", env=env), 'workspace "nowhere" not found'),
        (run("chats", "list", env={**env, "AGENTCONTEXT_SERVER": f"http://127.0.0.1:{free_port()}"}), "cannot reach"),
    ]
    for result, message in cases:
        assert result.returncode == 2, (message, result.stderr)
        assert result.stderr.startswith("agentcontext: error:") and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_a_chat_id_with_url_syntax_in_it_reaches_no_other_route(plane: Plane) -> None:
    result = run("chats", "show", "x?archived=true#y", env=plane.env())
    assert result.returncode == 2
    assert 'chat "x?archived=true#y" not found' in result.stderr, result.stderr


# --- help -----------------------------------------------------------------------------------------

HELP = [
    (["server"], "Run the control plane"),
    (["db", "upgrade"], "Apply every migration"),
    (["db", "current"], "schema revision"),
    (["users", "create"], "print their API token"),
    (["tokens", "create"], "another API token"),
    (["workspace-agents", "create"], "print its token"),
    (["workspace-agents", "rotate"], "new token"),
    (["chats", "create"], "Create a chat"),
    (["chats", "list"], "Your chats"),
    (["chats", "show"], "pinned context"),
    (["chats", "refresh"], "Re-pin the chat"),
    (["chats", "prompt"], "system prompt"),
    (["chats", "tool"], "Run a chat tool"),
]


@pytest.mark.parametrize(("command", "teaches"), HELP, ids=[" ".join(c) for c, _ in HELP])
def test_each_commands_help_says_what_it_does(command: list[str], teaches: str) -> None:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert teaches in result.output
    for option in ("--db", "--json") if command[0] in ("users", "tokens", "agents") else ():
        assert option in result.output
    if command[0] == "chats":
        assert "--server" in result.output and "AGENTCONTEXT_SERVER" in result.output


@pytest.mark.parametrize("group", ["db", "users", "tokens", "chats"])
def test_each_command_group_lists_its_commands(group: str) -> None:
    result = runner.invoke(app, [group], env={"COLUMNS": "200"})
    assert "create" in result.output or "upgrade" in result.output


def test_workspace_agents_help_lists_its_commands_and_agents_help_points_there() -> None:
    result = runner.invoke(app, ["workspace-agents", "--help"], env={"COLUMNS": "200"})
    assert "create" in result.output and "rotate" in result.output
    assert "workspace-agents create" in runner.invoke(app, ["agents", "--help"], env={"COLUMNS": "200"}).output
