"""The suite-wide containment guard (tests/containment.py) sees reads through escapes, and only those."""

from __future__ import annotations

import os
from pathlib import Path

from agentcontext.fs.beneath import Walker
from tests import containment


def test_a_read_through_a_symlink_into_an_outside_folder_is_caught(tmp_path: Path) -> None:
    secret = containment.outside_the_roots(tmp_path) / "secret.txt"
    secret.write_text("hunter2")  # writing is the test setting up, not a read
    link = tmp_path / "AGENTS.md"
    link.symlink_to(secret)
    assert containment.take() == []
    assert link.read_text() == "hunter2"
    assert os.listdir(secret.parent) == ["secret.txt"]
    assert containment.take() == [str(link), str(secret.parent)]


def test_reads_elsewhere_are_not_reported(tmp_path: Path) -> None:
    containment.outside_the_roots(tmp_path)
    (tmp_path / "inside.txt").write_text("fine")
    assert (tmp_path / "inside.txt").read_text() == "fine"
    assert containment.take() == []


def test_a_descriptor_the_engine_opens_in_an_outside_folder_is_caught(tmp_path: Path) -> None:
    secret = containment.outside_the_roots(tmp_path) / "secret.txt"
    secret.write_text("hunter2")
    walker = Walker()
    fd, _ = walker.open_file(str(secret))  # a read the engine announces by descriptor, named relative to it
    os.close(fd)
    walker.close()
    assert containment.take() == [str(secret)]
