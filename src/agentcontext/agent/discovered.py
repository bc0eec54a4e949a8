"""Watching where the files the agent answered on demand lie, so an edit there reaches the chats at once.

The files a chat discovers (a nested AGENTS.md, CLAUDE.md, rules) are not in the snapshot, so
no push shows their edits. Each on-demand answer says which folders it depends on and for
which names (:attr:`Applicable.watch`): those folders are watched too (at most
``agent.discovered_watch_cap``, the least recently asked dropped first), and a change of
one of those names (an edit, a new file, a removal, a rename), once settled for
``agent.debounce_ms``, sends a heartbeat at once saying so; the control plane then asks
again about its chats' discovered files and marks those that changed out of date. A watch
comes up a moment after the answer that asked for it: a change in that moment counts too,
told once the watch over that folder is up (:meth:`began`).

A folder is watched only inside the work dir or a declared source, its real path too: a
link in a repository never makes the agent watch a folder elsewhere. The heartbeats say
whether the watch covers everything asked this run (``watching``): past the cap, or with
the watch broken, the control plane rechecks on every heartbeat instead; a restarted agent
watches nothing until the control plane asks again (which it does on the new run's first
heartbeat).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import anyio
from watchfiles import Change

from agentcontext.fs.files import is_within
from agentcontext.instructions.applied import Interest
from agentcontext.wire.sync import DiscoveredWatchInfo


class DiscoveredWatch:
    """The folders on-demand answers depended on, most recently asked last, and whether one of them changed."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._folders: dict[str, frozenset[str] | None] = {}  # folder -> the names that matter (None: all)
        self.dropped = 0  # folders dropped past the cap this run
        self.error: str | None = None  # the watch is broken (the inotify limit, say)
        self._changes = 0  # changes seen this run
        self._told = 0  # changes a heartbeat answered by the control plane carried
        self._changed = anyio.Event()
        self._learned = anyio.Event()

    # --- what is watched ------------------------------------------------------------------

    def learn(self, interests: Iterable[Interest]) -> None:
        """Watch what an answer depends on too (on the event loop). A folder watched already that gains a
        name is told as changed at once (as :meth:`began` does): the watch dropped a change of that name made
        while the answer was being read, the name not mattering yet."""
        added = gained = False
        for folder, names in interests:
            watched = folder in self._folders
            known = self._folders.pop(folder, frozenset())
            joined = None if names is None or known is None else known | names
            self._folders[folder] = joined  # last: the most recently asked
            added = added or joined != known
            gained = gained or (watched and joined != known)
        over = len(self._folders) - self.cap
        if over > 0:
            for folder in list(self._folders)[:over]:
                del self._folders[folder]
            self.dropped += over
        if added:
            self._learned.set()
        if gained:
            self.began()

    def folders(self) -> list[str]:
        return list(self._folders)

    async def learned(self) -> None:
        """Until an answer adds a folder or a name to watch."""
        await self._learned.wait()
        self._learned = anyio.Event()

    def relevant(self, change: Change, path: str) -> bool:
        """Whether a change in a watched folder is one of the names that matter there."""
        folder, _, name = path.rpartition(os.sep)
        names = self._folders.get(folder, frozenset())
        return names is None or name in names

    def broken(self, error: str | None) -> None:
        """The watch failed (None: it is up again); meanwhile the heartbeats say it is not whole."""
        self.error = error

    # --- what the control plane is told ---------------------------------------------------

    def began(self) -> None:
        """A change may have gone untold (a watch just began over new folders, or a watched folder gained a
        name): tell it, while nothing was dropped past the cap. Past it the heartbeats' rechecks cover it, and
        telling would recheck in a loop (each recheck asks again, which re-adds folders the cap then drops)."""
        if self.dropped == 0:
            self.changed()

    def changed(self) -> None:
        """A relevant change settled: the next heartbeat (sent at once) says so."""
        self._changes += 1
        self._changed.set()

    async def noticed(self) -> None:
        """Until a change is waiting to be told."""
        while self._changes <= self._told:
            await self._changed.wait()
            self._changed = anyio.Event()

    def report(self) -> tuple[DiscoveredWatchInfo, int]:
        """What the next heartbeat says, and how many changes it tells (for :meth:`told`)."""
        watching = self.dropped == 0 and self.error is None
        return DiscoveredWatchInfo(watching=watching, changed=self._changes > self._told), self._changes

    def told(self, changes: int) -> None:
        """The control plane answered a heartbeat that told ``changes`` changes."""
        self._told = max(self._told, changes)


def contained(folders: Sequence[str], bases: Sequence[str]) -> list[str]:
    """The existing folders inside one of ``bases``, their real paths too (run in a worker thread)."""
    reals = [(base, os.path.realpath(base)) for base in bases]
    out: list[str] = []
    for folder in folders:
        for base, real in reals:
            if is_within(folder, base) and os.path.isdir(folder) and is_within(os.path.realpath(folder), real):
                out.append(folder)
                break
    return out
