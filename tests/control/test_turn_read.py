"""A prompt's miss reads the chat's turn key and the render's inputs in one statement (``turns.turn_and_inputs``):
what it reads must be what the key and the inputs read apart, in one transaction, would be."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Connection

from agentcontext.control.turns import read_inputs, turn_and_inputs, turn_row
from agentcontext.errors import NotFoundError
from agentcontext.resource import Kind
from tests.control.conftest import REVIEW, WORK, mcp_server, text_resource
from tests.control.shared_turns import two_users

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def snapshot(rules: str) -> list:  # type: ignore[type-arg]
    return [
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/AGENTS.md", rules),
        text_resource(Kind.INSTRUCTION_FILE, f"{WORK}/api/AGENTS.md", "Nested rules.\n"),
        text_resource(
            Kind.SKILL, f"{WORK}/.agents/skills/review/SKILL.md", REVIEW, name="review", description="Reviews"
        ),
        mcp_server("time", "now"),
    ]


async def test_the_one_statement_read_agrees_with_the_key_and_inputs_read_in_a_transaction(
    tmp_path: Path, db_url: str
) -> None:
    async with two_users(tmp_path, ("alice",), db_url=db_url) as running:
        alice = running.people["alice"].user
        await running.push("alice", snapshot("Root rules.\n"))
        chat = await running.chat("alice")
        await running.push("alice", snapshot("Root rules, second edition.\n"))  # the latest MCP rows move on

        def apart(connection: Connection):  # type: ignore[no-untyped-def]
            row = turn_row(connection, alice, chat)
            return row, read_inputs(connection, alice, row)

        row, inputs = running.db.read_one(lambda c: turn_and_inputs(c, alice, chat))
        expected_row, expected = running.db.read_rows(apart)
        assert inputs is not None
        assert row == expected_row
        assert inputs.stored == expected.stored and len(inputs.stored) == 5  # 4 pinned rows and the latest server
        assert inputs.digest == expected.digest
        assert "Root rules.\n" in [raw.text for raw in inputs.stored]  # the pinned text, not the newer push's


async def test_another_users_chat_is_not_found_by_the_one_statement_read(tmp_path: Path, db_url: str) -> None:
    async with two_users(tmp_path, ("alice", "bob"), db_url=db_url) as running:
        await running.push("alice", snapshot("Root rules.\n"))
        chat = await running.chat("alice")
        bob = running.people["bob"].user
        with pytest.raises(NotFoundError):
            running.db.read_one(lambda c: turn_and_inputs(c, bob, chat))
        answer = await running.people["bob"].client.get(f"/api/v1/chats/{chat}/prompt")
        assert answer.status_code == 404


async def test_a_user_with_personal_skills_is_read_in_a_transaction_and_sees_them(tmp_path: Path, db_url: str) -> None:
    async with two_users(tmp_path, ("alice",), db_url=db_url) as running:
        alice = running.people["alice"].user
        await running.push("alice", snapshot("Root rules.\n"))
        chat = await running.chat("alice")
        skill = "---\nname: mine\ndescription: My own way of working\n---\nDo it my way.\n"
        await running.plane.skills.create(alice, skill)

        _, inputs = running.db.read_one(lambda c: turn_and_inputs(c, alice, chat))
        assert inputs is None  # the skills take a second statement: the transaction's path
        prompt, cache = await running.prompt("alice", chat)
        assert cache == "miss" and "My own way of working" in prompt["system"]
        assert prompt == await running.fresh("alice", chat)
