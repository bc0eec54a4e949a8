"""Codex's own ``config.toml`` under the ``codex`` profile: its fallback names and its doc budget.

Checked against Codex 0.171.0 by ``tests/realagents/detail_cases.py`` (``codex_config_toml``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcontext.testing import isolated_environ, make_workspace, scan_tree, test_config

CONFIG = 'project_doc_fallback_filenames = ["RULES.md", "CLAUDE.md"]\nproject_doc_max_bytes = 40\n'


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": "claude root\n",
            "RULES.md": "rules root\n",
            "sub/CLAUDE.md": "claude sub, long enough to be cut by the budget\n",
        },
    )


def test_codex_reads_the_fallback_names_and_budget_of_its_config_toml(work: Path, home: Path) -> None:
    make_workspace(home, {".codex/config.toml": CONFIG})
    config = test_config(work / "sub", home=home, profile="codex")
    assert (config.project_doc.fallback_filenames, config.project_doc.max_bytes) == (("RULES.md", "CLAUDE.md"), 40)
    assert config.origin("project_doc.max_bytes") == f"Codex's {home / '.codex/config.toml'}"
    doc = scan_tree(work / "sub", home=home, profile="codex").project_doc()
    assert doc.content == "rules root\n\n\nclaude sub, long enough to be"


def test_codex_home_moves_the_config_toml_read(work: Path, home: Path, tmp_path: Path) -> None:
    make_workspace(tmp_path / "codex-home", {"config.toml": CONFIG})
    make_workspace(home, {".codex/config.toml": "project_doc_max_bytes = 5\n"})
    env = {**isolated_environ(home), "CODEX_HOME": str(tmp_path / "codex-home")}
    assert test_config(work, home=home, profile="codex", environ=env).project_doc.max_bytes == 40


def test_only_the_codex_profile_reads_codex_config_toml(work: Path, home: Path) -> None:
    make_workspace(home, {".codex/config.toml": CONFIG})
    config = test_config(work, home=home, profile="default")
    doc = config.project_doc
    assert (doc.fallback_filenames, doc.max_bytes) == (("CLAUDE.md", ".cursorrules"), 32768)


def test_our_own_settings_win_over_codex_config_toml(work: Path, home: Path) -> None:
    make_workspace(home, {".codex/config.toml": CONFIG})
    settings = {"project_doc.max_bytes": 1000, "project_doc.fallback_filenames": ["CLAUDE.md"]}
    config = test_config(work, home=home, profile="codex", settings=settings)
    assert (config.project_doc.fallback_filenames, config.project_doc.max_bytes) == (("CLAUDE.md",), 1000)
    assert config.origin("project_doc.max_bytes") == "flag"


def test_names_leaving_their_folder_and_bad_values_are_left_out_with_a_warning(work: Path, home: Path) -> None:
    text = 'project_doc_fallback_filenames = [" RULES.md ", "", "../secret.md", "/etc/passwd", 3, "AGENTS.md"]\n'
    make_workspace(home, {".codex/config.toml": text + 'project_doc_max_bytes = "lots"\n'})
    config = test_config(work, home=home, profile="codex")
    assert (config.project_doc.fallback_filenames, config.project_doc.max_bytes) == (("RULES.md",), 32768)
    assert len([w for w in config.warnings if "config.toml" in w]) == 4


def test_a_config_toml_that_is_not_toml_changes_nothing_and_says_so(work: Path, home: Path) -> None:
    make_workspace(home, {".codex/config.toml": "project_doc_max_bytes = [\n"})
    config = test_config(work, home=home, profile="codex")
    assert config.project_doc.max_bytes == 32768
    assert any("not TOML" in w for w in config.warnings)
