"""The ``coder`` profile: Coder's resolver tests (coder.md 8.1) and its CODER_AGENT_EXP_* aliases (1.6, 8.4).

Coder scans shallow roots: declared sources, ``~/.coder`` (and ``~/.coder/skills``), the
plugin cache, then the working dir. Each root's top level is read, nothing below it and
nothing above it. Where Coder drops a resource (a later skill of a taken name), we keep
it as ``shadowed`` with the reason, since nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md
from tests.helpers import as_unprivileged_user


def coder(
    work_dir: Path,
    home: Path,
    settings: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ScanResult:
    """Scan ``work_dir`` under the coder profile with dotted-key settings."""
    return scan_tree(work_dir, home=home, profile="coder", environ=environ, settings=settings)


def of_kind(result: ScanResult, kind: Kind) -> list[Resource]:
    return [r for r in result.snapshot.resources if r.kind is kind]


def by_path(result: ScanResult, path: Path) -> Resource:
    resource = result.snapshot.find(str(path))
    assert resource is not None, f"{path} not in the inventory"
    return resource


def paths(result: ScanResult) -> list[str]:
    return [r.path for r in result.snapshot.resources]


def sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


# TestResolver_* (coder.md 8.1), in order.


def test_project_agents_file(tmp_path: Path, home: Path) -> None:
    text = "# Project Rules\n\nUse tabs.\n"
    make_workspace(tmp_path, {"AGENTS.md": text})
    result = coder(tmp_path, home)
    [resource] = of_kind(result, Kind.INSTRUCTION_FILE)
    assert (resource.path, resource.status, resource.scope) == (str(tmp_path / "AGENTS.md"), Status.OK, Scope.PROJECT)
    assert resource.content == text
    assert resource.description == "Project Rules"
    assert (resource.size_bytes, resource.content_hash) == (len(text), sha256(text))


def test_instruction_names_are_case_sensitive(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"agents.md": "lowercase is not recognised", "CLAUDE.md": "# Claude\n"})
    result = coder(tmp_path, home)
    assert [r.path for r in of_kind(result, Kind.INSTRUCTION_FILE)] == [str(tmp_path / "CLAUDE.md")]


def test_skills_container_emits_each_subdir(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".agents/skills/make-coffee/SKILL.md": skill_md("make-coffee"),
            ".agents/skills/brew-tea/SKILL.md": skill_md("brew-tea"),
        },
    )
    result = coder(tmp_path, home)
    assert [(r.name, r.status) for r in of_kind(result, Kind.SKILL)] == [
        ("brew-tea", Status.OK),
        ("make-coffee", Status.OK),
    ]


def test_skill_name_mismatch_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".agents/skills/brew/SKILL.md": skill_md("brewing")})
    resource = by_path(coder(tmp_path, home), tmp_path / ".agents/skills/brew/SKILL.md")
    assert resource.status is Status.INVALID
    assert resource.error == 'front-matter name "brewing" does not match directory "brew"'
    assert resource.content is None


def test_skill_name_non_kebab_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".agents/skills/Make_Coffee/SKILL.md": skill_md("Make_Coffee")})
    resource = by_path(coder(tmp_path, home), tmp_path / ".agents/skills/Make_Coffee/SKILL.md")
    assert (resource.status, resource.error) == (Status.INVALID, 'skill name "Make_Coffee" is not kebab-case')
    assert resource.content is None


def test_mcp_config_emitted(tmp_path: Path, home: Path) -> None:
    text = '{"mcpServers": {"github": {"command": "gh-mcp", "env": {"TOKEN": "secret"}}}}'
    make_workspace(tmp_path, {".mcp.json": text})
    result = coder(tmp_path, home)
    [resource] = of_kind(result, Kind.MCP_CONFIG)
    assert (resource.path, resource.status, resource.content) == (str(tmp_path / ".mcp.json"), Status.OK, None)
    assert (resource.size_bytes, resource.content_hash) == (len(text), sha256(text))
    assert (resource.servers, resource.connect) == (("github",), True)
    assert "secret" not in result.snapshot.to_json()


def test_symlink_inside_scan_root_allowed(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"docs/AGENTS.md": "# Linked\n"})
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "docs" / "AGENTS.md")
    result = coder(tmp_path, home)
    [resource] = of_kind(result, Kind.INSTRUCTION_FILE)
    assert (resource.path, resource.status, resource.content) == (
        str(tmp_path / "docs/AGENTS.md"),
        Status.OK,
        "# Linked\n",
    )


def test_symlinked_instruction_files_deduplicated(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"AGENTS.md": "# One file\n"})
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "AGENTS.md")
    (tmp_path / ".cursorrules").symlink_to(tmp_path / "AGENTS.md")
    result = coder(tmp_path, home)
    assert paths(result) == [str(tmp_path / "AGENTS.md")]
    assert result.snapshot.resources[0].status is Status.OK


def test_instruction_files_only_at_scan_root(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"AGENTS.md": "root", "site/AGENTS.md": "nested", "site/CLAUDE.md": "nested too"})
    assert paths(coder(tmp_path, home)) == [str(tmp_path / "AGENTS.md")]


def test_symlink_outside_scan_root_rejected(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"outside-the-roots/secret.txt": "TOKEN=hunter2", "work/": ""})
    (tmp_path / "work" / "AGENTS.md").symlink_to(tmp_path / "outside-the-roots/secret.txt")
    result = coder(tmp_path / "work", home)
    resource = by_path(result, tmp_path / "work" / "AGENTS.md")
    assert (resource.status, resource.content, resource.content_hash) == (Status.INVALID, None, "")
    target, root = os.path.realpath(tmp_path / "outside-the-roots/secret.txt"), os.path.realpath(tmp_path / "work")
    assert resource.error == f'symlink target "{target}" escapes scan root "{root}"'
    assert "hunter2" not in result.snapshot.to_json()


def test_broken_symlink(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"work/": ""})
    (tmp_path / "work" / "AGENTS.md").symlink_to(tmp_path / "work" / "missing.md")
    resource = by_path(coder(tmp_path / "work", home), tmp_path / "work" / "AGENTS.md")
    assert (resource.status, resource.error) == (Status.UNREADABLE, "symlink resolve: No such file or directory")


def test_oversize_instruction_file(tmp_path: Path, home: Path) -> None:
    text = "x" * 200
    make_workspace(tmp_path, {"AGENTS.md": text})
    resource = by_path(coder(tmp_path, home, {"snapshot.max_resource_bytes": 100}), tmp_path / "AGENTS.md")
    assert (resource.status, resource.content, resource.size_bytes) == (Status.OVERSIZE, None, 200)
    assert resource.content_hash == sha256(text[:100])
    assert resource.error == "file size 200 exceeds per-resource cap of 100 bytes"


def test_aggregate_cap_excludes(tmp_path: Path, home: Path) -> None:
    for name, text in (("r0", "11111"), ("r1", "2222"), ("r2", "3333")):
        make_workspace(tmp_path / name, {"AGENTS.md": text})
    sources = [str(tmp_path / "r1"), str(tmp_path / "r2")]
    result = coder(tmp_path / "r0", home, {"sources": sources, "snapshot.max_snapshot_bytes": 9})
    excluded = [r for r in result.snapshot.resources if r.status is Status.EXCLUDED]
    assert [r.path for r in excluded] == [str(tmp_path / "r2" / "AGENTS.md")]
    assert (excluded[0].error, excluded[0].content) == ("dropped to fit 9-byte aggregate cap", None)
    assert result.snapshot.payload_bytes == 9
    assert result.snapshot.error is None


def test_count_cap_excludes(tmp_path: Path, home: Path) -> None:
    for index in range(5):
        make_workspace(tmp_path / f"r{index}", {"AGENTS.md": f"doc {index}"})
    sources = [str(tmp_path / f"r{index}") for index in range(1, 5)]
    result = coder(tmp_path / "r0", home, {"sources": sources, "snapshot.max_resources": 3})
    assert len(result.snapshot.resources) == 5
    excluded = {r.path: r.error for r in result.snapshot.resources if r.status is Status.EXCLUDED}
    assert excluded == {
        str(tmp_path / "r3" / "AGENTS.md"): "dropped to fit 3-resource snapshot count cap",
        str(tmp_path / "r4" / "AGENTS.md"): "dropped to fit 3-resource snapshot count cap",
    }
    assert result.snapshot.error is None


def test_mcp_config_only_at_scan_root(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"sub/.mcp.json": '{"mcpServers": {"nested": {"command": "x"}}}'})
    result = coder(tmp_path, home)
    assert of_kind(result, Kind.MCP_CONFIG) == []
    assert result.servers == ()


def test_skills_only_from_fixed_containers(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "skills/plain/SKILL.md": skill_md("plain"),
            ".agents/skills/agents/SKILL.md": skill_md("agents"),
            ".claude/skills/claude/SKILL.md": skill_md("claude"),
            ".codex/skills/codex/SKILL.md": skill_md("codex"),
            "pkg/skills/buried/SKILL.md": skill_md("buried"),
            ".agents/skills/group/nested/SKILL.md": skill_md("nested"),
        },
    )
    result = coder(tmp_path, home)
    assert {r.name: r.path for r in of_kind(result, Kind.SKILL)} == {
        "plain": str(tmp_path / "skills/plain/SKILL.md"),
        "agents": str(tmp_path / ".agents/skills/agents/SKILL.md"),
        "claude": str(tmp_path / ".claude/skills/claude/SKILL.md"),
        "codex": str(tmp_path / ".codex/skills/codex/SKILL.md"),
    }
    assert {r.status for r in of_kind(result, Kind.SKILL)} == {Status.OK}


def test_user_source_attribution(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "source/AGENTS.md": "# From the source\n",
            "source/skills/shared-skill/SKILL.md": skill_md("shared-skill"),
            "source/.mcp.json": "{}",
            "work/AGENTS.md": "# From the work dir\n",
        },
    )
    source = str(tmp_path / "source")
    result = coder(tmp_path / "work", home, {"sources": [source]})
    attributed = {r.path: (r.source, r.scope) for r in result.snapshot.resources}
    assert attributed == {
        str(tmp_path / "source/AGENTS.md"): (source, Scope.SOURCE),
        str(tmp_path / "source/skills/shared-skill/SKILL.md"): (source, Scope.SOURCE),
        str(tmp_path / "source/.mcp.json"): (source, Scope.SOURCE),
        str(tmp_path / "work/AGENTS.md"): (None, Scope.PROJECT),
    }
    assert by_path(result, tmp_path / "source/AGENTS.md").to_dict()["source"] == source


def test_missing_root_silently_ignored(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"work/": ""})
    result = coder(tmp_path / "work", home, {"sources": [str(tmp_path / "does-not-exist")]})
    assert result.snapshot.resources == ()
    assert result.snapshot.error is None


def test_single_file_root_classified(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {"notes/AGENTS.md": "# Notes\n", "notes/CLAUDE.md": "not a root", "notes/README.md": "ignored", "work/": ""},
    )
    declared = [str(tmp_path / "notes/AGENTS.md"), str(tmp_path / "notes/README.md")]
    result = coder(tmp_path / "work", home, {"sources": declared})
    [resource] = result.snapshot.resources
    assert (resource.kind, resource.path, resource.status) == (
        Kind.INSTRUCTION_FILE,
        str(tmp_path / "notes/AGENTS.md"),
        Status.OK,
    )
    assert (resource.source, resource.description) == (str(tmp_path / "notes/AGENTS.md"), "Notes")


def test_duplicate_roots_deduplicated(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"source/AGENTS.md": "# Once\n", "work/": ""})
    source = str(tmp_path / "source")
    result = coder(tmp_path / "work", home, {"sources": [source, source + "/", source + "/.", " " + source]})
    assert paths(result) == [str(tmp_path / "source/AGENTS.md")]


def test_unreadable_instruction_file(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"AGENTS.md": "secret", "CLAUDE.md": "# Readable\n"})
    os.chmod(tmp_path / "AGENTS.md", 0)
    statuses = as_unprivileged_user(tmp_path, home, "coder")
    assert statuses[str(tmp_path / "AGENTS.md")] == ("unreadable", "Permission denied")
    assert statuses[str(tmp_path / "CLAUDE.md")] == ("ok", None)


def test_unreadable_mcp_config(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".mcp.json": "{}"})
    os.chmod(tmp_path / ".mcp.json", 0)
    statuses = as_unprivileged_user(tmp_path, home, "coder")
    assert statuses == {str(tmp_path / ".mcp.json"): ("unreadable", "Permission denied")}


def test_unreadable_skill_md(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".agents/skills/locked/SKILL.md": skill_md("locked")})
    os.chmod(tmp_path / ".agents/skills/locked/SKILL.md", 0)
    statuses = as_unprivileged_user(tmp_path, home, "coder")
    assert statuses == {str(tmp_path / ".agents/skills/locked/SKILL.md"): ("unreadable", "Permission denied")}


# Manager and docs behaviour (coder.md 1.1, 8.2).


def test_working_dir_scanned_shallow(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "AGENTS.md": "# Repo root\n",
            ".agents/skills/up-there/SKILL.md": skill_md("up-there"),
            ".mcp.json": "{}",
            "work/AGENTS.md": "# Work dir\n",
            "work/deeper/AGENTS.md": "# Below\n",
            "work/deeper/.agents/skills/down-here/SKILL.md": skill_md("down-here"),
        },
    )
    result = coder(tmp_path / "work", home)
    assert result.snapshot.project_root is None
    assert paths(result) == [str(tmp_path / "work/AGENTS.md")]


def test_home_coder_agents_md_and_skills_are_found(tmp_path: Path, home: Path) -> None:
    make_workspace(
        home, {".coder/AGENTS.md": "# Personal rules\n", ".coder/skills/my-skill/SKILL.md": skill_md("my-skill")}
    )
    make_workspace(tmp_path, {"work/": ""})
    result = coder(tmp_path / "work", home)
    instruction = by_path(result, home / ".coder/AGENTS.md")
    assert (instruction.status, instruction.scope, instruction.description) == (Status.OK, Scope.HOME, "Personal rules")
    skill = by_path(result, home / ".coder/skills/my-skill/SKILL.md")
    assert (skill.status, skill.scope, skill.name) == (Status.OK, Scope.USER, "my-skill")


def test_mcp_json_inside_a_declared_source_is_listed_but_never_connected(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "source/.mcp.json": '{"mcpServers": {"from-source": {"command": "a"}}}',
            "work/.mcp.json": '{"mcpServers": {"from-work": {"command": "b"}}}',
        },
    )
    make_workspace(home, {".coder/.mcp.json": '{"mcpServers": {"from-home": {"command": "c"}}}'})
    result = coder(tmp_path / "work", home, {"sources": [str(tmp_path / "source")]})
    listed = {r.path: (r.servers, r.connect) for r in of_kind(result, Kind.MCP_CONFIG)}
    assert listed == {
        str(tmp_path / "source/.mcp.json"): (("from-source",), False),
        str(home / ".coder/.mcp.json"): (("from-home",), False),
        str(tmp_path / "work/.mcp.json"): (("from-work",), True),
    }
    assert [server.name for server in result.servers] == ["from-work"]


def test_skill_names_go_to_sources_then_home_then_the_work_dir(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            "source/skills/dup/SKILL.md": skill_md("dup", "source"),
            "work/.agents/skills/dup/SKILL.md": skill_md("dup", "work"),
            "work/.agents/skills/mine/SKILL.md": skill_md("mine", "work"),
        },
    )
    make_workspace(
        home,
        {
            ".coder/skills/dup/SKILL.md": skill_md("dup", "home"),
            ".coder/skills/mine/SKILL.md": skill_md("mine", "home"),
        },
    )
    result = coder(tmp_path / "work", home, {"sources": [str(tmp_path / "source")]})
    offered = {r.name: r.description for r in of_kind(result, Kind.SKILL) if r.status is Status.OK}
    assert offered == {"dup": "source", "mine": "home"}
    source_dup = tmp_path / "source/skills/dup/SKILL.md"
    for path in (home / ".coder/skills/dup/SKILL.md", tmp_path / "work/.agents/skills/dup/SKILL.md"):
        resource = by_path(result, path)
        assert (resource.status, resource.error) == (Status.SHADOWED, f"shadowed by the source skill at {source_dup}")
    work_mine = by_path(result, tmp_path / "work/.agents/skills/mine/SKILL.md")
    assert work_mine.error == f"shadowed by the user skill at {home / '.coder/skills/mine/SKILL.md'}"


def test_plugin_skills_come_before_the_work_dir(tmp_path: Path, home: Path) -> None:
    plugin = home / ".claude/plugins/cache/market/plug/1.0.0/skills/review/SKILL.md"
    make_workspace(plugin.parent, {"SKILL.md": skill_md("review", "plugin")})
    make_workspace(tmp_path, {"skills/review/SKILL.md": skill_md("review", "work")})
    result = coder(tmp_path, home)
    assert by_path(result, plugin).status is Status.OK
    work = by_path(result, tmp_path / "skills/review/SKILL.md")
    assert (work.status, work.error) == (Status.SHADOWED, f"shadowed by the plugin skill at {plugin}")


def test_a_source_named_skills_is_itself_a_container(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"team/skills/team-skill/SKILL.md": skill_md("team-skill"), "work/": ""})
    source = str(tmp_path / "team/skills")
    result = coder(tmp_path / "work", home, {"sources": [source]})
    [resource] = of_kind(result, Kind.SKILL)
    assert (resource.path, resource.status, resource.source) == (
        str(tmp_path / "team/skills/team-skill/SKILL.md"),
        Status.OK,
        source,
    )


def test_skill_description_is_optional(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".agents/skills/terse/SKILL.md": skill_md("terse", None)})
    resource = by_path(coder(tmp_path, home), tmp_path / ".agents/skills/terse/SKILL.md")
    assert (resource.status, resource.name) == (Status.OK, "terse")
    assert not resource.description


# CODER_AGENT_EXP_* aliases (coder.md 1.6, 8.4): comma lists, trimmed; ~, absolute and relative paths.


def test_instructions_dirs_and_file_variables(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"notes/CUSTOM.md": "# Home notes\n", ".coder/CUSTOM.md": "default dir replaced"})
    make_workspace(
        tmp_path,
        {
            "shared/CUSTOM.md": "# Shared\n",
            "work/rel/CUSTOM.md": "# Relative\n",
            "work/CUSTOM.md": "# Work\n",
            "work/AGENTS.md": "default name replaced",
        },
    )
    environ = isolated_environ(
        home,
        CODER_AGENT_EXP_INSTRUCTIONS_DIRS=f" ~/notes , {tmp_path / 'shared'},rel, ",
        CODER_AGENT_EXP_INSTRUCTIONS_FILE="  CUSTOM.md ",
    )
    result = coder(tmp_path / "work", home, environ=environ)
    found = {r.path: r.scope for r in of_kind(result, Kind.INSTRUCTION_FILE)}
    assert found == {
        str(home / "notes/CUSTOM.md"): Scope.HOME,
        str(tmp_path / "shared/CUSTOM.md"): Scope.HOME,
        str(tmp_path / "work/rel/CUSTOM.md"): Scope.HOME,
        str(tmp_path / "work/CUSTOM.md"): Scope.PROJECT,
    }


def test_a_bare_tilde_means_the_home_directory(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"AGENTS.md": "# At home\n"})
    make_workspace(tmp_path, {"work/": ""})
    environ = isolated_environ(home, CODER_AGENT_EXP_INSTRUCTIONS_DIRS="~")
    result = coder(tmp_path / "work", home, environ=environ)
    assert paths(result) == [str(home / "AGENTS.md")]


def test_skills_dirs_and_skill_meta_file_variables(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"kit/home-skill/META.yaml": skill_md("home-skill")})
    make_workspace(
        tmp_path,
        {
            "abs/abs-skill/META.yaml": skill_md("abs-skill"),
            "work/rel/rel-skill/META.yaml": skill_md("rel-skill"),
            "work/.agents/skills/work-skill/META.yaml": skill_md("work-skill"),
            "work/.agents/skills/old-name/SKILL.md": skill_md("old-name"),
        },
    )
    environ = isolated_environ(
        home,
        CODER_AGENT_EXP_SKILLS_DIRS=f"~/kit ,{tmp_path / 'abs'} , rel",
        CODER_AGENT_EXP_SKILL_META_FILE=" META.yaml ",
    )
    result = coder(tmp_path / "work", home, environ=environ)
    found = {r.name: (r.path, r.scope, r.status) for r in of_kind(result, Kind.SKILL)}
    assert found == {
        "home-skill": (str(home / "kit/home-skill/META.yaml"), Scope.USER, Status.OK),
        "abs-skill": (str(tmp_path / "abs/abs-skill/META.yaml"), Scope.USER, Status.OK),
        "rel-skill": (str(tmp_path / "work/rel/rel-skill/META.yaml"), Scope.REPO, Status.OK),
        "work-skill": (str(tmp_path / "work/.agents/skills/work-skill/META.yaml"), Scope.REPO, Status.OK),
    }


def test_mcp_config_files_variable(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {"mcp/home.json": '{"mcpServers": {"home": {"command": "h"}}}'})
    make_workspace(
        tmp_path,
        {
            "abs/servers.json": '{"mcpServers": {"abs": {"command": "a"}}}',
            "work/cfg/servers.json": '{"mcpServers": {"rel": {"command": "r"}}}',
            "work/.mcp.json": '{"mcpServers": {"default": {"command": "d"}}}',
        },
    )
    environ = isolated_environ(
        home, CODER_AGENT_EXP_MCP_CONFIG_FILES=f" cfg/servers.json, {tmp_path / 'abs/servers.json'} ,~/mcp/home.json"
    )
    result = coder(tmp_path / "work", home, environ=environ)
    listed = {r.path: r.servers for r in of_kind(result, Kind.MCP_CONFIG)}
    assert listed == {
        str(tmp_path / "work/cfg/servers.json"): ("rel",),
        str(tmp_path / "abs/servers.json"): ("abs",),
        str(home / "mcp/home.json"): ("home",),
    }
    assert [server.name for server in result.servers] == ["rel", "abs", "home"]


def test_whitespace_only_variables_keep_the_defaults(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".coder/AGENTS.md": "# Home\n", ".coder/skills/kept/SKILL.md": skill_md("kept")})
    make_workspace(tmp_path, {"AGENTS.md": "# Work\n", ".mcp.json": "{}"})
    names = (
        "CODER_AGENT_EXP_INSTRUCTIONS_DIRS",
        "CODER_AGENT_EXP_INSTRUCTIONS_FILE",
        "CODER_AGENT_EXP_SKILLS_DIRS",
        "CODER_AGENT_EXP_SKILL_META_FILE",
        "CODER_AGENT_EXP_MCP_CONFIG_FILES",
    )
    blank = dict.fromkeys(names, "  \t ")
    result = coder(tmp_path, home, environ=isolated_environ(home, **blank))
    assert sorted(paths(result)) == sorted(
        [
            str(home / ".coder/AGENTS.md"),
            str(home / ".coder/skills/kept/SKILL.md"),
            str(tmp_path / "AGENTS.md"),
            str(tmp_path / ".mcp.json"),
        ]
    )


def test_agentcontext_variables_override_coder_aliases(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {"CODER.md": "# From the alias\n", "OURS.md": "# From ours\n"})
    environ = isolated_environ(
        home, CODER_AGENT_EXP_INSTRUCTIONS_FILE="CODER.md", AGENTCONTEXT_PROJECT_DOC_FILENAME="OURS.md"
    )
    result = coder(tmp_path, home, environ=environ)
    assert paths(result) == [str(tmp_path / "OURS.md")]
    assert result.config.origin("project_doc.filename") == "environment"
