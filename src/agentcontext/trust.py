"""Which project MCP servers the user approved, by the exact entry, and the tools pinned with it.

Under ``mcp.trust = "approve"`` (the default) a server of the work dir's ``.mcp.json``
starts only once the user approved the sha256 of its entry as written (``agentcontext
mcp trust``, ``agentcontext up``'s question, or the dashboard's Approve button); any change
to the entry changes the hash and needs approval again. The store is a JSON file in the
user's data dir (``$AGENTCONTEXT_HOME``, else ``$XDG_DATA_HOME/agentcontext``, else
``~/.local/share/agentcontext``), never in a repository, so no file a repository plants
can approve anything. It is written atomically with mode 0600 under an exclusive lock
(the CLI and a running agent may both write it).

Next to each approval the agent pins the tools the server listed first (``tools``); a
later listing that differs is recorded as ``seen``, and approving the server again pins
``seen``. Under ``mcp.trust = "auto"`` the agent pins tools the same way in a record that
is not an approval (``approved: false``), so switching back to ``approve`` still asks.

Layout: ``{config path: {server name: {"digest", "approved", "tools", "seen"}}}``; a
plain digest string (the first version's layout) reads as an approval without pins.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentcontext.errors import ConfigError
from agentcontext.mcp_config import ServerSpec
from agentcontext.tool_pins import Definition


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


@dataclass(frozen=True, slots=True)
class Record:
    """One server's entry in the store."""

    digest: str
    approved: bool
    tools: dict[str, Definition] | None = None  # pinned definitions by name; None: not listed yet
    seen: dict[str, Definition] | None = None  # a listing that differed from the pins, for re-approval

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "approved": self.approved, "tools": self.tools, "seen": self.seen}

    @classmethod
    def from_json(cls, value: Any) -> Record | None:
        if isinstance(value, str):  # the first layout: a bare approved digest
            return cls(value, True)
        if not isinstance(value, dict) or not isinstance(value.get("digest"), str):
            return None
        tools, seen = value.get("tools"), value.get("seen")
        return cls(
            value["digest"],
            value.get("approved") is True,
            tools if isinstance(tools, dict) else None,
            seen if isinstance(seen, dict) else None,
        )


Data = dict[str, dict[str, Record]]


class TrustStore:
    """Approved entries and pinned tools, by ``(config file, server name)``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls, environ: Mapping[str, str] | None = None) -> TrustStore:
        return cls(data_dir(environ) / "trust.json")

    def _load(self) -> Data:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the MCP trust store: {exc}", source=str(self.path)) from exc
        if not isinstance(data, dict):
            raise ConfigError("the MCP trust store is not a JSON object", source=str(self.path))
        out: Data = {}
        for config, servers in data.items():
            if isinstance(servers, dict):
                records = {str(n): r for n, v in servers.items() if (r := Record.from_json(v)) is not None}
                out[str(config)] = records
        return out

    @staticmethod
    def _text(data: Data) -> str:
        plain = {c: {n: r.to_json() for n, r in servers.items()} for c, servers in data.items() if servers}
        return json.dumps(plain, indent=2, sort_keys=True) + "\n"

    @contextlib.contextmanager
    def _editing(self) -> Iterator[Data]:
        """The store's data, saved when the block changed it; one writer at a time (an ``flock`` beside it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = self._load()
            before = self._text(data) if self.path.exists() else None
            yield data
            after = self._text(data)
            if after != before:  # an unchanged store is not rewritten: its watchers see no change
                write_private(self.path, after)
        finally:
            os.close(fd)  # releases the lock

    def record(self, spec: ServerSpec) -> Record | None:
        """The record of this very entry (None when there is none, or it was made for another entry)."""
        found = self._load().get(spec.config_path, {}).get(spec.name)
        return found if found is not None and found.digest == spec.digest else None

    def approved(self, spec: ServerSpec) -> bool:
        found = self.record(spec)
        return found is not None and found.approved

    def pins(self, spec: ServerSpec) -> dict[str, Definition] | None:
        """The tools pinned for this entry; None until its first listing was pinned."""
        found = self.record(spec)
        return found.tools if found is not None else None

    def approve(self, specs: list[ServerSpec]) -> None:
        """Approve each entry as it is now; a listing seen since the pins becomes the pins."""
        with self._editing() as data:
            for spec in specs:
                servers = data.setdefault(spec.config_path, {})
                old = servers.get(spec.name)
                if old is not None and old.digest == spec.digest:
                    servers[spec.name] = Record(spec.digest, True, old.seen or old.tools)
                else:  # a new or changed entry: its tools are pinned when it first lists them
                    servers[spec.name] = Record(spec.digest, True)

    def approve_tools(self, spec: ServerSpec, tools: dict[str, Definition], *, approve: bool) -> None:
        """Pin exactly ``tools`` for this entry (an approval too, when ``approve``)."""
        with self._editing() as data:
            servers = data.setdefault(spec.config_path, {})
            old = servers.get(spec.name)
            approved = approve or (old is not None and old.digest == spec.digest and old.approved)
            servers[spec.name] = Record(spec.digest, approved, tools)

    def pin(self, spec: ServerSpec, tools: dict[str, Definition]) -> dict[str, Definition]:
        """Pin a first listing, unless pins exist already; returns the pins in force."""
        with self._editing() as data:
            servers = data.setdefault(spec.config_path, {})
            old = servers.get(spec.name)
            if old is not None and old.digest == spec.digest:
                if old.tools is not None:
                    return old.tools
                servers[spec.name] = replace(old, tools=tools, seen=None)
            else:  # under auto: pins without an approval
                servers[spec.name] = Record(spec.digest, False, tools)
            return tools

    def note_seen(self, spec: ServerSpec, tools: dict[str, Definition] | None) -> None:
        """Remember a listing that differs from the pins (None: it matches them again)."""
        with self._editing() as data:
            old = data.get(spec.config_path, {}).get(spec.name)
            if old is not None and old.digest == spec.digest and old.seen != tools:
                data[spec.config_path][spec.name] = replace(old, seen=tools)

    def revoke(self, specs: list[ServerSpec]) -> None:
        with self._editing() as data:
            for spec in specs:
                data.get(spec.config_path, {}).pop(spec.name, None)

    def stamp(self) -> tuple[int, int, int] | None:
        """Changes whenever the store is rewritten (for watchers); None while there is none."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)
