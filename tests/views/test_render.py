"""Prompt text of our own: skills-ref ``to-prompt`` with skills-ref itself as the oracle (B.3), and our MCP
catalog, which shortens before it leaves anything out and says so when it must."""

from __future__ import annotations

from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st
from skills_ref.prompt import to_prompt

from agentcontext.skills.frontmatter import parse_strict
from agentcontext.skills.validation import find_skill_md
from agentcontext.testing import make_workspace, skill_md
from agentcontext.views.render import CatalogEntry, XmlSkill, agent_skills_xml, skill_catalog

# --- skills-ref to-prompt -------------------------------------------------------------------


def xml_skills(*folders: Path) -> list[XmlSkill]:
    """What ``to_prompt`` reads: stripped name and description, resolved SKILL.md path."""
    skills = []
    for folder in folders:
        path = find_skill_md(folder.resolve())
        assert path is not None
        metadata = parse_strict(path.read_text(encoding="utf-8"))
        skills.append(XmlSkill(metadata["name"].strip(), metadata["description"].strip(), str(path)))
    return skills


def test_agent_skills_xml_empty_list() -> None:
    assert agent_skills_xml([]) == "<available_skills>\n</available_skills>"
    assert agent_skills_xml([]) == to_prompt([])


def test_agent_skills_xml_single_skill(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"my-skill/SKILL.md": skill_md("my-skill", "A test skill")})
    folder = tmp_path / "my-skill"
    xml = agent_skills_xml(xml_skills(folder))
    assert xml == (
        "<available_skills>\n<skill>\n<name>\nmy-skill\n</name>\n<description>\nA test skill\n</description>\n"
        f"<location>\n{folder.resolve() / 'SKILL.md'}\n</location>\n</skill>\n</available_skills>"
    )
    assert xml == to_prompt([folder])


def test_agent_skills_xml_multiple_skills(tmp_path: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "skill-a/SKILL.md": skill_md("skill-a", "First skill"),
            "skill-b/SKILL.md": skill_md("skill-b", "Second skill"),
        },
    )
    folders = [tmp_path / "skill-a", tmp_path / "skill-b"]
    xml = agent_skills_xml(xml_skills(*folders))
    assert xml.count("<skill>") == xml.count("</skill>") == 2
    assert xml.index("skill-a") < xml.index("skill-b")
    assert xml == to_prompt(folders)


def test_agent_skills_xml_special_characters_escaped(tmp_path: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "special-skill/SKILL.md": skill_md("special-skill", "Use <foo> & <bar> tags"),
            "tables/SKILL.md": skill_md("tables", "'Extract <text> & \"tables\"'"),
        },
    )
    folders = [tmp_path / "special-skill", tmp_path / "tables"]
    xml = agent_skills_xml(xml_skills(*folders))
    assert "\nUse &lt;foo&gt; &amp; &lt;bar&gt; tags\n" in xml
    assert "\nExtract &lt;text&gt; &amp; &quot;tables&quot;\n" in xml
    assert "<foo>" not in xml
    assert xml == to_prompt(folders)


def test_agent_skills_xml_escapes_names_and_apostrophes() -> None:
    xml = agent_skills_xml([XmlSkill("it's<x>", "Bob's", "/s/SKILL.md")])
    assert "\nit&#x27;s&lt;x&gt;\n" in xml
    assert "\nBob&#x27;s\n" in xml


# --- our MCP skill catalog -----------------------------------------------------------------


def catalog_lines(catalog: str) -> list[str]:
    lines = catalog.split("\n")
    assert lines[0] == "## Skills"
    return lines[1:]


def test_skill_catalog_is_empty_without_skills() -> None:
    assert skill_catalog([]) == ""


def test_skill_catalog_lists_name_scope_and_description() -> None:
    catalog = skill_catalog([CatalogEntry("alpha", "repo", "Does alpha things"), CatalogEntry("beta", "user", "")])
    assert catalog == "## Skills\n- alpha (repo) \u2014 Does alpha things\n- beta (user)"


def test_skill_catalog_at_exactly_the_budget_is_not_shortened() -> None:
    entries = [CatalogEntry("alpha", "repo", "Does alpha things"), CatalogEntry("beta", "user", "Does beta")]
    full = skill_catalog(entries)
    assert skill_catalog(entries, budget_chars=len(full)) == full
    one_less = skill_catalog(entries, budget_chars=len(full) - 1)
    assert one_less != full
    assert len(one_less) <= len(full) - 1


def test_skill_catalog_shortens_descriptions_before_leaving_any_skill_out() -> None:
    entries = [CatalogEntry(f"skill-{i:02d}", "repo", "Does a long list of useful things " * 3) for i in range(20)]
    catalog = skill_catalog(entries, budget_chars=1_200)
    lines = catalog_lines(catalog)
    assert [line.split(" ")[1] for line in lines] == [entry.name for entry in entries]
    assert all(line.endswith("\u2026") for line in lines)
    assert len(catalog) <= 1_200
    assert lines[0].startswith("- skill-00 (repo) \u2014 Does a")


def test_skill_catalog_gives_short_descriptions_in_full_and_the_rest_to_long_ones() -> None:
    entries = [CatalogEntry("short", "repo", "Tiny."), CatalogEntry("long", "user", "x" * 500)]
    catalog = skill_catalog(entries, budget_chars=200)
    lines = catalog_lines(catalog)
    assert lines[0] == "- short (repo) \u2014 Tiny."
    assert lines[1].startswith("- long (user) \u2014 xxx")
    assert lines[1].endswith("x\u2026")
    assert len(catalog) <= 200


def test_skill_catalog_says_how_many_skills_were_left_out_when_bare_lines_do_not_fit() -> None:
    entries = [CatalogEntry(f"skill-{i:03d}", "plugin", "desc") for i in range(100)]
    catalog = skill_catalog(entries, budget_chars=1_000)
    lines = catalog_lines(catalog)
    listed = lines[:-1]
    assert all(line.startswith("- skill-") for line in listed)
    assert listed == [f"- skill-{i:03d} (plugin)" for i in range(len(listed))]
    left = 100 - len(listed)
    assert left > 0
    assert lines[-1] == (
        f"({left} more skill(s) not listed to fit the catalog budget; call skills_list for all of them.)"
    )
    assert len(catalog) <= 1_000


_CATALOG_ENTRY = st.builds(
    CatalogEntry,
    name=st.from_regex(r"[a-z][a-z0-9-]{0,30}", fullmatch=True),
    scope=st.sampled_from(["repo", "user", "plugin"]),
    description=st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=300)
    | st.text(st.sampled_from("ab "), min_size=100, max_size=300),
)
_CATALOG_ENTRIES = st.lists(_CATALOG_ENTRY, min_size=1, max_size=10) | st.lists(
    _CATALOG_ENTRY, min_size=15, max_size=40
)


@settings(max_examples=100, deadline=None)
@given(entries=_CATALOG_ENTRIES, scale=st.sampled_from([0.05, 0.2, 0.5, 0.9]) | st.floats(0.0, 1.2))
def test_skill_catalog_never_silently_drops_a_skill(entries: list[CatalogEntry], scale: float) -> None:
    budget = max(200, int(len(skill_catalog(entries, budget_chars=10**9)) * scale))
    catalog = skill_catalog(entries, budget_chars=budget)
    lines = catalog_lines(catalog)
    note = lines[-1] if lines[-1].startswith("(") else None
    listed = lines[:-1] if note else lines
    assert [line[2:].split(" (")[0] for line in listed] == [entry.name for entry in entries[: len(listed)]]
    if note is None:
        assert len(listed) == len(entries)
        event("shortened" if "\u2026" in catalog else "complete")
    else:
        assert note.startswith(f"({len(entries) - len(listed)} more skill(s) not listed")
        event("some left out")
    assert len(catalog) <= budget
