"""Personal skills: the SKILL.md files a user keeps on the control plane, each user's own (``personal_skills``)."""

from __future__ import annotations

from typing import TypedDict

from sqlalchemy.orm import Session

from agentcontext.control import personal_skills, wire
from agentcontext.control.identity import UserPrincipal
from agentcontext.control.models import PersonalSkill, now
from agentcontext.control.store import Store


class SkillService:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def listing(self, user: UserPrincipal) -> list[wire.SkillSummary]:
        return await self._store.read_orm(
            lambda s: [summary(skill) for skill in personal_skills.list_skills(s, user.user_id)]
        )

    async def get(self, user: UserPrincipal, name: str) -> wire.SkillDetail:
        def work(session: Session) -> wire.SkillDetail:
            skill, text = personal_skills.get(session, user.user_id, name)
            return wire.SkillDetail(**_fields(skill), content=text)

        return await self._store.read_orm(work)

    async def create(self, user: UserPrincipal, text: str) -> wire.SkillSummary:
        return await self._store.write_orm(lambda s: summary(personal_skills.create(s, user.user_id, text, now=now())))

    async def update(self, user: UserPrincipal, name: str, text: str) -> wire.SkillSummary:
        return await self._store.write_orm(
            lambda s: summary(personal_skills.update(s, user.user_id, name, text, now=now()))
        )

    async def delete(self, user: UserPrincipal, name: str) -> None:
        await self._store.write_orm(lambda s: personal_skills.delete(s, user.user_id, name))


def summary(skill: PersonalSkill) -> wire.SkillSummary:
    return wire.SkillSummary(**_fields(skill))


class _Fields(TypedDict):
    name: str
    description: str
    size_bytes: int
    created_at: str
    updated_at: str


def _fields(skill: PersonalSkill) -> _Fields:
    return {
        "name": skill.name,
        "description": skill.description,
        "size_bytes": skill.size_bytes,
        "created_at": skill.created_at.isoformat(),
        "updated_at": skill.updated_at.isoformat(),
    }
