"""Renders shared across chats whose inputs digest alike (turns.py): one render for every chat of a workspace
re-pinned to the same snapshot, never one for chats whose prompts would differ.
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path

import pytest

from agentcontext.control import discovered
from agentcontext.control.discovered_answer import Answer, Found
from agentcontext.control.turns import SHARED_BYTES, Turns, prompt_body, tools_json
from agentcontext.control.wire import PromptResponse, ToolSpecBody
from agentcontext.resource import Kind
from agentcontext.testing import skill_md
from tests.control.conftest import REVIEW, WORK, mcp_server, text_resource
from tests.control.shared_turns import two_users

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


SKILL = f"{WORK}/.agents/skills/review/SKILL.md"


def snapshot(rules: str = "Root rules.\n", skill: str = REVIEW, description: str = "Reviews") -> list:  # type: ignore[type-arg]
    return [
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", rules),
        text_resource(Kind.SKILL, SKILL, skill, name="review", description=description),
        mcp_server("time", "now"),
    ]


def without_plan(system: str, chat: str) -> str:
    assert f"PLAN-{chat}.md" in system
    return system.split("\n\n<plan-file>")[0]


async def test_a_second_chat_pinned_to_the_same_content_is_served_the_first_ones_render(
    tmp_path: Path, db_url: str
) -> None:
    async with two_users(tmp_path, ("alice",), db_url=db_url) as running:
        await running.push("alice", snapshot())
        first, second = await running.chat("alice"), await running.chat("alice")
        one, said_one = await running.prompt("alice", first)
        two, said_two = await running.prompt("alice", second)
        assert (said_one, said_two) == ("miss", "hit")
        assert running.plane.chats.turns.shared_hits == 1
        assert two == await running.fresh("alice", second)  # byte for byte what it renders by itself
        assert without_plan(one["system"], first) == without_plan(two["system"], second)

        await running.push("alice", snapshot("Root rules, second edition.\n"))
        await running.refresh("alice", first)
        await running.refresh("alice", second)
        again_one, said_one = await running.prompt("alice", first)
        again_two, said_two = await running.prompt("alice", second)
        assert (said_one, said_two) == ("miss", "hit")
        assert "second edition" in again_two["system"]
        assert again_two == await running.fresh("alice", second)
        # the tools a call uses came with the shared render, and still answer from the chat's own pin
        result = await running.plane.chats.call_tool(
            running.people["alice"].user, second, "read_skill", {"name": "review"}
        )
        assert not result.is_error and "Read the diff first." in result.content


async def test_a_push_that_edits_only_a_skills_body_leaves_a_refreshed_chats_prompt_a_hit(
    tmp_path: Path, db_url: str
) -> None:
    edited = skill_md("review", "Reviews a change", body="# Review\n\nRun the tests before reading the diff.\n")
    async with two_users(tmp_path, ("alice",), db_url=db_url) as running:
        user = running.people["alice"].user
        await running.push("alice", snapshot())
        chat = await running.chat("alice")
        before, said = await running.prompt("alice", chat)
        assert said == "miss"

        await running.push("alice", snapshot(skill=edited))  # the body alone: the prompt shows name and description
        await running.refresh("alice", chat)
        after, said = await running.prompt("alice", chat)
        assert said == "hit"
        assert after == before == await running.fresh("alice", chat)
        result = await running.plane.chats.call_tool(user, chat, "read_skill", {"name": "review"})
        assert not result.is_error and "Run the tests before reading the diff." in result.content  # the new pin's

        await running.push("alice", snapshot(skill=edited, description="Reviews a change, tests first"))
        await running.refresh("alice", chat)
        described, said = await running.prompt("alice", chat)
        assert said == "miss"
        assert "tests first" in described["system"] and described == await running.fresh("alice", chat)


async def test_a_tool_call_first_shares_the_tools_and_the_prompt_after_it_is_rendered_once(tmp_path: Path) -> None:
    async with two_users(tmp_path, ("alice",)) as running:
        await running.push("alice", snapshot())
        first, second = await running.chat("alice"), await running.chat("alice")
        user = running.people["alice"].user
        await running.plane.chats.call_tool(
            user, first, "read_skill", {"name": "review"}
        )  # tools only: nothing rendered
        await running.plane.chats.call_tool(user, second, "read_skill", {"name": "review"})
        assert running.plane.chats.turns.shared_hits == 1
        assert [said for _, said in [await running.prompt("alice", c) for c in (first, second)]] == ["miss", "hit"]


async def test_chats_in_and_out_of_plan_mode_do_not_share(tmp_path: Path) -> None:
    async with two_users(tmp_path, ("alice",)) as running:
        await running.push("alice", snapshot())
        planning, working = await running.chat("alice", plan_mode=True), await running.chat("alice")
        assert [said for _, said in [await running.prompt("alice", c) for c in (planning, working)]] == ["miss", "miss"]
        assert running.plane.chats.turns.shared_hits == 0


async def test_chats_with_different_discovered_context_do_not_share(tmp_path: Path) -> None:
    nested = text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/billing/AGENTS.md", "Money is integer cents.\n")
    async with two_users(tmp_path, ("alice",)) as running:
        await running.push("alice", snapshot())
        plain, touched, touched_elsewhere, touched_alike = [await running.chat("alice") for _ in range(4)]
        user, agent = running.people["alice"].user, running.people["alice"].agent
        causes = {touched: "api.py", touched_elsewhere: "db.py", touched_alike: "api.py"}
        for chat, cause in ((chat, f"{WORK}/billing/{name}") for chat, name in causes.items()):
            answer = Answer(asked=(cause,), files=(Found(nested, (cause,)),))
            now = dt.datetime.now(dt.UTC)
            pin = partial(
                discovered.pin, user_id=user.user_id, chat_id=chat, agent_id=agent.agent_id, answer=answer, now=now
            )
            running.db.write_rows(pin)
        said = [await running.prompt("alice", chat) for chat in (plain, touched, touched_elsewhere, touched_alike)]
        assert [cached for _, cached in said] == ["miss", "miss", "miss", "hit"]  # the same files for the same paths
        assert "Money is integer cents." not in said[0][0]["system"]
        assert f"(for {WORK}/billing/db.py)" in said[2][0]["system"]
        assert said[2][0] == await running.fresh("alice", touched_elsewhere)
        assert said[3][0] == await running.fresh("alice", touched_alike)


async def test_the_shared_renders_stay_within_their_byte_bound(tmp_path: Path) -> None:
    async with two_users(tmp_path, ("alice",)) as running:
        bound = 200_000
        running.plane.chats.turns = Turns(shared_bytes=bound)
        for edition in range(12):  # each about 40 KB of text: at most a few fit
            await running.push("alice", snapshot(f"Edition {edition}.\n" + "rule\n" * 8000))
            chat = await running.chat("alice")
            _, said = await running.prompt("alice", chat)
            assert said == "miss"
            assert running.plane.chats.turns.shared.bytes <= bound
        assert 1 <= len(running.plane.chats.turns.shared) <= 5
        later = await running.chat("alice")  # pinned to the latest edition: its render is still kept
        assert (await running.prompt("alice", later))[1] == "hit"
    assert SHARED_BYTES >= 16 * 1024 * 1024


def test_a_prompt_body_is_byte_for_byte_what_the_wire_model_writes() -> None:
    tools = [ToolSpecBody(name="t", description='quote " back\\slash', input_schema={"type": "object", "é": [1, None]})]
    for system in ("", "plain", 'tags <a> & "quotes"\n\ttabs', "\x00\x1f\u2028\x7f unicode é 𝄞"):
        answer = PromptResponse(system=system, tools=tools)
        assert prompt_body(system, tools_json(tools)) == answer.__pydantic_serializer__.to_json(answer)
