"""Watching the directories a snapshot depends on, with Coder's debounce.

Only directories are watched, each without its subdirectories: the scan's own listings
and the folders of the files it read (a folder that does not exist yet is stood in for by
its nearest existing ancestor). A change is relevant when a file or folder appears or
disappears, or when a file the engine reads by name, or one the snapshot read (a rule, an import, a
custom command), is modified. Relevant changes start a
quiet-period timer (``agent.debounce_ms``, 250 ms; :mod:`agentcontext.debounce`): each new
change restarts it, up to 20 periods after the first, and when it runs out the agent
re-scans once. ``on_paths`` hears at once which folders changed (the agent forgets its
remembered on-demand misses there).

A new set of folders starts a new watch beside the old one; the old one stops only once the
new one is up and a debounce has passed, so a change made while the watch restarts is told
by one of them (watchfiles drops what a stopped watch still holds). A watch is known to be
up at its first batch, of changes or of none after a second (``WATCH_ALIVE_MS``; changes
are filtered here, not in watchfiles, whose filter would put that batch off for as long as
only irrelevant changes came). A folder no running watch held before may have changed
between the read that named it and its watch beginning: when the latest watch comes up,
those folders go to ``on_began`` (by default they count as changed: ``on_paths``, then a
settled change), so what depends on them is read again rather than left stale until their
next edit. Whatever drops a watch before its successor is up (a failure, a retirement past
``_MAX_HANDING``, a set with no folder to watch) leaves no folder held. A watched folder that
goes or comes back (removed, renamed, made again by a checkout) restarts the watch: the
kernel's watch went with the folder it was on (gone, or moved elsewhere), and the one made
again is new to the watch; so does a wanted folder missing when the watch started and there
once it is up (made in between, where no watch saw it appear).

When watching fails (the inotify limit, say), the agent keeps working without automatic
updates, the snapshot's ``error`` says why, and explicit resyncs still work.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections import deque
from collections.abc import Callable, Container, Sequence

import anyio
from watchfiles import Change, awatch

from agentcontext.debounce import Debouncer

log = logging.getLogger("agentcontext.agent")
WATCH_ALIVE_MS = 1000  # how often a live watch says so: clears a degraded-mode error after a restart
_STEP_MS = 5  # how often watchfiles' thread looks at what it collected and at its stop event
_MAX_HANDING = 2  # replaced watches left running until their successor is up (each holds a thread)
WATCHED_NAMES = frozenset(
    {"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", ".cursorrules", "SKILL.md", ".mcp.json", "agentcontext.toml"}
)


class Watcher:
    """Calls ``on_change`` after relevant changes settle; reports a broken watch through ``on_error``."""

    def __init__(
        self,
        on_change: Callable[[], None],
        *,
        debounce_ms: int,
        names: Sequence[str] = (),
        on_error: Callable[[str | None], None] = lambda error: None,
        on_paths: Callable[[set[str]], None] = lambda folders: None,
        relevant: Callable[[Change, str], bool] | None = None,
        on_began: Callable[[set[str]], None] | None = None,
        label: str = "files",
        read: Callable[[], Container[str]] = frozenset,
    ) -> None:
        """``relevant``: which changes count, instead of :meth:`relevant` (the discovered files' own rule);
        ``on_began``: what to do with the folders a watch began to hold (see the module docstring);
        ``label``: what the watch is of, in its log lines; ``read``: the files the snapshot read, whatever
        their names (a rule, an import, a custom command), whose edits count too."""
        self._label = label
        self._on_began = on_began or self._count_as_changed
        self._on_change = on_change
        self._relevant = relevant or self.relevant
        self._on_paths = on_paths
        self._on_error = on_error
        self._settle = Debouncer(debounce_ms / 1000)
        self._names = WATCHED_NAMES | set(names)
        self._read = read
        self._paths: tuple[str, ...] = ()
        self._restart = anyio.Event()
        self._current = anyio.Event()  # what retires the watch of the latest paths: it alone reports health
        self._handing: deque[anyio.Event] = deque()  # what retires each replaced watch still running, oldest first
        self._held: frozenset[str] = frozenset()  # the folders a running watch holds, as of the latest one up
        self._debounce_ms = max(50, int(self._settle.quiet * 1000))
        self.error: str | None = None

    def relevant(self, change: Change, path: str) -> bool:
        return change is not Change.modified or os.path.basename(path) in self._names or path in self._read()

    def update(self, paths: Sequence[str]) -> None:
        """Watch exactly ``paths`` from now on (restarts the watch only when they changed)."""
        wanted = tuple(sorted(set(paths)))
        if wanted != self._paths or self.error:
            self._paths = wanted
            self._restart.set()

    async def run(self) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._debouncer)
            replaced: anyio.Event | None = None  # what retires the watch being replaced
            while True:
                self._restart = anyio.Event()
                paths = [p for p in self._paths if os.path.isdir(p)]
                up, retire = anyio.Event(), anyio.Event()
                self._current = retire  # with no folder to watch, no watch is current
                if paths:
                    group.start_soon(self._watch, paths, retire, up)
                else:
                    up.set()  # nothing to watch: the last watch only hands over what it holds
                    self._held = frozenset()
                    self._report(None)  # and nothing is broken
                if replaced is not None:
                    self._handing.append(replaced)
                    if len(self._handing) > _MAX_HANDING:  # restarts faster than watches come up: bound the threads
                        self._handing.popleft().set()
                        self._held = frozenset()  # it may have been the one holding them
                    group.start_soon(self._hand_over, replaced, up)
                replaced = retire if paths else None
                await self._restart.wait()

    async def _watch(self, paths: list[str], retire: anyio.Event, up: anyio.Event) -> None:
        # watchfiles waits for changes in a worker thread that only its stop event ends: set it on
        # retirement and on cancellation, or cancelling would wait for the thread's next timeout.
        stop = anyio.Event()
        began = False
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_set_when, retire, stop)
                async for batch in awatch(
                    *paths,
                    watch_filter=None,
                    recursive=False,
                    debounce=self._debounce_ms,
                    step=_STEP_MS,
                    stop_event=stop,
                    rust_timeout=WATCH_ALIVE_MS,
                    yield_on_timeout=True,
                    ignore_permission_denied=True,
                ):
                    up.set()  # the kernel watches these folders (an empty batch is the periodic sign of life)
                    if retire is self._current:  # a watch being replaced says nothing of the watch's health
                        self._report(None)
                        if not began:
                            began = True
                            self._began(paths)
                        self._restart_if_a_folder_went(batch)
                    changes = [(change, path) for change, path in batch if self._relevant(change, path)]
                    if changes:
                        self._on_paths({p for _, path in changes for p in (path, os.path.dirname(path))})
                        self._settle.poke()
                group.cancel_scope.cancel()
        except Exception as exc:  # degraded mode: say so, keep serving, wait for the next update
            self._held = frozenset()  # what it held is held no more (nor, if it was the latest, its predecessor)
            if retire is self._current:
                self._report(_describe(exc))
        finally:
            up.set()

    async def _hand_over(self, replaced: anyio.Event, up: anyio.Event) -> None:
        """Retire a replaced watch once its successor is up and one more debounce has passed: a change it
        held in its debounce when the restart came is told, not dropped with it (watchfiles drops what a
        stopped watch holds)."""
        await up.wait()
        await anyio.sleep((self._debounce_ms + 2 * _STEP_MS) / 1000)
        replaced.set()
        with contextlib.suppress(ValueError):  # retired early, past _MAX_HANDING
            self._handing.remove(replaced)

    def _restart_if_a_folder_went(self, batch: set[tuple[Change, str]]) -> None:
        """A watched folder went or came back: watch it (or its absence) anew, and count it as new."""
        if not batch:  # the periodic sign of life
            return
        wanted = set(self._paths)
        moved = {path for change, path in batch if change is not Change.modified and path in wanted}
        if moved:
            self._held -= moved
            self._restart.set()

    def _began(self, paths: list[str]) -> None:
        """The latest watch is up: the folders no running watch held before go to ``on_began``; a wanted
        folder it left out (missing then) that exists now appeared before it began, unseen: watch it too."""
        fresh = set(paths) - self._held
        self._held = frozenset(paths)
        log.info("%s: watching %d folders (%d new)", self._label, len(paths), len(fresh))
        if fresh:
            self._on_began(fresh)
        if any(os.path.isdir(folder) for folder in set(self._paths).difference(paths)):
            self._restart.set()

    def _count_as_changed(self, fresh: set[str]) -> None:
        """A change there before the watch began went unseen: act as if each had changed."""
        self._on_paths(fresh)
        self._settle.poke()

    def _report(self, error: str | None) -> None:
        if error != self.error:
            self.error = error
            self._on_error(error)

    async def _debouncer(self) -> None:
        while True:
            await self._settle.settled()
            self._on_change()


async def _set_when(trigger: anyio.Event, stop: anyio.Event) -> None:
    """Set ``stop`` once ``trigger`` is set, or at once when cancelled."""
    try:
        await trigger.wait()
    finally:
        stop.set()


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "ENOSPC" in str(exc) or "No space left" in str(exc):
        return "inotify watch limit exceeded (ENOSPC)"
    return f"file watching failed: {exc}"
