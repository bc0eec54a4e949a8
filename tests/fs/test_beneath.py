"""Walking beneath a root: links resolved by us and only inside, descriptors checked, the cache bounded."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agentcontext.fs.beneath import MAX_HOPS, BrokenLinkError, EscapeError, Walker
from agentcontext.testing import make_workspace
from tests.containment import outside_the_roots


def walk(root: Path, relative: str) -> str:
    with Walker() as walker:
        return walker.resolve(str(root / relative), str(root), str(root)).real


def test_links_that_stay_inside_are_followed_however_they_are_written(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a/b/file.md": "x"})
    (tmp_path / "abs").symlink_to(tmp_path / "a" / "b")  # absolute, into the root
    (tmp_path / "a" / "up").symlink_to("../a/b/file.md")  # relative, through ..
    (tmp_path / "a" / "b" / "chain").symlink_to("../up")  # a link to a link
    assert walk(tmp_path, "abs/file.md") == str(tmp_path / "a" / "b" / "file.md")
    assert walk(tmp_path, "a/up") == str(tmp_path / "a" / "b" / "file.md")
    assert walk(tmp_path, "a/b/chain") == str(tmp_path / "a" / "b" / "file.md")


def test_a_link_out_is_refused_wherever_it_is_on_the_way(tmp_path: Path) -> None:
    outside = outside_the_roots(tmp_path)
    make_workspace(outside, {"secret/key": "k"})
    root = make_workspace(tmp_path / "root", {"inside/": ""})
    (root / "inside" / "dir").symlink_to(outside / "secret")
    (root / "file").symlink_to(outside / "secret" / "key")
    for relative in ("inside/dir/key", "file", "inside/../../outside-the-roots/secret/key"):
        with pytest.raises(EscapeError) as caught:
            walk(root, relative)
        assert caught.value.errno == errno.EXDEV


def test_a_link_loop_and_a_dangling_link_are_broken(tmp_path: Path) -> None:
    (tmp_path / "self").symlink_to(tmp_path / "self")
    (tmp_path / "gone").symlink_to(tmp_path / "missing")
    with pytest.raises(BrokenLinkError) as loop:
        walk(tmp_path, "self")
    with pytest.raises(BrokenLinkError) as dangling:
        walk(tmp_path, "gone")
    assert (loop.value.errno, dangling.value.errno) == (errno.ELOOP, errno.ENOENT)


def test_a_walk_that_keeps_meeting_links_gives_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "target").write_text("x")
    (tmp_path / "link").symlink_to("target")
    assert walk(tmp_path, "link") == str(tmp_path / "target")
    # a swapper that turns the target into a link each time it is resolved: the walk restarts, then stops
    monkeypatch.setattr(os.path, "realpath", lambda path, strict=False: str(tmp_path / "link"))
    with pytest.raises(BrokenLinkError) as caught:
        walk(tmp_path, "link")
    assert caught.value.errno == errno.ELOOP
    assert MAX_HOPS == 40


def test_a_file_swapped_after_it_was_found_is_refused_at_the_open(tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("one")
    with Walker() as walker:
        found = walker.resolve(str(tmp_path / "file.md"), str(tmp_path), str(tmp_path))
        (tmp_path / "other.md").write_text("two")
        os.replace(tmp_path / "other.md", tmp_path / "file.md")  # another inode at the same name
        with pytest.raises(OSError) as caught:
            walker.read(found, 100)
    assert (caught.value.errno, caught.value.strerror) == (errno.ESTALE, "file changed while it was being read")


def test_a_folder_swapped_for_a_link_out_after_it_was_opened_is_read_as_it_was(tmp_path: Path) -> None:
    outside = outside_the_roots(tmp_path)
    make_workspace(outside, {"docs/notes.md": "secret"})
    root = make_workspace(tmp_path / "root", {"docs/notes.md": "inside"})
    with Walker() as walker:
        found = walker.resolve(str(root / "docs" / "notes.md"), str(root), str(root))
        os.rename(root / "docs", root / "old-docs")
        (root / "docs").symlink_to(outside / "docs")
        assert walker.read(found, 100) == b"inside"  # the folder's descriptor, not its name
        walker.close()  # a new walk meets the link, and refuses it
        with pytest.raises(EscapeError):
            walker.resolve(str(root / "docs" / "notes.md"), str(root), str(root))


def test_the_directory_cache_stays_bounded_and_keeps_the_ancestors(tmp_path: Path) -> None:
    make_workspace(tmp_path, {f"d{i:02d}/f": "x" for i in range(40)})
    with Walker(limit=8) as walker:
        for index in range(40):
            walker.resolve(str(tmp_path / f"d{index:02d}" / "f"), str(tmp_path), str(tmp_path))
            assert len(walker.fds) <= 8 + 2  # a walk may add its own folders before the next trim
        assert str(tmp_path) in walker.fds and "/" in walker.fds
    assert walker.fds == {}
