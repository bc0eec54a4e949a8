"""The filesystem gate: classify before opening, stay inside the boundary, read bounded, cache only what is settled."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from agentcontext.fs import files
from agentcontext.fs.files import RACY_SECONDS, Entry, EntryKind, ListedEntry, Names, Reader, is_within, stat_key
from tests.helpers import unprivileged

T = TypeVar("T")


def age(path: Path, seconds: float = 10.0) -> None:
    """Give ``path`` (not a symlink's target) an mtime safely outside the racy-clean window."""
    past = time.time() - seconds
    os.utime(path, (past, past), follow_symlinks=False)


def written(path: Path, content: str | bytes, *, seconds: float = 10.0) -> Path:
    """A file with ``content``, aged by ``seconds``."""
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    age(path, seconds)
    return path


def bounded(fifo: Path, action: Callable[[], T]) -> T:
    """Run ``action`` in a thread. ``fifo`` has no writer, so opening it for reading would block forever:
    a call still running after the timeout is released by opening the write end, and fails the test."""
    outcome: list[T] = []
    thread = threading.Thread(target=lambda: outcome.append(action()), daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer appears: the blocked open returns
        thread.join()
        pytest.fail(f"{fifo} was opened for reading")
    assert len(outcome) == 1, "the call raised"
    return outcome[0]


def assert_no_reader(fifo: Path) -> None:
    """Nobody holds the read end: a non-blocking open for writing finds no partner."""
    with pytest.raises(OSError) as caught:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert caught.value.errno == errno.ENXIO


class Clock:
    """A stand-in for the ``time`` module inside :mod:`agentcontext.fs.files`, so time can pass without sleeping."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return int(self.now * 1e9)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock(time.time())
    monkeypatch.setattr(files, "time", fake)
    return fake


def set_mtime_ns(path: Path, mtime_ns: int) -> None:
    os.utime(path, ns=(mtime_ns, mtime_ns), follow_symlinks=False)


# --- probe: what a path is, decided before anything is opened ------------------------


def test_a_regular_file_is_classified_with_its_size_and_stat_key(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "hello")
    entry = Reader().probe(str(path), str(tmp_path))
    assert entry == Entry(str(path), EntryKind.FILE, str(path), 5, stat_key(os.stat(path)), is_link=False)
    assert entry.is_file and not entry.is_dir


def test_a_directory_is_classified_as_a_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    entry = Reader().probe(str(tmp_path / "sub"), str(tmp_path))
    assert (entry.kind, entry.is_dir, entry.is_file, entry.size) == (EntryKind.DIRECTORY, True, False, 0)


def test_a_fifo_is_classified_without_ever_being_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)
    reader = Reader()
    entry = bounded(fifo, lambda: reader.probe(str(fifo), str(tmp_path)))
    assert (entry.kind, entry.special, entry.is_file) == (EntryKind.SPECIAL, "a FIFO", False)
    listing = bounded(fifo, lambda: reader.list_dir(str(tmp_path)))
    assert listing == (ListedEntry("AGENTS.md", is_dir=False, is_symlink=False, is_file=False),)
    assert_no_reader(fifo)


def test_reading_a_fifo_entry_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)
    reader = Reader()
    entry = reader.probe(str(fifo), str(tmp_path))

    def read() -> OSError | None:
        try:
            reader.read(entry, 100)
        except OSError as exc:
            return exc
        return None

    refused = bounded(fifo, read)
    assert refused is not None
    assert (refused.errno, refused.strerror) == (errno.ESTALE, "file changed while it was being read")
    assert_no_reader(fifo)


def test_a_unix_socket_is_special(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        entry = Reader().probe(str(path), str(tmp_path))
    assert (entry.kind, entry.special) == (EntryKind.SPECIAL, "a socket")


def test_a_character_device_is_special() -> None:
    entry = Reader().probe("/dev/null", "/dev")
    assert (entry.kind, entry.special) == (EntryKind.SPECIAL, "a device")


def test_a_missing_path_and_a_path_below_a_file_are_missing(tmp_path: Path) -> None:
    written(tmp_path / "file.txt", "x")
    reader = Reader()
    assert reader.probe(str(tmp_path / "nothing"), str(tmp_path)) == Entry(str(tmp_path / "nothing"), EntryKind.MISSING)
    below = str(tmp_path / "file.txt" / "child")
    assert reader.probe(below, str(tmp_path)) == Entry(below, EntryKind.MISSING)


def test_a_symlink_inside_the_boundary_is_followed_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    target = written(tmp_path / "docs" / "AGENTS.md", "linked")
    link = tmp_path / "AGENTS.md"
    link.symlink_to(target)
    entry = Reader().probe(str(link), str(tmp_path))
    assert entry == Entry(str(link), EntryKind.FILE, str(target), 6, stat_key(os.stat(target)), is_link=True)


def test_a_relative_symlink_to_a_directory_inside_the_boundary_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    entry = Reader().probe(str(tmp_path / "alias"), str(tmp_path))
    assert (entry.kind, entry.real_path, entry.is_link) == (EntryKind.DIRECTORY, str(tmp_path / "real"), True)


def test_a_symlink_escaping_the_boundary_is_refused_with_both_real_paths(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    secret = written(tmp_path / "secret.txt", "TOKEN")
    (root / "AGENTS.md").symlink_to(secret)
    entry = Reader().probe(str(root / "AGENTS.md"), str(root))
    target, real_root = os.path.realpath(secret), os.path.realpath(root)
    assert (entry.kind, entry.real_path, entry.is_link) == (EntryKind.ESCAPE, target, True)
    assert entry.error == f'symlink target "{target}" escapes scan root "{real_root}"'
    assert entry.key is None


def test_a_symlink_into_a_sibling_sharing_the_root_s_prefix_escapes(tmp_path: Path) -> None:
    root = tmp_path / "a"
    root.mkdir()
    (tmp_path / "ab").mkdir()
    written(tmp_path / "ab" / "AGENTS.md", "next door")
    (root / "AGENTS.md").symlink_to("../ab/AGENTS.md")
    entry = Reader().probe(str(root / "AGENTS.md"), str(root))
    assert entry.kind is EntryKind.ESCAPE
    assert entry.error == f'symlink target "{tmp_path / "ab" / "AGENTS.md"}" escapes scan root "{root}"'


def test_a_boundary_reached_through_a_symlink_is_compared_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    written(tmp_path / "real" / "target.md", "inside")
    (tmp_path / "real" / "AGENTS.md").symlink_to(tmp_path / "real" / "target.md")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    reader = Reader()
    entry = reader.probe(str(tmp_path / "alias" / "AGENTS.md"), str(tmp_path / "alias"))
    assert (entry.kind, entry.real_path) == (EntryKind.FILE, str(tmp_path / "real" / "target.md"))
    assert reader.real_root(str(tmp_path / "alias")) == str(tmp_path / "real")


def test_a_dangling_symlink_is_broken(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "gone.md")
    entry = Reader().probe(str(tmp_path / "AGENTS.md"), str(tmp_path))
    assert (entry.kind, entry.is_link) == (EntryKind.BROKEN, True)
    assert entry.error == "symlink resolve: No such file or directory"


@pytest.mark.parametrize("loop", ["self", "pair"])
def test_a_looping_symlink_is_broken(tmp_path: Path, loop: str) -> None:
    link = tmp_path / "AGENTS.md"
    if loop == "self":
        link.symlink_to(link)
    else:
        link.symlink_to(tmp_path / "other.md")
        (tmp_path / "other.md").symlink_to(link)
    entry = Reader().probe(str(link), str(tmp_path))
    assert entry.kind is EntryKind.BROKEN
    assert entry.error == "symlink resolve: Too many levels of symbolic links"


# --- read: bounded, and only the file that was probed --------------------------------


def test_read_returns_at_most_the_limit(tmp_path: Path) -> None:
    path = written(tmp_path / "big.md", bytes(range(256)) * 4)
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    assert reader.read(entry, 10) == bytes(range(10))
    assert reader.read(entry, 5000) == bytes(range(256)) * 4


def test_read_of_a_file_larger_than_one_chunk_stops_at_the_limit(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    path = written(tmp_path / "huge.md", data)
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    assert reader.read(entry, (5 << 20) // 2) == data[: (5 << 20) // 2]


def test_read_follows_a_symlink_to_its_probed_target(tmp_path: Path) -> None:
    target = written(tmp_path / "target.md", "through the link")
    (tmp_path / "AGENTS.md").symlink_to(target)
    reader = Reader()
    assert reader.read(reader.probe(str(tmp_path / "AGENTS.md"), str(tmp_path)), 100) == b"through the link"


def test_a_file_swapped_for_another_after_the_probe_is_refused(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "original")
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    written(tmp_path / "swap.md", "attacker")  # created while the original exists: a different inode
    os.replace(tmp_path / "swap.md", path)
    with pytest.raises(OSError) as caught:
        reader.read(entry, 100)
    assert (caught.value.errno, caught.value.strerror) == (errno.ESTALE, "file changed while it was being read")


def test_a_file_swapped_for_a_symlink_after_the_probe_is_not_followed(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "original")
    secret = written(tmp_path / "secret.txt", "TOKEN")
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(OSError) as caught:
        reader.read(entry, 100)
    assert caught.value.errno == errno.ELOOP


def test_a_file_removed_after_the_probe_cannot_be_read(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "soon gone")
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    path.unlink()
    with pytest.raises(FileNotFoundError):
        reader.read(entry, 100)


# --- cached: one value per file version -----------------------------------------------


def counting(value: str) -> tuple[Callable[[], str], list[str]]:
    calls: list[str] = []

    def compute() -> str:
        calls.append(value)
        return value

    return compute, calls


def test_cached_reuses_the_value_of_an_unchanged_file(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "one")
    reader = Reader()
    compute, calls = counting("parsed")
    assert reader.cached(reader.probe(str(path), str(tmp_path)), "tag", compute) == "parsed"
    reader.begin()
    assert reader.cached(reader.probe(str(path), str(tmp_path)), "tag", compute) == "parsed"
    assert (calls, reader.misses) == (["parsed"], 0)


def test_cached_recomputes_after_a_change_and_per_tag(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "one")
    reader = Reader()
    reader.cached(reader.probe(str(path), str(tmp_path)), "tag", lambda: "first")
    written(path, "one more", seconds=5)
    entry = reader.probe(str(path), str(tmp_path))
    assert reader.cached(entry, "tag", lambda: "second") == "second"
    assert reader.cached(entry, "other tag", lambda: "third") == "third"
    assert reader.cached(entry, "tag", lambda: "unused") == "second"


def test_cached_never_trusts_a_key_younger_than_the_racy_window(tmp_path: Path) -> None:
    path = written(tmp_path / "AGENTS.md", "one", seconds=RACY_SECONDS / 4)
    reader = Reader()
    entry = reader.probe(str(path), str(tmp_path))
    compute, calls = counting("parsed")
    reader.cached(entry, "tag", compute)
    reader.cached(entry, "tag", compute)
    assert (calls, reader.misses) == (["parsed", "parsed"], 2)


def test_a_value_computed_while_the_file_was_young_is_not_reused_once_it_ages(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("one", encoding="utf-8")
    young = int((clock.now - RACY_SECONDS / 4) * 1e9)
    set_mtime_ns(path, young)
    reader = Reader()
    before = reader.probe(str(path), str(tmp_path))
    assert reader.cached(before, "text", lambda: path.read_text(encoding="utf-8")) == "one"
    path.write_text("two", encoding="utf-8")  # a second write in the same tick: same size, same mtime
    set_mtime_ns(path, young)
    clock.now += 10 * RACY_SECONDS
    reader.begin()
    after = reader.probe(str(path), str(tmp_path))
    assert after.key == before.key
    assert reader.cached(after, "text", lambda: path.read_text(encoding="utf-8")) == "two"


# --- list_dir ----------------------------------------------------------------------------


def test_list_dir_sorts_entries_and_marks_directories_and_symlinks(tmp_path: Path) -> None:
    for name in ("b.md", "a.md", "C.md"):
        written(tmp_path / name, name)
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    assert Reader().list_dir(str(tmp_path)) == (
        ListedEntry("C.md", is_dir=False, is_symlink=False, is_file=True),
        ListedEntry("a.md", is_dir=False, is_symlink=False, is_file=True),
        ListedEntry("b.md", is_dir=False, is_symlink=False, is_file=True),
        ListedEntry("dir", is_dir=True, is_symlink=False),
        ListedEntry("link", is_dir=False, is_symlink=True),
    )


def test_list_dir_of_a_missing_directory_or_a_file_is_empty(tmp_path: Path) -> None:
    written(tmp_path / "file.txt", "x")
    reader = Reader()
    assert reader.list_dir(str(tmp_path / "missing")) == ()
    assert reader.list_dir(str(tmp_path / "missing"), strict=True) == ()
    assert reader.list_dir(str(tmp_path / "file.txt"), strict=True) == ()


_PERMISSION_SCRIPT = """
import json, sys
from agentcontext.fs.files import Reader
locked = sys.argv[1]
reader = Reader()
try:
    reader.list_dir(locked, strict=True)
    strict = "listed"
except PermissionError as exc:
    strict = exc.strerror
entry = reader.probe(locked + "/AGENTS.md", locked)
print(json.dumps({"strict": strict, "lenient": list(reader.list_dir(locked)), "probe": [entry.kind.name, entry.error]}))
"""


def test_an_unlistable_directory_raises_only_when_strict(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    written(locked / "AGENTS.md", "secret")
    locked.chmod(0)
    output = subprocess.run(
        unprivileged([sys.executable, "-c", _PERMISSION_SCRIPT, str(locked)]),
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert json.loads(output) == {
        "strict": "Permission denied",
        "lenient": [],
        "probe": ["ERROR", "Permission denied"],
    }


def test_list_dir_caches_by_the_directory_stat_key(tmp_path: Path) -> None:
    written(tmp_path / "a.md", "a")
    age(tmp_path)
    reader = Reader()
    first = reader.list_dir(str(tmp_path))
    assert reader.list_dir(str(tmp_path)) is first
    assert reader.misses == 1
    written(tmp_path / "b.md", "b")
    age(tmp_path, seconds=5)  # a new entry moves the directory's mtime
    assert [e.name for e in reader.list_dir(str(tmp_path))] == ["a.md", "b.md"]
    assert reader.misses == 2


def test_a_young_directory_is_listed_again_every_time(tmp_path: Path) -> None:
    written(tmp_path / "a.md", "a")
    age(tmp_path, seconds=RACY_SECONDS / 4)
    reader = Reader()
    reader.list_dir(str(tmp_path))
    reader.list_dir(str(tmp_path))
    assert reader.misses == 2


def test_a_listing_made_while_the_directory_was_young_is_not_reused_once_it_ages(tmp_path: Path, clock: Clock) -> None:
    folder = tmp_path / "skills"
    folder.mkdir()
    written(folder / "aa", "a")
    young = int((clock.now - RACY_SECONDS / 4) * 1e9)
    set_mtime_ns(folder, young)
    reader = Reader()
    before = stat_key(os.stat(folder))
    assert [e.name for e in reader.list_dir(str(folder))] == ["aa"]
    os.rename(folder / "aa", folder / "bb")  # the same tick: same entry count, same mtime
    set_mtime_ns(folder, young)
    assert stat_key(os.stat(folder)) == before
    clock.now += 10 * RACY_SECONDS
    reader.begin()
    assert [e.name for e in reader.list_dir(str(folder))] == ["bb"]


# --- unchanged: may the last pass be reused? ------------------------------------------


def observe_tree(reader: Reader, root: Path) -> list[tuple[str, files.StatKey | None, bool]]:
    """A small pass: list the root, probe every file in it and one path that does not exist."""
    reader.begin()
    for item in reader.list_dir(str(root)):
        reader.probe(str(root / item.name), str(root))
    reader.probe(str(root / "AGENTS.override.md"), str(root))
    return list(reader.observed)


def aged_tree(root: Path) -> Path:
    written(root / "AGENTS.md", "rules")
    written(root / "CLAUDE.md", "more rules")
    age(root)
    return root


def test_an_untouched_aged_tree_is_unchanged(tmp_path: Path) -> None:
    reader = Reader()
    observed = observe_tree(reader, aged_tree(tmp_path))
    assert reader.unchanged(observed)


def test_unchanged_detects_an_edit(tmp_path: Path) -> None:
    reader = Reader()
    observed = observe_tree(reader, aged_tree(tmp_path))
    written(tmp_path / "AGENTS.md", "RULES", seconds=5)  # same size: only the mtime tells
    assert not reader.unchanged(observed)


def test_unchanged_detects_a_new_file_in_a_listed_directory(tmp_path: Path) -> None:
    reader = Reader()
    observed = observe_tree(reader, aged_tree(tmp_path))
    written(tmp_path / "notes.txt", "not probed, only listed")
    age(tmp_path, seconds=5)
    assert not reader.unchanged(observed)


def test_unchanged_detects_a_file_appearing_at_a_probed_missing_path(tmp_path: Path) -> None:
    reader = Reader()
    aged_tree(tmp_path)
    reader.begin()  # the folder is not listed: the probe of the missing path is observed itself
    reader.probe(str(tmp_path / "AGENTS.override.md"), str(tmp_path))
    observed = list(reader.observed)
    folder = os.stat(tmp_path)
    written(tmp_path / "AGENTS.override.md", "override")
    set_mtime_ns(tmp_path, folder.st_mtime_ns)  # only the probe of the missing path can tell
    assert stat_key(os.stat(tmp_path)) == stat_key(folder)
    assert not reader.unchanged(observed)


def test_unchanged_detects_a_dangling_link_appearing_at_a_probed_missing_path(tmp_path: Path) -> None:
    reader = Reader()
    aged_tree(tmp_path)
    reader.begin()
    reader.probe(str(tmp_path / "AGENTS.override.md"), str(tmp_path))
    observed = list(reader.observed)
    folder = os.stat(tmp_path)
    (tmp_path / "AGENTS.override.md").symlink_to(tmp_path / "nowhere")  # exists as a link, leads nowhere
    set_mtime_ns(tmp_path, folder.st_mtime_ns)
    assert not reader.unchanged(observed)


def test_a_name_missing_from_a_quiet_listed_folder_is_answered_by_the_listing_and_its_stat(tmp_path: Path) -> None:
    reader = Reader()
    observed = observe_tree(reader, aged_tree(tmp_path))  # lists the root, then probes a name it lacks
    missing = str(tmp_path / "AGENTS.override.md")
    assert missing not in [path for path, _, _ in observed]
    assert (str(tmp_path), stat_key(os.stat(tmp_path)), True) in observed
    assert reader.unchanged(observed)
    written(tmp_path / "AGENTS.override.md", "override")  # creating it moves the folder's mtime
    assert not reader.unchanged(observed)
    reader.begin()
    assert reader.probe(missing, str(tmp_path)).kind is EntryKind.FILE


def test_a_busy_folder_is_not_listed_for_names_and_leaves_its_names_to_their_own_probes(tmp_path: Path) -> None:
    aged_tree(tmp_path)
    reader = Reader()
    reader.begin()
    assert reader.names(str(tmp_path), str(tmp_path)) == Names(
        frozenset({"AGENTS.md", "CLAUDE.md"}), frozenset({"AGENTS.md", "CLAUDE.md"})
    )
    assert reader.observed == [(str(tmp_path), stat_key(os.stat(tmp_path)), True)]
    written(tmp_path / "new.md", "x")  # the folder changed a moment ago
    reader.begin()
    assert reader.names(str(tmp_path), str(tmp_path)) is None
    assert reader.observed == []
    assert reader.probe(str(tmp_path / "AGENTS.override.md"), str(tmp_path)).kind is EntryKind.MISSING
    assert [path for path, _, _ in reader.observed] == [str(tmp_path / "AGENTS.override.md")]


def test_settled_drops_the_misses_a_missing_folder_or_a_quiet_listing_answers_for(tmp_path: Path) -> None:
    aged_tree(tmp_path)
    (tmp_path / "sub").mkdir()
    age(tmp_path)
    root = str(tmp_path)
    reader = Reader()
    reader.begin()
    reader.probe(f"{root}/gone", root)  # missing (the listing below lacks it), and what is below it with it
    reader.probe(f"{root}/gone/deeper/CLAUDE.md", root)
    reader.probe(f"{root}/sub/.claude/CLAUDE.md", root)  # sub is not listed: kept
    reader.names(root, root)
    reader.probe(f"{root}/.claude/CLAUDE.md", root)  # the listing lacks .claude: answered, not observed
    reader.probe(f"{root}/sub", root)
    kept = [path for path, _, _ in reader.settled()]
    assert kept == [f"{root}/sub/.claude/CLAUDE.md", root, f"{root}/sub"]


def test_unchanged_detects_a_removed_file(tmp_path: Path) -> None:
    reader = Reader()
    observed = observe_tree(reader, aged_tree(tmp_path))
    folder = os.stat(tmp_path)
    (tmp_path / "CLAUDE.md").unlink()
    set_mtime_ns(tmp_path, folder.st_mtime_ns)  # only the probe of the file itself can tell
    assert stat_key(os.stat(tmp_path)) == stat_key(folder)
    assert not reader.unchanged(observed)


def test_unchanged_detects_an_edit_of_a_symlink_s_target(tmp_path: Path) -> None:
    written(tmp_path / "one.md", "one")
    written(tmp_path / "two.md", "two!")
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "one.md")
    age(tmp_path / "AGENTS.md")
    age(tmp_path)
    reader = Reader()
    reader.probe(str(tmp_path / "AGENTS.md"), str(tmp_path))
    observed = list(reader.observed)
    assert reader.unchanged(observed)
    written(tmp_path / "one.md", "ONE!", seconds=5)  # the link is untouched; its target changed
    assert not reader.unchanged(observed)


def test_unchanged_never_trusts_a_racy_young_file(tmp_path: Path) -> None:
    aged_tree(tmp_path)
    age(tmp_path / "AGENTS.md", seconds=RACY_SECONDS / 4)
    reader = Reader()
    observed = observe_tree(reader, tmp_path)
    assert not reader.unchanged(observed)


def test_a_pass_that_saw_a_young_file_is_not_trusted_once_it_ages(tmp_path: Path, clock: Clock) -> None:
    aged_tree(tmp_path)
    young = int((clock.now - RACY_SECONDS / 4) * 1e9)
    set_mtime_ns(tmp_path / "AGENTS.md", young)
    reader = Reader()
    observed = observe_tree(reader, tmp_path)
    (tmp_path / "AGENTS.md").write_text("RULES", encoding="utf-8")  # same tick, same size
    set_mtime_ns(tmp_path / "AGENTS.md", young)
    clock.now += 10 * RACY_SECONDS
    assert not reader.unchanged(observed)


def test_observe_records_a_marker_that_may_appear_later(tmp_path: Path) -> None:
    age(tmp_path)
    reader = Reader()
    reader.begin()
    reader.observe(str(tmp_path / ".git"))
    observed = list(reader.observed)
    assert observed == [(str(tmp_path / ".git"), None, False)]
    assert reader.unchanged(observed)
    (tmp_path / ".git").mkdir()
    assert not reader.unchanged(observed)


# --- is_within ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/a/b", "/a/b", True),
        ("/a/b/c", "/a/b", True),
        ("/a/b/c/d", "/a/b", True),
        ("/a/bc", "/a/b", False),
        ("/a/b.md", "/a/b", False),
        ("/a", "/a/b", False),
        ("/a/c", "/a/b", False),
        ("/etc/passwd", "/", True),
        ("/", "/", True),
    ],
)
def test_is_within_compares_whole_path_components(path: str, root: str, inside: bool) -> None:
    assert is_within(path, root) is inside


def test_load_each_reads_a_listing_in_order_and_sends_the_unusual_ones_the_long_way(tmp_path: Path) -> None:
    """Plain folders are read from the listing's descriptor; a linked file, a linked folder that
    leaves, a missing file and a FIFO are each classified by the walk, and the order holds."""
    root = tmp_path / "skills"
    outside = tmp_path / "outside"
    outside.mkdir()
    written(outside / "SKILL.md", "secret")
    for name in ("a", "b", "c", "e", "f"):
        (root / name).mkdir(parents=True)
    written(root / "a" / "SKILL.md", "alpha")
    written(root / "b" / "real.md", "beta")
    (root / "b" / "SKILL.md").symlink_to("real.md")  # a link inside: followed by the walk
    os.mkfifo(root / "e" / "SKILL.md")
    written(root / "f" / "SKILL.md", "phi")
    (root / "d").symlink_to(outside)  # a folder leading outside the boundary
    reader = Reader()
    reader.list_dir(str(root))  # the scan lists a folder before reading its children
    built: list[str] = []

    def build(entry: Entry, raw: bytes | OSError, leaf: str) -> str:
        built.append(leaf)
        return f"{leaf}:{raw!r}"

    loaded = reader.load_each(str(root), ["a", "b", "c", "d", "e", "f"], "SKILL.md", str(root), "t:", 100, build)

    assert [(entry.kind, value) for entry, value in loaded] == [
        (EntryKind.FILE, "a:b'alpha'"),
        (EntryKind.FILE, "b:b'beta'"),
        (EntryKind.MISSING, None),
        (EntryKind.ESCAPE, None),
        (EntryKind.SPECIAL, None),
        (EntryKind.FILE, "f:b'phi'"),
    ]
    assert [entry.path for entry, _ in loaded] == [f"{root}/{name}/SKILL.md" for name in "abcdef"]
    assert built == ["a", "b", "f"]
    again = reader.load_each(str(root), ["a", "b", "f"], "SKILL.md", str(root), "t:", 100, build)
    assert [value for _, value in again] == ["a:b'alpha'", "b:b'beta'", "f:b'phi'"]
    assert built == ["a", "b", "f"]  # the second pass came from the cache


def test_settled_keeps_a_missing_folder_and_drops_what_was_probed_below_it(tmp_path: Path) -> None:
    root = str(aged_tree(tmp_path))
    reader = Reader()
    reader.begin()
    for path in (f"{root}/gone/a/CLAUDE.md", f"{root}/gone", f"{root}/gone/b", f"{root}/AGENTS.md"):
        reader.probe(path, root)
    settled = reader.settled()
    assert [path for path, _, _ in settled] == [f"{root}/gone", f"{root}/AGENTS.md"]
    assert reader.unchanged(settled)
    os.makedirs(tmp_path / "gone" / "a")
    assert not reader.unchanged(settled)  # the folder's own stat shows what appeared below it
