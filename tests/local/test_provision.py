"""The local user, workspace and agent of ``agentcontext up``: made once, reused while their tokens work."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from agentcontext.control import identity, migrate
from agentcontext.control.db import Database
from agentcontext.control.models import Workspace
from agentcontext.local.provision import os_user, provision, safe_name
from agentcontext.local.state import LocalState


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'control.db'}")
    migrate.upgrade(database)
    yield database
    database.dispose()


def _principal(db: Database, token: str | None) -> identity.Principal:
    assert token is not None
    with db.read() as session:
        return identity.authenticate(session, token)


def _workspaces(db: Database) -> list[str]:
    with db.read() as session:
        return list(session.scalars(sa.select(Workspace.name).order_by(Workspace.name)))


def test_the_first_run_makes_an_admin_named_after_the_os_user_and_a_workspace_named_after_the_folder(
    db: Database, tmp_path: Path
) -> None:
    state, binding = provision(db, LocalState(), tmp_path / "my app")
    user = _principal(db, state.user_token)
    assert isinstance(user, identity.UserPrincipal) and user.is_admin and user.name == os_user()
    agent = _principal(db, binding.token)
    assert isinstance(agent, identity.AgentPrincipal) and agent.name == "local"
    assert (binding.workspace, _workspaces(db)) == ("my-app", ["my-app"])
    assert state.bindings == {str(tmp_path / "my app"): binding}


def test_a_second_run_reuses_every_token(db: Database, tmp_path: Path) -> None:
    first, binding = provision(db, LocalState(), tmp_path / "app")
    again, same = provision(db, first, tmp_path / "app")
    assert (again, same) == (first, binding)
    assert _workspaces(db) == ["app"]


def test_another_folder_of_the_same_name_gets_a_workspace_of_its_own(db: Database, tmp_path: Path) -> None:
    state, first = provision(db, LocalState(), tmp_path / "a" / "app")
    state, second = provision(db, state, tmp_path / "b" / "app")
    assert (first.workspace, second.workspace) == ("app", "app-2")
    assert len(state.bindings) == 2


def test_tokens_a_new_database_does_not_know_are_issued_again(tmp_path: Path) -> None:
    old = Database(f"sqlite:///{tmp_path / 'old.db'}")
    migrate.upgrade(old)
    state, binding = provision(old, LocalState(), tmp_path / "app")
    old.dispose()
    new = Database(f"sqlite:///{tmp_path / 'new.db'}")
    migrate.upgrade(new)
    renewed, rebound = provision(new, state, tmp_path / "app")
    assert renewed.user == state.user and renewed.user_token != state.user_token
    assert rebound.workspace == "app" and rebound.token != binding.token
    assert isinstance(_principal(new, rebound.token), identity.AgentPrincipal)
    new.dispose()


def test_a_rotated_agent_token_is_rotated_again_not_duplicated(db: Database, tmp_path: Path) -> None:
    state, binding = provision(db, LocalState(), tmp_path / "app")
    db.write(lambda s: identity.rotate_agent_token(s, "app", "local"))
    _, renewed = provision(db, state, tmp_path / "app")
    assert renewed.workspace == "app" and renewed.token != binding.token
    assert isinstance(_principal(db, renewed.token), identity.AgentPrincipal)
    assert _workspaces(db) == ["app"]


def test_a_lost_user_token_gets_a_new_token_for_the_same_user(db: Database, tmp_path: Path) -> None:
    state, _ = provision(db, LocalState(), tmp_path / "app")
    fresh, _ = provision(db, LocalState(bindings=state.bindings), tmp_path / "app")
    assert fresh.user == state.user and fresh.user_token != state.user_token
    assert isinstance(_principal(db, fresh.user_token), identity.UserPrincipal)


@pytest.mark.parametrize(
    ("text", "name"),
    [("my app", "my-app"), ("..", "x"), ("ünï", "n"), ("ü", "x"), ("a.b_c-d", "a.b_c-d"), ("-x-", "x")],
)
def test_folder_names_become_valid_names(text: str, name: str) -> None:
    assert safe_name(text, "x") == name
