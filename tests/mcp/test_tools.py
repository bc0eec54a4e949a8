"""The MCP tools end to end through the official SDK client, in memory.

Codex Free's tool tests (codex-skills.md D: ``skills_list_*``, ``skills_read_*``,
``project_doc_*``, ``agent_brief_*``) with our texts, both protocol eras, the per-session
rebuild of the instructions, and errors as ``isError`` results rather than exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import mcp.types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.tools import SKILLS_DISABLED, Limits
from agentcontext.mcp.workspace import Workspace
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config
from agentcontext.views.brief import NO_DOC

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
DEPLOY = skill_md("deploy", "Ship a release", body="\nStep one.\n")
SKILLS = ".agents/skills"
NO_DOC_TOOL_TEXT = (
    "No AGENTS.md found between the project root and the working directory. The project states no "
    "conventions of its own; follow the ones already in the conversation."
)


def serve(
    work_dir: Path, home: Path, settings: Mapping[str, Any] | None = None, limits: Limits | None = None
) -> ContextServer:
    config = test_config(work_dir, home=home, settings=settings)
    return ContextServer(Workspace(str(work_dir), config=config, environ=isolated_environ(home)), limits)


def project(root: Path, files: Mapping[str, str | bytes] | None = None) -> Path:
    return make_workspace(root, {".git/": "", **(files or {})})


def text(result: types.CallToolResult) -> str:
    blocks = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert len(blocks) == len(result.content) == 1
    return blocks[0]


async def call(server: ContextServer, tool: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    async with Client(server, mode="legacy") as client:
        return await client.call_tool(tool, arguments or {})


# skills_list


@MODES
async def test_skills_list_gives_name_reason_path(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    path = str(tmp_path / SKILLS / "deploy" / "SKILL.md")
    async with Client(serve(tmp_path, home), mode=mode) as client:
        result = await client.call_tool("skills_list", {})
    assert result.is_error is False
    expected = (
        "1 skill available. Read one with skills_read before acting on it — the description says when a skill "
        f"applies, the body says what to do.\n\n- deploy (repo) — Ship a release\n  {path}"
    )
    assert text(result) == expected
    assert result.structured_content == {
        "skills": [{"name": "deploy", "description": "Ship a release", "scope": "repo", "path": path}],
        "not_offered": [],
        "content": expected,
    }


async def test_skills_list_counts_skills_in_name_order(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/zeta/SKILL.md": skill_md("zeta", "Z"), f"{SKILLS}/beta/SKILL.md": skill_md("beta")})
    result = await call(serve(tmp_path, home), "skills_list")
    assert text(result).startswith("2 skills available.")
    assert result.structured_content is not None
    assert [s["name"] for s in result.structured_content["skills"]] == ["beta", "zeta"]


async def test_skills_list_names_dirs_searched_when_none(tmp_path: Path, home: Path) -> None:
    project(tmp_path)
    result = await call(serve(tmp_path, home), "skills_list")
    lines = text(result).split("\n")
    assert lines[:3] == [
        "No skills found. A skill is a directory holding a SKILL.md whose frontmatter carries a name and a "
        "description.",
        "",
        "Searched:",
    ]
    assert f"- {tmp_path / SKILLS} (repo)" in lines
    assert f"- {home / SKILLS} (user)" in lines
    assert result.is_error is False
    assert result.structured_content == {"skills": [], "not_offered": [], "content": text(result)}


async def test_skills_list_reports_skill_it_could_not_offer(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/broken/SKILL.md": "---\nname: broken\n---\n", f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    make_workspace(home, {f"{SKILLS}/Deploy/SKILL.md": skill_md("Deploy", "A personal one")})
    winner = str(tmp_path / SKILLS / "deploy" / "SKILL.md")
    not_offered = [
        {"path": str(tmp_path / SKILLS / "broken" / "SKILL.md"), "reason": "missing field `description`"},
        {"path": str(home / SKILLS / "Deploy" / "SKILL.md"), "reason": f"shadowed by the repo skill at {winner}"},
    ]
    result = await call(serve(tmp_path, home), "skills_list")
    assert result.structured_content is not None
    assert sorted(result.structured_content["not_offered"], key=lambda n: str(n["path"])) == sorted(
        not_offered, key=lambda n: n["path"]
    )
    section = text(result).split("\n\nNot offered:\n", 1)[1].split("\n")
    assert sorted(section) == sorted(f"- {n['path']}: {n['reason']}" for n in not_offered)
    assert [s["name"] for s in result.structured_content["skills"]] == ["deploy"]


async def test_skills_list_lists_what_it_could_not_offer_even_when_nothing_is_offered(
    tmp_path: Path, home: Path
) -> None:
    project(tmp_path, {f"{SKILLS}/broken/SKILL.md": "no frontmatter\n"})
    body = text(await call(serve(tmp_path, home), "skills_list"))
    assert body.startswith("No skills found.")
    path = tmp_path / SKILLS / "broken" / "SKILL.md"
    assert body.endswith(f"\n\nNot offered:\n- {path}: missing YAML frontmatter delimited by ---")


@MODES
async def test_skills_list_says_so_when_disabled(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    async with Client(serve(tmp_path, home, {"skills.enabled": False}), mode=mode) as client:
        result = await client.call_tool("skills_list", {})
    assert result.is_error is False
    assert text(result) == SKILLS_DISABLED == "Skills are disabled by the server configuration. Nothing was searched."
    assert result.structured_content == {"skills": [], "not_offered": [], "content": SKILLS_DISABLED}


# skills_read


@MODES
async def test_skills_read_returns_body_and_points_at_package(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, f"{SKILLS}/deploy/scripts/release.sh": "echo hi\n"})
    path = tmp_path / SKILLS / "deploy" / "SKILL.md"
    async with Client(serve(tmp_path, home), mode=mode) as client:
        result = await client.call_tool("skills_read", {"name": "deploy"})
    expected = (
        f"deploy — {path}\n\n{DEPLOY}\n\nOther files in this skill, readable with resource=<path>: scripts/release.sh"
    )
    assert result.is_error is False
    assert text(result) == expected
    assert result.structured_content == {
        "name": "deploy",
        "path": str(path),
        "content": expected,
        "files": ["scripts/release.sh"],
    }


async def test_skills_read_reads_file_by_relative_path(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, f"{SKILLS}/deploy/references/api.md": "the reference\n"})
    server = serve(tmp_path, home)
    path = tmp_path / SKILLS / "deploy" / "references" / "api.md"
    for resource in ("references/api.md", "./references/api.md", "references\\api.md"):
        result = await call(server, "skills_read", {"name": "deploy", "resource": resource})
        assert text(result) == f"deploy — {path}\n\nthe reference\n"
        assert result.is_error is False


async def test_skills_read_refuses_resource_outside_skill(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, "secret.txt": "no-such-luck"})
    result = await call(serve(tmp_path, home), "skills_read", {"name": "deploy", "resource": "../../../secret.txt"})
    assert result.is_error is True
    assert text(result) == "Resource must be a path inside the skill: ../../../secret.txt"
    assert result.structured_content is None


async def test_skills_read_refuses_an_empty_resource_as_codex_free_does(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    server = serve(tmp_path, home)
    result = await call(server, "skills_read", {"name": "deploy", "resource": ""})
    assert (result.is_error, text(result)) == (True, "Resource must be a path inside the skill: ")
    result = await call(server, "skills_read", {"name": "deploy"})  # absent still means SKILL.md
    assert result.is_error is False


async def test_skills_read_refuses_a_link_that_leaves_the_skill(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, "secret.txt": "no-such-luck"})
    (tmp_path / SKILLS / "deploy" / "notes.md").symlink_to(tmp_path / "secret.txt")
    result = await call(serve(tmp_path, home), "skills_read", {"name": "deploy", "resource": "notes.md"})
    assert (result.is_error, text(result)) == (True, "Resource must be a path inside the skill: notes.md")
    listing = await call(serve(tmp_path, home), "skills_read", {"name": "deploy"})
    assert "notes.md" not in text(listing)


async def test_skills_read_names_available_when_skill_not_found(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    result = await call(serve(tmp_path, home), "skills_read", {"name": "nope"})
    assert (result.is_error, text(result)) == (True, "No skill named nope. Available: deploy.")


async def test_skills_read_says_no_skills_are_installed(tmp_path: Path, home: Path) -> None:
    project(tmp_path)
    result = await call(serve(tmp_path, home), "skills_read", {"name": "deploy"})
    assert (result.is_error, text(result)) == (True, "No skill named deploy. No skills are installed.")


async def test_skills_read_reports_missing_resource(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, f"{SKILLS}/deploy/references/": ""})
    server = serve(tmp_path, home)
    result = await call(server, "skills_read", {"name": "deploy", "resource": "references/api.md"})
    assert (result.is_error, text(result)) == (True, "deploy has no file at references/api.md.")
    folder = await call(server, "skills_read", {"name": "deploy", "resource": "references"})
    assert (folder.is_error, text(folder)) == (True, "deploy has no file at references.")


async def test_skills_read_refuses_a_binary_file(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, f"{SKILLS}/deploy/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00"})
    result = await call(serve(tmp_path, home), "skills_read", {"name": "deploy", "resource": "logo.png"})
    assert (result.is_error, text(result)) == (True, "deploy: logo.png: binary file: it cannot be shown as text")


@MODES
async def test_skills_read_windows_long_body(tmp_path: Path, home: Path, mode: str) -> None:
    lines = "\n".join(f"line{i}" for i in range(1, 41))
    project(tmp_path, {f"{SKILLS}/long/SKILL.md": f"---\nname: long\ndescription: A long one\n---\n\n{lines}\n"})
    (tmp_path / SKILLS / "long" / "extra.md").write_text("x", encoding="utf-8")
    server = serve(tmp_path, home, {"mcp_server.max_file_lines": 10}, Limits(max_lines=10))
    async with Client(server, mode=mode) as client:
        first = text(await client.call_tool("skills_read", {"name": "long"}))
        second = text(await client.call_tool("skills_read", {"name": "long", "offset": 10}))
        last = text(await client.call_tool("skills_read", {"name": "long", "offset": 40, "limit": 6}))
    assert first.endswith("\n\n(showing lines 1-10 of 46 — call again with offset=10 for the rest)")
    assert "line5\n" in first and "line6" not in first
    assert "Other files in this skill" not in first  # only after a complete SKILL.md
    assert second.split("\n")[2:12] == [f"line{i}" for i in range(6, 16)]
    assert second.endswith("(showing lines 11-20 of 46 — call again with offset=20 for the rest)")
    assert last.endswith("line36\nline37\nline38\nline39\nline40\n\n\n(showing lines 41-46 of 46)")


async def test_skills_read_cuts_at_the_byte_budget_and_says_so(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY, f"{SKILLS}/deploy/big.txt": "abcdefghij\n" * 5})
    server = serve(tmp_path, home, limits=Limits(max_bytes=25))
    body = text(await call(server, "skills_read", {"name": "deploy", "resource": "big.txt"}))
    assert body.endswith(
        "\n\nabcdefghij\nabcdefghij\n\n"
        "(showing lines 1-2 of 6, cut at the byte budget — call again with offset=2 for the rest)"
    )


async def test_skills_read_ignores_offsets_and_limits_that_are_not_whole_numbers(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    server = serve(tmp_path, home)
    whole = text(await call(server, "skills_read", {"name": "deploy"}))
    for extra in ({"offset": -3}, {"limit": -3}, {"offset": "abc"}, {"limit": 2.5}, {"offset": "²"}, {"limit": None}):
        result = await call(server, "skills_read", {"name": "deploy", **extra})
        assert (result.is_error, text(result)) == (False, whole), extra
    windowed = text(await call(server, "skills_read", {"name": "deploy", "offset": "2", "limit": 1.0}))
    assert windowed.endswith(
        "\n\ndescription: Ship a release\n\n(showing lines 3-3 of 7 — call again with offset=3 for the rest)"
    )


async def test_skills_read_finds_a_skill_whatever_the_case(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/Code-Review/SKILL.md": skill_md("Code-Review", "Review code")})
    result = await call(serve(tmp_path, home), "skills_read", {"name": " code-review "})
    assert result.is_error is False
    assert text(result).startswith(f"Code-Review — {tmp_path / SKILLS / 'Code-Review' / 'SKILL.md'}\n\n---\n")


async def test_skills_read_errors_when_disabled(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    result = await call(serve(tmp_path, home, {"skills.enabled": False}), "skills_read", {"name": "deploy"})
    assert (result.is_error, text(result)) == (True, "Skills are disabled by the server configuration.")


async def test_skills_read_needs_a_name(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    server = serve(tmp_path, home)
    for arguments in ({}, {"name": "  "}, {"name": None}):
        result = await call(server, "skills_read", arguments)
        assert (result.is_error, text(result)) == (True, "A skill name is required."), arguments


# get_project_doc


@MODES
async def test_project_doc_tool_returns_text_and_paths(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {"AGENTS.md": "Run bun test before committing."})
    path = str(tmp_path / "AGENTS.md")
    async with Client(serve(tmp_path, home), mode=mode) as client:
        result = await client.call_tool("get_project_doc", {})
    assert result.is_error is False
    assert text(result) == f"Project instructions from:\n{path}\n\nRun bun test before committing."
    assert result.structured_content == {
        "files": [{"path": path, "truncated": False}],
        "content": "Run bun test before committing.",
    }


async def test_project_doc_render_names_sources_outermost_first(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {"AGENTS.md": "Use tabs.", "crate/AGENTS.md": "Crate rules."})
    result = await call(serve(tmp_path / "crate", home), "get_project_doc")
    outer, inner = tmp_path / "AGENTS.md", tmp_path / "crate" / "AGENTS.md"
    assert text(result) == f"Project instructions from:\n{outer}\n{inner}\n\nUse tabs.\n\nCrate rules."


async def test_project_doc_render_flags_truncated(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {"AGENTS.md": "Use tabs everywhere."})
    path = str(tmp_path / "AGENTS.md")
    result = await call(serve(tmp_path, home, {"project_doc.max_bytes": 5}), "get_project_doc")
    assert text(result) == f"Project instructions from:\n{path} (truncated at the byte budget)\n\nUse t"
    assert result.structured_content == {"files": [{"path": path, "truncated": True}], "content": "Use t"}


@MODES
async def test_project_doc_tool_not_error_when_no_doc(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path)
    async with Client(serve(tmp_path, home), mode=mode) as client:
        result = await client.call_tool("get_project_doc", {})
    assert result.is_error is False
    assert text(result) == NO_DOC_TOOL_TEXT
    assert result.structured_content == {"files": [], "content": ""}


async def test_project_doc_tool_structured_keys_match_schema(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {"AGENTS.md": "Use tabs."})
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("get_project_doc", {})
    schema = tools["get_project_doc"].output_schema
    assert schema is not None and result.structured_content is not None
    assert sorted(result.structured_content) == sorted(schema["properties"]) == ["content", "files"]


# get_agent_brief and the instructions


@MODES
async def test_agent_brief_returns_exactly_the_instructions(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {"AGENTS.md": "Run bun test before committing.", f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    async with Client(serve(tmp_path, home), mode=mode) as client:
        result = await client.call_tool("get_agent_brief", {})
        instructions = client.instructions
    assert instructions is not None
    assert result.is_error is False
    assert text(result) == instructions
    assert result.structured_content == {"content": instructions}
    assert "- deploy (repo) — Ship a release" in instructions
    assert instructions.index("## Skills") < instructions.index("--- project-doc ---")
    assert instructions.endswith("--- project-doc ---\n\nRun bun test before committing.")


async def test_agent_brief_works_without_agents_md(tmp_path: Path, home: Path) -> None:
    project(tmp_path)
    result = await call(serve(tmp_path, home), "get_agent_brief")
    assert result.is_error is False
    assert text(result).endswith(NO_DOC)
    assert "--- project-doc ---" not in text(result)


async def test_agent_brief_takes_no_arguments_and_single_project_tools_are_read_only(
    tmp_path: Path, home: Path
) -> None:
    project(tmp_path)
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["get_agent_brief", "get_instructions_for", "get_project_doc", "skills_list", "skills_read"]
    assert tools["get_agent_brief"].input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert tools["skills_read"].input_schema["required"] == ["name"]
    for tool in tools.values():
        assert tool.annotations is not None
        assert (tool.annotations.read_only_hint, tool.annotations.open_world_hint) == (True, False)


@MODES
async def test_each_new_session_sees_edits_made_since_the_last_one(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path, {"AGENTS.md": "Old rules."})
    server = serve(tmp_path, home)
    async with Client(server, mode=mode) as first:
        before = first.instructions
        assert before is not None and before.endswith("Old rules.")
        assert "## Skills" not in before
        (tmp_path / "AGENTS.md").write_text("New rules.", encoding="utf-8")
        make_workspace(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
        async with Client(server, mode=mode) as second:
            after = second.instructions
        doc = await first.call_tool("get_project_doc", {})
        listing = await first.call_tool("skills_list", {})
        assert first.instructions == before  # a session keeps the instructions it started with
    assert after is not None
    assert after.endswith("--- project-doc ---\n\nNew rules.")
    assert "- deploy (repo) — Ship a release" in after
    assert text(doc).endswith("\n\nNew rules.")
    assert text(listing).startswith("1 skill available.")


# Errors are results, never exceptions.


@MODES
async def test_an_unknown_tool_is_an_error_result(tmp_path: Path, home: Path, mode: str) -> None:
    project(tmp_path)
    async with Client(serve(tmp_path, home), mode=mode) as client:
        unknown = await client.call_tool("nope", {})
        multi_only = await client.call_tool("list_projects", {})
    assert (unknown.is_error, text(unknown), unknown.structured_content) == (True, "Unknown tool: nope", None)
    assert (multi_only.is_error, text(multi_only)) == (True, "Unknown tool: list_projects")


async def test_arguments_of_the_wrong_type_are_error_results(tmp_path: Path, home: Path) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    async with Client(serve(tmp_path, home), mode="legacy") as client:
        no_arguments = await client.call_tool("skills_read", None)
        number_name = await client.call_tool("skills_read", {"name": 5})
        list_name = await client.call_tool("skills_read", {"name": ["deploy"]})
        number_resource = await client.call_tool("skills_read", {"name": "deploy", "resource": 7})
        extra = await client.call_tool("get_project_doc", {"unexpected": True})
    assert (no_arguments.is_error, text(no_arguments)) == (True, "A skill name is required.")
    assert (number_name.is_error, text(number_name)) == (True, "No skill named 5. Available: deploy.")
    assert (list_name.is_error, text(list_name)) == (True, "No skill named ['deploy']. Available: deploy.")
    assert (number_resource.is_error, text(number_resource)) == (True, "deploy has no file at 7.")
    assert (extra.is_error, text(extra)) == (False, NO_DOC_TOOL_TEXT)


class RawCallParams(types.RequestParams):
    name: str
    arguments: Any = None


class RawCall(types.Request[RawCallParams, Literal["tools/call"]]):
    """A ``tools/call`` whose arguments may be anything, as a careless client would send."""

    method: Literal["tools/call"] = "tools/call"


@MODES
async def test_arguments_that_are_not_an_object_are_refused_before_any_tool_runs_and_the_session_survives(
    tmp_path: Path, home: Path, mode: str
) -> None:
    project(tmp_path, {f"{SKILLS}/deploy/SKILL.md": DEPLOY})
    async with Client(serve(tmp_path, home), mode=mode) as client:
        for arguments in (["deploy"], "deploy", 5):
            request = RawCall(params=RawCallParams(name="skills_read", arguments=arguments))
            with pytest.raises(MCPError) as caught:
                await client.session.send_request(request, types.CallToolResult)
            assert caught.value.error.code == types.INVALID_PARAMS
        after = await client.call_tool("skills_read", {"name": "deploy"})
    assert after.is_error is False


# Hostile resource values.

_SECRET = "TOP-SECRET-7d1c"
_RESOURCE_PIECES = st.sampled_from(
    ["..", ".", "/", "\\", ":", "\0", "C:", "%2e%2e", "secret.txt", "leak", "deploy", "SKILL.md", "~", "é"]
)


@pytest.fixture
def hostile_server(tmp_path: Path, home: Path) -> ContextServer:
    project(
        tmp_path,
        {
            f"{SKILLS}/deploy/SKILL.md": DEPLOY,
            f"{SKILLS}/deploy/notes.md": "notes",
            f"{SKILLS}/secret.txt": _SECRET,
            "secret.txt": _SECRET,
        },
    )
    (tmp_path / SKILLS / "deploy" / "leak").symlink_to(tmp_path / SKILLS / "secret.txt")
    return serve(tmp_path, home)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(resource=st.lists(_RESOURCE_PIECES | st.text(max_size=4), max_size=8).map("".join))
async def test_a_hostile_resource_is_never_a_protocol_error_and_never_leaks_a_neighbouring_file(
    hostile_server: ContextServer, resource: str
) -> None:
    async with Client(hostile_server, mode="legacy") as client:
        result = await client.call_tool("skills_read", {"name": "deploy", "resource": resource})
    assert _SECRET not in text(result)
    assert result.is_error is not None
