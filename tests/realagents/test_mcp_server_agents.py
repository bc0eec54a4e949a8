"""The real Claude Code and Codex with ``agentcontext mcp`` as their stdio server, configured as
docs/mcp-server.md says, in a loopback-only namespace: their first model request carries our tools
and the project's rules.

Left to their defaults, both send their first request without a server that is not ready within a
second or two, and ``agentcontext mcp`` answers ``initialize`` about 1.4 s after it starts on a quiet
machine (most of it the MCP SDK's import): on this loaded machine both went without it (observed
on Claude Code 2.1.332 and Codex 0.171.0). Configured as the docs say (Claude Code:
``MCP_CONNECTION_NONBLOCKING=false``; Codex: ``required = true``), each waits for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.realagents.harness import BIN, DRIVER, skip_unless_available

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
RULE = "STDIO-RULE-5d1e: every migration gets a down step."
CONSOLE_SCRIPT = Path(sys.executable).with_name("agentcontext")  # what the docs' "command": "agentcontext" runs


@pytest.fixture(scope="module")
def first_requests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each agent's model requests, as one JSON text, after one ``hi`` turn in a project with an AGENTS.md."""
    skip_unless_available()
    scratch = tmp_path_factory.mktemp("mcp-agents")
    work = scratch / "work"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text(f"# Rules\n\n{RULE}\n")
    serve = [str(CONSOLE_SCRIPT), "mcp"] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "agentcontext", "mcp"]
    jobs: list[dict[str, Any]] = []
    for agent in ("claude", "codex"):
        (scratch / f"{agent}-home").mkdir()
        jobs.append({"id": agent, "agent": agent, "binary": str(BIN / agent), "cwd": str(work)})
        jobs[-1]["home"] = str(scratch / f"{agent}-home")
    jobs[0]["env"] = {"MCP_CONNECTION_NONBLOCKING": "false"}
    jobs[0]["setup"] = [[str(BIN / "claude"), "mcp", "add", "--scope", "user", "agentcontext", "--", *serve]]
    jobs[1]["args"] = ["-c", f"mcp_servers.agentcontext.command={json.dumps(serve[0])}"]
    jobs[1]["args"] += ["-c", f"mcp_servers.agentcontext.args={json.dumps(serve[1:])}"]
    jobs[1]["args"] += ["-c", "mcp_servers.agentcontext.required=true"]
    job_file = scratch / "jobs.json"
    job_file.write_text(json.dumps(jobs))
    done = subprocess.run(
        ["unshare", "-n", sys.executable, str(DRIVER), str(job_file)],
        capture_output=True,
        text=True,
        timeout=280,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
    )
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    output = json.loads(done.stdout)
    assert output["interfaces"] == ["lo"]
    sent: dict[str, str] = {}
    for result in output["results"]:
        assert result["exit"] == 0, result["stderr"]
        models = [r for r in result["requests"] if r["method"] == "POST"]
        assert models, f"{result['id']} sent no model request"
        sent[result["id"]] = json.dumps(models[0])
    return sent


def test_claude_code_run_as_the_docs_say_sends_our_tools_and_the_projects_rules_in_its_first_request(
    first_requests: dict[str, str],
) -> None:
    text = first_requests["claude"]
    for tool in ("get_project_doc", "get_instructions_for", "skills_list", "skills_read"):
        assert f"mcp__agentcontext__{tool}" in text, text[-3000:]
    assert "# MCP Server Instructions" in text and "## agentcontext" in text, text[-3000:]
    assert RULE in text  # Claude Code reads no AGENTS.md: only our server's instructions bring it


def test_codex_run_as_the_docs_say_names_our_tool_namespace_in_its_first_request(
    first_requests: dict[str, str],
) -> None:
    assert "- mcp__agentcontext: This server gives you the instructions" in first_requests["codex"]
