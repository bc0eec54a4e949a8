"""The real agents with ``agentcontext mcp`` as their stdio server, each configured as docs/mcp-server.md
says, one after another in a loopback-only namespace: the turn each sends its model carries our tools.

Left to their defaults, Claude Code's ``-p`` and Codex's ``exec`` send their first request without a
server that is not ready within a second or two, and ``agentcontext mcp`` answers ``initialize`` about
1.4 s after it starts on a quiet machine (most of it the MCP SDK's import): on this loaded machine both
went without it. Gemini CLI's ``-p`` offers no tool that would ask for approval, so none of an
untrusted server's. Observed on Claude Code 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0. Configured
as the docs say (Claude Code: ``MCP_CONNECTION_NONBLOCKING=false`` and ``MCP_CONNECT_TIMEOUT_MS``, for
waiting it gives up after 4-6 s; Codex: ``required = true``; Gemini CLI: ``"trust": true``), each sends
our tools; OpenCode and Copilot CLI do with their defaults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.realagents.chat_stack import write_config
from tests.realagents.harness import AGENTS, DRIVER, binary, skip_unless_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
RULE = "STDIO-RULE-5d1e: every migration gets a down step."
CONSOLE_SCRIPT = Path(sys.executable).with_name("agentcontext")  # what the docs' "command": "agentcontext" runs


def configured(agent: str, home: Path, serve: list[str]) -> dict[str, Any]:
    """What of ``agent``'s job makes ``serve`` its MCP server, as docs/mcp-server.md says."""
    server = {"command": serve[0], "args": serve[1:]}
    if agent == "claude":
        add = [str(binary("claude")), "mcp", "add", "--scope", "user", "agentcontext", "--", *serve]
        return {"env": {"MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": "60000"}, "setup": [add]}
    if agent == "codex":
        table = {"command": json.dumps(serve[0]), "args": json.dumps(serve[1:]), "required": "true"}
        return {
            "args": [arg for key, value in table.items() for arg in ("-c", f"mcp_servers.agentcontext.{key}={value}")]
        }
    if agent == "gemini":
        write_config(home / ".gemini" / "settings.json", {"mcpServers": {"agentcontext": {**server, "trust": True}}})
    elif agent == "opencode":
        write_config(
            home / ".config" / "opencode" / "opencode.json",
            {"mcp": {"agentcontext": {"type": "local", "command": serve}}},
        )
    elif agent == "copilot":
        write_config(
            home / ".copilot" / "mcp-config.json",
            {"mcpServers": {"agentcontext": {**server, "type": "local", "tools": ["*"]}}},
        )
    return {}


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each agent's model requests of one ``hi`` turn, as one JSON text, in a project with an AGENTS.md."""
    skip_unless_available()
    scratch = tmp_path_factory.mktemp("mcp-agents")
    work = scratch / "work"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text(f"# Rules\n\n{RULE}\n")
    serve = [str(CONSOLE_SCRIPT), "mcp"] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "agentcontext", "mcp"]
    jobs: list[dict[str, Any]] = []
    for agent in AGENTS:
        home = scratch / f"{agent}-home"
        home.mkdir()
        job: dict[str, Any] = {"id": agent, "agent": agent, "binary": str(binary(agent)), "cwd": str(work)}
        job |= {"home": str(home), "env": {}} | configured(agent, home, serve)
        if agent == "copilot":  # its bundle unpacked once, outside its throwaway HOME
            job["env"]["COPILOT_PKG_CACHE_HOME"] = str(scratch / "copilot-pkg")
        jobs.append(job)
    sent: dict[str, str] = {}
    for job in jobs:  # one at a time: five agents and their five servers starting at once on 2 CPUs outlast some waits
        job_file = scratch / f"{job['id']}-job.json"
        job_file.write_text(json.dumps([job]))
        done = subprocess.run(
            ["unshare", "-n", sys.executable, str(DRIVER), str(job_file)],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
        )
        assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        output = json.loads(done.stdout)
        assert output["interfaces"] == ["lo"]
        (result,) = output["results"]
        assert result["exit"] == 0, result["stderr"]
        models = [r for r in result["requests"] if r["method"] == "POST"]
        assert models, f"{result['id']} sent no model request"
        sent[result["id"]] = json.dumps(models)
    return sent


def test_claude_code_run_as_the_docs_say_sends_our_tools_and_the_projects_rules(turns: dict[str, str]) -> None:
    text = turns["claude"]
    for tool in ("get_project_doc", "get_instructions_for", "skills_list", "skills_read"):
        assert f"mcp__agentcontext__{tool}" in text, text[-3000:]
    assert "# MCP Server Instructions" in text and "## agentcontext" in text, text[-3000:]
    assert RULE in text  # Claude Code reads no AGENTS.md: only our server's instructions bring it


def test_codex_run_as_the_docs_say_names_our_tool_namespace(turns: dict[str, str]) -> None:
    assert "- mcp__agentcontext: This server gives you the instructions" in turns["codex"]


@pytest.mark.parametrize("agent", ["gemini", "opencode", "copilot"])
def test_gemini_opencode_and_copilot_run_as_the_docs_say_offer_our_tools(turns: dict[str, str], agent: str) -> None:
    for tool in ("get_project_doc", "get_instructions_for", "skills_read"):
        assert tool in turns[agent], turns[agent][-3000:]
