"""The watcher, after Coder's watcher_test.go (coder.md 4.3, 8.3): real files, real inotify, anyio.

A watch is known to be live when the kernel lists it: every inotify descriptor of this
process shows its watches (by inode) in ``/proc/self/fdinfo``. Tests wait for that before
touching files, so no change can happen before the watch exists. The debounce is 50 ms. The
folders a watch begins to hold go to their own callback (``on_began``) in most tests, so a
change they count is one the watch saw.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio
import pytest
from watchfiles import Change

from agentcontext.agent.watcher import Watcher
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, skill_md, test_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

DEBOUNCE_MS = 50
QUIET = 0.5  # seconds with no call that show a change was ignored (10 debounce windows)
_WATCH_LINE = re.compile(r"^inotify wd:\S+ ino:([0-9a-f]+) ", re.MULTILINE)


class Calls:
    """What the watcher reported: on_change calls, on_error messages, and the folders each watch began to hold
    (apart from the changes: what a test counts as changed is what the watch saw)."""

    def __init__(self) -> None:
        self.changes = 0
        self.errors: list[str | None] = []
        self.began: list[set[str]] = []
        self._event = anyio.Event()

    def on_change(self) -> None:
        self.changes += 1
        self._event.set()

    def on_began(self, folders: set[str]) -> None:
        self.began.append(folders)
        self._event.set()

    async def began_to_hold(self, count: int, timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while len(self.began) < count:
                await self._event.wait()
                self._event = anyio.Event()

    def on_error(self, error: str | None) -> None:
        self.errors.append(error)
        self._event.set()

    async def changed(self, count: int = 1, timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while self.changes < count:
                await self._event.wait()
                self._event = anyio.Event()

    async def errored(self, count: int, timeout: float = 10) -> None:
        with anyio.fail_after(timeout):
            while len(self.errors) < count:
                await self._event.wait()
                self._event = anyio.Event()

    async def quiet(self) -> int:
        """The number of changes after a quiet period (a window in which nothing should fire)."""
        await anyio.sleep(QUIET)
        return self.changes


def watched_inodes() -> dict[int, set[int]]:
    """Inodes watched by each inotify descriptor of this process (fd -> inodes)."""
    found: dict[int, set[int]] = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") != "anon_inode:inotify":
                continue
            text = Path(f"/proc/self/fdinfo/{name}").read_text()
        except OSError:
            continue
        found[int(name)] = {int(match, 16) for match in _WATCH_LINE.findall(text)}
    return found


def watches_of(paths: Sequence[Path]) -> int:
    """How many inotify descriptors of this process watch one of ``paths``: those of this test alone (a watcher of a
    test before it in the same worker may still be closing its own)."""
    inodes = {path.stat().st_ino for path in paths}
    return sum(1 for watched in watched_inodes().values() if watched & inodes)


def is_watched(path: Path) -> bool:
    inode = path.stat().st_ino
    return any(inode in inodes for inodes in watched_inodes().values())


async def until_watched(paths: Sequence[Path], *, watched: bool = True, timeout: float = 10) -> None:
    with anyio.fail_after(timeout):
        while not all(is_watched(p) == watched for p in paths):
            await anyio.sleep(0.005)


@contextlib.asynccontextmanager
async def watching(watcher: Watcher, dirs: Sequence[Path]) -> AsyncIterator[Watcher]:
    """Run ``watcher`` over ``dirs`` until the block ends; the block starts once the kernel watches them."""
    watcher.update([str(d) for d in dirs])
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await until_watched(dirs)
        yield watcher
        group.cancel_scope.cancel()


def new_watcher(calls: Calls, names: Sequence[str] = ()) -> Watcher:
    return Watcher(
        calls.on_change, debounce_ms=DEBOUNCE_MS, names=names, on_error=calls.on_error, on_began=calls.on_began
    )


def scan_watch_dirs(work: Path, home: Path) -> list[Path]:
    """The directories the agent would watch for ``work`` (coder profile)."""
    scanner = Scanner(work, test_config(work, home=home, profile="coder"), environ=isolated_environ(home))
    scanner.run()
    return [Path(d) for d in scanner.watch_dirs()]


async def test_watcher_fires_on_agents_md_edit(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    calls = Calls()
    async with watching(new_watcher(calls), [work]):
        (work / "AGENTS.md").write_text("two", encoding="utf-8")
        await calls.changed(1)
    assert calls.errors == []


async def test_watcher_fires_on_new_skill_file(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {".agents/skills/lint/SKILL.md": skill_md("lint")})
    dirs = scan_watch_dirs(work, home)
    assert work / ".agents" / "skills" in dirs
    calls = Calls()
    async with watching(new_watcher(calls), dirs):
        make_workspace(work, {".agents/skills/deploy/SKILL.md": skill_md("deploy")})
        await calls.changed(1)


async def test_watcher_fires_on_skill_md_edit_in_a_skill_dir(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {".agents/skills/lint/SKILL.md": skill_md("lint")})
    dirs = scan_watch_dirs(work, home)
    assert work / ".agents" / "skills" / "lint" in dirs
    calls = Calls()
    async with watching(new_watcher(calls), dirs):
        (work / ".agents" / "skills" / "lint" / "SKILL.md").write_text(skill_md("lint", "lints more"), encoding="utf-8")
        await calls.changed(1)


async def test_watcher_fires_when_a_missing_container_appears(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules"})
    dirs = scan_watch_dirs(work, home)
    assert not (work / ".agents").exists()
    assert work in dirs  # the nearest existing ancestor of .agents/skills stands in for it
    calls = Calls()
    async with watching(new_watcher(calls), dirs):
        make_workspace(work, {".agents/skills/lint/SKILL.md": skill_md("lint")})
        await calls.changed(1)


async def test_watcher_fires_on_mcp_json_edit(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {".mcp.json": "{}"})
    calls = Calls()
    async with watching(new_watcher(calls), [work]):
        (work / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
        await calls.changed(1)


async def test_watcher_fires_on_an_extra_watched_name(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"RULES.md": "one"})
    calls = Calls()
    async with watching(new_watcher(calls, names=["RULES.md"]), [work]):
        (work / "RULES.md").write_text("two", encoding="utf-8")
        await calls.changed(1)


async def test_watcher_coalesces_a_burst_into_one_change(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "0"})
    calls = Calls()
    async with watching(new_watcher(calls), [work]):
        for index in range(10):
            (work / "AGENTS.md").write_text(str(index + 1), encoding="utf-8")
        await calls.changed(1)
        assert await calls.quiet() == 1


async def test_watcher_ignores_an_unrelated_modification(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "rules", "notes.txt": "one"})
    calls = Calls()
    watcher = new_watcher(calls)
    assert not watcher.relevant(Change.modified, str(work / "notes.txt"))
    assert watcher.relevant(Change.added, str(work / "notes.txt"))
    assert watcher.relevant(Change.deleted, str(work / "notes.txt"))
    assert watcher.relevant(Change.modified, str(work / "AGENTS.md"))
    async with watching(watcher, [work]):
        with (work / "notes.txt").open("a", encoding="utf-8") as notes:
            notes.write("two")
        assert await calls.quiet() == 0
        (work / "AGENTS.md").write_text("new rules", encoding="utf-8")  # the watch was live all along
        await calls.changed(1)


async def test_watcher_counts_an_edit_to_a_file_the_snapshot_read_whatever_its_name(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"rule.md": "one", "other.md": "one"})
    calls = Calls()
    watcher = Watcher(
        calls.on_change, debounce_ms=DEBOUNCE_MS, on_began=calls.on_began, read=lambda: {str(work / "rule.md")}
    )
    assert watcher.relevant(Change.modified, str(work / "rule.md"))
    assert not watcher.relevant(Change.modified, str(work / "other.md"))
    async with watching(watcher, [work]):
        (work / "other.md").write_text("two", encoding="utf-8")
        assert await calls.quiet() == 0
        (work / "rule.md").write_text("two", encoding="utf-8")
        await calls.changed(1)


async def test_watcher_update_with_new_paths_restarts_the_watch(tmp_path: Path) -> None:
    first = make_workspace(tmp_path / "first", {"AGENTS.md": "one"})
    second = make_workspace(tmp_path / "second", {"AGENTS.md": "one"})
    calls = Calls()
    async with watching(new_watcher(calls), [first]) as watcher:
        assert not is_watched(second)
        watcher.update([str(second)])
        await until_watched([second])
        await until_watched([first], watched=False)
        (second / "AGENTS.md").write_text("two", encoding="utf-8")
        await calls.changed(1)
        (first / "AGENTS.md").write_text("two", encoding="utf-8")
        assert await calls.quiet() == 1
    assert calls.began[-1] == {str(second)}


async def test_a_new_folder_counts_as_changed_once_its_watch_is_up(tmp_path: Path) -> None:
    # by default: what was read there before the watch began is read again
    first = make_workspace(tmp_path / "first", {"AGENTS.md": "one"})
    second = make_workspace(tmp_path / "second", {"AGENTS.md": "one"})
    calls = Calls()
    folders: list[set[str]] = []
    watcher = Watcher(calls.on_change, debounce_ms=DEBOUNCE_MS, on_paths=folders.append)
    async with watching(watcher, [first]):
        await calls.changed(1, timeout=5)  # no edit: the folder was new
        assert folders == [{str(first)}]
        watcher.update([str(first), str(second)])
        await calls.changed(2, timeout=5)
        assert folders == [{str(first)}, {str(second)}]  # the folder held already is not counted again
        assert await calls.quiet() == 2


async def test_an_edit_made_before_a_new_folders_watch_began_still_fires(tmp_path: Path) -> None:
    # The answer that named a folder was read before its watch existed: an edit in between is not lost.
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    calls = Calls()
    folders: list[set[str]] = []
    watcher = Watcher(calls.on_change, debounce_ms=DEBOUNCE_MS, on_paths=folders.append)
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await anyio.wait_all_tasks_blocked()
        watcher.update([str(work)])
        (work / "AGENTS.md").write_text("two", encoding="utf-8")  # no await since: the watch cannot exist yet
        assert not is_watched(work)
        await calls.changed(1, timeout=5)
        assert await calls.quiet() == 1
        group.cancel_scope.cancel()
    assert {str(work)} in folders  # the agent forgets what it remembered of the folder


async def test_a_watch_over_fewer_folders_does_not_count_as_a_change(tmp_path: Path) -> None:
    first = make_workspace(tmp_path / "first", {"AGENTS.md": "one"})
    second = make_workspace(tmp_path / "second", {"AGENTS.md": "one"})
    calls = Calls()
    async with watching(new_watcher(calls), [first, second]) as watcher:
        await calls.began_to_hold(1, timeout=5)
        watcher.update([str(first)])
        await until_watched([second], watched=False)  # the narrower watch came up: the wider one retired
        assert await calls.quiet() == 0
        assert calls.began == [{str(first), str(second)}]  # the narrower watch began to hold nothing new
        (first / "AGENTS.md").write_text("two", encoding="utf-8")
        await calls.changed(1)


async def test_watcher_update_with_the_same_paths_keeps_the_watch(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one", "sub/AGENTS.md": "one"})
    calls = Calls()
    async with watching(new_watcher(calls), [work, work / "sub"]) as watcher:
        before = watched_inodes()
        watcher.update([str(work / "sub"), str(work), str(work)])
        await anyio.sleep(QUIET)  # a restart would replace the inotify descriptor within a few ms
        assert watched_inodes() == before
        (work / "sub" / "AGENTS.md").write_text("two", encoding="utf-8")
        await calls.changed(1)


async def test_watcher_waits_for_a_path_to_watch(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    calls = Calls()
    watcher = new_watcher(calls)
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        watcher.update([str(tmp_path / "missing")])  # nothing to watch yet: the watcher idles
        await anyio.wait_all_tasks_blocked()
        watcher.update([str(work)])
        await until_watched([work])
        (work / "AGENTS.md").write_text("two", encoding="utf-8")
        await calls.changed(1)
        group.cancel_scope.cancel()


async def test_watcher_degrades_when_watching_fails_and_recovers_on_update(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    # A directory whose name is not UTF-8: watchfiles cannot watch it, so the whole watch fails.
    unwatchable = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    os.mkdir(unwatchable)
    calls = Calls()
    watcher = new_watcher(calls)
    watcher.update([unwatchable, str(work)])
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await calls.errored(1)
        [message] = calls.errors
        assert message is not None and message.startswith("file watching failed: ")
        assert "surrogates not allowed" in message
        assert calls.errors == [watcher.error]
        (work / "AGENTS.md").write_text("two", encoding="utf-8")  # degraded: no automatic updates
        assert await calls.quiet() == 0
        watcher.update([str(work)])
        await calls.errored(2)
        assert calls.errors == [message, None]
        assert watcher.error is None
        await until_watched([work])
        (work / "AGENTS.md").write_text("three", encoding="utf-8")
        await calls.changed(1)
        group.cancel_scope.cancel()


async def test_a_watch_that_recovers_counts_its_folders_as_changed(tmp_path: Path) -> None:
    # While the watch was down nothing saw the folders: what changed then is told once a watch is up again.
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    unwatchable = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    os.mkdir(unwatchable)
    calls = Calls()
    async with watching(new_watcher(calls), [work]) as watcher:
        await calls.began_to_hold(1, timeout=5)
        watcher.update([unwatchable, str(work)])
        await calls.errored(1)
        await until_watched([work], watched=False)  # the failed watch's predecessor retired: nothing watches
        watcher.update([str(work)])
        await calls.errored(2)  # up again, and nothing was edited since...
        await calls.began_to_hold(2, timeout=5)
    assert calls.began == [{str(work)}, {str(work)}]  # ...yet the folder is new to it
    assert calls.changes == 0


async def test_a_watcher_with_no_folder_left_to_watch_is_not_broken(tmp_path: Path) -> None:
    unwatchable = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    os.mkdir(unwatchable)
    calls = Calls()
    watcher = new_watcher(calls)
    watcher.update([unwatchable])
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await calls.errored(1)
        watcher.update([])
        await calls.errored(2)
        group.cancel_scope.cancel()
    assert calls.errors[1] is None
    assert watcher.error is None


async def test_a_watched_folder_removed_and_made_again_is_watched_again(tmp_path: Path) -> None:
    # a checkout removes a skill folder and makes it again: the kernel's watch went with the old folder
    work = make_workspace(tmp_path / "work", {"lint/SKILL.md": "one"})
    skill = work / "lint"
    calls = Calls()
    async with watching(new_watcher(calls), [work, skill]):
        await calls.began_to_hold(1, timeout=5)
        shutil.rmtree(skill)
        make_workspace(work, {"lint/SKILL.md": "two"})
        await calls.began_to_hold(2, timeout=5)
        assert calls.began[1] == {str(skill)}  # new to the watch: what changed there before it began counts
        seen = calls.changes
        (skill / "SKILL.md").write_text("three", encoding="utf-8")
        await calls.changed(seen + 1)


async def test_a_wanted_folder_made_just_before_its_parents_watch_began_is_watched(tmp_path: Path) -> None:
    # made after the restart left it out (missing then) and before the watch over its parent began: no watch
    # saw it appear, so the watch that came up restarts once more to hold it
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    lint = work / "lint"
    calls = Calls()
    watcher = new_watcher(calls)
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await anyio.wait_all_tasks_blocked()
        watcher.update([str(work), str(lint)])
        await anyio.sleep(0)  # the restart runs (lint missing: left out); the watch task starts after us
        lint.mkdir()
        await until_watched([lint], timeout=5)
        (lint / "SKILL.md").write_text("new", encoding="utf-8")
        await calls.changed(1)
        group.cancel_scope.cancel()


async def test_watcher_close_is_clean(tmp_path: Path) -> None:
    work = make_workspace(tmp_path / "work", {"AGENTS.md": "one"})
    calls = Calls()
    watcher = new_watcher(calls)
    watcher.update([str(work)])
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await until_watched([work])
        (work / "AGENTS.md").write_text("two", encoding="utf-8")  # a change still in its debounce window
        cancelled_at = anyio.current_time()
        group.cancel_scope.cancel()
    assert anyio.current_time() - cancelled_at < 0.5  # not held up by the watch thread's timeout
    await until_watched([work], watched=False)  # notify's own thread releases the inotify watch
    (work / "AGENTS.md").write_text("three", encoding="utf-8")
    assert await calls.quiet() == 0
    assert calls.errors == []


async def test_watcher_names_the_folders_that_changed_at_once(tmp_path: Path) -> None:
    """The agent forgets what it remembered of those folders (on-demand misses) before the debounce ends."""
    work = make_workspace(tmp_path / "work", {"pkg/x.py": ""})
    calls = Calls()
    folders: list[set[str]] = []
    watcher = Watcher(calls.on_change, debounce_ms=DEBOUNCE_MS, on_paths=folders.append, on_began=calls.on_began)
    async with watching(watcher, [work / "pkg"]):
        (work / "pkg" / "AGENTS.md").write_text("new", encoding="utf-8")
        await calls.changed(1)
    assert any(str(work / "pkg") in changed for changed in folders)


async def test_an_edit_made_as_the_watch_restarts_for_another_folder_still_fires(tmp_path: Path) -> None:
    # The old watch stops only once the new one is up and has had a debounce to hand over what it held:
    # an edit it saw last is never dropped with it.
    first = make_workspace(tmp_path / "first", {"AGENTS.md": "one"})
    second = tmp_path / "second"
    second.mkdir()
    calls = Calls()
    watcher = new_watcher(calls)
    async with watching(watcher, [first]):
        watcher.update([str(first), str(second)])  # a restart asked for...
        (first / "AGENTS.md").write_text("two", encoding="utf-8")  # ...and an edit before it happens
        await calls.changed(1, timeout=5)
        await until_watched([first, second])
    assert calls.errors == []


async def test_restarts_faster_than_watches_come_up_keep_only_a_few_watches_running(tmp_path: Path) -> None:
    folders = [make_workspace(tmp_path / f"f{index}", {"AGENTS.md": "one"}) for index in range(12)]
    calls = Calls()
    watcher = new_watcher(calls)
    most = 0
    async with watching(watcher, folders[:1]):
        for index in range(1, 12):  # a new set every 20 ms: none of the new watches is up yet
            watcher.update([str(folders[index])])
            await anyio.sleep(0.02)
            most = max(most, watches_of(folders))
        await until_watched(folders[:-1], watched=False)  # every replaced watch retires...
        assert watches_of(folders) == 1
        (folders[-1] / "AGENTS.md").write_text("two", encoding="utf-8")  # ...and the last one works
        await calls.changed(1)
    assert most <= 4  # the latest, and at most _MAX_HANDING replaced ones (one more may still be closing)
