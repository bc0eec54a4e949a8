"""The control plane's own settings are the ``[server]`` section of the one settings table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcontext.cli import app, server_cmd
from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.control.settings import ControlSettings
from agentcontext.errors import ConfigError
from agentcontext.settings.config import load_config
from agentcontext.settings.declared import SETTINGS
from agentcontext.testing import make_workspace


def _settings(home: Path, environ: dict[str, str] | None = None, **flags: object) -> ControlSettings:
    env = {"HOME": str(home), **(environ or {})}
    overrides = {f"server.{name}": value for name, value in flags.items()}
    return ControlSettings.of(load_config(environ=env, overrides=overrides, repository=False).server)


def test_every_field_of_the_control_plane_settings_is_declared_with_its_default(home: Path) -> None:
    declared = [setting.key for setting in SETTINGS if setting.section == "server"]
    assert len(declared) == len(dataclasses.fields(ControlSettings))
    assert _settings(home) == ControlSettings()


def test_the_users_file_the_variables_and_the_flags_set_them_in_that_order(home: Path) -> None:
    file = "[server]\noffline_after = 60\nrecheck_every = 20\nchat_suffix = '-chat'\n"
    make_workspace(home, {".config/agentcontext/config.toml": file})
    environ = {"AGENTCONTEXT_SERVER_RECHECK_EVERY": "40"}
    settings = _settings(home, environ, recheck_every=0.5, mcp_sessions_per_user=3)
    assert (settings.offline_after, settings.recheck_every, settings.chat_suffix) == (60.0, 0.5, "-chat")
    assert settings.mcp_sessions_per_user == 3
    assert _settings(home, environ).recheck_every == 40.0


def test_the_variables_named_before_the_table_keep_working(home: Path) -> None:
    environ = {"AGENTCONTEXT_DISABLE_CONTEXT_SYNC": "1", "AGENTCONTEXT_AGENT_NETWORKS": "10.1.0.0/16 build-host"}
    settings = _settings(home, environ)
    assert settings.sync_enabled is False
    assert settings.agent_networks == AgentNetworks.parse(["10.1.0.0/16", "build-host"])
    assert _settings(home, {"AGENTCONTEXT_STORE_IN_THREADS": "1"}).store_on_loop is True  # not a variable of ours
    assert _settings(home, {"AGENTCONTEXT_SERVER_STORE_IN_THREADS": "1"}).store_on_loop is False


def test_a_bad_value_is_an_error_naming_its_source(home: Path) -> None:
    with pytest.raises(ConfigError, match="server.offline_after") as raised:
        _settings(home, {"AGENTCONTEXT_SERVER_OFFLINE_AFTER": "-1"})
    assert raised.value.source == "environment"
    with pytest.raises(ConfigError, match="--agent-network"):
        _settings(home, agent_networks=["not a/host"])


def test_a_flag_given_wins_and_a_flag_left_out_leaves_the_variable_its_say(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[ControlSettings] = []
    monkeypatch.setattr(server_cmd, "_serve", lambda db, listen, settings, *rest: served.append(settings))
    environ = {"HOME": str(home), "AGENTCONTEXT_SERVER_OFFLINE_AFTER": "9", "AGENTCONTEXT_SERVER_RECHECK_EVERY": "7"}
    result = CliRunner().invoke(app, ["server", "--offline-after", "3", "--store-in-threads"], env=environ)
    assert result.exit_code == 0, result.output
    assert (served[0].offline_after, served[0].recheck_every, served[0].store_on_loop) == (3.0, 7.0, False)
    assert served[0].mcp_session_idle == ControlSettings().mcp_session_idle  # the flag's default is no value given
