"""The skills scan's one-call read below a folder: exact when it reads, and the checked way whenever it cannot tell."""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcontext import openat2
from agentcontext.resource import Resource
from agentcontext.testing import make_workspace, scan_tree
from tests.test_hostile import hostile  # noqa: F401  # the fixture, shared

pytestmark = pytest.mark.skipif(not openat2.AVAILABLE, reason="this kernel (or its sandbox) has no openat2(2)")


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    make_workspace(tmp_path / "root", {"skill/SKILL.md": "twelve bytes", "inside/x.md": "x"})
    fd = os.open(tmp_path / "root", os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_a_file_below_the_folder_is_read_when_it_holds_the_size_the_look_saw(folder: int) -> None:
    assert openat2.read_if_sized(folder, "skill/SKILL.md", 12, 65_537) == b"twelve bytes"


def test_a_file_over_the_limit_gives_the_limit_s_bytes(folder: int) -> None:
    assert openat2.read_if_sized(folder, "skill/SKILL.md", 12, 6) == b"twelve"


@pytest.mark.parametrize("looked", [11, 13, 0])
def test_a_file_shorter_or_longer_than_the_look_saw_is_left_to_the_checked_way(folder: int, looked: int) -> None:
    assert openat2.read_if_sized(folder, "skill/SKILL.md", looked, 65_537) is None


def test_a_link_on_the_way_is_refused_even_one_that_stays_inside(folder: int, tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "linked").symlink_to(root / "skill")
    (root / "skill" / "alias.md").symlink_to(root / "skill" / "SKILL.md")
    assert openat2.read_if_sized(folder, "linked/SKILL.md", 12, 65_537) is None
    assert openat2.read_if_sized(folder, "skill/alias.md", 12, 65_537) is None


@pytest.mark.parametrize("relative", ["../root/skill/SKILL.md", "skill/../../root/skill/SKILL.md"])
def test_a_path_that_climbs_out_of_the_folder_is_refused_even_back_in(folder: int, relative: str) -> None:
    assert openat2.read_if_sized(folder, relative, 12, 65_537) is None


def test_an_absolute_path_is_refused(folder: int, tmp_path: Path) -> None:
    assert openat2.read_if_sized(folder, str(tmp_path / "root" / "skill" / "SKILL.md"), 12, 65_537) is None


def test_a_folder_or_a_missing_file_is_not_read(folder: int) -> None:
    assert openat2.read_if_sized(folder, "skill", 0, 65_537) is None
    assert openat2.read_if_sized(folder, "skill/missing.md", 0, 65_537) is None


def _fields(resource: Resource) -> tuple[Any, ...]:
    return (
        resource.kind,
        resource.path,
        resource.scope,
        resource.status,
        resource.size_bytes,
        resource.content_hash,
        resource.content,
        resource.error,
        resource.warnings,
        resource.name,
        resource.description,
    )


def test_the_hostile_workspace_scans_the_same_with_and_without_openat2(
    hostile: Path,  # noqa: F811
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast = scan_tree(hostile, home=home).snapshot
    monkeypatch.setattr(openat2, "AVAILABLE", False)
    portable = scan_tree(hostile, home=home).snapshot
    assert [_fields(r) for r in fast.resources] == [_fields(r) for r in portable.resources]
    assert fast.aggregate_hash == portable.aggregate_hash
    assert len(fast.resources) > 10


class _NoOpenat2:
    """A libc whose ``syscall`` fails as a kernel before 5.6 (or a seccomp filter) does."""

    def __init__(self, *_: object, **__: object) -> None:
        self.syscall = self

    def __call__(self, *_: object) -> int:
        ctypes.set_errno(errno.ENOSYS)
        return -1


def test_a_kernel_without_openat2_is_found_out_once_and_the_portable_walk_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ctypes, "CDLL", _NoOpenat2)
    assert openat2._bind() is None


def test_a_machine_that_numbers_openat2_apart_uses_the_portable_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    mips = os.uname_result(("Linux", "box", "6.1", "#1", "mips64"))
    monkeypatch.setattr(os, "uname", lambda: mips)
    assert openat2._bind() is None


def test_a_deleted_working_directory_does_not_hide_openat2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # the probe's "." no longer exists: a failure, but not a missing system call
    assert openat2._bind() is not None
