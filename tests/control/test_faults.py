"""Faults of the storage under a real ``agentcontext server``: it reports them, keeps serving reads, and recovers.

A full disk is a file-size quota on the server process (``RLIMIT_FSIZE``, with ``SIGXFSZ``
ignored so a write fails with ``EFBIG`` as it would on a full filesystem): pushes are refused
with 503 and a reason, chats keep their prompts, and once the quota is lifted the agent's
next push is stored without a restart. A dropped database connection (every PostgreSQL
backend of the server terminated) costs no request an error.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import sqlalchemy as sa

from agentcontext.control.db import Database
from agentcontext.control.models import Snapshot
from agentcontext.resource import Kind
from tests.control.conftest import AGENT_INFO, WORK, first_push, push_body, text_resource
from tests.control.processes import Process, _running, cli, create_agent, server
from tests.helpers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

QUOTA = 1 << 20  # bytes any file the server writes may grow to


def big_push(version: int) -> dict[str, Any]:
    """About 1.6 MB of instruction text: more than the quota lets the database file or its WAL take."""
    files = [
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/docs/{n}/AGENTS.md", f"{n} " + "rules " * 34_000)
        for n in range(8)
    ]
    return push_body(files, version=version, work_dir=WORK, agent=AGENT_INFO)


def quota(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec: a write fails, nothing dies
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


@pytest.fixture
def quota_server(tmp_path: Path) -> Iterator[tuple[Process, str, str, str]]:
    """A server under the quota on a fresh SQLite database; its URL, database URL, agent and user tokens."""
    db_url = f"sqlite:///{tmp_path / 'control.db'}"
    agent_token = create_agent(db_url, "ws", "dev")
    user_token = json.loads(cli("users", "create", "alice", "--json", "--db", db_url))["token"]
    logs = tmp_path / "logs"
    logs.mkdir()
    port = free_port()
    log = logs / "server.log"
    command = [sys.executable, "-m", "agentcontext", "server", "--db", db_url, "--listen", f"127.0.0.1:{port}"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, preexec_fn=lambda: quota(QUOTA))
    with _running(Process("server", process, log, f"http://127.0.0.1:{port}"), "/healthz") as proc:
        yield proc, db_url, agent_token, user_token


def stored_version(db_url: str) -> int | None:
    db = Database(db_url)
    try:
        with db.read() as session:
            return session.scalar(sa.select(Snapshot.version))
    finally:
        db.dispose()


def test_a_full_disk_refuses_pushes_with_503_keeps_serving_prompts_and_recovers_when_space_returns(
    quota_server: tuple[Process, str, str, str],
) -> None:
    proc, db_url, agent_token, user_token = quota_server
    agent = {"Authorization": f"Bearer {agent_token}"}
    user = {"Authorization": f"Bearer {user_token}"}
    with httpx.Client(base_url=proc.url, timeout=30) as client:
        assert client.post("/api/v1/agent/context", json=first_push(1), headers=agent).json()["accepted"] is True
        chat = client.post("/api/v1/chats", json={"workspace": "ws"}, headers=user).json()
        assert chat["context"]["pinned_hash"]

        refused = client.post("/api/v1/agent/context", json=big_push(2), headers=agent)
        assert refused.status_code == 503, refused.text
        assert "nothing was written" in refused.json()["detail"]
        assert stored_version(db_url) == 1  # the accepted snapshot is intact

        prompt = client.get(f"/api/v1/chats/{chat['id']}/prompt", headers=user)
        assert prompt.status_code == 200 and "Use pytest." in prompt.json()["system"]

        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        stored = client.post("/api/v1/agent/context", json=big_push(2), headers=agent)
        assert stored.status_code == 200 and stored.json()["accepted"] is True, stored.text
        assert stored_version(db_url) == 2
        marked = client.get(f"/api/v1/chats/{chat['id']}", headers=user).json()
        assert marked["context"]["dirty"] is True
    assert "Traceback" not in proc.text()


def test_a_dropped_database_connection_costs_no_request_an_error(tmp_path: Path, pg_database: str) -> None:
    db_url = pg_database
    agent_token = create_agent(db_url, "ws", "dev")
    user_token = json.loads(cli("users", "create", "alice", "--json", "--db", db_url))["token"]
    logs = tmp_path / "logs"
    logs.mkdir()
    agent = {"Authorization": f"Bearer {agent_token}"}
    user = {"Authorization": f"Bearer {user_token}"}
    database = sa.make_url(db_url).database
    with server(db_url, logs) as proc, httpx.Client(base_url=proc.url, timeout=30) as client:
        assert client.post("/api/v1/agent/context", json=first_push(1), headers=agent).json()["accepted"] is True
        chat = client.post("/api/v1/chats", json={"workspace": "ws"}, headers=user).json()
        for version in (2, 3):
            admin_url = sa.make_url(db_url).set(drivername="postgresql", database="postgres")
            with psycopg.connect(admin_url.render_as_string(hide_password=False), autocommit=True) as admin:
                dropped = admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (database,),
                ).fetchone()
            assert dropped is not None and dropped[0] >= 1
            pushed = client.post(
                "/api/v1/agent/context", json=first_push(version, agents_md=f"v{version}"), headers=agent
            )
            assert pushed.status_code == 200 and pushed.json()["accepted"] is True, pushed.text
            prompt = client.get(f"/api/v1/chats/{chat['id']}/prompt", headers=user)
            assert prompt.status_code == 200, prompt.text
        assert stored_version(db_url) == 3


def test_a_database_locked_by_another_process_is_a_503_before_a_client_gives_up_and_nothing_is_done_later(
    tmp_path: Path,
) -> None:
    """The CLI waits 30 s for an answer: a write the server kept retrying past that (up to eight busy timeouts of
    30 s) was done after the client had said it failed, so a user who asked again got two chats."""
    import sqlite3
    import time

    from agentcontext.control.client import TIMEOUT
    from agentcontext.control.db import BUSY_WAIT_MS, RETRY_FOR

    db_path = tmp_path / "control.db"
    db_url = f"sqlite:///{db_path}"
    create_agent(db_url, "ws", "dev")
    user_token = json.loads(cli("users", "create", "alice", "--json", "--db", db_url))["token"]
    with server(db_url, tmp_path) as proc, httpx.Client(base_url=proc.url, timeout=60) as client:
        holder = sqlite3.connect(db_path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            started = time.monotonic()
            answer = client.post(
                "/api/v1/chats", json={"workspace": "ws"}, headers={"Authorization": f"Bearer {user_token}"}
            )
            waited = time.monotonic() - started
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert answer.status_code == 503, answer.text
        assert (
            "locked by another process?" in answer.json()["detail"] and "nothing was written" in answer.json()["detail"]
        )
        assert waited < TIMEOUT and waited < RETRY_FOR + 2 * BUSY_WAIT_MS / 1000
        time.sleep(1)
        listed = client.get("/api/v1/chats", headers={"Authorization": f"Bearer {user_token}"})
        assert listed.status_code == 200 and listed.json() == []
