"""Which project MCP servers the user approved, by the exact config they approved.

Under ``mcp.trust = "approve"`` a server of the work dir's ``.mcp.json`` starts only once
``agentcontext mcp trust`` has recorded the sha256 of its entry as written; any change to
the entry changes the hash and needs approval again. The store is a JSON file in the user
data dir (``$XDG_DATA_HOME/agentcontext/trust.json``), written atomically with mode 0600.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agentcontext.errors import ConfigError
from agentcontext.mcp_config import ServerSpec


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where agentcontext keeps its state: ``$AGENTCONTEXT_HOME``, else the XDG data dir."""
    env = os.environ if environ is None else environ
    explicit = env.get("AGENTCONTEXT_HOME", "").strip()
    if explicit:
        return Path(explicit)
    xdg = env.get("XDG_DATA_HOME", "").strip()
    home = env.get("HOME", "").strip() or os.path.expanduser("~")
    return Path(xdg) / "agentcontext" if xdg else Path(home) / ".local" / "share" / "agentcontext"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically to a file only its owner can read (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class TrustStore:
    """Approved ``(config file, server name) -> digest`` pairs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> TrustStore:
        return cls(data_dir(environ) / "trust.json")

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the MCP trust store: {exc}", source=str(self.path)) from exc
        if not isinstance(data, dict):
            raise ConfigError("the MCP trust store is not a JSON object", source=str(self.path))
        return {str(k): {str(n): str(d) for n, d in v.items()} for k, v in data.items() if isinstance(v, dict)}

    def approved(self, spec: ServerSpec) -> bool:
        return self._load().get(spec.config_path, {}).get(spec.name) == spec.digest

    def approve(self, specs: list[ServerSpec]) -> None:
        data = self._load()
        for spec in specs:
            data.setdefault(spec.config_path, {})[spec.name] = spec.digest
        write_private(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def revoke(self, specs: list[ServerSpec]) -> None:
        data = self._load()
        for spec in specs:
            data.get(spec.config_path, {}).pop(spec.name, None)
        write_private(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")
