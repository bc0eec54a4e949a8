"""Approval of project MCP servers: by what they run, stored privately, enforced by the manager."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcontext.errors import ConfigError
from agentcontext.resource import Status
from agentcontext.testing import isolated_environ, launched, test_config
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import parse
from agentcontext.workspace_mcp.launch import Launch, resolve
from agentcontext.workspace_mcp.tool_names import PendingApproval
from agentcontext.workspace_mcp.trust import TrustStore, data_dir, write_private
from tests.mcp_servers import misbehaving

CONFIG = "/work/.mcp.json"


def spec(name: str, entry: dict[str, Any], config: str = CONFIG) -> Launch:
    parsed = parse(json.dumps({"mcpServers": {name: entry}}).encode(), config, {})
    (server,) = parsed.servers
    return resolve(server, work_dir="/work", environ={"HOME": "/nonexistent", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "data" / "trust.json")


def test_an_unknown_server_is_not_approved(store: TrustStore) -> None:
    assert store.approved(spec("time", {"command": "mcp-server-time"})) is False
    assert not store.path.exists()  # reading never creates the file


def test_approve_then_revoke(store: TrustStore) -> None:
    time_server = spec("time", {"command": "mcp-server-time"})
    git = spec("git", {"command": "mcp-server-git"})
    store.approve([time_server, git])
    assert store.approved(time_server) and store.approved(git)
    assert store.revoke([git]) == [git]
    assert store.approved(time_server)
    assert not store.approved(git)
    assert store.revoke([git]) == []  # nothing left to withdraw


def test_a_changed_entry_needs_approval_again(store: TrustStore) -> None:
    store.approve([spec("time", {"command": "mcp-server-time"})])
    assert store.approved(spec("time", {"command": "mcp-server-time"}))
    assert not store.approved(spec("time", {"command": "mcp-server-time", "args": ["--local-timezone=UTC"]}))
    assert not store.approved(spec("time", {"command": "mcp-server-time", "env": {"TOKEN": "x"}}))


def test_approval_is_per_config_file(store: TrustStore) -> None:
    store.approve([spec("time", {"command": "mcp-server-time"}, "/work/a/.mcp.json")])
    assert not store.approved(spec("time", {"command": "mcp-server-time"}, "/work/b/.mcp.json"))


def test_the_store_is_written_with_mode_0600_in_a_private_dir(store: TrustStore) -> None:
    store.approve([spec("time", {"command": "mcp-server-time"})])
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    store.revoke([spec("time", {"command": "mcp-server-time"})])
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["trust.json", "trust.json.lock"]  # no temp file


def test_write_private_replaces_a_file_that_was_readable_by_others(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    target.chmod(0o644)
    write_private(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_store_that_is_not_json_is_a_config_error(store: TrustStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read the MCP trust store"):
        store.approved(spec("time", {"command": "mcp-server-time"}))
    store.path.write_text("[]")
    with pytest.raises(ConfigError, match="not a JSON object"):
        store.approved(spec("time", {"command": "mcp-server-time"}))


def test_data_dir_prefers_agentcontext_home_then_xdg_data_home_then_home(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    assert data_dir({"HOME": home}) == Path(home) / ".local" / "share" / "agentcontext"
    assert data_dir({"HOME": home, "XDG_DATA_HOME": "/xdg"}) == Path("/xdg/agentcontext")
    assert data_dir({"HOME": home, "XDG_DATA_HOME": "/xdg", "AGENTCONTEXT_HOME": "/explicit"}) == Path("/explicit")
    assert TrustStore.default({"HOME": home}).path == Path(home) / ".local" / "share" / "agentcontext" / "trust.json"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_an_unapproved_server_is_disabled_and_never_started(
    tmp_path: Path, home: Path, store: TrustStore
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "started"
    servers = {
        "approved": {"command": sys.executable, "args": [misbehaving.__file__, "fine"]},
        "stranger": {"command": "sh", "args": ["-c", f"touch {marker}; exec sleep 30"]},
    }
    parsed = parse(json.dumps({"mcpServers": servers}).encode(), str(work / ".mcp.json"), {})
    store.approve([launched(s, work, home) for s in parsed.servers if s.name == "approved"])
    settings = test_config(work, home=home, settings={"mcp.connect_timeout": 3, "mcp.call_timeout": 2}).mcp
    async with UpstreamManager(settings, work_dir=str(work), environ=isolated_environ(home), store=store) as manager:
        with anyio.fail_after(10):
            await manager.reload(parsed.servers)
        statuses = {s.name: s for s in manager.statuses()}
        assert [name for name, _, _ in manager.tools()] == ["approved__echo", "approved__env", "approved__pid"], (
            statuses
        )
        with pytest.raises(PendingApproval, match='MCP server "stranger" is pending approval: approve "stranger"'):
            await manager.call_tool("stranger__anything", {})
        assert [name for name, _ in manager.pending()] == ["stranger"]
    stranger = statuses["stranger"]
    assert stranger.state == "pending"
    assert stranger.error and stranger.error.startswith('pending approval: approve "stranger" in the dashboard or run')
    assert stranger.resource().status is Status.DISABLED
    assert statuses["approved"].state == "connected"
    assert not marker.exists()
