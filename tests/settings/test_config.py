"""Settings: profiles, the TOML file, AGENTCONTEXT_* and CODER_AGENT_EXP_* variables, flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcontext.errors import ConfigError
from agentcontext.settings.config import env_name, load_config
from agentcontext.settings.profiles import KEYS, PROFILES
from agentcontext.testing import make_workspace


def test_the_default_profile_has_codex_budget_and_fallbacks(tmp_path: Path, home: Path) -> None:
    config = load_config(tmp_path, environ={"HOME": str(home)})
    assert config.profile == "default"
    assert config.project_doc.max_bytes == 32768
    assert config.project_doc.candidates == ("AGENTS.override.md", "AGENTS.md", "CLAUDE.md", ".cursorrules")
    assert config.project_doc.root_markers == (".git",)
    assert config.project_doc.instruction_dirs == (str(home / ".codex"),)
    assert config.snapshot.max_resource_bytes == 65536
    assert config.snapshot.max_snapshot_bytes == 2097152
    assert config.snapshot.max_resources == 500
    assert config.skills.validation == "lenient"
    assert config.skills.include_plugins is True


def test_codex_profile_has_no_fallbacks_and_follows_codex_home(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home), "CODEX_HOME": str(tmp_path / "ch")}
    config = load_config(tmp_path, environ=env, overrides={"profile": "codex"})
    assert config.project_doc.candidates == ("AGENTS.override.md", "AGENTS.md")
    assert config.project_doc.instruction_dirs == (str(tmp_path / "ch"),)
    assert config.skills.dirs == (str(tmp_path / "ch" / "skills"), "~/.agents/skills")
    assert config.skills.max_depth == 6


def test_coder_profile_reads_shallow_roots_with_coder_rules(tmp_path: Path, home: Path) -> None:
    config = load_config(tmp_path, environ={"HOME": str(home)}, overrides={"profile": "coder"})
    assert config.project_doc.discovery == "roots"
    assert config.project_doc.root_names == ("AGENTS.md", "CLAUDE.md", ".cursorrules")
    assert config.project_doc.instruction_dirs == ("~/.coder",)
    assert config.skills.validation == "coder"


def test_project_config_file_at_the_project_root_is_read(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "agentcontext.toml": 'profile = "codex"\n[project_doc]\nmax_bytes = 100\n[skills]\nvalidation = "spec"\n',
            "sub/": "",
        },
    )
    config = load_config(tmp_path / "sub", environ={"HOME": str(home)})
    assert config.profile == "codex"
    assert config.project_doc.max_bytes == 100
    assert config.skills.validation == "spec"
    assert config.project_file == str(tmp_path / "agentcontext.toml")
    assert config.origin("project_doc.max_bytes") == f"project file {tmp_path / 'agentcontext.toml'}"
    assert config.origin("project_doc.filename") == "default"


def test_user_config_is_used_when_the_project_has_none(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/agentcontext/config.toml": "[snapshot]\nmax_resources = 7\n"})
    config = load_config(tmp_path, environ={"HOME": str(home)})
    assert config.snapshot.max_resources == 7
    assert config.user_file == str(home / ".config/agentcontext/config.toml")


def test_the_users_file_is_layered_over_the_projects_file(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/agentcontext/config.toml": "[snapshot]\nmax_resources = 7\n"})
    project = "[snapshot]\nmax_resources = 5\nmax_resource_bytes = 1000\n"
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": project})
    config = load_config(tmp_path, environ={"HOME": str(home)})
    assert (config.snapshot.max_resources, config.snapshot.max_resource_bytes) == (7, 1000)
    assert config.origin("snapshot.max_resource_bytes") == f"project file {tmp_path / 'agentcontext.toml'}"
    assert config.origin("snapshot.max_resources") == f"file {home / '.config/agentcontext/config.toml'}"


def test_explicit_config_file_wins_over_the_project_file(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": "[snapshot]\nmax_resources = 1\n"})
    explicit = make_workspace(tmp_path / "cfg", {"mine.toml": "[snapshot]\nmax_resources = 2\n"}) / "mine.toml"
    config = load_config(tmp_path, environ={"HOME": str(home)}, config_file=explicit)
    assert config.snapshot.max_resources == 2
    assert config.user_file == str(explicit)


def test_the_repository_file_named_with_config_counts_as_the_users_own(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": '[mcp]\ntrust = "approve"\n'})
    config = load_config(tmp_path, environ={"HOME": str(home)}, config_file=tmp_path / "agentcontext.toml")
    assert config.mcp.trust == "approve"
    assert (config.project_file, config.warnings) == (None, ())


def test_dev_null_as_config_reads_no_file_at_all(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/agentcontext/config.toml": "[snapshot]\nmax_resources = 7\n"})
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": "[snapshot]\nmax_resources = 5\n"})
    config = load_config(tmp_path, environ={"HOME": str(home)}, config_file="/dev/null")
    assert (config.snapshot.max_resources, config.project_file, config.user_file) == (500, None, None)


def test_environment_overrides_the_file_and_flags_override_the_environment(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": "[project_doc]\nmax_bytes = 100\n"})
    env = {"HOME": str(home), "AGENTCONTEXT_PROJECT_DOC_MAX_BYTES": "200"}
    assert load_config(tmp_path, environ=env).project_doc.max_bytes == 200
    config = load_config(tmp_path, environ=env, overrides={"project_doc.max_bytes": 300})
    assert config.project_doc.max_bytes == 300
    assert config.origin("project_doc.max_bytes") == "flag"


def test_list_variables_are_comma_separated_and_trimmed(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home), "AGENTCONTEXT_PROJECT_DOC_FALLBACK_FILENAMES": " GEMINI.md , ,CLAUDE.md "}
    config = load_config(tmp_path, environ=env)
    assert config.project_doc.fallback_filenames == ("GEMINI.md", "CLAUDE.md")


def test_whitespace_only_variables_count_as_unset(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home), "AGENTCONTEXT_PROJECT_DOC_MAX_BYTES": "   ", "CODER_AGENT_EXP_INSTRUCTIONS_FILE": " "}
    config = load_config(tmp_path, environ=env)
    assert config.project_doc.max_bytes == 32768
    assert config.project_doc.filename == "AGENTS.md"


def test_coder_variables_are_honoured_as_aliases(tmp_path: Path, home: Path) -> None:
    env = {
        "HOME": str(home),
        "CODER_AGENT_EXP_INSTRUCTIONS_DIRS": "~/a, /abs/b ,rel",
        "CODER_AGENT_EXP_INSTRUCTIONS_FILE": "CUSTOM.md",
        "CODER_AGENT_EXP_SKILLS_DIRS": ".agents/skills,skills",
        "CODER_AGENT_EXP_SKILL_META_FILE": "META.yaml",
        "CODER_AGENT_EXP_MCP_CONFIG_FILES": ".mcp.json,tools/mcp.json",
    }
    config = load_config(tmp_path, environ=env, overrides={"profile": "coder"})
    assert config.project_doc.instruction_dirs == ("~/a", "/abs/b", "rel")
    assert config.project_doc.filename == "CUSTOM.md"
    assert config.skills.dirs == (".agents/skills", "skills")
    assert config.skills.meta_file == "META.yaml"
    assert config.mcp.config_files == (".mcp.json", "tools/mcp.json")
    assert config.origin("skills.meta_file") == "coder alias"


def test_agentcontext_variables_win_over_coder_aliases(tmp_path: Path, home: Path) -> None:
    env = {
        "HOME": str(home),
        "CODER_AGENT_EXP_INSTRUCTIONS_FILE": "CODER.md",
        "AGENTCONTEXT_PROJECT_DOC_FILENAME": "OURS.md",
    }
    assert load_config(tmp_path, environ=env).project_doc.filename == "OURS.md"


def test_plugins_default_on_but_off_when_dirs_overridden(tmp_path: Path, home: Path) -> None:
    env = {"HOME": str(home)}
    assert load_config(tmp_path, environ=env).skills.include_plugins is True
    with_dirs = load_config(tmp_path, environ=env, overrides={"skills.dirs": ["my-skills"]})
    assert with_dirs.skills.include_plugins is False
    explicit = load_config(tmp_path, environ=env, overrides={"skills.dirs": ["x"], "skills.include_plugins": True})
    assert explicit.skills.include_plugins is True


def test_unknown_keys_and_bad_values_are_rejected_with_their_source(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/agentcontext/config.toml": "[skills]\nmax_depht = 3\n"})
    with pytest.raises(ConfigError, match="unknown setting 'skills.max_depht'") as info:
        load_config(tmp_path, environ={"HOME": str(home)})
    assert info.value.source == f"file {home / '.config/agentcontext/config.toml'}"
    with pytest.raises(ConfigError, match=r"skills.max_depth must be an integer from 1 to 6, not '9'"):
        env = {"HOME": str(home), "AGENTCONTEXT_SKILLS_MAX_DEPTH": "9"}
        load_config(tmp_path, environ=env, config_file="/dev/null")
    with pytest.raises(ConfigError, match="skills.validation must be one of lenient, codex, spec, coder"):
        overrides = {"skills.validation": "strict"}
        load_config(tmp_path, environ={"HOME": str(home)}, overrides=overrides, config_file="/dev/null")
    with pytest.raises(ConfigError, match="unknown profile 'nonesuch'"):
        load_config(tmp_path, environ={"HOME": str(home), "AGENTCONTEXT_PROFILE": "nonesuch"}, config_file="/dev/null")


def test_the_repositorys_unknown_keys_and_bad_values_are_ignored_with_warnings(tmp_path: Path, home: Path) -> None:
    toml = 'profile = "nonesuch"\n[skills]\nmax_depht = 3\nmax_depth = "deep"\nvalidation = "spec"\n'
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": toml})
    config = load_config(tmp_path, environ={"HOME": str(home)})
    file = tmp_path / "agentcontext.toml"
    assert (config.profile, config.skills.max_depth, config.skills.validation) == ("default", 1, "spec")
    assert config.warnings == (
        f"{file}: profile ignored: unknown profile 'nonesuch'",
        f"{file}: 'skills.max_depht' ignored: unknown setting",
        f"{file}: skills.max_depth ignored: skills.max_depth must be an integer from 1 to 6, not 'deep'",
    )


def test_a_broken_toml_file_of_the_user_is_a_config_error(tmp_path: Path, home: Path) -> None:
    make_workspace(home, {".config/agentcontext/config.toml": "[skills\n"})
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path, environ={"HOME": str(home)})


def test_a_broken_toml_file_of_the_repository_is_ignored_with_a_warning(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": "[skills\n"})
    config = load_config(tmp_path, environ={"HOME": str(home)})
    assert config.project_file is None
    assert len(config.warnings) == 1
    assert config.warnings[0].startswith(f"{tmp_path / 'agentcontext.toml'}: ignored: cannot read config")


def test_file_name_settings_must_be_one_path_component(tmp_path: Path, home: Path) -> None:
    with pytest.raises(ConfigError, match=r"project_doc.filename: '../../.ssh/id_rsa' is not a file name"):
        overrides = {"project_doc.filename": "../../.ssh/id_rsa"}
        load_config(tmp_path, environ={"HOME": str(home)}, overrides=overrides, config_file="/dev/null")


def test_a_missing_explicit_config_file_is_a_config_error(tmp_path: Path, home: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path, environ={"HOME": str(home)}, config_file=tmp_path / "absent.toml")


def test_every_key_has_an_environment_variable_and_a_value_in_every_profile(tmp_path: Path, home: Path) -> None:
    for profile in PROFILES:
        config = load_config(tmp_path, environ={"HOME": str(home)}, overrides={"profile": profile})
        shown = config.to_dict()
        assert set(shown) == {"profile", *KEYS}
        assert shown["profile"] == {"value": profile, "from": "flag"}
    assert env_name("skills.max_depth") == "AGENTCONTEXT_SKILLS_MAX_DEPTH"
