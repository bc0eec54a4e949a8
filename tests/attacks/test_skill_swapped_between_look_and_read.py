"""A skill folder or its SKILL.md changed in the gap between the scan's look at it and its read.

The skills scan looks at ``<folder>/SKILL.md`` from the listed folder's descriptor, then reads
it with one ``openat2`` that follows no link (``agentcontext.openat2``). Each test makes the
change land exactly in that gap (the read is wrapped to change the tree first), so the outcome
does not depend on winning a race: an outside twin of the same size is never read (the suite's
audit hook fails a test that opens anything in ``outside_the_roots``), a FIFO swapped in never
hangs the scan, and a rewritten file is read again the checked way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentcontext import files, openat2
from agentcontext.resource import Resource, Status
from agentcontext.testing import make_workspace, scan_tree, skill_md
from tests.containment import outside_the_roots

pytestmark = pytest.mark.skipif(not openat2.AVAILABLE, reason="this kernel (or its sandbox) has no openat2(2)")

LEGIT = skill_md("s", "legitimate")
SECRET = LEGIT.replace("legitimate", "SECRETSECR")  # the same size: only the inode could tell them apart


def _change_before_read(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> list[str]:
    """Make ``change`` happen after the look and before the one-call read; the paths it was asked for."""
    asked: list[str] = []
    real = openat2.read_if_sized

    def read(dfd: int, relative: str, size: int, limit: int) -> bytes | None:
        asked.append(relative)
        change()
        return real(dfd, relative, size, limit)

    monkeypatch.setattr(files, "read_if_sized", read)
    return asked


def _skill(work: Path, home: Path) -> Resource:
    resource = scan_tree(work, home=home).snapshot.find(str(work / ".agents" / "skills" / "s" / "SKILL.md"))
    assert resource is not None
    return resource


@pytest.fixture
def work(tmp_path: Path) -> Path:
    make_workspace(outside_the_roots(tmp_path), {"s/SKILL.md": SECRET})
    return make_workspace(tmp_path / "w", {".git/": "", ".agents/skills/s/SKILL.md": LEGIT})


def test_a_skill_folder_swapped_for_a_link_out_after_the_look_is_refused_and_the_twin_never_opened(
    work: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = work / ".agents" / "skills" / "s"

    def swap() -> None:
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
            folder.symlink_to(outside_the_roots(tmp_path) / "s", target_is_directory=True)

    asked = _change_before_read(monkeypatch, swap)
    skill = _skill(work, home)
    assert asked == ["s/SKILL.md"]
    assert skill.status is Status.INVALID and "escapes" in (skill.error or "")
    assert skill.content is None


def test_a_skill_md_swapped_for_a_link_out_after_the_look_is_refused(
    work: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = work / ".agents" / "skills" / "s" / "SKILL.md"

    def swap() -> None:
        if not file.is_symlink():
            file.unlink()
            file.symlink_to(outside_the_roots(tmp_path) / "s" / "SKILL.md")

    _change_before_read(monkeypatch, swap)
    skill = _skill(work, home)
    assert skill.status is Status.INVALID and "escapes" in (skill.error or "")


def test_a_fifo_swapped_in_after_the_look_does_not_hang_the_scan_and_is_named(
    work: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = work / ".agents" / "skills" / "s" / "SKILL.md"

    def swap() -> None:
        if file.is_file():
            file.unlink()
            os.mkfifo(file)

    _change_before_read(monkeypatch, swap)
    skill = _skill(work, home)
    assert (skill.status, skill.error) == (Status.INVALID, "SKILL.md is a FIFO, not a regular file")


def test_a_skill_md_rewritten_after_the_look_is_read_again_the_checked_way(
    work: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = work / ".agents" / "skills" / "s" / "SKILL.md"
    rewritten = skill_md("s", "a longer description written while the scan looked")

    def rewrite() -> None:
        if file.read_text() != rewritten:
            file.write_text(rewritten)

    _change_before_read(monkeypatch, rewrite)
    skill = _skill(work, home)
    assert (skill.status, skill.content) == (Status.OK, rewritten)
    assert skill.size_bytes == len(rewritten)
