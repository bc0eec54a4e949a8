"""The scan's raised garbage-collection threshold is process state: it must always come back."""

from __future__ import annotations

import gc
import threading

import pytest

from agentcontext.gc_pause import GEN0_THRESHOLD, fewer_collections
from agentcontext.scan import Scanner


def test_threshold_is_raised_during_a_pass_and_restored_after_an_exception() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold()[0] == GEN0_THRESHOLD
        raise RuntimeError("boom")
    assert gc.get_threshold() == before


def test_overlapping_passes_in_threads_restore_the_threshold_only_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    first_in, second_done, release = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def long_pass() -> None:
        with fewer_collections():
            first_in.set()
            release.wait(10)

    def short_pass() -> None:
        with fewer_collections():
            pass
        seen.append(gc.get_threshold()[0])
        second_done.set()

    first = threading.Thread(target=long_pass)
    first.start()
    assert first_in.wait(10)
    second = threading.Thread(target=short_pass)
    second.start()
    assert second_done.wait(10)
    assert seen == [GEN0_THRESHOLD]  # the first pass still runs: still raised
    release.set()
    first.join(10)
    second.join(10)
    assert gc.get_threshold() == before


def test_a_threshold_changed_during_the_pass_or_collection_turned_off_is_left_as_it_is() -> None:
    before = gc.get_threshold()
    try:
        with fewer_collections():
            gc.set_threshold(1234, *before[1:])
        assert gc.get_threshold()[0] == 1234
        gc.set_threshold(0, *before[1:])
        with fewer_collections():
            assert gc.get_threshold()[0] == 0
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_a_failing_scan_leaves_the_threshold_as_it_found_it(tmp_path: object) -> None:
    before = gc.get_threshold()
    scanner = Scanner(str(tmp_path))
    scanner.config = None  # type: ignore[assignment]  # the pass fails at its first use of the config
    with pytest.raises(AttributeError):
        scanner.run()
    assert gc.get_threshold() == before
