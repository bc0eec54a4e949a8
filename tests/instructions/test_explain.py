"""``explain``: what the scan did with one path, and why, from its resource or from the profile's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcontext.instructions.explain import Explanation, explain
from agentcontext.resource import Status
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree, skill_md


def repo(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "# Root\nuse pytest\n",
            "CLAUDE.md": "claude rules",
            "pkg/AGENTS.md": "pkg rules",
            ".agents/skills/good/SKILL.md": skill_md("good", "Does good things"),
        },
    )


def why(path: Path, result: ScanResult) -> Explanation:
    return explain(str(path), result)


# --- paths the scan looked at: explained from their resource ------------------------------


def test_a_used_file_says_where_it_stands_in_the_doc(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = scan_tree(root / "pkg", home=home)
    answer = why(root / "pkg" / "AGENTS.md", result)
    assert answer == Explanation(
        str(root / "pkg" / "AGENTS.md"),
        result.snapshot.find(str(root / "pkg" / "AGENTS.md")),
        "instruction file (project) is used: ok",
        ("position 2 in the project doc",),
    )
    assert answer.used


def test_a_truncated_file_is_used_but_not_all_of_it(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = scan_tree(root, home=home, settings={"project_doc.max_bytes": 4})
    answer = why(root / "AGENTS.md", result)
    assert answer.summary == "instruction file (project) is used, but not all of it: truncated"
    assert answer.details == (
        "reason: cut to 4 of 18 bytes by the project doc budget of 4 bytes",
        "position 1 in the project doc",
    )
    assert answer.used


def test_a_shadowed_file_names_the_winner_and_is_not_used(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    answer = why(root / "CLAUDE.md", scan_tree(root, home=home))
    assert answer.summary == "instruction file (project) is ignored because another file wins: shadowed"
    assert answer.details == (f"reason: shadowed by {root / 'AGENTS.md'} (one instruction file per directory)",)
    assert answer.resource is not None and answer.resource.status is Status.SHADOWED
    assert not answer.used


def test_a_relative_path_is_taken_from_the_current_directory(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    monkeypatch.chdir(root)
    answer = explain("AGENTS.md", scan_tree(root, home=home))
    assert (answer.path, answer.used) == (str(root / "AGENTS.md"), True)


def test_a_skill_folder_is_explained_by_its_skill_md(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = scan_tree(root, home=home)
    folder = root / ".agents" / "skills" / "good"
    answer = why(folder, result)
    assert answer.path == str(folder / "SKILL.md")
    assert answer.resource == result.snapshot.find(str(folder / "SKILL.md"))
    assert (answer.summary, answer.details) == ("skill (repo) is used: ok", ("skill name: good",))
    assert answer.used
    assert why(folder / "SKILL.md", result) == answer


def test_an_mcp_config_lists_its_servers(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    servers = {"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}, "files": {"command": "fs"}}}
    make_workspace(root, {".mcp.json": json.dumps(servers)})
    answer = why(root / ".mcp.json", scan_tree(root, home=home))
    assert (answer.summary, answer.details) == ("MCP config (project) is used: ok", ("servers: fetch, files",))
    assert answer.used


def test_an_mcp_config_of_a_declared_source_is_listed_only(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    source = make_workspace(tmp_path / "shared", {".mcp.json": json.dumps({"mcpServers": {}})})
    answer = why(source / ".mcp.json", scan_tree(root, home=home, settings={"sources": [str(source)]}))
    assert (answer.summary, answer.details) == (
        "MCP config (source) is used: ok",
        ("servers: none (listed only: not connected)",),
    )


def test_an_invalid_file_gives_its_reason_and_warnings(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"pkg/AGENTS.md": b"bad \xff byte", ".agents/skills/broken/SKILL.md": "no frontmatter"})
    result = scan_tree(root / "pkg", home=home)
    doc = why(root / "pkg" / "AGENTS.md", result)
    assert doc.used and len(doc.details) == 2
    assert doc.details[1].startswith("warning: contains invalid UTF-8")
    skill = why(root / ".agents" / "skills" / "broken", result)
    assert skill.summary == "skill (repo) is not usable: invalid"
    assert skill.details[0].startswith("reason: ")
    assert not skill.used


# --- paths the scan never looked at: explained from the rules -----------------------------


def test_a_missing_path_does_not_exist(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    answer = why(root / "nope" / "AGENTS.md", scan_tree(root, home=home))
    assert answer == Explanation(str(root / "nope" / "AGENTS.md"), None, "does not exist")
    assert not answer.used


def test_a_file_below_the_work_dir_points_at_the_work_dir_option(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"other/AGENTS.md": "other"})
    answer = why(root / "other" / "AGENTS.md", scan_tree(root / "pkg", home=home))
    assert answer == Explanation(
        str(root / "other" / "AGENTS.md"),
        None,
        "is not read: it is not in a directory between the project root and the work dir",
        (
            f"chain: {root} -> {root / 'pkg'}",
            f"run from inside {root / 'other'} or pass --work-dir {root / 'other'}",
        ),
    )
    assert not answer.used


def test_a_file_above_the_project_root_is_outside_it(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(tmp_path, {"AGENTS.md": "above the repo"})
    answer = why(tmp_path / "AGENTS.md", scan_tree(root, home=home))
    assert answer.summary == "is not read: it is not in a directory between the project root and the work dir"
    assert answer.details == (f"chain: {root}", f"it is outside the project root {root}")


def test_a_name_the_profile_does_not_read_says_how_to_read_it(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "claude rules"})
    answer = why(root / "CLAUDE.md", scan_tree(root, home=home, profile="codex"))
    assert answer == Explanation(
        str(root / "CLAUDE.md"),
        None,
        "is not read: CLAUDE.md is not an instruction file name in the codex profile",
        ("names read: AGENTS.override.md, AGENTS.md", "add it to project_doc.fallback_filenames to read it"),
    )


@pytest.mark.parametrize(("name", "expected"), [("agents.md", "AGENTS.md"), ("Claude.md", "CLAUDE.md")])
def test_a_case_mismatched_name_names_the_spelling_that_is_read(
    tmp_path: Path, home: Path, name: str, expected: str
) -> None:
    root = make_workspace(tmp_path / "repo", {".git/": "", name: "rules"})
    answer = why(root / name, scan_tree(root, home=home))  # the scan lists it (instructions/misspelled.py)
    assert answer.summary == "instruction file (project) is not usable: invalid"
    assert answer.details == (f"reason: not read: Codex reads the name {expected} exactly, with its case",)


def test_an_mcp_config_that_is_not_configured_names_the_files_read(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"pkg/.mcp.json": "{}"})
    answer = why(root / "pkg" / ".mcp.json", scan_tree(root / "pkg", home=home))
    assert answer == Explanation(
        str(root / "pkg" / ".mcp.json"),
        None,
        "is not read: it is not one of the MCP config files",
        (f"read: {root / '.mcp.json'}",),
    )


def test_an_unrelated_file_is_not_something_agentcontext_reads(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"README.md": "readme"})
    assert why(root / "README.md", scan_tree(root, home=home)).summary == "is not something agentcontext reads"


def test_the_coder_profile_reads_only_the_top_of_its_scan_roots(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = scan_tree(root, home=home, profile="coder")
    assert why(root / "AGENTS.md", result).used
    answer = why(root / "pkg" / "AGENTS.md", result)
    assert answer == Explanation(
        str(root / "pkg" / "AGENTS.md"),
        None,
        "is not read: the coder profile reads instruction files only at the top of its scan roots",
        (f"scan roots: {home / '.coder'}, {root}", f"declare {root / 'pkg'} as a source to read it"),
    )


# --- skills the scan passed over --------------------------------------------------------------


def test_a_skill_md_outside_every_container_says_where_skills_are_read(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {"tools/helper/SKILL.md": skill_md("helper")})
    answer = why(root / "tools" / "helper" / "SKILL.md", scan_tree(root, home=home, profile="codex"))
    assert answer.summary == "is not read: the skill is not in a skills container"
    containers = [
        root / ".codex" / "skills",
        root / ".agents" / "skills",
        home / ".codex" / "skills",
        home / ".agents" / "skills",
        home / ".codex" / "skills" / ".system",
    ]
    assert answer.details == (
        "containers: " + ", ".join(str(c) for c in containers),
        "add its parent to skills.dirs to read it",
    )
    assert not answer.used


def test_a_skill_too_deep_for_max_depth_names_the_depth_and_the_setting(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    deep = root / ".agents" / "skills" / "group" / "deep"
    make_workspace(deep, {"SKILL.md": skill_md("deep")})
    answer = why(deep / "SKILL.md", scan_tree(root, home=home))
    expected = f"is not read: it is 2 levels below {root / '.agents' / 'skills'} (skills.max_depth is 1)"
    assert (answer.summary, answer.resource) == (expected, None)
    assert why(deep, scan_tree(root, home=home)).summary == expected  # the folder says the same
    assert why(deep / "SKILL.md", scan_tree(root, home=home, settings={"skills.max_depth": 2})).used


def test_a_skill_inside_a_hidden_folder_is_explained(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    make_workspace(root, {".agents/skills/.draft/SKILL.md": skill_md("draft")})
    answer = why(root / ".agents" / "skills" / ".draft" / "SKILL.md", scan_tree(root, home=home))
    assert answer.summary == "is not read: a hidden folder, a node_modules folder or an enclosing skill is in its path"


def test_a_skill_with_skills_disabled_says_so(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    result = scan_tree(root, home=home, settings={"skills.enabled": False})
    answer = why(root / ".agents" / "skills" / "good", result)
    assert answer == Explanation(
        str(root / ".agents" / "skills" / "good" / "SKILL.md"),
        None,
        "is not read: skills are disabled (skills.enabled = false)",
    )
    assert not answer.used


def test_claude_s_nested_file_is_explained_as_loaded_on_demand_and_a_blank_rule_as_read_but_not_loaded(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "w",
        {".git/": "", "CLAUDE.md": "top\n", "pkg/CLAUDE.md": "pkg rules\n", ".claude/rules/blank.md": "<!-- x -->\n"},
    )
    result = scan_tree(work, home=home, profile="claude")
    nested = why(work / "pkg" / "CLAUDE.md", result)
    assert (nested.summary, nested.used) == ("is loaded on demand", True)
    assert nested.details == (
        f"reason: loaded when Claude Code reads a file under {work / 'pkg'}",
        "10 bytes, not in the startup doc",
    )
    blank = why(work / ".claude" / "rules" / "blank.md", result)
    assert blank.used is False
    assert blank.summary == (
        "instruction file (project) is read but not loaded: "
        "empty after its frontmatter and HTML comments are removed: Claude Code skips it"
    )
