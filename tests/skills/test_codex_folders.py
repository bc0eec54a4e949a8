"""What Codex reads in and above a skill's folder (``skills.openai_policy``, ``skills.plugin_manifests``): what the
binary showed (tests/realagents/detail_cases.py), here without it, with the rescans around it."""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.resource import Kind
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config
from tests.helpers import backdate


def names(scanner: Scanner) -> dict[str, str | None]:
    return {r.path.split("/skills/")[1]: r.name for r in scanner.run().snapshot.of_kind(Kind.SKILL) if "/w/" in r.path}


def codex(work: Path, home: Path, **settings: object) -> Scanner:
    config = test_config(work, home=home, profile="codex", settings=settings)
    return Scanner(work, config, environ=isolated_environ(home))


def test_a_skill_below_a_plugins_manifest_is_named_by_the_nearest_plugin_and_a_bad_manifest_by_the_next(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".agents/.claude-plugin/plugin.json": json.dumps({"name": "outer"}),
            ".agents/skills/a/SKILL.md": skill_md("a"),
            ".agents/skills/b/SKILL.md": skill_md("b"),
            ".agents/skills/b/.codex-plugin/plugin.json": json.dumps({"version": "1"}),  # no name: the folder's
            ".agents/skills/c/SKILL.md": skill_md("c"),
            ".agents/skills/c/.claude-plugin/plugin.json": json.dumps({"name": ["not", "a", "string"]}),
        },
    )
    assert names(codex(work, home)) == {"a/SKILL.md": "outer:a", "b/SKILL.md": "b:b", "c/SKILL.md": "outer:c"}
    assert names(codex(work, home, **{"skills.plugin_manifests": False}))["a/SKILL.md"] == "a"


def test_a_rescan_sees_a_manifest_come_change_and_go(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "w", {".git/": "", ".agents/skills/a/SKILL.md": skill_md("a")})
    backdate(work)
    scanner = codex(work, home)
    assert names(scanner) == {"a/SKILL.md": "a"}
    manifest = work / ".agents/.claude-plugin/plugin.json"
    make_workspace(work, {".agents/.claude-plugin/plugin.json": json.dumps({"name": "one"})})
    assert names(scanner) == {"a/SKILL.md": "one:a"}
    manifest.write_text(json.dumps({"name": "two, longer"}), encoding="utf-8")
    assert names(scanner) == {"a/SKILL.md": "two, longer:a"}
    manifest.unlink()
    assert names(scanner) == {"a/SKILL.md": "a"}


def test_a_project_skills_policy_keeps_it_out_of_the_list_and_a_rescan_sees_it_change(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "w",
        {
            ".git/": "",
            ".agents/skills/hidden/SKILL.md": skill_md("hidden"),
            ".agents/skills/hidden/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
            ".agents/skills/plain/SKILL.md": skill_md("plain"),
        },
    )
    backdate(work)
    scanner = codex(work, home)

    def statuses() -> dict[str, str]:
        return {r.name or "": r.status for r in scanner.run().snapshot.of_kind(Kind.SKILL) if "/w/" in r.path}

    assert statuses() == {"hidden": "disabled", "plain": "ok"}
    make_workspace(work, {".agents/skills/plain/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n"})
    assert statuses() == {"hidden": "disabled", "plain": "disabled"}
    (work / ".agents/skills/hidden/agents/openai.yaml").write_text("policy: {}\n", encoding="utf-8")
    assert statuses() == {"hidden": "ok", "plain": "disabled"}
    default = Scanner(work, test_config(work, home=home), environ=isolated_environ(home)).run()
    assert {r.status for r in default.snapshot.of_kind(Kind.SKILL)} == {"ok"}  # only Codex reads the policy


def test_codex_own_system_skills_policy_is_read_the_same_way_and_only_while_the_setting_is_on(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(tmp_path / "w", {".git/": ""})
    make_workspace(
        home,
        {
            ".codex/skills/.system/quiet/SKILL.md": skill_md("quiet"),
            ".codex/skills/.system/quiet/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
        },
    )

    def quiet(**settings: object) -> list[str]:
        found = codex(work, home, **settings).run().snapshot.of_kind(Kind.SKILL)
        return [r.status for r in found if r.name == "quiet"]

    assert quiet() == ["disabled"]
    assert quiet(**{"skills.openai_policy": False}) == ["ok"]
