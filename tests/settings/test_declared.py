"""Every setting is declared once, classified for repositories, and documented from its declaration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcontext.cli import app
from agentcontext.settings.config import load_config
from agentcontext.settings.declared import BY_KEY, KEYS, SETTINGS, RepoRule, Setting
from agentcontext.settings.profiles import PROFILES, profile_defaults
from agentcontext.settings.reference import END, reference_markdown, splice
from agentcontext.testing import make_workspace

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _toml(setting: Setting, value: Any) -> str:
    line = f"{setting.key.split('.', 1)[-1]} = {json.dumps(value)}\n"
    return f"[{setting.section}]\n{line}" if setting.section else line


def _widening(setting: Setting, default: Any) -> list[Any]:
    """Values that would read or run more than ``default``: a repository must not get them."""
    if setting.repo is RepoRule.NEVER:
        return [_other(setting, default)]
    if setting.repo is RepoRule.LOWER:
        if setting.unbounded is not None and default == setting.unbounded:
            return []  # nothing is wider than "no limit"
        high = setting.range[1] if setting.range else default * 4
        wider = [min(default * 2 + 1, high)] if default < high else []
        return wider + ([setting.unbounded] if setting.unbounded is not None else [])
    if setting.repo is RepoRule.NARROW:
        wider = _other(setting, setting.narrow_to)
        return [wider] if wider != default else []  # the profile's own default is no widening
    if setting.repo is RepoRule.INSIDE:
        return [["../outside"], ["/etc"], ["~/.ssh"], ["ok", "a/../../b"]]
    return []


def _other(setting: Setting, value: Any) -> Any:
    """A valid value of the setting's type that differs from ``value``."""
    if setting.choices:
        return next(choice for choice in setting.choices if choice != value)
    if setting.type == "bool":
        return not value
    if setting.type in ("int", "float"):
        low, high = setting.range or (0, 1 << 40)
        return value + 1 if value + 1 <= high else low
    if setting.type == "list":
        return ["/elsewhere/entirely"]
    return "/elsewhere/entirely"


def _allowed(setting: Setting, default: Any) -> Any:
    """A value a repository may give the setting, different from the default when there is one."""
    if setting.repo is RepoRule.LOWER:
        low = setting.range[0] if setting.range else 0
        return default - 1 if default - 1 >= low else default
    if setting.repo is RepoRule.NARROW:
        return setting.narrow_to
    if setting.repo is RepoRule.INSIDE:
        return ["tools/inside", "more"]
    if setting.names:
        return ["OTHER.md"] if setting.type == "list" else "OTHER.md"
    if setting.type == "list":
        return ["anything"]
    return _other(setting, default)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.key != "profile"], ids=lambda s: s.key)
def test_a_repository_cannot_widen_any_setting(tmp_path: Path, home: Path, setting: Setting, profile: str) -> None:
    default = load_config(tmp_path, environ={"HOME": str(home)}, overrides={"profile": profile}).value(setting.key)
    raw_default = profile_defaults(profile)[setting.key]
    for value in _widening(setting, raw_default):
        make_workspace(tmp_path, {".git/": "", "agentcontext.toml": _toml(setting, value)})
        config = load_config(tmp_path, environ={"HOME": str(home)}, overrides={"profile": profile})
        assert config.value(setting.key) == default, f"a repository set {setting.key} = {value!r}"
        assert [w for w in config.warnings if f": {setting.key} ignored: " in w], config.warnings


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.repo is not RepoRule.NEVER], ids=lambda s: s.key)
def test_a_repository_may_narrow_or_name_its_own_files(tmp_path: Path, home: Path, setting: Setting) -> None:
    value = _allowed(setting, profile_defaults("default").get(setting.key, "default"))
    make_workspace(tmp_path, {".git/": "", "agentcontext.toml": _toml(setting, value)})
    config = load_config(tmp_path, environ={"HOME": str(home)})
    expected = tuple(value) if isinstance(value, list) else value
    assert config.value(setting.key) == expected
    assert config.warnings == ()


def test_every_key_is_declared_once_with_a_description_and_a_rule() -> None:
    keys = [setting.key for setting in SETTINGS]
    assert len(keys) == len(set(keys)) == len(BY_KEY)
    assert set(KEYS) == set(profile_defaults("default"))
    for setting in SETTINGS:
        assert setting.description.endswith("."), setting.key
        assert isinstance(setting.repo, RepoRule)
        assert setting.repo is not RepoRule.NARROW or setting.narrow_to is not None, setting.key


def test_the_configuration_page_carries_the_current_reference() -> None:
    page = DOCS.read_text(encoding="utf-8")
    assert reference_markdown().rstrip("\n") in page, "docs/configuration.md is stale: run scripts/docs"
    assert splice(page) == page
    for setting in SETTINGS:
        assert f"`{setting.env}`" in page
    assert page.count(END) == 1


def test_config_reference_prints_the_generated_reference() -> None:
    result = CliRunner().invoke(app, ["config", "reference"])
    assert result.exit_code == 0
    assert result.stdout == reference_markdown()
