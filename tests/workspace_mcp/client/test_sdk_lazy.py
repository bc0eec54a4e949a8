"""The MCP SDK (about 0.6 s of CPU to import) is loaded by a workspace agent only when a server of its
``.mcp.json`` is to start: not at start, and not while every server waits for approval.

Checked in a fresh interpreter (this one has imported the SDK already): the agent's whole service
imported, then its MCP manager asked to run a server that waits for approval, then one the user
approved, whose tool is called.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.mcp_servers import misbehaving

SCRIPT = r"""
import json, sys
from pathlib import Path
import anyio

def sdk_loaded():
    return any(name == "mcp" or name.startswith(("mcp.", "mcp_types")) for name in sys.modules)

seen = {}
import agentcontext.agent.service  # everything `agentcontext agent` imports before it serves
seen["the agent's service imported"] = sdk_loaded()

from agentcontext.testing import isolated_environ, launched, test_config
from agentcontext.workspace_mcp.client.upstream import UpstreamManager
from agentcontext.workspace_mcp.config import parse
from agentcontext.workspace_mcp.trust import TrustStore

tmp, server = Path(sys.argv[1]), sys.argv[2]
work, home = tmp / "work", tmp / "home"
work.mkdir()
home.mkdir()
entries = {"stranger": {"command": sys.executable, "args": [server, "fine"]}}
pending = parse(json.dumps({"mcpServers": entries}).encode(), str(work / ".mcp.json"), {}).servers
entries["approved"] = {"command": sys.executable, "args": [server, "fine"]}
both = parse(json.dumps({"mcpServers": entries}).encode(), str(work / ".mcp.json"), {}).servers
store = TrustStore(tmp / "data" / "trust.json")
store.approve([launched(s, work, home) for s in both if s.name == "approved"])
settings = test_config(work, home=home, settings={"mcp.connect_timeout": 10}).mcp

async def main():
    async with UpstreamManager(settings, work_dir=str(work), environ=isolated_environ(home), store=store) as manager:
        await manager.reload(pending)
        seen["a server waiting for approval"] = [[s.name, s.state] for s in manager.statuses()], sdk_loaded()
        await manager.reload(both)
        states = sorted([s.name, s.state] for s in manager.statuses())
        seen["an approved server started"] = states, sdk_loaded()
        outcome = await manager.call_tool("approved__echo", {"text": "hi"})
        seen["its tool called"] = outcome.to_dict()

anyio.run(main)
print(json.dumps(seen))
"""


def test_an_agent_imports_the_mcp_sdk_only_when_an_approved_server_starts(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), misbehaving.__file__],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen == {
        "the agent's service imported": False,
        "a server waiting for approval": [[["stranger", "pending"]], False],
        "an approved server started": [[["approved", "connected"], ["stranger", "pending"]], True],
        "its tool called": {"content": [{"type": "text", "text": "hi"}], "is_error": False},
    }
