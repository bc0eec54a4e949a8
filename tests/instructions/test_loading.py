"""Every instruction file and skill says how it loads, under every profile (claude's own walk: test_claude_profile).

Below the work dir only Claude Code's walk lists files (``on_demand``): Codex and Coder load nothing
there in a session, and the on-demand answer (test_ondemand.py) gives those folders' files when asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcontext.resource import Kind, LoadType, Resource
from agentcontext.scan import ScanResult
from agentcontext.testing import make_workspace, scan_tree, skill_md


def workspace(root: Path) -> Path:
    return make_workspace(
        root,
        {
            ".git/": "",
            "AGENTS.override.md": "override rules\n",
            "AGENTS.md": "plain rules\n",
            "sub/AGENTS.md": "sub rules\n",
            "sub/CLAUDE.md": "sub rules for Claude\n",
            ".agents/skills/ship/SKILL.md": skill_md("ship", "Ships it"),
            ".agents/skills/broken/SKILL.md": "---\nname: broken\n---\nno description\n",
            ".claude/skills/ship/SKILL.md": skill_md("ship", "Ships it"),
        },
    )


def by_path(result: ScanResult, work: Path) -> dict[str, Resource]:
    return {
        str(Path(r.path).relative_to(work)): r
        for r in result.snapshot.resources
        if r.kind in (Kind.INSTRUCTION_FILE, Kind.SKILL)
    }


def load_of(resource: Resource) -> tuple[LoadType, str | None]:
    assert resource.load is not None, resource.path
    return resource.load.type, resource.load.reason


@pytest.mark.parametrize("profile", ["codex", "default", "coder", "claude"])
def test_every_instruction_file_and_skill_says_how_it_loads_under_every_profile(
    tmp_path: Path, home: Path, profile: str
) -> None:
    work = workspace(tmp_path / "w")
    found = by_path(scan_tree(work, home=home, profile=profile), work)
    assert found, profile
    assert [path for path, r in found.items() if r.load is None] == []


@pytest.mark.parametrize("profile", ["codex", "default"])
def test_codex_loads_its_chain_at_startup_and_says_why_not_for_the_rest(
    tmp_path: Path, home: Path, profile: str
) -> None:
    work = workspace(tmp_path / "w")
    found = by_path(scan_tree(work, home=home, profile=profile), work)
    assert load_of(found["AGENTS.override.md"]) == (LoadType.STARTUP, None)
    kind, reason = load_of(found["AGENTS.md"])
    assert kind is LoadType.NOT_LOADED and reason is not None and reason.startswith("shadowed by")
    assert [path for path in found if path.startswith("sub/")] == []  # below the cwd: the on-demand answer's
    assert load_of(found[".agents/skills/ship/SKILL.md"]) == (
        LoadType.STARTUP,
        "listed in the skills prompt; its body is read when the model uses the skill",
    )
    assert load_of(found[".agents/skills/broken/SKILL.md"]) == (LoadType.NOT_LOADED, "missing field `description`")


def test_coder_reads_nothing_below_its_roots_top_level(tmp_path: Path, home: Path) -> None:
    work = workspace(tmp_path / "w")
    found = by_path(scan_tree(work, home=home, profile="coder"), work)
    assert load_of(found["AGENTS.md"]) == (LoadType.STARTUP, None)
    assert [path for path in found if path.startswith("sub/")] == []


def test_a_file_the_doc_budget_leaves_out_is_not_loaded_for_that_reason(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", "AGENTS.md": "root\n", "a/AGENTS.md": "a\n"})
    result = scan_tree(work / "a", home=home, profile="codex", settings={"project_doc.max_bytes": 5})
    found = by_path(result, work)
    assert load_of(found["AGENTS.md"]) == (LoadType.STARTUP, None)
    kind, reason = load_of(found["a/AGENTS.md"])
    assert kind is LoadType.NOT_LOADED
    assert reason == "left out: the project doc budget of 5 bytes was used up by earlier files"


def test_a_resource_the_snapshot_caps_exclude_is_not_loaded_for_that_reason(tmp_path: Path, home: Path) -> None:
    files: dict[str, str | bytes] = {".git/": "", "AGENTS.md": "rules\n"}
    files |= {f".agents/skills/s{i}/SKILL.md": skill_md(f"s{i}", f"Skill {i}") for i in range(3)}
    work = make_workspace(tmp_path / "w", files)
    result = scan_tree(work, home=home, profile="codex", settings={"snapshot.max_resources": 2})
    found = by_path(result, work)
    assert load_of(found["AGENTS.md"]) == (LoadType.STARTUP, None)
    cut = [r for r in found.values() if r.kind is Kind.SKILL and r.status == "excluded"]
    assert len(cut) == 2
    assert {load_of(r) for r in cut} == {(LoadType.NOT_LOADED, "dropped to fit 2-resource snapshot count cap")}


def test_claude_s_walk_below_the_work_dir_stops_at_its_limit_and_says_so(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", **{f"d{i}/CLAUDE.md": f"{i}\n" for i in range(4)}})
    result = scan_tree(work, home=home, profile="claude", settings={"project_doc.nested_max_dirs": 2})
    listed = [r for r in result.snapshot.resources if r.kind is Kind.INSTRUCTION_FILE]
    assert sum(1 for r in listed if r.load is not None and r.load.type is LoadType.ON_DEMAND) == 2
    [stopped] = [r for r in listed if r.path == str(work)]
    assert stopped.status == "excluded"
    assert load_of(stopped) == (
        LoadType.NOT_LOADED,
        "search below the work dir stopped after 2 folders (project_doc.nested_max_dirs)",
    )


def test_a_shadowed_or_disabled_skill_is_not_loaded_for_that_reason(tmp_path: Path, home: Path) -> None:
    files: dict[str, str | bytes] = {".git/": "", "AGENTS.md": "rules\n"}
    files |= {f"{c}/skills/ship/SKILL.md": skill_md("ship", "Ships it") for c in (".agents", ".codex")}
    files[".agents/skills/retired/SKILL.md"] = skill_md("retired", "Turned off")
    work = make_workspace(tmp_path / "w", files)
    result = scan_tree(work, home=home, profile="default", settings={"skills.disabled": ["retired"]})
    found = by_path(result, work)
    assert load_of(found[".agents/skills/retired/SKILL.md"]) == (LoadType.NOT_LOADED, "disabled by skills.disabled")
    ships = [found[f"{c}/skills/ship/SKILL.md"] for c in (".agents", ".codex")]
    assert {load_of(r)[0] for r in ships} == {LoadType.STARTUP, LoadType.NOT_LOADED}
    [shadowed] = [r for r in ships if r.status == "shadowed"]
    assert load_of(shadowed) == (LoadType.NOT_LOADED, shadowed.error) and "shadowed by" in (shadowed.error or "")
