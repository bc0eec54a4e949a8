"""Skill aliases across workspace and personal skills (coder.md 2.4, 2.6)."""

from __future__ import annotations

import pytest

from agentcontext.control.skill_index import AmbiguousSkill, SkillRef, index, resolve, usable_skill_name
from agentcontext.errors import NotFoundError

WORKSPACE = [("review", "Reviews code"), ("lint", "Lints")]
PERSONAL = [("review", "My own review"), ("notes", "Takes notes")]


def aliases(refs: list[SkillRef]) -> list[tuple[str, bool]]:
    return [(ref.alias, ref.personal) for ref in refs]


def test_names_that_do_not_collide_are_listed_bare_workspace_first() -> None:
    refs = index([("lint", "Lints")], [("notes", "Takes notes")])
    assert aliases(refs) == [("lint", False), ("notes", True)]
    assert [ref.entry.qualified for ref in refs] == [False, False]


def test_only_colliding_names_get_qualified_aliases() -> None:
    refs = index(WORKSPACE, PERSONAL)
    assert aliases(refs) == [
        ("workspace/review", False),
        ("lint", False),
        ("personal/review", True),
        ("notes", True),
    ]
    assert [ref.entry.qualified for ref in refs] == [True, False, True, False]
    assert [ref.name for ref in refs] == ["review", "lint", "review", "notes"]


def test_descriptions_travel_with_their_skill() -> None:
    refs = index(WORKSPACE, PERSONAL)
    assert [(ref.alias, ref.description) for ref in refs if ref.name == "review"] == [
        ("workspace/review", "Reviews code"),
        ("personal/review", "My own review"),
    ]


def test_a_bare_name_resolves_to_its_only_skill() -> None:
    refs = index(WORKSPACE, PERSONAL)
    assert resolve(refs, "lint") == SkillRef("lint", "lint", "Lints", False)
    assert resolve(refs, "notes") == SkillRef("notes", "notes", "Takes notes", True)


def test_qualified_aliases_resolve_to_their_kind() -> None:
    refs = index(WORKSPACE, PERSONAL)
    assert resolve(refs, "workspace/review") == SkillRef("workspace/review", "review", "Reviews code", False)
    assert resolve(refs, "personal/review") == SkillRef("personal/review", "review", "My own review", True)


def test_qualified_aliases_resolve_even_without_a_collision() -> None:
    refs = index(WORKSPACE, PERSONAL)
    assert resolve(refs, "workspace/lint").name == "lint"
    assert resolve(refs, "personal/notes").personal is True


def test_a_qualified_alias_of_the_wrong_kind_is_not_found() -> None:
    refs = index(WORKSPACE, PERSONAL)
    with pytest.raises(NotFoundError, match='^skill "personal/lint" not found$'):
        resolve(refs, "personal/lint")
    with pytest.raises(NotFoundError, match='^skill "workspace/notes" not found$'):
        resolve(refs, "workspace/notes")


def test_an_unknown_name_is_not_found() -> None:
    with pytest.raises(NotFoundError, match='^skill "nope" not found$'):
        resolve(index(WORKSPACE, PERSONAL), "nope")
    with pytest.raises(NotFoundError, match='^skill "lint" not found$'):
        resolve([], "lint")


def test_a_bare_colliding_name_is_ambiguous_and_names_both_aliases() -> None:
    with pytest.raises(AmbiguousSkill) as caught:
        resolve(index(WORKSPACE, PERSONAL), "review")
    message = str(caught.value)
    assert "skill lookup is ambiguous" in message
    assert "personal/review" in message and "workspace/review" in message


def test_lookup_is_exact_about_case() -> None:
    with pytest.raises(NotFoundError):
        resolve(index(WORKSPACE, PERSONAL), "Lint")


@pytest.mark.parametrize(
    ("name", "usable"),
    [
        ("lint", True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("", False),
        (None, False),
        ("team/lint", False),
        ("line\nbreak", False),
        ("tab\there", False),
    ],
)
def test_usable_skill_names_are_one_printable_line_without_a_slash(name: str | None, usable: bool) -> None:
    assert usable_skill_name(name) is usable
