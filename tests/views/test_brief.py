"""The MCP instructions: Codex Free's ``build_*`` order tests (codex-skills.md D), in our words."""

from __future__ import annotations

from pathlib import Path

from agentcontext.instructions.project_doc import SEPARATOR, DocFile, ProjectDoc
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.skills.files import offered
from agentcontext.testing import make_workspace, scan_tree, skill_md
from agentcontext.views.brief import BRIEF, DOC_INTRO, NO_DOC, SKILLS_GUIDE, catalog, instructions, selection_brief

MARKER = "--- project-doc ---"


def doc(global_text: str = "", project_text: str = "") -> ProjectDoc:
    files = (DocFile("/repo/AGENTS.md", False, Scope.PROJECT),) if project_text else ()
    return ProjectDoc(files, global_text, project_text)


def skill(name: str, description: str, scope: Scope = Scope.REPO) -> Resource:
    return Resource(
        Kind.SKILL, f"/repo/.agents/skills/{name}/SKILL.md", scope, Status.OK, name=name, description=description
    )


def test_build_orders_brief_skills_intro_marker_doc() -> None:
    text = instructions(doc(project_text="Never force-push."), [skill("deploy", "Ship a release")])
    positions = [
        text.index(BRIEF),
        text.index("## Skills"),
        text.index("- deploy (repo) — Ship a release"),
        text.index(DOC_INTRO),
        text.index(MARKER),
        text.index("Never force-push."),
    ]
    assert positions == sorted(positions)
    assert text.startswith(BRIEF)
    assert text.endswith(SEPARATOR + "Never force-push.")


def test_build_is_exactly_brief_catalog_guide_intro_and_doc() -> None:
    skills = [skill("deploy", "Ship a release")]
    text = instructions(doc(project_text="Never force-push."), skills)
    head = "\n\n".join([BRIEF, catalog(skills, budget_chars=8_000), SKILLS_GUIDE, DOC_INTRO])
    assert text == head + SEPARATOR + "Never force-push."


def test_build_announces_no_skill_library_when_none() -> None:
    text = instructions(doc(project_text="Never force-push."), [])
    assert "## Skills" not in text
    assert SKILLS_GUIDE not in text
    assert text == BRIEF + "\n\n" + DOC_INTRO + SEPARATOR + "Never force-push."


def test_build_lists_installed_skills_and_how_to_read_them() -> None:
    text = instructions(doc(), [skill("deploy", "Ship a release"), skill("lint", "Lint it", Scope.USER)])
    assert "## Skills\n- deploy (repo) — Ship a release\n- lint (user) — Lint it" in text
    assert "skills_read" in text


def test_home_text_sits_before_the_marker_and_project_text_after_it() -> None:
    text = instructions(doc(global_text="Home rules.", project_text="Project rules."), [])
    assert text == "\n\n".join([BRIEF, DOC_INTRO, "Home rules."]) + SEPARATOR + "Project rules."


def test_build_omits_marker_when_there_is_no_project_text() -> None:
    text = instructions(doc(global_text="Home rules."), [skill("deploy", "Ship a release")])
    assert MARKER not in text
    assert DOC_INTRO not in text  # it would promise a marker that is not there
    assert text.endswith(NO_DOC + "\n\n" + "Home rules.")


def test_build_says_there_is_no_doc_and_has_no_marker_when_none() -> None:
    text = instructions(doc(), [skill("deploy", "Ship a release")])
    assert MARKER not in text
    assert DOC_INTRO not in text
    assert text.endswith(SKILLS_GUIDE + "\n\n" + NO_DOC)
    assert instructions(doc(), []) == BRIEF + "\n\n" + NO_DOC


def test_a_whitespace_only_doc_counts_as_no_doc() -> None:
    assert instructions(doc(project_text="  \n"), []) == BRIEF + "\n\n" + NO_DOC


def test_the_catalog_respects_its_character_budget() -> None:
    skills = [skill(f"skill-{i:02}", "x" * 200) for i in range(20)]
    listing = catalog(skills, budget_chars=1_000)
    assert listing.startswith("## Skills\n")
    assert len(listing) <= 1_000
    assert catalog([], budget_chars=1_000) == ""
    text = instructions(doc(), skills, catalog_chars=1_000)
    assert listing in text


def test_the_brief_of_a_scanned_project_inlines_its_agents_md_and_skills(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "AGENTS.md": "Never force-push.",
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship a release"),
        },
    )
    result = scan_tree(tmp_path, home=home)
    text = instructions(result.project_doc(), offered(result.snapshot.resources))
    assert "- deploy (repo) — Ship a release" in text
    assert text.index("## Skills") < text.index(MARKER) < text.index("Never force-push.")
    assert "take precedence over everything above" in text


def test_selection_brief_names_the_tools_to_pick_a_project_and_the_access_root() -> None:
    text = selection_brief("/srv/projects")
    assert text.startswith(BRIEF + "\n\n## Project selection\n")
    assert "list_projects" in text
    assert "set_project_root" in text
    assert "get_agent_brief" in text
    assert text.count("/srv/projects") == 2
    assert MARKER not in text
