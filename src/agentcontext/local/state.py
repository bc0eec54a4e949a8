"""What ``agentcontext up`` remembers between runs: the control plane's URL, the local user's token, and one
workspace and agent token per work dir.

One JSON file, ``local.json`` in the data dir, written atomically with mode 0600 in a 0700
directory: the tokens in it grant everything the local user may do. Work dirs are keyed by
their resolved path, so ``up`` in a second folder gets a workspace of its own and ``up`` in
the same folder again reuses its tokens. A file that cannot be read is a ``ConfigError``
naming it (delete it to start over), never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentcontext.errors import ConfigError
from agentcontext.workspace_mcp.trust import data_dir, write_private

FILE_NAME = "local.json"
FORMAT = 1


@dataclass(frozen=True, slots=True)
class Binding:
    """A work dir's workspace and the agent that pushes it."""

    workspace: str
    agent: str
    token: str


@dataclass(frozen=True, slots=True)
class LocalState:
    server_url: str | None = None
    database: str | None = None
    user: str | None = None
    user_token: str | None = None
    bindings: Mapping[str, Binding] = field(default_factory=dict)

    def bound(self, work_dir: str, binding: Binding) -> LocalState:
        return replace(self, bindings={**self.bindings, work_dir: binding})


def default_path(environ: Mapping[str, str] | None = None) -> Path:
    return data_dir(environ) / FILE_NAME


def load(path: Path) -> LocalState:
    """The state in ``path``; an empty state when there is no file.

    Raises:
        ConfigError: the file cannot be read or is not the state ``up`` writes.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return LocalState()
    except (OSError, ValueError) as exc:
        raise _corrupt(path, str(exc)) from None
    try:
        return _from_json(data)
    except (TypeError, KeyError, AttributeError) as exc:
        raise _corrupt(path, f"unexpected content ({exc})") from None


def save(path: Path, state: LocalState) -> None:
    """Write ``state`` atomically, 0600, its directory 0700."""
    write_private(path, json.dumps(_to_json(state), indent=2, sort_keys=True) + "\n")
    path.parent.chmod(0o700)


def _corrupt(path: Path, reason: str) -> ConfigError:
    return ConfigError(f"cannot read the local state file: {reason}; delete it to start over", source=str(path))


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected a string, not {type(value).__name__}")


def _from_json(data: Any) -> LocalState:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TypeError(f"not a format {FORMAT} state object")
    bindings = {
        str(work_dir): Binding(str(entry["workspace"]), str(entry["agent"]), str(entry["token"]))
        for work_dir, entry in data["workspaces"].items()
    }
    return LocalState(
        _text(data.get("server_url")),
        _text(data.get("database")),
        _text(data.get("user")),
        _text(data.get("user_token")),
        bindings,
    )


def _to_json(state: LocalState) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "server_url": state.server_url,
        "database": state.database,
        "user": state.user,
        "user_token": state.user_token,
        "workspaces": {
            work_dir: {"workspace": b.workspace, "agent": b.agent, "token": b.token}
            for work_dir, b in sorted(state.bindings.items())
        },
    }
