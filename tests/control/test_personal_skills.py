"""Personal skills (issue 5, "Personal skills"): SKILL.md files a user keeps on the control plane.

Validated like workspace skills under the Agent Skills spec (skills-ref's rules and
wording), at most 64 KiB each and 100 a user; one user never sees or changes another's.
"""

from __future__ import annotations

import datetime as dt
import threading

import pytest
import sqlalchemy as sa

from agentcontext.control import identity, personal_skills
from agentcontext.control.db import Database
from agentcontext.control.models import Content, PersonalSkill
from agentcontext.errors import ConflictError, InvalidRequestError, NotFoundError
from agentcontext.testing import skill_md

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)
REVIEW = skill_md("review", "Reviews a change", body="# Review\n\nRead the diff first.\n")


def user(db: Database, name: str) -> str:
    return db.write(lambda s: identity.create_user(s, name)).id


@pytest.fixture
def alice(db: Database) -> str:
    return user(db, "alice")


def create(db: Database, owner: str, text: str) -> PersonalSkill:
    return db.write(lambda s: personal_skills.create(s, owner, text, now=T0))


def names(db: Database, owner: str) -> list[str]:
    with db.read() as session:
        return [skill.name for skill in personal_skills.list_skills(session, owner)]


def get(db: Database, owner: str, name: str) -> tuple[PersonalSkill, str]:
    with db.read() as session:
        return personal_skills.get(session, owner, name)


def test_a_created_skill_is_listed_and_read_back_whole(db: Database, alice: str) -> None:
    created = create(db, alice, REVIEW)

    skill, text = get(db, alice, "review")
    assert text == REVIEW
    assert (skill.id, skill.name, skill.description, skill.size_bytes) == (
        created.id,
        "review",
        "Reviews a change",
        len(REVIEW.encode()),
    )
    assert (skill.created_at, skill.updated_at) == (T0, T0)
    assert names(db, alice) == ["review"]


def test_skills_are_listed_by_name(db: Database, alice: str) -> None:
    for name in ("zeta", "alpha", "mid"):
        create(db, alice, skill_md(name, f"The {name} skill"))

    assert names(db, alice) == ["alpha", "mid", "zeta"]


def test_updating_a_skill_replaces_its_text_and_description(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)
    new_text = skill_md("review", "Reviews a change carefully", body="Check the tests too.\n")

    db.write(lambda s: personal_skills.update(s, alice, "review", new_text, now=T1))

    skill, text = get(db, alice, "review")
    assert (text, skill.description, skill.size_bytes) == (new_text, "Reviews a change carefully", len(new_text))
    assert (skill.created_at, skill.updated_at) == (T0, T1)


def test_updating_a_skill_under_a_new_name_renames_it(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)

    db.write(lambda s: personal_skills.update(s, alice, "review", skill_md("critique", "Critiques"), now=T1))

    assert names(db, alice) == ["critique"]
    with pytest.raises(NotFoundError, match='skill "review" not found'):
        get(db, alice, "review")


def test_renaming_onto_an_existing_name_is_a_conflict_and_changes_nothing(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)
    create(db, alice, skill_md("notes", "Keeps notes"))

    with pytest.raises(ConflictError, match='you already have a skill named "notes"'):
        db.write(lambda s: personal_skills.update(s, alice, "review", skill_md("notes", "Stolen"), now=T1))

    assert names(db, alice) == ["notes", "review"]
    assert get(db, alice, "review")[1] == REVIEW
    assert get(db, alice, "notes")[0].description == "Keeps notes"


def test_creating_a_second_skill_of_the_same_name_is_a_conflict(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)

    with pytest.raises(ConflictError, match='you already have a skill named "review"'):
        create(db, alice, skill_md("review", "Another one"))


def test_a_full_width_name_is_the_same_name_as_its_ascii_form(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)

    with pytest.raises(ConflictError, match='"review"'):
        create(db, alice, skill_md("ｒｅｖｉｅｗ", "Looks the same"))  # NFKC: the spec compares names normalised


def test_deleting_a_skill_removes_it(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)
    create(db, alice, skill_md("notes", "Keeps notes"))

    db.write(lambda s: personal_skills.delete(s, alice, "review"))

    assert names(db, alice) == ["notes"]
    with pytest.raises(NotFoundError, match='skill "review" not found'):
        db.write(lambda s: personal_skills.delete(s, alice, "review"))


@pytest.mark.parametrize("operation", ["get", "update", "delete"])
def test_a_missing_skill_is_not_found(db: Database, alice: str, operation: str) -> None:
    with pytest.raises(NotFoundError, match='skill "ghost" not found'):
        if operation == "get":
            get(db, alice, "ghost")
        elif operation == "update":
            db.write(lambda s: personal_skills.update(s, alice, "ghost", skill_md("ghost", "Boo"), now=T1))
        else:
            db.write(lambda s: personal_skills.delete(s, alice, "ghost"))


def test_users_are_isolated(db: Database, alice: str) -> None:
    bob = user(db, "bob")
    create(db, alice, REVIEW)
    create(db, bob, skill_md("review", "Bob's own review"))  # the same name is fine for another user

    with pytest.raises(NotFoundError):
        db.write(lambda s: personal_skills.delete(s, bob, "notes"))
    create(db, alice, skill_md("notes", "Keeps notes"))
    with pytest.raises(NotFoundError):
        get(db, bob, "notes")
    with pytest.raises(NotFoundError):
        db.write(lambda s: personal_skills.update(s, bob, "notes", skill_md("notes", "Hijacked"), now=T1))
    with pytest.raises(NotFoundError):
        db.write(lambda s: personal_skills.delete(s, bob, "notes"))
    db.write(lambda s: personal_skills.delete(s, bob, "review"))

    assert names(db, alice) == ["notes", "review"]
    assert get(db, alice, "review")[1] == REVIEW
    assert names(db, bob) == []


def test_a_hundred_skills_are_allowed_and_the_hundred_and_first_is_refused(db: Database, alice: str) -> None:
    for number in range(100):
        create(db, alice, skill_md(f"skill-{number}", f"Skill number {number}"))

    with pytest.raises(InvalidRequestError, match="at most 100 personal skills a user"):
        create(db, alice, skill_md("one-more", "Over the limit"))

    assert len(names(db, alice)) == 100
    create(db, user(db, "bob"), skill_md("one-more", "Bob has room"))  # the limit is per user
    db.write(lambda s: personal_skills.update(s, alice, "skill-0", skill_md("skill-0", "Updated"), now=T1))


def test_concurrent_creations_never_go_past_the_limit(db: Database, alice: str) -> None:
    for number in range(98):
        create(db, alice, skill_md(f"skill-{number}", f"Skill number {number}"))
    racers = 6
    start = threading.Barrier(racers)
    outcomes: list[str] = []

    def race(number: int) -> None:
        start.wait(timeout=30)
        try:
            create(db, alice, skill_md(f"racer-{number}", "Racing"))
            outcomes.append("created")
        except InvalidRequestError:
            outcomes.append("refused")

    threads = [threading.Thread(target=race, args=(n,)) for n in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes) == ["created", "created"] + ["refused"] * (racers - 2)
    assert len(names(db, alice)) == 100


def padded(size: int) -> str:
    """A valid SKILL.md of exactly ``size`` UTF-8 bytes."""
    head = skill_md("big", "A big skill", body="")
    return head + "x" * (size - len(head.encode()))


def test_a_skill_of_exactly_64_kib_is_accepted(db: Database, alice: str) -> None:
    created = create(db, alice, padded(64 * 1024))

    assert created.size_bytes == 65536


def test_a_skill_over_64_kib_is_refused(db: Database, alice: str) -> None:
    with pytest.raises(InvalidRequestError, match="skill is 65537 bytes; the limit is 65536"):
        create(db, alice, padded(64 * 1024 + 1))
    with pytest.raises(InvalidRequestError, match="the limit is 65536"):
        create(db, alice, skill_md("wide", "Counted in bytes", body="é" * 32768))

    assert names(db, alice) == []


def test_an_update_over_64_kib_is_refused_and_the_skill_kept(db: Database, alice: str) -> None:
    create(db, alice, skill_md("big", "A big skill"))

    with pytest.raises(InvalidRequestError, match="the limit is 65536"):
        db.write(lambda s: personal_skills.update(s, alice, "big", padded(64 * 1024 + 1), now=T1))

    assert get(db, alice, "big")[1] == skill_md("big", "A big skill")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(skill_md("Review", "x"), "Skill name 'Review' must be lowercase", id="upper-case-name"),
        pytest.param(skill_md("re view", "x"), "contains invalid characters", id="space-in-name"),
        pytest.param(skill_md("a/b", "x"), "contains invalid characters", id="slash-in-name"),
        pytest.param(skill_md("-review", "x"), "cannot start or end with a hyphen", id="leading-hyphen"),
        pytest.param(skill_md("re--view", "x"), "cannot contain consecutive hyphens", id="double-hyphen"),
        pytest.param(skill_md("a" * 65, "x"), "exceeds 64 character limit (65 chars)", id="name-too-long"),
        pytest.param(skill_md(None, "x"), "Missing required field in frontmatter: name", id="missing-name"),
        pytest.param(skill_md("review", None), "Missing required field in frontmatter: description", id="no-desc"),
        pytest.param(skill_md("review", "d" * 1025), "Description exceeds 1024 character limit", id="long-desc"),
        pytest.param(skill_md("review", "x", color="red"), "Unexpected fields in frontmatter: color", id="extra"),
        pytest.param("---\nname: review\ndescription: a: b\n---\n", "invalid YAML", id="bad-yaml"),
        pytest.param("---\nname: [review]\ndescription: x\n---\n", "Invalid YAML in frontmatter", id="flow-yaml"),
        pytest.param("# Review\n\nNo frontmatter.\n", "missing YAML frontmatter", id="no-frontmatter"),
        pytest.param("---\nname: review\ndescription: x\n", "invalid SKILL.md", id="unclosed-frontmatter"),
        pytest.param("", "invalid SKILL.md", id="empty"),
    ],
)
def test_an_invalid_skill_is_refused_with_the_specs_words(db: Database, alice: str, text: str, message: str) -> None:
    with pytest.raises(InvalidRequestError, match="invalid SKILL.md") as caught:
        create(db, alice, text)

    assert message in str(caught.value)
    assert names(db, alice) == []


def test_an_invalid_update_is_refused_and_the_skill_kept(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)

    with pytest.raises(InvalidRequestError, match="Missing required field in frontmatter: description"):
        db.write(lambda s: personal_skills.update(s, alice, "review", skill_md("review", None), now=T1))

    assert get(db, alice, "review")[1] == REVIEW


def test_skill_texts_are_stored_once_and_shared_between_users(db: Database, alice: str) -> None:
    create(db, alice, REVIEW)
    create(db, user(db, "bob"), REVIEW)

    with db.read() as session:
        keys = session.scalars(sa.select(PersonalSkill.content_key)).all()
        assert len(keys) == 2 and len(set(keys)) == 1
        assert session.scalar(sa.select(sa.func.count()).select_from(Content)) == 1


def test_a_skill_is_found_by_any_form_of_its_name(db: Database, alice: str) -> None:
    create(db, alice, skill_md("ｒｅｖｉｅｗ", "Typed in full width"))

    assert names(db, alice) == ["review"]
    assert get(db, alice, "ｒｅｖｉｅｗ")[0].name == "review"
    db.write(lambda s: personal_skills.update(s, alice, "ｒｅｖｉｅｗ", REVIEW, now=T1))  # not a rename
    db.write(lambda s: personal_skills.delete(s, alice, "ｒｅｖｉｅｗ"))
    assert names(db, alice) == []
