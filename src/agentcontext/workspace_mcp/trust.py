"""Which project MCP servers the user approved, by the exact entry, and the tools pinned with it.

Under ``mcp.trust = "approve"`` (the default) a server of the work dir's ``.mcp.json``
starts only once the user approved the digest of what it runs (:class:`~agentcontext.workspace_mcp.launch.Launch`:
the entry as written, the program as resolved, its cwd and the content of the repository
files it runs; ``agentcontext mcp trust``, ``agentcontext up``'s question, or the dashboard's
Approve button); any change to one of them changes the digest and needs approval again.
With the approval the store keeps what was shown (``runs``) and the text of the small bound
files (``texts``), so a server back to pending can say what changed since. The store is a JSON file in the
user's data dir (``$AGENTCONTEXT_HOME``, else ``$XDG_DATA_HOME/agentcontext``, else
``~/.local/share/agentcontext``), never in a repository, so no file a repository plants
can approve anything. It is written atomically with mode 0600 under an exclusive lock
(the CLI and a running agent may both write it).

Next to each approval the agent pins the tools the server listed first (``tools``); a
later listing that differs is recorded as ``seen``, and approving the server again pins
``seen``. Under ``mcp.trust = "auto"`` the agent pins tools the same way in a record that
is not an approval (``approved: false``), so switching back to ``approve`` still asks.

Layout: ``{config path: {server name: {"digest", "approved", "tools", "seen", "runs", "texts"}}}``;
a plain digest string (the first version's layout) reads as an approval without pins. A
digest of the first forms (the entry's text alone) never matches a launch's: such an
approval is asked again, with nothing to compare it to.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from agentcontext.errors import ConfigError
from agentcontext.resource import Runs
from agentcontext.workspace_mcp.launch import Launch
from agentcontext.workspace_mcp.tool_pins import Definition


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
    runs: dict[str, Any] | None = None  # what was approved, as shown (Runs.to_dict())
    texts: dict[str, str] | None = None  # the approved text of each small bound file, by path

    def to_json(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "approved": self.approved,
            "tools": self.tools,
            "seen": self.seen,
            "runs": self.runs,
            "texts": self.texts,
        }

    @classmethod
    def from_json(cls, value: Any) -> Record | None:
        if isinstance(value, str):  # the first layout: a bare approved digest
            return cls(value, True)
        if not isinstance(value, dict) or not isinstance(value.get("digest"), str):
            return None
        tools, seen, runs, texts = (value.get(key) for key in ("tools", "seen", "runs", "texts"))
        return cls(
            value["digest"],
            value.get("approved") is True,
            tools if isinstance(tools, dict) else None,
            seen if isinstance(seen, dict) else None,
            runs if isinstance(runs, dict) else None,
            {str(k): v for k, v in texts.items() if isinstance(v, str)} if isinstance(texts, dict) else None,
        )

    @classmethod
    def approval(cls, launch: Launch, tools: dict[str, Definition] | None = None) -> Record:
        """An approval of ``launch`` as shown, with its bound files' texts."""
        texts = {f.path: f.text for f in launch.files if f.text is not None}
        return cls(launch.digest, True, tools, None, launch.runs().to_dict(), texts or None)

    def approved_runs(self) -> Runs | None:
        """What this record approved, as it was shown (None when it approved nothing, or an older store)."""
        if not self.approved or self.runs is None:
            return None
        try:
            return Runs.from_dict(self.runs)
        except (KeyError, TypeError, ValueError):  # hand-edited: nothing to compare with
            return None


Data = dict[str, dict[str, Record]]


class Named(Protocol):
    """A server of a config file (a launch, or an entry to revoke)."""

    @property
    def name(self) -> str: ...

    @property
    def config_path(self) -> str: ...


_Server = TypeVar("_Server", bound=Named)


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

    def last(self, server: Named) -> Record | None:
        """The record kept for this server, whatever it was made for."""
        return self._load().get(server.config_path, {}).get(server.name)

    def record(self, launch: Launch) -> Record | None:
        """The record of this very launch (None when there is none, or it was made for another)."""
        found = self.last(launch)
        return found if found is not None and found.digest == launch.digest else None

    def approved(self, launch: Launch) -> bool:
        found = self.record(launch)
        return found is not None and found.approved

    def pins(self, launch: Launch) -> dict[str, Definition] | None:
        """The tools pinned for this launch; None until its first listing was pinned."""
        found = self.record(launch)
        return found.tools if found is not None else None

    def approve(self, launches: Sequence[Launch]) -> None:
        """Approve each launch as it is now; a listing seen since the pins becomes the pins."""
        with self._editing() as data:
            for launch in launches:
                servers = data.setdefault(launch.config_path, {})
                old = servers.get(launch.name)
                same = old is not None and old.digest == launch.digest
                # a new or changed launch: its tools are pinned when it first lists them
                servers[launch.name] = Record.approval(launch, (old.seen or old.tools) if old and same else None)

    def approve_tools(self, launch: Launch, tools: dict[str, Definition], *, approve: bool) -> None:
        """Pin exactly ``tools`` for this launch (an approval too, when ``approve``)."""
        with self._editing() as data:
            servers = data.setdefault(launch.config_path, {})
            old = servers.get(launch.name)
            same = old is not None and old.digest == launch.digest
            if approve or (old is not None and same and old.approved):
                servers[launch.name] = Record.approval(launch, tools)
            else:
                servers[launch.name] = Record(launch.digest, False, tools)

    def pin(self, launch: Launch, tools: dict[str, Definition]) -> dict[str, Definition]:
        """Pin a first listing, unless pins exist already; returns the pins in force."""
        with self._editing() as data:
            servers = data.setdefault(launch.config_path, {})
            old = servers.get(launch.name)
            if old is not None and old.digest == launch.digest:
                if old.tools is not None:
                    return old.tools
                servers[launch.name] = replace(old, tools=tools, seen=None)
            else:  # under auto: pins without an approval
                servers[launch.name] = Record(launch.digest, False, tools)
            return tools

    def note_seen(self, launch: Launch, tools: dict[str, Definition] | None) -> None:
        """Remember a listing that differs from the pins (None: it matches them again)."""
        with self._editing() as data:
            old = data.get(launch.config_path, {}).get(launch.name)
            if old is not None and old.digest == launch.digest and old.seen != tools:
                data[launch.config_path][launch.name] = replace(old, seen=tools)

    def revoke(self, servers: Sequence[_Server]) -> list[_Server]:
        """Forget each server's record; the servers that had an approval to withdraw (of any digest)."""
        withdrawn: list[_Server] = []
        with self._editing() as data:
            for server in servers:
                record = data.get(server.config_path, {}).pop(server.name, None)
                if record is not None and record.approved:
                    withdrawn.append(server)
        return withdrawn

    def stamp(self) -> tuple[int, int, int] | None:
        """Changes whenever the store is rewritten (for watchers); None while there is none."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)
