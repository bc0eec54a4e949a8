"""A real third-party client: the MCP Inspector CLI (npm), over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from agentcontext.testing import make_workspace, skill_md
from tests.mcp.conftest import HttpServer, agentcontext_command, inspector


def inspect(target: list[str], *args: str, home: Path, era: str | None = None) -> dict[str, Any]:
    command = [str(inspector()), "--cli", "--format", "json", "-q"]
    if era:
        command += ["--protocol-era", era]
    result = subprocess.run(
        [*command, *target, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(home)},
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no JSON from the Inspector: {result.stdout!r} {result.stderr!r}"
    data: dict[str, Any] = json.loads(lines[-1])
    return data


def workspace(root: Path) -> Path:
    return make_workspace(
        root,
        {
            ".git/": "",
            "AGENTS.md": "Run the tests with pytest.",
            ".agents/skills/release/SKILL.md": skill_md("release", "Cut a release", body="Steps.\n", license="MIT"),
            ".agents/skills/release/references/versioning.md": "Use semver.\n",
            ".agents/skills/release/scripts/tag.sh": '#!/bin/sh\ngit tag "$1"\n',
        },
    )


def stdio(work: Path) -> list[str]:
    return [*agentcontext_command("mcp", "--work-dir", str(work))]


def test_the_inspector_lists_our_tools_over_stdio(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "repo")
    tools = inspect(stdio(work), "--method", "tools/list", home=home)["result"]["tools"]
    assert [tool["name"] for tool in tools] == [
        "get_project_doc",
        "skills_list",
        "skills_read",
        "get_agent_brief",
        "get_instructions_for",
    ]


def test_the_inspector_calls_get_project_doc_and_skills_read_over_stdio(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "repo")
    doc = inspect(stdio(work), "--method", "tools/call", "--tool-name", "get_project_doc", home=home)["result"]
    assert doc["structuredContent"] == {
        "files": [{"path": str(work / "AGENTS.md"), "truncated": False}],
        "content": "Run the tests with pytest.",
    }
    read = inspect(
        stdio(work),
        "--method",
        "tools/call",
        "--tool-name",
        "skills_read",
        "--tool-arg",
        "name=release",
        "--tool-arg",
        "resource=references/versioning.md",
        home=home,
    )["result"]
    assert read["isError"] is False
    assert read["content"][0]["text"].endswith("Use semver.\n")


def test_the_inspector_calls_our_tools_over_http_with_the_token(http_server: HttpServer, home: Path) -> None:
    workspace(http_server.work)
    target = [http_server.url, "--header", f"Authorization: Bearer {http_server.token}"]
    doc = inspect(target, "--method", "tools/call", "--tool-name", "get_project_doc", home=home)["result"]
    assert doc["structuredContent"]["content"] == "Run the tests with pytest."
    read = inspect(
        target, "--method", "tools/call", "--tool-name", "skills_read", "--tool-arg", "name=release", home=home
    )
    assert "Other files in this skill" in read["result"]["content"][0]["text"]


def test_the_inspector_verifies_our_skills_extension_on_the_modern_era(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "repo")
    report = inspect(stdio(work), "--method", "skills/list", "--verify", home=home, era="modern")
    assert report.get("outcome") == "verified", report
    statuses = {f["uri"]: f["status"] for f in report["files"]}
    assert statuses == {
        "skill://release/SKILL.md": "verified",
        "skill://release/references/versioning.md": "verified",
        "skill://release/scripts/tag.sh": "verified",
    }


def test_the_inspector_sees_the_skills_extension_declared_in_both_eras(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "repo")
    modern = inspect(stdio(work), "--method", "initialize", home=home, era="modern")["result"]
    assert modern["protocolVersion"] == "2026-07-28"
    assert modern["capabilities"]["extensions"] == {"io.modelcontextprotocol/skills": {}}
    handshake = inspect(stdio(work), "--method", "initialize", home=home, era="legacy")["result"]
    assert handshake["protocolVersion"] == "2025-11-25"  # its capabilities have no ``extensions``
    assert handshake["capabilities"]["experimental"] == {"io.modelcontextprotocol/skills": {}}


def test_the_inspector_reads_a_skill_file_as_a_resource(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "repo")
    result = inspect(stdio(work), "--method", "resources/read", "--uri", "skill://release/scripts/tag.sh", home=home)
    assert result["result"]["contents"][0]["text"] == '#!/bin/sh\ngit tag "$1"\n'
