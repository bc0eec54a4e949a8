"""Codex's budgeted ``## Skills`` list (``core-skills/src/render.rs`` tests, codex-skills.md A.3) and its
AGENTS.md wrapper (A.1)."""

from __future__ import annotations

from agentcontext.peers.codex.render import (
    SKILLS_HOW_TO_USE,
    SKILLS_INTRO,
    TRUNCATED_WARNING,
    TRUNCATED_WARNING_PERCENT,
    Budget,
    RenderedSkills,
    SkillLine,
    codex_instructions,
    codex_skills,
)
from agentcontext.resource import Scope

UNLIMITED_CHARS = Budget(10**9)
UNLIMITED_TOKENS = Budget(10**9, tokens=True)


# --- Codex: budget ------------------------------------------------------------------------


def test_default_budget_uses_two_percent_of_full_context_window() -> None:
    assert Budget.for_window(200_000) == Budget(4_000, tokens=True)
    assert Budget.for_window(99) == Budget(1, tokens=True)


def test_default_budget_falls_back_to_characters_without_context_window() -> None:
    assert Budget.for_window(None) == Budget(8_000)
    assert Budget.for_window(-1) == Budget(8_000)


def test_token_budget_counts_about_four_bytes_per_token() -> None:
    assert UNLIMITED_TOKENS.cost("abcd") == 1
    assert UNLIMITED_TOKENS.cost("abcde") == 2
    assert UNLIMITED_TOKENS.cost("éé") == 1
    assert UNLIMITED_CHARS.cost("éé") == 2


# --- Codex: budgeted rendering ------------------------------------------------------------


def make_skill(name: str, scope: Scope = Scope.REPO, description: str = "desc") -> SkillLine:
    return SkillLine(name, description, f"/tmp/{name}/SKILL.md", scope)


def minimum_cost(budget: Budget, *skills: SkillLine) -> int:
    return sum(budget.cost(skill.render(0) + "\n") for skill in skills)


def rendered(skills: list[SkillLine], budget: Budget) -> RenderedSkills:
    result = codex_skills(skills, budget)
    assert result is not None
    return result


def test_codex_skills_renders_nothing_without_skills() -> None:
    assert codex_skills([], Budget(8_000)) is None


def test_codex_skill_lines_show_name_description_and_path() -> None:
    with_description = make_skill("alpha-skill", description="Does alpha")
    assert with_description.render() == "- alpha-skill: Does alpha (file: /tmp/alpha-skill/SKILL.md)"
    assert make_skill("empty-skill", description="").render() == "- empty-skill: (file: /tmp/empty-skill/SKILL.md)"


def test_codex_skills_section_wraps_the_lines_in_the_codex_text() -> None:
    result = rendered([make_skill("alpha-skill")], Budget(8_000))
    line = "- alpha-skill: desc (file: /tmp/alpha-skill/SKILL.md)"
    assert result.section() == (
        f"\n## Skills\n{SKILLS_INTRO}\n### Available skills\n{line}\n### How to use skills\n{SKILLS_HOW_TO_USE}\n"
    )
    assert SKILLS_INTRO == (
        "A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. Below is the list "
        "of skills that can be used. Each entry includes a name, description, and file path so you can open the "
        "source for full instructions when using a specific skill."
    )
    how_to = SKILLS_HOW_TO_USE.split("\n")
    assert how_to[0].startswith("- Discovery: The list above is the skills available in this session")
    assert "  2) When `SKILL.md` references relative paths (e.g., `scripts/foo.py`), resolve them" in how_to[5]
    assert how_to[-1].startswith("- Safety and fallback: If a skill can't be applied cleanly")
    assert len(how_to) == 17


def test_budgeted_rendering_keeps_everything_when_it_fits() -> None:
    result = rendered([make_skill("beta-skill"), make_skill("alpha-skill")], UNLIMITED_CHARS)
    assert result == RenderedSkills(
        (
            "- alpha-skill: desc (file: /tmp/alpha-skill/SKILL.md)",
            "- beta-skill: desc (file: /tmp/beta-skill/SKILL.md)",
        ),
        included=2,
        omitted=0,
        truncated_chars=0,
        warning=None,
    )


def test_budgeted_rendering_truncates_descriptions_equally_before_omitting_skills() -> None:
    alpha = make_skill("alpha-skill", description="abcdef")
    beta = make_skill("beta-skill", description="uvwxyz")
    budget = Budget(minimum_cost(UNLIMITED_CHARS, alpha, beta) + 6)
    result = rendered([beta, alpha], budget)
    assert (result.included, result.omitted, result.truncated_chars, result.warning) == (2, 0, 8, None)
    assert result.lines == (alpha.render(2), beta.render(2))
    assert result.lines == (
        "- alpha-skill: ab (file: /tmp/alpha-skill/SKILL.md)",
        "- beta-skill: uv (file: /tmp/beta-skill/SKILL.md)",
    )


def test_budgeted_rendering_does_not_warn_when_average_description_truncation_is_within_threshold() -> None:
    alpha = make_skill("alpha-skill", description="abcdefghij")
    beta = make_skill("beta-skill", description="uvwxyzabcd")
    result = rendered([alpha, beta], Budget(minimum_cost(UNLIMITED_CHARS, alpha, beta) + 6))
    assert (result.included, result.omitted, result.truncated_chars, result.warning) == (2, 0, 16, None)


def test_budgeted_rendering_warns_when_average_description_truncation_exceeds_threshold() -> None:
    long_skill = make_skill("long-skill", description="a" * 250)
    empty_skill = make_skill("empty-skill", description="")
    result = rendered([long_skill, empty_skill], Budget(minimum_cost(UNLIMITED_CHARS, long_skill, empty_skill) + 49))
    assert (result.included, result.omitted, result.truncated_chars) == (2, 0, 202)
    assert result.warning == (
        "Skill descriptions were shortened to fit the skills context budget. Codex can still see every skill, "
        "but some descriptions are shorter. Disable unused skills or plugins to leave more room for the rest."
    )
    assert result.warning == TRUNCATED_WARNING


def test_budgeted_rendering_token_budget_truncation_warning_mentions_two_percent() -> None:
    long_skill = make_skill("long-skill", description="a" * 1000)
    result = rendered([long_skill], Budget(minimum_cost(UNLIMITED_TOKENS, long_skill) + 1, tokens=True))
    assert result.warning == TRUNCATED_WARNING_PERCENT
    assert result.warning is not None
    assert "fit the 2% skills context budget." in result.warning


def test_budgeted_rendering_redistributes_unused_description_budget() -> None:
    short = make_skill("short-skill", description="x")
    long = make_skill("long-skill", description="abcdefghi")
    result = rendered([short, long], Budget(minimum_cost(UNLIMITED_CHARS, short, long) + 11))
    assert (result.included, result.omitted, result.warning) == (2, 0, None)
    assert result.lines == (long.render(8), short.render())
    assert result.lines[0] == "- long-skill: abcdefgh (file: /tmp/long-skill/SKILL.md)"


def test_budgeted_rendering_preserves_prompt_priority_when_minimum_lines_exceed_budget() -> None:
    # Codex ranks System, Admin, Repo, User; we have no System or Admin, so repo comes first.
    repo_z = make_skill("zz-repo-skill", Scope.REPO)
    repo_y = make_skill("yy-repo-skill", Scope.REPO)
    user = make_skill("aa-user-skill", Scope.USER)
    plugin = make_skill("bb:plugin-skill", Scope.PLUGIN)
    budget = Budget(minimum_cost(UNLIMITED_CHARS, repo_z, repo_y))
    result = rendered([user, repo_z, plugin, repo_y], budget)
    assert (result.included, result.omitted) == (2, 2)
    assert result.warning == (
        "Exceeded skills context budget. All skill descriptions were removed and 2 additional skills were not "
        "included in the model-visible skills list."
    )
    assert result.lines == (repo_y.render(0), repo_z.render(0))
    assert not any("desc" in line for line in result.lines)


def test_budgeted_rendering_orders_repo_skills_before_user_and_plugin_skills() -> None:
    skills = [make_skill("a-user", Scope.USER), make_skill("b:plugin", Scope.PLUGIN), make_skill("z-repo")]
    assert [line.split(":")[0] for line in rendered(skills, UNLIMITED_CHARS).lines] == ["- z-repo", "- a-user", "- b"]


def test_budgeted_rendering_keeps_scanning_after_oversized_entry() -> None:
    oversized = make_skill("oversized-repo-skill", description="desc " * 100)
    repo = make_skill("repo-skill")
    result = rendered([oversized, repo], Budget(UNLIMITED_CHARS.cost(repo.render() + "\n")))
    assert (result.included, result.omitted) == (1, 1)
    assert result.warning == (
        "Exceeded skills context budget. All skill descriptions were removed and 1 additional skill was not "
        "included in the model-visible skills list."
    )
    assert result.lines == (repo.render(0),)


def test_budgeted_rendering_token_budget_omission_warning_mentions_two_percent() -> None:
    skills = [make_skill("alpha-skill"), make_skill("beta-skill")]
    result = rendered(skills, Budget(minimum_cost(UNLIMITED_TOKENS, skills[0]), tokens=True))
    assert result.warning == (
        "Exceeded skills context budget of 2%. All skill descriptions were removed and 1 additional skill was not "
        "included in the model-visible skills list."
    )


def test_budgeted_rendering_cuts_multibyte_descriptions_by_character() -> None:
    skill = make_skill("emoji-skill", description="\U0001f4a1" * 10)
    result = rendered([skill], Budget(minimum_cost(UNLIMITED_CHARS, skill) + 4))
    assert result.lines == (skill.render(3),)
    assert result.truncated_chars == 7


# --- AGENTS.md wrapper ---------------------------------------------------------------------


def test_codex_instructions_wrap_the_text_for_the_working_directory() -> None:
    assert codex_instructions("root doc\n\ncrate doc", "/repo/crate") == (
        "# AGENTS.md instructions for /repo/crate\n\n<INSTRUCTIONS>\nroot doc\n\ncrate doc\n</INSTRUCTIONS>"
    )
