"""The chat tools through a real control plane and a real workspace agent (coder.md 2.4, 2.5, 3.5, 7; 8.6, 8.7).

Rules that need no workspace are proved to run before any contact with it: those tests
push the snapshot of an agent whose API is not running at all (its URL is a closed port),
so a call that dialled would answer ``workspace connection failed``.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy as sa

from agentcontext.control import personal_skills, skill_index, tools
from agentcontext.control import tables as t
from agentcontext.control.models import ChatFile
from agentcontext.control.prepared import UNKNOWN_OUTCOME, CommitOutcomeUnknown
from agentcontext.errors import AgentContextError
from agentcontext.resource import Kind, Status
from agentcontext.snapshot import Snapshot
from agentcontext.testing import skill_md
from agentcontext.wire.sync import ContractError
from agentcontext.workspace_mcp.tool_names import assign
from tests.control.live import (
    AGENT_TOKEN,
    PEER_TOKEN,
    Control,
    control_plane,
    frozen_url,
    mcp_json,
    misbehaving,
    time_server,
    workspace,
)
from tests.mcp_servers.misbehaving import BAD_BASE64, LONG_PREFIX, PNG_BASE64

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

LINT = skill_md("lint", "Lints the code", body="<!-- maintainers: keep it short -->\n# Lint\n\nRun ruff.\n")
REVIEW = skill_md("review", "Reviews code", body="Workspace review steps.\n")
MY_REVIEW = skill_md("review", "My own review", body="My review steps.\n")
NOTES = skill_md("notes", "Takes notes", body="Write it down.\n")
SKILLS = {
    ".agents/skills/lint/SKILL.md": LINT,
    ".agents/skills/lint/reference.md": "Use ruff.\n",
    ".agents/skills/lint/scripts/run.sh": "ruff check .\n",
    ".agents/skills/lint/big.txt": "a" * (600 * 1024),
    ".agents/skills/lint/.hidden/config": "[core]\n",
    ".agents/skills/review/SKILL.md": REVIEW,
    "secret.txt": "TOKEN=hunter2\n",
}
CONNECTION_FAILED = "workspace connection failed: "
PLAN_CAP = 32 * 1024


def mcp_ready(*servers: str) -> Any:
    def accept(snapshot: Snapshot) -> bool:
        ok = {r.path for r in snapshot.resources if r.kind is Kind.MCP_SERVER and r.status is Status.OK}
        return set(servers) <= ok

    return accept


def lint_dir(work: Path) -> str:
    return str(work / ".agents" / "skills" / "lint")


async def failed(control: Control, chat: str, name: str, arguments: Any = None) -> str:
    """The text of a call that must fail."""
    result = await control.call(chat, name, arguments)
    assert result.is_error, result.content
    return result.content


# --- read_skill ---------------------------------------------------------------------------------


async def test_read_skill_serves_the_pinned_body_and_lists_files_live(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home) as live:
        chat = await control.chat()
        skill = live.work / ".agents" / "skills" / "lint"
        (skill / "SKILL.md").write_text(skill_md("lint", "Lints the code", body="CHANGED ON DISK\n"), encoding="utf-8")
        (skill / "added.md").write_text("new\n", encoding="utf-8")
        await live.rescan()  # the control plane knows of the change; the chat keeps its pin
        data = await control.call_json(chat, "read_skill", {"name": "lint"})
        summary = await control.plane.chats.get(control.user, chat)
    assert data == {
        "name": "lint",
        "dir": lint_dir(live.work),
        "body": "# Lint\n\nRun ruff.",
        "files": [".hidden/", "added.md", "big.txt", "reference.md", "scripts/"],
    }
    assert summary.context.dirty is True


async def test_read_skill_serves_the_pin_when_the_workspace_is_unreachable(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control:
        async with workspace(control, tmp_path / "w", SKILLS, home=home) as live:
            chat = await control.chat()
        result = await control.call(chat, "read_skill", {"name": "lint"})
    assert not result.is_error
    assert '"files": []' in result.content
    assert json.loads(result.content) == {
        "name": "lint",
        "dir": lint_dir(live.work),
        "body": "# Lint\n\nRun ruff.",
        "files": [],
    }


async def test_read_skill_of_a_personal_skill_has_no_dir(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(NOTES)
        chat = await control.chat()
        data = await control.call_json(chat, "read_skill", {"name": "notes"})
    assert data == {"name": "notes", "body": "Write it down.", "files": []}


async def test_a_personal_qualified_alias_is_preserved_in_the_answer(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(MY_REVIEW)
        chat = await control.chat()
        data = await control.call_json(chat, "read_skill", {"name": "personal/review"})
    assert data == {"name": "personal/review", "body": "My review steps.", "files": []}


async def test_a_workspace_qualified_alias_reads_the_workspace_skill(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home) as live:
        await control.add_personal_skill(MY_REVIEW)
        chat = await control.chat()
        data = await control.call_json(chat, "read_skill", {"name": "workspace/review"})
    assert data == {
        "name": "workspace/review",
        "dir": str(live.work / ".agents" / "skills" / "review"),
        "body": "Workspace review steps.",
        "files": [],
    }


async def test_every_alias_the_prompt_lists_reads_back_its_own_skill(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(MY_REVIEW)
        await control.add_personal_skill(NOTES)
        chat = await control.chat()
        system = await control.system(chat)
        listed = [line[2:].split(":")[0] for line in system.splitlines() if line.startswith("- ")]
        bodies = {alias: (await control.call_json(chat, "read_skill", {"name": alias}))["body"] for alias in listed}
    assert bodies == {
        "lint": "# Lint\n\nRun ruff.",
        "workspace/review": "Workspace review steps.",
        "notes": "Write it down.",
        "personal/review": "My review steps.",
    }


async def test_a_missing_personal_skill_is_not_found(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(NOTES)
        chat = await control.chat()
        qualified = await failed(control, chat, "read_skill", {"name": "personal/ghost"})
        await control.prompt(chat)  # the turn lists the skill
        await control.plane.skills.delete(control.user, "notes")  # and it goes before the call
        raced = await failed(control, chat, "read_skill", {"name": "notes"})
        monkeypatch.setattr(personal_skills, "text_of", lambda *args: None)  # gone between listing and reading
        await control.add_personal_skill(NOTES)
        vanished = await failed(control, chat, "read_skill", {"name": "notes"})
    assert qualified == 'skill "personal/ghost" not found'
    assert raced == vanished == 'skill "notes" not found'


async def test_a_personal_skill_loader_failure_is_not_leaked(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(NOTES)
        chat = await control.chat()

        def broken(*args: Any) -> str:
            raise RuntimeError("connection to postgresql://admin:s3cret@db failed")

        monkeypatch.setattr(personal_skills, "text_of", broken)
        text = await failed(control, chat, "read_skill", {"name": "notes"})
    assert text == 'failed to load personal skill "notes"'


async def test_a_resolver_failure_is_not_leaked(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(refs: Any, requested: str) -> skill_index.SkillRef:
        raise AgentContextError("index corrupted at /var/lib/secret")

    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        chat = await control.chat()
        monkeypatch.setattr(tools, "resolve", broken)
        text = await failed(control, chat, "read_skill", {"name": "lint"})
    assert text == 'failed to resolve skill "lint"'


async def test_an_ambiguous_name_surfaces_both_qualified_aliases(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(MY_REVIEW)
        chat = await control.chat()
        texts = [
            await failed(control, chat, "read_skill", {"name": "review"}),
            await failed(control, chat, "read_skill_file", {"name": "review", "path": "notes.md"}),
        ]
    for text in texts:
        assert "skill lookup is ambiguous" in text
        assert "personal/review" in text and "workspace/review" in text


async def test_unknown_and_empty_names_fail_without_contacting_the_workspace(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILLS, home=home, serve=False),
    ):
        chat = await control.chat()
        unknown = await failed(control, chat, "read_skill", {"name": "nope"})
        empty = [
            await failed(control, chat, "read_skill", arguments)
            for arguments in ({"name": ""}, {}, {"name": 42}, {"name": None})
        ]
    assert unknown == 'skill "nope" not found'
    assert empty == ["name is required"] * 4


# --- read_skill_file ----------------------------------------------------------------------------


async def test_read_skill_file_reads_a_supporting_file(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        await control.add_personal_skill(MY_REVIEW)
        chat = await control.chat()
        top = await control.call_json(chat, "read_skill_file", {"name": "lint", "path": "reference.md"})
        nested = await control.call_json(chat, "read_skill_file", {"name": "lint", "path": "scripts/run.sh"})
        qualified = await control.call(chat, "read_skill_file", {"name": "workspace/review", "path": "SKILL.md"})
        missing = await failed(control, chat, "read_skill_file", {"name": "lint", "path": "absent.md"})
    assert top == {"content": "Use ruff.\n"}
    assert nested == {"content": "ruff check .\n"}
    assert not qualified.is_error and "Workspace review steps." in json.loads(qualified.content)["content"]
    assert missing == "read skill file: No such file or directory"


async def test_read_skill_file_cuts_a_file_at_512_kib(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control, workspace(control, tmp_path / "w", SKILLS, home=home):
        chat = await control.chat()
        data = await control.call_json(chat, "read_skill_file", {"name": "lint", "path": "big.txt"})
    assert data == {"content": "a" * 524_288}


async def test_read_skill_file_is_not_supported_for_personal_skills(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILLS, home=home, serve=False),
    ):
        await control.add_personal_skill(NOTES)
        await control.add_personal_skill(MY_REVIEW)
        chat = await control.chat()
        texts = [
            await failed(control, chat, "read_skill_file", {"name": "notes", "path": "x.md"}),
            await failed(control, chat, "read_skill_file", {"name": "personal/review", "path": "x.md"}),
        ]
    assert texts == ["read_skill_file is not supported for personal skills (no supporting files)"] * 2


async def test_unsafe_paths_are_refused_before_contacting_the_workspace(tmp_path: Path, home: Path) -> None:
    cases = {
        "../review/SKILL.md": "path traversal is not allowed",
        "scripts/../../../../secret.txt": "path traversal is not allowed",
        "/etc/passwd": "absolute paths are not allowed",
        ".hidden/config": "hidden file components are not allowed",
        "scripts/.env": "hidden file components are not allowed",
        "./reference.md": "hidden file components are not allowed",
        "": "path is required",
    }
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILLS, home=home, serve=False),
    ):
        chat = await control.chat()
        texts = {path: await failed(control, chat, "read_skill_file", {"name": "lint", "path": path}) for path in cases}
        order = [
            await failed(control, chat, "read_skill_file", {"path": "reference.md"}),
            await failed(control, chat, "read_skill_file", {"name": "lint"}),
            await failed(control, chat, "read_skill_file", {"name": "nope", "path": "../x"}),
        ]
        dialled = await failed(control, chat, "read_skill_file", {"name": "lint", "path": "reference.md"})
    assert texts == cases
    assert order == ["name is required", "path is required", 'skill "nope" not found']
    assert dialled.startswith(CONNECTION_FAILED)  # a safe path is the first thing that needs the agent


# --- propose_plan -------------------------------------------------------------------------------


def chat_plan_path(home: Path, chat: str) -> Path:
    return home / ".agentcontext" / "plans" / f"PLAN-{chat}.md"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


async def test_propose_plan_path_rules_that_need_no_workspace(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "Rules."}, home=home, serve=False),
    ):
        chat = await control.chat()
        texts = {
            repr(arguments): await failed(control, chat, "propose_plan", arguments)
            for arguments in (
                {"path": ""},
                {},
                {"path": "   \t\n"},
                {"path": "/work/plan.txt"},
                {"path": "/work/PLAN.MD"},
                {"path": "plan.md"},
                {"path": "docs/PLAN.md"},
            )
        }
    required = "path is required (use the chat-specific absolute plan path)"
    relative = "plan files must use absolute paths; use the chat-specific absolute plan path"
    assert list(texts.values()) == [
        required,
        required,
        required,
        "path must end with .md",
        "path must end with .md",
        relative,
        relative,
    ]


async def test_a_valid_plan_is_stored_as_an_attachment_and_not_echoed(tmp_path: Path, home: Path) -> None:
    plan = "# Plan\n\n1. Do the thing.\n"
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        path = write(live.work / "docs" / "design.md", plan)
        chat = await control.chat()
        result = await control.call(chat, "propose_plan", {"path": f"  {path}  "})
        data = json.loads(result.content)
        files = await control.plane.chats.files(control.user, chat)
        stored = await control.plane.chats.file(control.user, chat, data["file_id"])
    assert not result.is_error
    assert data == {
        "ok": True,
        "path": str(path),
        "kind": "plan",
        "file_id": data["file_id"],
        "media_type": "text/markdown",
    }
    assert "Do the thing" not in result.content
    assert [(f.name, f.kind, f.media_type, f.path) for f in files] == [
        ("design.md", "plan", "text/markdown", str(path))
    ]
    assert (stored.size_bytes, stored.text) == (len(plan), plan)


async def test_a_plan_of_exactly_32_kib_is_accepted_and_one_byte_more_is_not(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        exact = write(live.work / "exact.md", "p" * PLAN_CAP)
        over = write(live.work / "over.md", "p" * (PLAN_CAP + 1))
        multibyte = write(live.work / "multibyte.md", "é" * (PLAN_CAP // 2) + "x")  # 32 KiB + 1 in bytes
        chat = await control.chat()
        accepted = await control.call_json(chat, "propose_plan", {"path": str(exact)})
        refused = [await failed(control, chat, "propose_plan", {"path": str(p)}) for p in (over, multibyte)]
        [stored] = await control.plane.chats.files(control.user, chat)
    assert accepted["ok"] is True and stored.size_bytes == PLAN_CAP
    assert refused == ["plan file exceeds 32 KiB size limit"] * 2


async def test_missing_empty_and_unreadable_plans_are_refused(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        missing = live.work / "absent.md"
        blank = write(live.work / "blank.md", "  \n\t\n")
        folder = live.work / "folder.md"
        folder.mkdir()
        fifo = live.work / "fifo.md"
        os.mkfifo(fifo)
        chat = await control.chat()
        texts = [await failed(control, chat, "propose_plan", {"path": str(p)}) for p in (missing, blank, folder, fifo)]
        files = await control.plane.chats.files(control.user, chat)
    assert texts == [
        f"open {missing}: no such file or directory",
        f"plan file is empty; write your plan to {blank} before proposing",
        f"read {folder}: not a regular file",
        f"read {fifo}: not a regular file",
    ]
    assert files == []


async def test_a_plan_md_in_the_home_root_is_refused_with_the_chat_path(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        write(home / "PLAN.md", "# Old shared plan\n")
        nested = write(live.work / "docs" / "plan.md", "# A plan.md elsewhere is fine\n")
        chat = await control.chat()
        (home / "sub").mkdir()
        names = ("PLAN.md", "plan.md", "Plan.md", "sub/../PLAN.md", "./plan.md")
        texts = [await failed(control, chat, "propose_plan", {"path": f"{home}/{name}"}) for name in names]
        elsewhere = await control.call_json(chat, "propose_plan", {"path": str(nested)})
    chat_path = chat_plan_path(home, chat)
    assert texts == [
        f"the plan path {home}/{name} is no longer supported at the home root; use the chat-specific plan path:"
        f" {chat_path}"
        for name in names
    ]
    assert elsewhere["ok"] is True


async def test_a_plan_md_in_the_home_root_cannot_be_verified_while_the_workspace_is_down(
    tmp_path: Path, home: Path
) -> None:
    async with control_plane(tmp_path) as control:
        async with workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home):
            chat = await control.chat()
        shared = await failed(control, chat, "propose_plan", {"path": str(home / "PLAN.md")})
        other = await failed(control, chat, "propose_plan", {"path": str(tmp_path / "w" / "design.md")})
    assert shared == (
        f"the plan path {home / 'PLAN.md'} could not be verified because the workspace is currently unavailable to"
        " resolve the chat-specific plan path, try again shortly"
    )
    assert other.startswith(CONNECTION_FAILED)


async def _plan_stored_by(tmp_path: Path, home: Path, failure: Exception) -> str:
    """What ``propose_plan`` answers when storing the plan raises ``failure``."""
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        path = write(live.work / "design.md", "# Plan\n")
        chat = await control.chat()

        async def store(chat_id: str, name: str, path: str, text: str) -> str:
            raise failure

        control.plane.chats.store_plan = store  # type: ignore[method-assign]
        return await failed(control, chat, "propose_plan", {"path": str(path)})


async def test_a_plan_is_refused_when_it_cannot_be_stored(tmp_path: Path, home: Path) -> None:
    text = await _plan_stored_by(tmp_path, home, RuntimeError("disk full at /var/lib/agentcontext/secret.db"))
    assert text.startswith("failed to store plan file")
    assert "secret" not in text and "RuntimeError" not in text


async def test_a_plan_whose_storing_may_have_been_saved_says_so_rather_than_inviting_a_second_copy(
    tmp_path: Path, home: Path
) -> None:
    text = await _plan_stored_by(tmp_path, home, CommitOutcomeUnknown(UNKNOWN_OUTCOME))
    assert text == f"storing the plan file: {UNKNOWN_OUTCOME}"


async def test_plan_turns_accept_only_the_chat_path(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        chat = await control.chat(plan_mode=True)
        chat_path = write(chat_plan_path(home, chat), "# The plan\n")
        other = write(live.work / "design.md", "# Another plan\n")
        wrong = await failed(control, chat, "propose_plan", {"path": str(other)})
        empty = await control.call_json(chat, "propose_plan", {"path": ""})
        exact = await control.call_json(chat, "propose_plan", {"path": f" {chat_path} "})
        files = await control.plane.chats.files(control.user, chat)
    assert wrong == f"during plan turns, propose_plan path must be {chat_path}"
    assert (empty["ok"], empty["path"]) == (True, str(chat_path))
    assert exact["path"] == str(chat_path)
    assert [f.name for f in files] == [chat_path.name] * 2


async def test_plan_turns_refuse_a_symlinked_chat_path(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        chat = await control.chat(plan_mode=True)
        target = write(live.work / "elsewhere.md", "# Redirected plan\n")
        link = chat_plan_path(home, chat)
        link.parent.mkdir(parents=True)
        link.symlink_to(target)
        text = await failed(control, chat, "propose_plan", {"path": ""})
        files = await control.plane.chats.files(control.user, chat)
    assert text == (
        f"the chat-specific plan path {link} resolves to {target}; symlinked plan paths are not allowed during plan"
        " turns"
    )
    assert files == []


async def test_plan_turns_need_the_workspace_to_resolve_the_chat_path(tmp_path: Path, home: Path) -> None:
    async with control_plane(tmp_path) as control:
        async with workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home):
            chat = await control.chat(plan_mode=True)
        text = await failed(control, chat, "propose_plan", {"path": ""})
    assert text.startswith("resolve chat-specific plan path: ")


async def test_child_chats_cannot_propose_plans(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        path = write(live.work / "design.md", "# Plan\n")
        child = await control.chat(parent_id=await control.chat())
        text = await failed(control, child, "propose_plan", {"path": str(path)})
    assert text == 'tool "propose_plan" is not available in this chat'


# --- workspace MCP tools ------------------------------------------------------------------------


async def test_mcp_tools_are_proxied_through_the_agent(tmp_path: Path, home: Path) -> None:
    servers = {"time": time_server(), "long": misbehaving("long-names")}
    async with (
        control_plane(tmp_path) as control,
        workspace(
            control, tmp_path / "w", {".mcp.json": mcp_json(servers)}, home=home, accept=mcp_ready("time", "long")
        ),
    ):
        chat = await control.chat()
        current = await control.call(chat, "time__get_current_time", {"timezone": "Europe/Paris"})
        bad_zone = await control.call(chat, "time__get_current_time", {"timezone": "Not/AZone"})
        unknown = await control.call(chat, "time__no_such_tool", {})
        exposed = assign([("long", f"{LONG_PREFIX}_one"), ("long", f"{LONG_PREFIX}_two")])
        short = exposed.exposed("long", f"{LONG_PREFIX}_one")
        shortened = await control.call(chat, short, {})
        full_name = await control.call(chat, f"long__{LONG_PREFIX}_one", {})
    assert not current.is_error and json.loads(current.content)["timezone"] == "Europe/Paris"
    assert bad_zone.is_error and "Not/AZone" in bad_zone.content
    assert (unknown.content, unknown.is_error) == ('tool "time__no_such_tool" is not available in this chat', True)
    assert len(short) <= 64 and short != f"long__{LONG_PREFIX}_one"
    assert (shortened.content, shortened.is_error) == (f"{LONG_PREFIX}_one", False)
    assert full_name.is_error  # only the exposed name is a tool of the chat


async def test_mcp_tool_results_join_texts_and_carry_images(tmp_path: Path, home: Path) -> None:
    files = {".mcp.json": mcp_json({"media": misbehaving("content")})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("media")),
    ):
        chat = await control.chat()
        texts = await control.call(chat, "media__two_texts")
        picture = await control.call(chat, "media__picture")
        mixed = await control.call(chat, "media__mixed")
        bad = await control.call(chat, "media__bad_picture")
    assert (texts.content, texts.is_error, texts.attachments) == ("first\nsecond", False, ())
    assert (picture.content, picture.is_error) == ("", False)
    assert picture.attachments == ({"type": "image", "media_type": "image/png", "data": PNG_BASE64},)
    assert base64.b64decode(picture.attachments[0]["data"]).startswith(b"\x89PNG")
    assert picture.to_dict()["attachments"] == list(picture.attachments)
    assert (mixed.content, mixed.attachments) == ("a caption", ())  # texts are preferred
    assert bad.content.startswith("[binary decode error: ")
    assert BAD_BASE64 not in bad.content and bad.attachments == ()


async def test_mcp_calls_fail_as_tool_results_when_the_agent_is_down(tmp_path: Path, home: Path) -> None:
    files = {".mcp.json": mcp_json({"time": time_server()})}
    async with control_plane(tmp_path) as control:
        async with workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("time")) as live:
            chat = await control.chat()
        result = await control.call(chat, "time__get_current_time", {"timezone": "UTC"})
    port = live.url.rsplit(":", 1)[1]
    assert result.is_error
    assert result.content == f"{CONNECTION_FAILED}connection refused or unreachable (127.0.0.1:{port})"


async def test_arguments_that_are_not_an_object_are_invalid_json_input(tmp_path: Path, home: Path) -> None:
    files = {".mcp.json": mcp_json({"time": time_server()})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("time")),
    ):
        chat = await control.chat()
        results = [
            await control.plane.chats.call_tool(control.user, chat, "time__get_current_time", arguments)
            for arguments in (["UTC"], "UTC", 3, None)
        ]
    for result in results:
        assert result.is_error
        assert result.content.startswith("invalid JSON input: ")


async def test_an_unknown_tool_is_a_tool_error(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home, serve=False),
    ):
        chat = await control.chat()
        texts = [await failed(control, chat, name, {}) for name in ("read_skill", "nope", "nope__tool")]
    assert texts == [f'tool "{name}" is not available in this chat' for name in ("read_skill", "nope", "nope__tool")]


async def test_a_tool_of_a_server_waiting_for_approval_says_so_and_how_to_approve_it(
    tmp_path: Path, home: Path
) -> None:
    def pending(snapshot: Snapshot) -> bool:
        return any(r.kind is Kind.MCP_SERVER and r.status is Status.DISABLED for r in snapshot.resources)

    files = {".mcp.json": mcp_json({"time": time_server()})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=pending, approve=False),
    ):
        chat = await control.chat()
        text = await failed(control, chat, "time__get_current_time", {"timezone": "UTC"})
    assert text.startswith('MCP server "time" is pending approval: approve "time" in the dashboard or run `')
    assert "agentcontext mcp trust" in text


async def test_the_store_keeps_plans_per_chat(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", {"AGENTS.md": "R"}, home=home) as live,
    ):
        path = write(live.work / "design.md", "# Plan\n")
        first, second = await control.chat(), await control.chat()
        await control.call_json(first, "propose_plan", {"path": str(path)})
        with control.db.read() as session:
            owners = list(session.scalars(sa.select(ChatFile.chat_id)))
        assert await control.plane.chats.files(control.user, second) == []
    assert owners == [first]


async def test_hostile_arguments_come_back_as_tool_results(tmp_path: Path, home: Path) -> None:
    files = {**SKILLS, ".mcp.json": mcp_json({"time": time_server()})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("time")) as live,
    ):
        chat = await control.chat()
        calls: list[tuple[str, dict[str, Any]]] = [
            ("read_skill", {"name": "li\udcffnt"}),
            ("read_skill_file", {"name": "lint", "path": "ref\udcff.md"}),
            ("read_skill_file", {"name": "lint", "path": "ref\x00.md"}),
            ("read_skill_file", {"name": "lint", "path": "refer?ence.md#x"}),
            ("propose_plan", {"path": f"{live.work}/pl\udcffan.md"}),
            ("propose_plan", {"path": f"{live.work}/pl\x00an.md"}),
            ("time__get_current_time", {"timezone": "Europe/\udcffParis"}),
            ("time__get_current_time", {"timezone": {"nested": ["\x00"]}}),
        ]
        results = [await control.call(chat, name, arguments) for name, arguments in calls]
    texts = [result.content for result in results]
    assert all(result.is_error for result in results), texts
    assert texts[:6] == [
        'skill "li\ufffdnt" not found',  # half a surrogate pair reads as U+FFFD, as in Go
        "read skill file: No such file or directory",
        "read skill file: invalid argument",
        "read skill file: No such file or directory",
        f"open {live.work}/pl\ufffdan.md: no such file or directory",
        f"open {live.work}/pl\x00an.md: invalid argument",
    ]
    assert "Europe/\ufffdParis" in texts[6]
    for text in texts:
        text.encode("utf-8")  # every answer can be sent


async def test_arguments_that_are_not_plain_json_are_invalid_json_input(tmp_path: Path, home: Path) -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    files = {".mcp.json": mcp_json({"time": time_server()})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("time")),
    ):
        chat = await control.chat()
        texts = [
            await failed(control, chat, "time__get_current_time", arguments)
            for arguments in ({"timezone": float("nan")}, {"timezone": "UTC", "n": float("inf")}, {"timezone": deep})
        ]
    assert [text.startswith("invalid JSON input: Out of range float values") for text in texts] == [True, True, False]
    assert texts[2] == "invalid JSON input: the arguments are nested too deeply"


async def test_a_stored_agent_url_that_cannot_be_dialled_is_a_connection_failure(tmp_path: Path, home: Path) -> None:
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", SKILLS, home=home, serve=False) as live,
    ):
        unusable = "http://127.0.0.1:1/\x7f"  # a URL httpx refuses to build, stored before pushes were checked
        with pytest.raises(ContractError, match="agent.url must be"):  # a push refuses it now
            await live.control.push(live.agent.snapshot, url=unusable, home=home)
        control.db.write(lambda s: s.execute(sa.update(t.agents).values(url=unusable)))
        chat = await control.chat()
        listed = await control.call_json(chat, "read_skill", {"name": "lint"})
        text = await failed(control, chat, "read_skill_file", {"name": "lint", "path": "reference.md"})
    assert listed["files"] == []
    assert text.startswith(CONNECTION_FAILED)


async def test_an_agent_that_refuses_the_pushed_secret_is_a_connection_failure(tmp_path: Path, home: Path) -> None:
    files = {**SKILLS, ".mcp.json": mcp_json({"time": time_server()})}
    async with (
        control_plane(tmp_path) as control,
        workspace(control, tmp_path / "w", files, home=home, accept=mcp_ready("time")) as live,
    ):
        control.peer_token = "a-secret-of-another-run"
        (live.work / "AGENTS.md").write_text("changed", encoding="utf-8")
        await live.rescan()
        chat = await control.chat()
        listed = await control.call_json(chat, "read_skill", {"name": "lint"})
        texts = [
            await failed(control, chat, "read_skill_file", {"name": "lint", "path": "reference.md"}),
            await failed(control, chat, "time__get_current_time", {"timezone": "UTC"}),
        ]
    assert listed["files"] == []
    refused = "the workspace agent refused the control plane's credentials"
    assert texts == [CONNECTION_FAILED + refused] * 2
    assert all(secret not in text for text in texts for secret in (AGENT_TOKEN, PEER_TOKEN))


async def test_a_frozen_agent_delays_read_skill_only_briefly(tmp_path: Path, home: Path) -> None:
    with frozen_url() as url:
        async with (
            control_plane(tmp_path, quick_timeout=0.5) as control,
            workspace(control, tmp_path / "w", SKILLS, home=home, serve=False, advertise=url),
        ):
            chat = await control.chat()
            with anyio.fail_after(10):  # not the 30 s a tool call may take
                listed = await control.call_json(chat, "read_skill", {"name": "lint"})
                shared = await failed(control, chat, "propose_plan", {"path": str(home / "PLAN.md")})
    assert (listed["body"], listed["files"]) == ("# Lint\n\nRun ruff.", [])
    assert "could not be verified" in shared
