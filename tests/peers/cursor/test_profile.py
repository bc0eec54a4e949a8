"""The ``cursor`` profile: Cursor's rules as its documentation describes them (no binary to check against)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentcontext.peers.cursor.rules import parse
from agentcontext.resource import Kind, LoadType, Resource, Status
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import load_config
from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.cli.test_commands import run


def cursor(work: Path, home: Path) -> ScanResult:
    return scan_tree(work, home=home, profile="cursor")


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def load_of(result: ScanResult, path: Path) -> LoadType | None:
    load = by_path(result)[str(path)].load
    return None if load is None else load.type


RULES = {
    ".git/": "",
    ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nAlways\n",
    ".cursor/rules/ts.mdc": "---\ndescription: TypeScript\nglobs: *.ts, src/**\nalwaysApply: false\n---\nTS\n",
    ".cursor/rules/deep/asked.mdc": "---\ndescription: When writing migrations\n---\nMigrations\n",
    ".cursor/rules/manual.mdc": "---\n---\nOnly when mentioned\n",
    ".cursor/rules/quoted.mdc": '---\nalwaysApply: "true"\n---\nNot always\n',
    "AGENTS.md": "Root agents\n",
    "CLAUDE.md": "Claude too\n",
    ".cursorrules": "Legacy\n",
}


def test_each_rule_loads_as_its_frontmatter_says_and_the_string_true_is_not_always(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", RULES)
    result = cursor(root, home)
    rules = root / ".cursor/rules"
    assert load_of(result, rules / "always.mdc") is LoadType.STARTUP
    assert load_of(result, rules / "ts.mdc") is LoadType.PATH_SCOPED
    assert by_path(result)[str(rules / "ts.mdc")].load.globs == ("*.ts", "src/**")  # type: ignore[union-attr]
    assert load_of(result, rules / "deep/asked.mdc") is LoadType.AGENT_REQUESTED
    assert load_of(result, rules / "manual.mdc") is LoadType.MANUAL
    quoted = by_path(result)[str(rules / "quoted.mdc")]
    assert quoted.load is not None and quoted.load.type is LoadType.MANUAL
    assert any('the string "true"' in w for w in quoted.warnings)


def test_the_startup_doc_is_the_always_rules_then_agents_md_claude_md_and_cursorrules_without_frontmatter(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(tmp_path / "repo", RULES)
    doc = cursor(root, home).project_doc()
    names = [os.path.relpath(f.path, root) for f in doc.files]
    assert names == [".cursor/rules/always.mdc", "AGENTS.md", "CLAUDE.md", ".cursorrules"]
    assert "alwaysApply" not in doc.content and "Always" in doc.content and "TS" not in doc.content


def test_a_nested_agents_md_and_a_nested_rules_folder_apply_to_files_under_their_folder_only(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **RULES,
            "pkg/AGENTS.md": "Pkg agents\n",
            "pkg/.cursor/rules/all.mdc": "---\nalwaysApply: true\n---\nPkg always\n",
            "pkg/.cursor/rules/py.mdc": "---\nglobs: '*.py'\n---\nPkg python\n",
            "pkg/.cursor/rules/asked.mdc": "---\ndescription: ask me\n---\nAsked\n",
            "other/x.ts": "",
        },
    )
    scanner = Scanner(root, load_config(root, environ={"HOME": str(home)}, overrides={"profile": "cursor"}))
    result = scanner.run()
    in_pkg = scanner.applicable([str(root / "pkg/code.py")], result=result)
    loads = {os.path.relpath(f.resource.path, root): f.resource.load.type for f in in_pkg.files}  # type: ignore[union-attr]
    assert loads == {
        "pkg/AGENTS.md": LoadType.PATH_SCOPED,
        "pkg/.cursor/rules/all.mdc": LoadType.PATH_SCOPED,
        "pkg/.cursor/rules/py.mdc": LoadType.PATH_SCOPED,
    }
    listed = {os.path.relpath(f.resource.path, root): f.resource.load.type for f in in_pkg.not_loaded}  # type: ignore[union-attr]
    assert listed == {"pkg/.cursor/rules/asked.mdc": LoadType.AGENT_REQUESTED}
    elsewhere = scanner.applicable([str(root / "other/x.ts")], result=result)
    assert [os.path.relpath(f.resource.path, root) for f in elsewhere.files] == [".cursor/rules/ts.mdc"]
    assert elsewhere.files[0].resource.content == "TS\n"


def test_doc_for_and_explain_say_how_each_rule_loads(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**RULES, "src/app.ts": "", "pkg/AGENTS.md": "Pkg\n"})
    answer = json.loads(run("doc", str(root), "-p", "cursor", "--for", "src/app.ts", "--json", home=home).stdout)["for"]
    assert [(os.path.basename(f["path"]), f["load"]["type"]) for f in answer["files"]] == [("ts.mdc", "path_scoped")]
    explained = run("explain", ".cursor/rules/deep/asked.mdc", "-p", "cursor", cwd=root, home=home).stdout
    assert "only when the model asks for it (agent_requested)" in " ".join(explained.split())
    lookup = run("explain", "pkg/x.py", "-p", "cursor", cwd=root, home=home).stdout
    assert "path scoped" in lookup and "pkg/AGENTS.md" in lookup


def test_a_rules_folder_link_leaving_the_workspace_is_listed_invalid_not_followed(tmp_path: Path, home: Path) -> None:
    outside = make_workspace(tmp_path / "outside", {"secret.mdc": "---\nalwaysApply: true\n---\nSECRET\n"})
    root = make_workspace(tmp_path / "repo", {".git/": "", ".cursor/rules/ok.mdc": "---\nalwaysApply: true\n---\nok\n"})
    (root / ".cursor/rules/escape").symlink_to(outside, target_is_directory=True)
    result = cursor(root, home)
    escaped = by_path(result)[str(root / ".cursor/rules/escape")]
    assert escaped.status is Status.INVALID and escaped.load is not None and escaped.load.type is LoadType.NOT_LOADED
    assert "SECRET" not in result.project_doc().content


def test_skills_come_from_the_workspace_s_cursor_skills_and_mcp_from_cursor_mcp_json(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            ".cursor/skills/lint/SKILL.md": skill_md("lint", "Lints."),
            ".claude/skills/other/SKILL.md": skill_md("other", "Not Cursor's."),
            ".cursor/mcp.json": '{"mcpServers": {"t": {"command": "true"}}}',
            ".mcp.json": '{"mcpServers": {"u": {"command": "true"}}}',
        },
    )
    result = cursor(root, home)
    assert [s.name for s in result.skills] == ["lint"]
    configs = [r.path for r in result.snapshot.resources if r.kind is Kind.MCP_CONFIG]
    assert configs == [str(root / ".cursor/mcp.json")]


def test_agents_marks_cursor_as_documented_not_checked_against_its_binary(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", RULES)
    shown = run("agents", str(root), "--json", home=home)
    view = next(v for v in json.loads(shown.stdout)["agents"] if v["profile"] == "cursor")
    assert view["checked_against"] == "documentation" and view["verified_version"] is None
    text = " ".join(run("agents", str(root), home=home).stdout.split())
    assert "Cursor (documented, not checked against the binary)" in text


def test_frontmatter_is_read_line_by_line_as_cursor_does_not_as_yaml() -> None:
    rule = parse("---\nglobs: *.ts, *.tsx\n---\nbody\n")  # a YAML alias to PyYAML
    assert rule.load is LoadType.PATH_SCOPED and rule.globs == ("*.ts", "*.tsx") and rule.body == "body\n"
    listed = parse("---\ndescription: d\nglobs:\n  - 'a/**'\n  - b.py\n---\nx\n")
    assert listed.globs == ("a/**", "b.py")
    assert parse("no frontmatter\n").load is LoadType.MANUAL
    assert parse("---\nalwaysApply: True\n---\nx\n").load is LoadType.STARTUP
    assert parse("---\nnever closed\n").warnings == ("a frontmatter block that never closes: read as plain text",)
