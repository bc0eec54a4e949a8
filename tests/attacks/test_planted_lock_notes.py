"""Another user of the machine planting a note in a SQLite file's server lock: ``up`` sends its token to no URL
they wrote.

``up`` joins the control plane that serves its database, found by the note in
``control.db-server.lock`` beside the file, and asks it (with the user's token) whether it knows
the user. A database may lie in a folder others can write (``--db sqlite:////tmp/shared.db``): a
note is read only from a file this user owns and no one else may write.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from agentcontext.control.sqlite_file import hold_for_serving, serving_lock
from agentcontext.fs import lockfile
from agentcontext.local.stack import _running_server
from agentcontext.local.state import LocalState
from tests.helpers import http_server

TOKEN = "acu_" + "x" * 43


class _Recorder(BaseHTTPRequestHandler):
    heard: list[str | None] = []

    def do_GET(self) -> None:
        self.heard.append(self.headers.get("Authorization"))
        body = json.dumps({"name": "ann"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str | None]]]:
    heard: list[str | None] = []
    with http_server(type("Recorder", (_Recorder,), {"heard": heard})) as url:
        yield url, heard


def _plant(database: Path, url: str, mode: int, owner: int | None = None) -> None:
    lock = serving_lock(database)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": 1, "url": url}))
    lock.chmod(mode)
    if owner is not None:
        os.chown(lock, owner, -1)


def test_a_note_others_may_write_is_not_followed_and_hears_no_token(
    tmp_path: Path, listener: tuple[str, list[str | None]]
) -> None:
    url, heard = listener
    database = tmp_path / "shared" / "control.db"
    _plant(database, url, 0o666)
    local = LocalState(user="ann", user_token=TOKEN)
    assert _running_server(local, f"sqlite:///{database}") is None
    assert heard == []
    _plant(database, url, 0o600)  # only we could write it, but nobody holds the lock: a server gone left it
    assert _running_server(local, f"sqlite:///{database}") is None
    assert heard == []
    held = lockfile.hold(serving_lock(database))  # a server holding the lock now: its note is followed
    assert held is not None
    held.note(url=url)
    try:
        assert _running_server(local, f"sqlite:///{database}") == url
    finally:
        held.release()
    assert heard == [f"Bearer {TOKEN}"]
    assert _running_server(local, f"sqlite:///{database}") is None  # released: its note is gone with it


def test_the_note_of_a_server_that_has_stopped_sends_no_token_to_whoever_took_its_port(
    tmp_path: Path, listener: tuple[str, list[str | None]]
) -> None:
    """A server killed (or ended) leaves its file behind; another local user may have bound its old port since."""
    url, heard = listener
    database = tmp_path / "control.db"
    held = hold_for_serving(database, url)
    os.close(held.fd)  # as a kill -9 ends it: the kernel lets the lock go, the note stays
    assert json.loads(serving_lock(database).read_text())["url"] == url
    assert _running_server(LocalState(user="ann", user_token=TOKEN), f"sqlite:///{database}") is None
    assert heard == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_a_note_in_a_file_another_user_owns_is_not_followed_and_hears_no_token(
    tmp_path: Path, listener: tuple[str, list[str | None]]
) -> None:
    url, heard = listener
    database = tmp_path / "shared" / "control.db"
    _plant(database, url, 0o600, owner=65534)
    assert _running_server(LocalState(user="ann", user_token=TOKEN), f"sqlite:///{database}") is None
    assert heard == []
