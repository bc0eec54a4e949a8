"""Renders shared across chats never cross to a chat that would not have rendered them itself.

The control plane shares a rendered prompt between chats whose inputs digest alike, whoever owns
them. Another user's agent is hostile and knows what it can learn of a victim's snapshot: the
paths and the hashes. It pushes a snapshot whose every column the turn key reads equals the
victim's (the same aggregate hash, so the same ``pinned_hash``; the same work dir, OS and home;
the same MCP servers), with other texts or other metadata behind them, and its user's chat asks
for its prompt right after the victim's was rendered. It must get a render of its own (a miss),
equal to what a control plane that kept nothing renders for it, and nothing of the victim's.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from agentcontext.control import tables as t
from agentcontext.resource import Kind, Resource
from agentcontext.testing import skill_md
from tests.control.conftest import WORK, db_url, mcp_server, text_resource
from tests.control.shared_turns import Plane, two_users

__all__ = ["db_url"]  # the control tests' fixture: SQLite and a real PostgreSQL (the cluster: tests/conftest.py)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "alice-secret-7f3a"
AGENTS_MD = f"{WORK}/AGENTS.md"
SKILL = f"{WORK}/.agents/skills/deploy/SKILL.md"


def alices() -> list[Resource]:
    return [
        text_resource(Kind.INSTRUCTION_FILE, AGENTS_MD, f"Deploy key is {SECRET}.\n"),
        text_resource(Kind.SKILL, SKILL, skill_md("deploy", "Deploys"), name="deploy", description=f"Uses {SECRET}"),
        mcp_server("time", "now"),
    ]


def posing_as(victim: list[Resource], **changed: str) -> list[Resource]:
    """The victim's resources as a hostile agent pushes them: the same paths, statuses, sizes and claimed hashes
    (so the same aggregate hash), with other texts or descriptions behind them."""
    forged = []
    for resource in victim:
        if resource.kind is Kind.INSTRUCTION_FILE:
            text = changed.get("text", "Nothing to see.\n").ljust(resource.size_bytes)
            resource = resource._replace(content=text)  # the victim's content_hash kept
        elif resource.kind is Kind.SKILL:
            resource = resource._replace(description=changed.get("description", "Deploys"))
        forged.append(resource)
    return forged


async def pinned_hash(running: Plane, chat: str) -> str:
    statement = sa.select(t.chats.c.pinned_hash).where(t.chats.c.id == chat)
    return str(running.db.read_rows(lambda c: c.execute(statement).scalar_one()))


async def assert_served_its_own(running: Plane, victim_chat: str, chat: str) -> None:
    answer, said = await running.prompt("bob", chat)
    assert said == "miss"
    assert answer == await running.fresh("bob", chat)
    text = str(answer)
    assert SECRET not in text and victim_chat not in text


async def test_forged_texts_behind_the_victims_hashes_get_a_render_of_their_own(tmp_path: Path, db_url: str) -> None:
    async with two_users(tmp_path, db_url=db_url) as running:
        await running.push("alice", alices())
        await running.push("bob", posing_as(alices()))
        victim, chat = await running.chat("alice"), await running.chat("bob")
        assert await pinned_hash(running, victim) == await pinned_hash(running, chat)  # the turn key can't tell
        assert SECRET in (await running.prompt("alice", victim))[0]["system"]
        await assert_served_its_own(running, victim, chat)


async def test_other_metadata_under_the_same_aggregate_hash_gets_a_render_of_its_own(tmp_path: Path) -> None:
    forged = [
        r._replace(description="Deploys") if r.kind is Kind.SKILL else r for r in alices()
    ]  # the victim's very texts, its own description of the skill (metadata the aggregate hash leaves out)
    async with two_users(tmp_path) as running:
        await running.push("alice", alices())
        await running.push("bob", forged)
        victim, chat = await running.chat("alice"), await running.chat("bob")
        assert await pinned_hash(running, victim) == await pinned_hash(running, chat)
        await running.prompt("alice", victim)
        answer, said = await running.prompt("bob", chat)
        assert said == "miss" and answer == await running.fresh("bob", chat)
        assert f"Uses {SECRET}" not in answer["system"]


async def test_personal_skills_alike_in_count_and_time_do_not_share(tmp_path: Path) -> None:
    harmless = [text_resource(Kind.INSTRUCTION_FILE, AGENTS_MD, "Rules.\n"), mcp_server("time", "now")]
    async with two_users(tmp_path) as running:
        await running.push("alice", harmless)
        await running.push("bob", harmless)
        await running.plane.skills.create(running.people["alice"].user, skill_md("notes", f"Has {SECRET}"))
        await running.plane.skills.create(running.people["bob"].user, skill_md("notes", "Takes notes"))
        moment = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        running.db.write_rows(lambda c: c.execute(sa.update(t.personal_skills).values(updated_at=moment)))
        victim, chat = await running.chat("alice"), await running.chat("bob")
        assert SECRET in (await running.prompt("alice", victim))[0]["system"]
        await assert_served_its_own(running, victim, chat)


async def test_the_same_content_is_shared_and_is_exactly_what_the_other_user_renders(tmp_path: Path) -> None:
    async with two_users(tmp_path) as running:
        await running.push("alice", alices())
        await running.push("bob", alices())  # the same texts: nothing bob could not render himself
        victim, chat = await running.chat("alice"), await running.chat("bob")
        await running.prompt("alice", victim)
        answer, said = await running.prompt("bob", chat)
        assert said == "hit"
        assert answer == await running.fresh("bob", chat)
        assert victim not in str(answer) and f"PLAN-{chat}.md" in answer["system"]


async def test_a_skill_body_behind_a_shared_render_is_read_from_each_chats_own_pin(tmp_path: Path, db_url: str) -> None:
    """A pinned skill's body is left out of the render digest (the prompt shows its name and description): a hostile
    agent pushing the victim's skill with another body shares the victim's render, which is exactly what it renders
    itself, but ``read_skill`` still answers each chat from its own pin."""
    victims = [text_resource(Kind.SKILL, SKILL, skill_md("deploy", "Deploys", body=f"Use {SECRET}.\n"), name="deploy",
                             description="Deploys"), mcp_server("time", "now")]  # fmt: skip
    forged = [text_resource(Kind.SKILL, SKILL, skill_md("deploy", "Deploys", body="Ship it.\n"), name="deploy",
                            description="Deploys"), mcp_server("time", "now")]  # fmt: skip
    async with two_users(tmp_path, db_url=db_url) as running:
        await running.push("alice", victims)
        await running.push("bob", forged)
        victim, chat = await running.chat("alice"), await running.chat("bob")
        await running.prompt("alice", victim)
        answer, said = await running.prompt("bob", chat)
        assert said == "hit" and answer == await running.fresh("bob", chat)
        for who, chat_id, body in (("bob", chat, "Ship it."), ("alice", victim, f"Use {SECRET}.")):
            result = await running.plane.chats.call_tool(
                running.people[who].user, chat_id, "read_skill", {"name": "deploy"}
            )
            assert not result.is_error and body in result.content
        bobs = await running.plane.chats.call_tool(running.people["bob"].user, chat, "read_skill", {"name": "deploy"})
        assert SECRET not in bobs.content
