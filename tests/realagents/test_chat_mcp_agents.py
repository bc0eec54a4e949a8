"""The real agents pointed at a chat's MCP endpoint (issue 14), in a loopback-only namespace.

``chat_stack.py`` runs the control plane, a workspace agent and both binaries inside
``unshare -n``; each agent is configured the way docs/chat-mcp.md says (``claude mcp add
--transport http`` with ``MCP_CONNECTION_NONBLOCKING=false`` and ``MCP_CONNECT_TIMEOUT_MS``,
Codex's ``[mcp_servers]`` with ``required = true``; Gemini CLI, OpenCode and Copilot CLI in
their own config files, the token read from the environment) with alice's token, each through
a proxy that holds its first connection 2.5 s: left to their defaults, Claude Code and Codex
would send their first request without our server. What each sent to its fake model API must carry our tools and
alice's pinned context, and nothing of bob's chat.

Observed (Codex 0.171.0): Codex defers every MCP tool behind a namespace line
``- mcp__<server>: <first line of the server's instructions>`` and loads the tool schemas
only when the model searches, so its first request names our namespace, not each tool.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.realagents.chat_stack import ALICE_RULE, ALICE_SKILL, BOB_SECRET, BOB_SKILL
from tests.realagents.harness import skip_unless_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
STACK = Path(__file__).with_name("chat_stack.py")


@pytest.fixture(scope="module")
def sent(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    skip_unless_available()
    scratch = tmp_path_factory.mktemp("chat-agents")
    done = subprocess.run(
        ["unshare", "-n", sys.executable, str(STACK), str(scratch)], capture_output=True, timeout=280, text=True
    )
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    output: dict[str, Any] = json.loads(done.stdout)
    assert output["interfaces"] == ["lo"]
    return output


def request_text(output: dict[str, Any], agent: str) -> str:
    (result,) = [r for r in output["results"] if r["id"] == agent]
    assert result["exit"] == 0, result["stderr"]
    models = [r for r in result["requests"] if r["method"] == "POST"]
    assert models, f"{agent} sent no model request"
    return json.dumps(models)


def test_claude_code_lists_the_chats_tools_and_its_pinned_context(sent: dict[str, Any]) -> None:
    text = request_text(sent, "claude")
    tools = set(re.findall(r"mcp__agentcontext__[A-Za-z0-9_]+", text))
    assert {"mcp__agentcontext__read_skill", "mcp__agentcontext__refresh_context"} <= tools, text[-3000:]
    assert "# MCP Server Instructions" in text and "## agentcontext" in text, text[-3000:]
    assert json.dumps(ALICE_RULE)[1:-1] in text  # the pinned AGENTS.md, as the server's instructions
    assert ALICE_SKILL in text, "alice's personal skill is in her chat's prompt"


def test_codex_names_the_chats_tool_namespace_from_our_instructions(sent: dict[str, Any]) -> None:
    text = request_text(sent, "codex")
    assert "- mcp__agentcontext: <workspace-context>" in text


@pytest.mark.parametrize("agent", ["gemini", "opencode", "copilot"])
def test_gemini_opencode_and_copilot_configured_as_the_docs_say_offer_the_chats_tools(
    sent: dict[str, Any], agent: str
) -> None:
    text = request_text(sent, agent)
    assert "read_skill" in text and "refresh_context" in text, text[-3000:]


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "opencode", "copilot"])
def test_nothing_of_another_users_chat_reaches_the_model(sent: dict[str, Any], agent: str) -> None:
    text = request_text(sent, agent)
    assert BOB_SECRET not in text
    assert BOB_SKILL not in text


def test_the_workspace_endpoint_made_one_chat_for_alice_only(sent: dict[str, Any]) -> None:
    titles = [chat["title"] for chat in sent["alice_chats"]]
    assert titles == ["MCP session"]  # both agents resumed the same chat; bob's chat is not hers
