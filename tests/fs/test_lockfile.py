"""An exclusive lock held for a process's life: refused to others while it lives, free once it is gone."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentcontext.fs import lockfile

HOLDER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from agentcontext.fs import lockfile\n"
    "held = lockfile.hold(Path(sys.argv[1]))\n"
    "held.note(url='http://127.0.0.1:1')\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"  # until the test closes our stdin, or kills us
)


def _holder(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


@pytest.mark.parametrize("end", ["exit", "SIGKILL"])
def test_a_lock_another_process_holds_is_refused_with_its_note_and_free_once_it_has_ended(
    tmp_path: Path, end: str
) -> None:
    path = tmp_path / "made" / "here.lock"
    with _holder(path) as process:  # its exit closes the pipes and waits for it
        try:
            assert lockfile.hold(path) is None
            assert lockfile.holder(path) == {"pid": process.pid, "url": "http://127.0.0.1:1"}
        finally:
            if end == "SIGKILL":
                os.kill(process.pid, signal.SIGKILL)
    held = lockfile.hold(path)  # the kernel let it go: nothing is left stuck
    assert held is not None
    held.release()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_lock_is_refused_to_a_second_holder_in_the_same_process_until_released(tmp_path: Path) -> None:
    path = tmp_path / "one.lock"
    first = lockfile.hold(path)
    assert first is not None
    assert lockfile.hold(path) is None
    first.release()
    second = lockfile.hold(path)
    assert second is not None
    second.release()


def test_a_note_replaces_the_one_before_and_a_missing_or_unreadable_note_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "noted.lock"
    assert lockfile.holder(path) == {}
    held = lockfile.hold(path)
    assert held is not None
    held.note(url="http://127.0.0.1:8765", work_dir="/a/much/longer/path/than/the/next")
    held.note(url="x")
    assert lockfile.holder(path) == {"pid": os.getpid(), "url": "x"}
    held.release()
    path.write_text("not json")
    assert lockfile.holder(path) == {}


def test_a_link_in_the_lock_file_s_place_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (tmp_path / "linked.lock").symlink_to(target)
    with pytest.raises(OSError):
        lockfile.hold(tmp_path / "linked.lock")
    assert target.read_text() == "keep"
