"""Multi-project mode: each session binds once to a folder under the access root, and sees only it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from mcp import Client
from mcp.types import CallToolResult, RequestParamsMeta, TextContent

from agentcontext.mcp.server import ContextServer
from agentcontext.mcp.workspace import Workspace
from agentcontext.testing import isolated_environ, make_workspace, skill_md


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.fixture
def access_root(tmp_path: Path) -> Path:
    """ROOT's parent holds rules and a skill that no bound session may ever read."""
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "AGENTS.md": "PARENT SECRET RULES",
            ".agents/skills/parent-skill/SKILL.md": skill_md("parent-skill", "PARENT SECRET SKILL"),
            "outside-the-roots/AGENTS.md": "OUTSIDE",
        },
    )
    root = make_workspace(
        tmp_path / "src",
        {
            "AGENTS.md": "ROOT RULES",
            "alpha/.git/": "",
            "alpha/AGENTS.md": "alpha rules",
            "alpha/.agents/skills/alpha-skill/SKILL.md": skill_md("alpha-skill", "Alpha things"),
            "beta/AGENTS.md": "beta rules",
            "beta/.agents/skills/beta-skill/SKILL.md": skill_md("beta-skill", "BETA SECRET SKILL"),
            "beta/secret.txt": "BETA SECRET FILE",
            ".hidden/AGENTS.md": "hidden",
            "a-file.txt": "not a project",
        },
    )
    (root / "escape").symlink_to(tmp_path / "outside-the-roots")
    return root


def server(root: Path, home: Path) -> ContextServer:
    return ContextServer(Workspace(str(root), multi_project=True, environ=isolated_environ(home)))


async def call(client: Client, tool: str, args: dict[str, Any] | None = None, /, **meta: Any) -> CallToolResult:
    return await client.call_tool(tool, args or {}, meta=cast(RequestParamsMeta, meta) if meta else None)


@pytest.mark.anyio
async def test_project_tools_require_a_selection_in_multi_project_mode(access_root: Path, home: Path) -> None:
    async with Client(server(access_root, home), mode="legacy") as client:
        assert client.instructions is not None
        assert "set_project_root" in client.instructions and str(access_root) in client.instructions
        assert "ROOT RULES" not in client.instructions
        result = await call(client, "get_project_doc")
        assert result.is_error
        assert "No project is selected for this transport session" in text(result)
        assert "list_projects" in text(result) and str(access_root) in text(result)


@pytest.mark.anyio
async def test_list_projects_names_the_folders_under_the_access_root(access_root: Path, home: Path) -> None:
    """Not the hidden folder, not the file, not the link that leaves the root."""
    async with Client(server(access_root, home), mode="legacy") as client:
        result = await call(client, "list_projects")
        assert result.structured_content is not None
        assert [p["selector"] for p in result.structured_content["projects"]] == [
            "alpha",
            "beta",
        ]  # not the hidden folder, the file, or the link out
        filtered = await call(client, "list_projects", {"query": "ALP"})
        assert filtered.structured_content is not None
        assert [p["selector"] for p in filtered.structured_content["projects"]] == ["alpha"]
        assert (await call(client, "list_projects", {"limit": 0})).is_error


@pytest.mark.anyio
async def test_a_bound_session_sees_only_its_project_never_a_sibling_or_the_roots_parent(
    access_root: Path, home: Path
) -> None:
    async with Client(server(access_root, home), mode="legacy") as client:
        bound = await call(client, "set_project_root", {"path": "alpha"})
        assert not bound.is_error and bound.structured_content is not None
        assert bound.structured_content["project_root"] == str(access_root / "alpha")
        assert bound.structured_content["newly_selected"] is True
        brief = text(await call(client, "get_agent_brief"))
        doc = text(await call(client, "get_project_doc"))
        skills = text(await call(client, "skills_list"))
        every_reply = brief + doc + skills
        for reply in (
            await call(client, "skills_read", {"name": "beta-skill"}),
            await call(client, "skills_read", {"name": "alpha-skill", "resource": "../../../../beta/secret.txt"}),
            await call(client, "skills_read", {"name": "parent-skill"}),
        ):
            assert reply.is_error
            every_reply += text(reply)
        assert "alpha rules" in doc and "alpha-skill" in skills
        for secret in ("PARENT SECRET", "ROOT RULES", "beta rules", "BETA SECRET"):
            assert secret not in every_reply


@pytest.mark.anyio
async def test_project_selection_is_idempotent_but_cannot_switch(access_root: Path, home: Path) -> None:
    async with Client(server(access_root, home), mode="legacy") as client:
        assert not (await call(client, "set_project_root", {"path": "alpha"})).is_error
        again = await call(client, "set_project_root", {"path": "alpha/."})
        assert again.structured_content is not None and again.structured_content["newly_selected"] is False
        switch = await call(client, "set_project_root", {"path": "beta"})
        assert switch.is_error and "cannot switch" in text(switch)


@pytest.mark.anyio
async def test_selection_rejects_paths_outside_the_access_root_and_non_directories(
    access_root: Path, home: Path
) -> None:
    async with Client(server(access_root, home), mode="legacy") as client:
        for path, message in (
            ("../outside-the-roots", "escapes the configured access root"),
            (str(access_root.parent / "outside-the-roots"), "escapes the configured access root"),
            ("escape", "escapes the configured access root"),
            ("a-file.txt", "is not a directory"),
            ("missing", "does not exist"),
            ("   ", "path must be a non-empty string"),
        ):
            result = await call(client, "set_project_root", {"path": path})
            assert result.is_error, path
            assert message in text(result), (path, text(result))


@pytest.mark.anyio
async def test_sessions_are_isolated_to_their_selected_roots(access_root: Path, home: Path) -> None:
    shared = server(access_root, home)
    async with Client(shared, mode="legacy") as first, Client(shared, mode="legacy") as second:
        await call(first, "set_project_root", {"path": "alpha"})
        await call(second, "set_project_root", {"path": "beta"})
        assert "alpha rules" in text(await call(first, "get_project_doc"))
        assert "beta rules" in text(await call(second, "get_project_doc"))


@pytest.mark.anyio
async def test_a_conversation_id_keeps_its_binding_across_connections(access_root: Path, home: Path) -> None:
    shared = server(access_root, home)
    conversation = {"openai/session": "chat-42"}
    async with Client(shared, mode="legacy") as first:
        result = await call(first, "set_project_root", {"path": "beta"}, **conversation)
        assert result.structured_content is not None
        assert result.structured_content["binding_scope"] == "conversation"
    async with Client(shared, mode="legacy") as reconnected:
        assert "beta rules" in text(await call(reconnected, "get_project_doc", **conversation))
        unbound = await call(reconnected, "get_project_doc")
        assert unbound.is_error


@pytest.mark.anyio
async def test_on_the_modern_era_a_stdio_process_is_one_session(access_root: Path, home: Path) -> None:
    async with Client(server(access_root, home), mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await call(client, "set_project_root", {"path": "alpha"})
        assert "alpha rules" in text(await call(client, "get_project_doc"))
