"""The state file of ``agentcontext up``: private, reused, and a clear error when it is damaged."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agentcontext.errors import ConfigError
from agentcontext.local import state
from agentcontext.local.state import Binding, LocalState


def test_a_missing_state_file_is_an_empty_state(tmp_path: Path) -> None:
    assert state.load(tmp_path / "local.json") == LocalState()


def test_the_state_file_is_written_0600_in_a_0700_directory(tmp_path: Path) -> None:
    path = tmp_path / "data" / "local.json"
    state.save(path, LocalState(user="ann", user_token="acu_x"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_saved_state_loads_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "local.json"
    saved = LocalState("http://127.0.0.1:8765", "sqlite:///x.db", "ann", "acu_x").bound(
        "/src/app", Binding("app", "local", "aca_y")
    )
    state.save(path, saved)
    assert state.load(path) == saved


def test_binding_a_second_work_dir_keeps_the_first(tmp_path: Path) -> None:
    first = LocalState().bound("/a/app", Binding("app", "local", "aca_1"))
    both = first.bound("/b/app", Binding("app-2", "local", "aca_2"))
    assert dict(both.bindings) == {
        "/a/app": Binding("app", "local", "aca_1"),
        "/b/app": Binding("app-2", "local", "aca_2"),
    }


@pytest.mark.parametrize(
    "text",
    ["{not json", "[]", '{"format": 99, "workspaces": {}}', '{"format": 1}', '{"format": 1, "workspaces": {"/a": 3}}'],
)
def test_a_damaged_state_file_is_a_config_error_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "local.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        state.load(path)
    assert caught.value.source == str(path)
    assert "delete it to start over" in str(caught.value)


def test_a_state_field_of_the_wrong_type_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "local.json"
    path.write_text('{"format": 1, "workspaces": {}, "user_token": 7}', encoding="utf-8")
    with pytest.raises(ConfigError):
        state.load(path)
