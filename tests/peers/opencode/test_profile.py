"""The ``opencode`` profile: what loads, in which order, with which text (binary checks: tests/realagents)."""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.peers.config_file import strip_comments
from agentcontext.peers.opencode.globs import expand_braces
from agentcontext.peers.opencode.skills import collation_key, opencode_skills_xml
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.cli.test_commands import run


def opencode(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="opencode")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def sent(result: ScanResult) -> list[str]:
    return [f.path for f in result.project_doc().files]


def test_agents_md_is_read_from_the_work_dir_up_to_the_root_nearest_first_and_hides_every_claude_md(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "root\n",
            "CLAUDE.md": "hidden\n",
            "a/CLAUDE.md": "hidden\n",
            "a/b/AGENTS.md": "b\n",
        },
    )
    make_workspace(tmp_path, {"AGENTS.md": "above the root\n"})
    result = opencode(root / "a" / "b", home)
    assert sent(result) == [str(root / "a/b/AGENTS.md"), str(root / "AGENTS.md")]
    hidden = by_path(result)[str(root / "a/CLAUDE.md")]
    assert hidden.status is Status.SHADOWED and "hides every CLAUDE.md" in (hidden.error or "")
    assert str(tmp_path / "AGENTS.md") not in by_path(result)


def test_claude_md_then_context_md_only_when_the_walk_has_no_earlier_name(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "c\n", "sub/CONTEXT.md": "hidden\n"})
    assert sent(opencode(root / "sub", home)) == [str(root / "CLAUDE.md")]
    other = make_workspace(tmp_path / "other", {".git/": "", "CONTEXT.md": "ctx\n"})
    assert sent(opencode(other, home)) == [str(other / "CONTEXT.md")]


def test_the_configs_global_agents_md_comes_first_and_hides_the_claude_home_file(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/opencode/AGENTS.md": "config\n", ".claude/CLAUDE.md": "claude home\n"})
    work = make_workspace(tmp_path / "repo", {".git/": "", "AGENTS.md": "\ufeffproject\r\n  \n"})
    result = opencode(work, home)
    assert result.peer.wrap(result.project_doc(), str(work)) == (
        f"Instructions from: {home}/.config/opencode/AGENTS.md\nconfig\n\n"
        f"Instructions from: {work}/AGENTS.md\nproject\r\n  \n"
    )
    assert by_path(result)[str(home / ".claude/CLAUDE.md")].status is Status.SHADOWED


def test_an_empty_file_is_listed_but_sends_nothing_and_a_whitespace_only_one_is_sent(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", "AGENTS.md": " \n\n", "sub/AGENTS.md": ""})
    result = opencode(root / "sub", home)
    assert sent(result) == [str(root / "AGENTS.md")]
    empty = by_path(result)[str(root / "sub/AGENTS.md")]
    assert empty.load is not None and "empty" in (empty.load.reason or "")


def test_instructions_globs_match_in_every_folder_of_the_walk_nearest_first(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/opencode/opencode.json": json.dumps({"instructions": ["docs/*.md", "~/n.md"]})})
    make_workspace(home, {"n.md": "notes\n"})
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "docs/b.md": "b\n",
            "docs/a.md": "a\n",
            "sub/docs/z.md": "z\n",
            "sub/opencode.jsonc": '{\n // c\n "instructions": ["{x,y}.md",],\n}\n',
            "x.md": "x\n",
            "y.md": "y\n",
        },
    )
    files = sent(opencode(root / "sub", home))
    assert [files[0], files[3]] == [str(root / "sub/docs/z.md"), str(home / "n.md")]
    assert sorted(files[1:3]) == [str(root / "docs/a.md"), str(root / "docs/b.md")]  # in the folder's own order
    assert sorted(files[4:]) == [str(root / "x.md"), str(root / "y.md")]


def test_skills_list_is_sorted_as_locale_compare_sorts_and_escapes_only_the_location() -> None:
    names = ["a1", "B2", "_d4", "Zz", "m-13", "m_1", "m1", "M1", "a.b", "ä", "a b"]
    assert sorted(names, key=collation_key) == ["_d4", "ä", "a b", "a.b", "a1", "B2", "m_1", "m-13", "m1", "M1", "Zz"]
    skill = Resource(Kind.SKILL, "/r/a&b/SKILL.md", "repo", Status.OK, name="x<y>", description="d & e")  # type: ignore[arg-type]
    assert opencode_skills_xml([skill]) == (
        "<available_skills>\n  <skill>\n    <name>x<y></name>\n    <description>d & e</description>\n"
        "    <location>/r/a&amp;b/SKILL.md</location>\n  </skill>\n</available_skills>"
    )
    assert opencode_skills_xml([]) == ""


def test_skills_need_yaml_frontmatter_with_a_string_name_and_description(tmp_path: Path, home: Path) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            ".agents/skills/ok/SKILL.md": skill_md("ok", "fine"),
            ".agents/skills/deep/a/b/SKILL.md": skill_md("deep", "nested"),
            ".agents/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\nx\n",
            ".agents/skills/bad/SKILL.md": "---\nname: bad\ndescription: [unclosed\n---\nx\n",
            ".agents/skills/num/SKILL.md": "---\nname: num\ndescription: 42\n---\nx\n",
            ".agents/skills/yes/SKILL.md": "---\nname: yes-desc\ndescription: yes\n---\nx\n",
            ".agents/skills/nofm/SKILL.md": "no frontmatter\n",
        },
    )
    result = opencode(root, home)
    skills = {r.path.split("/skills/")[1]: r for r in result.snapshot.of_kind(Kind.SKILL)}
    assert {k for k, r in skills.items() if r.status is Status.OK} == {
        "ok/SKILL.md",
        "deep/a/b/SKILL.md",
        "yes/SKILL.md",
    }
    assert skills["yes/SKILL.md"].description == "yes"
    for dropped in ("nodesc", "bad", "num", "nofm"):
        assert skills[f"{dropped}/SKILL.md"].status is Status.INVALID and skills[f"{dropped}/SKILL.md"].error


def test_braces_expand_in_order() -> None:
    assert expand_braces("{a,b}/{c,d}.md") == ["a/c.md", "a/d.md", "b/c.md", "b/d.md"]
    assert expand_braces("x{y}.md") == ["x{y}.md"]


def test_jsonc_trailing_commas_go_outside_strings_only() -> None:
    text = '{"a": [",]", "b",  /* c */ ], // d\n "e": 1,\n}'
    assert json.loads(strip_comments(text, trailing_commas=True)) == {"a": [",]", "b"], "e": 1}


def test_the_last_copy_of_a_name_in_opencodes_order_wins_and_the_others_say_who_won(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".agents/skills/d/SKILL.md": skill_md("dup", "home")})
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "sub/.claude/skills/d/SKILL.md": skill_md("dup", "cwd"),
            ".agents/skills/d/SKILL.md": skill_md("dup", "root"),
            ".opencode/skills/d/SKILL.md": skill_md("dup", "the opencode folder, read last"),
            ".agents/skills/c/SKILL.md": skill_md("customize-opencode", "the user's own replaces the built-in"),
        },
    )
    result = opencode(root / "sub", home)
    skills = {r.path: r for r in result.snapshot.of_kind(Kind.SKILL)}
    winner = skills[str(root / ".opencode/skills/d/SKILL.md")]
    assert winner.status is Status.OK
    for loser in (home / ".agents/skills/d", root / "sub/.claude/skills/d", root / ".agents/skills/d"):
        assert skills[str(loser / "SKILL.md")].status is Status.SHADOWED
    listing = opencode_skills_xml(list(skills.values()))
    assert listing.count("<name>dup</name>") == 1 and "<name>customize-opencode</name>" in listing


def test_doc_wrap_and_skills_prompt_print_what_opencode_sends_and_nothing_when_it_sends_nothing(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "repo", {".git/": "", "AGENTS.md": "rules\n", ".agents/skills/s/SKILL.md": skill_md("s", "S")}
    )
    doc = run("doc", str(work), "--wrap", "-p", "opencode", home=home).stdout
    assert doc == f"Instructions from: {work}/AGENTS.md\nrules\n"
    skills = run("skills", "prompt", str(work), "-f", "opencode", "-p", "opencode", home=home).stdout
    assert skills == (
        "<available_skills>\n  <skill>\n    <name>s</name>\n    <description>S</description>\n"
        f"    <location>{work}/.agents/skills/s/SKILL.md</location>\n  </skill>\n</available_skills>"
    )
    empty = make_workspace(tmp_path / "empty", {".git/": "", "GEMINI.md": "not opencode's\n"})
    assert run("doc", str(empty), "--wrap", "-p", "opencode", home=home).stdout == ""
    assert run("skills", "prompt", str(empty), "-f", "opencode", "-p", "opencode", home=home).stdout == ""
