"""Personal skills: SKILL.md files a user keeps on the control plane, offered in all their chats.

Each is validated like a workspace skill under the Agent Skills spec (kebab-case name of
at most 64 characters, a description of at most 1,024), at most 64 KiB, at most 100 a
user. Their descriptions are bounded here, at upload, so the prompt does not cut them.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from agentcontext.control import contents
from agentcontext.control import tables as t
from agentcontext.control.contents import Executor
from agentcontext.control.models import PersonalSkill, User
from agentcontext.errors import ConflictError, FrontmatterError, InvalidRequestError, NotFoundError
from agentcontext.skills.frontmatter import parse
from agentcontext.skills.validation import check

MAX_SKILLS = 100
MAX_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Checked:
    name: str
    description: str
    text: str


def check_skill(text: str) -> Checked:
    """Raises: InvalidRequestError naming every problem found."""
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise InvalidRequestError(f"skill is {size} bytes; the limit is {MAX_BYTES}")
    try:
        raw_name = parse(text, repair=False).fields.get("name")
    except FrontmatterError as exc:
        raise InvalidRequestError(f"invalid SKILL.md: {exc}") from None
    name = raw_name if isinstance(raw_name, str) else ""
    result = check(text, name, "spec")
    if result.errors or not result.name:
        raise InvalidRequestError("invalid SKILL.md: " + "; ".join(result.errors or ("missing name",)))
    # the spec validates the NFKC form: store that, so "ｒｅｖｉｅｗ" and "review" are one name
    return Checked(unicodedata.normalize("NFKC", result.name), result.description or "", text)


def list_skills(session: Session, owner_id: str) -> Sequence[PersonalSkill]:
    return session.scalars(
        sa.select(PersonalSkill).where(PersonalSkill.owner_id == owner_id).order_by(PersonalSkill.name)
    ).all()


def get(session: Session, owner_id: str, name: str) -> tuple[PersonalSkill, str]:
    """The skill and its SKILL.md text.

    Raises:
        NotFoundError: the user has no skill of that name.
    """
    skill = session.scalar(
        sa.select(PersonalSkill).where(
            PersonalSkill.owner_id == owner_id, PersonalSkill.name == unicodedata.normalize("NFKC", name)
        )
    )
    if skill is None:
        raise NotFoundError(f'skill "{name}" not found')
    return skill, contents.get(session, [skill.content_key])[skill.content_key]


_PERSONAL_TEXT = (
    sa.select(t.contents.c.text)
    .select_from(t.personal_skills.join(t.contents, t.contents.c.hash == t.personal_skills.c.content_key))
    .where(t.personal_skills.c.owner_id == sa.bindparam("owner_id"), t.personal_skills.c.name == sa.bindparam("name"))
)


def text_of(executor: Executor, owner_id: str, name: str) -> str | None:
    """A personal skill's SKILL.md text, or None when the user has no skill of that name."""
    text: str | None = executor.scalar(
        _PERSONAL_TEXT, {"owner_id": owner_id, "name": unicodedata.normalize("NFKC", name)}
    )
    return text


def create(session: Session, owner_id: str, text: str, *, now: dt.datetime) -> PersonalSkill:
    """Raises: InvalidRequestError (invalid, or the 100-skill limit), ConflictError (name taken)."""
    checked = check_skill(text)
    _serialize_per_user(session, owner_id)
    count = session.scalar(sa.select(sa.func.count()).where(PersonalSkill.owner_id == owner_id)) or 0
    if count >= MAX_SKILLS:
        raise InvalidRequestError(f"at most {MAX_SKILLS} personal skills a user; delete one first")
    exists = session.scalar(
        sa.select(PersonalSkill.id).where(PersonalSkill.owner_id == owner_id, PersonalSkill.name == checked.name)
    )
    if exists is not None:
        raise ConflictError(f'you already have a skill named "{checked.name}"')
    key = contents.put(session, [text])[text]
    skill = PersonalSkill(
        owner_id=owner_id,
        name=checked.name,
        description=checked.description,
        content_key=key,
        size_bytes=len(text.encode("utf-8")),
        created_at=now,
        updated_at=now,
    )
    session.add(skill)
    session.flush()
    return skill


def _serialize_per_user(session: Session, owner_id: str) -> None:
    """Make a user's concurrent creations conflict, so the 100-skill count is never read stale.

    On PostgreSQL (REPEATABLE READ) two creations would each count 99 and both insert; a
    write to the user's row makes the second wait, fail to serialize and be retried, and
    then count 100. (SQLite runs one writer at a time anyway.)
    """
    session.execute(
        sa.update(User).where(User.id == owner_id).values(name=User.name).execution_options(synchronize_session=False)
    )


def update(session: Session, owner_id: str, name: str, text: str, *, now: dt.datetime) -> PersonalSkill:
    """Replace a skill's SKILL.md; a rename must not take another skill's name.

    Raises:
        NotFoundError, InvalidRequestError, ConflictError.
    """
    skill, _ = get(session, owner_id, name)
    checked = check_skill(text)
    if checked.name != skill.name:
        taken = session.scalar(
            sa.select(PersonalSkill.id).where(PersonalSkill.owner_id == owner_id, PersonalSkill.name == checked.name)
        )
        if taken is not None:
            raise ConflictError(f'you already have a skill named "{checked.name}"')
    skill.name = checked.name
    skill.description = checked.description
    skill.content_key = contents.put(session, [text])[text]
    skill.size_bytes = len(text.encode("utf-8"))
    skill.updated_at = now
    session.flush()
    return skill


def delete(session: Session, owner_id: str, name: str) -> None:
    """Raises: NotFoundError."""
    result: sa.CursorResult[Any] = session.execute(  # type: ignore[assignment]
        sa.delete(PersonalSkill).where(
            PersonalSkill.owner_id == owner_id, PersonalSkill.name == unicodedata.normalize("NFKC", name)
        )
    )
    if not result.rowcount:
        raise NotFoundError(f'skill "{name}" not found')
