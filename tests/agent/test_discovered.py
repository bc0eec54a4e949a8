"""The agent's watch of its chats' discovered files (``agent/discovered.py``, issue 34 item 3).

What an on-demand answer depended on is watched, at most ``agent.discovered_watch_cap``
folders (the least recently asked dropped, and the heartbeats then say the watch is not
whole), for the names that matter in each. How a change is told: ``test_push.py``; end to
end: ``tests/control/test_discovered_watch.py``.
"""

from __future__ import annotations

import pytest
from watchfiles import Change

from agentcontext.agent.discovered import DiscoveredWatch
from agentcontext.instructions.applied import Interest
from agentcontext.wire.sync import DiscoveredWatchInfo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def test_past_the_cap_the_least_recently_asked_folders_are_dropped_and_the_watch_is_not_whole() -> None:
    watch = DiscoveredWatch(cap=2)
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md"})), Interest("/w/b", frozenset({"AGENTS.md"}))])
    whole = watch.report()[0].watching
    watch.learn([Interest("/w/a", frozenset({"CLAUDE.md"}))])  # asked again: the most recent now
    watch.learn([Interest("/w/c", None)])
    assert whole is True
    assert watch.folders() == ["/w/a", "/w/c"]
    assert watch.report()[0].watching is False


def test_a_change_counts_only_for_the_names_that_matter_in_its_folder() -> None:
    watch = DiscoveredWatch(cap=10)
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md", "deep"})), Interest("/w/a/.claude/rules", None)])
    watch.learn([Interest("/w/a", frozenset({"CLAUDE.md"}))])
    assert watch.relevant(Change.modified, "/w/a/AGENTS.md")
    assert watch.relevant(Change.added, "/w/a/CLAUDE.md")
    assert watch.relevant(Change.deleted, "/w/a/deep")
    assert watch.relevant(Change.added, "/w/a/.claude/rules/anything.md")
    assert not watch.relevant(Change.modified, "/w/a/api.py")
    assert not watch.relevant(Change.added, "/w/b/AGENTS.md")


def test_folders_a_whole_watch_began_to_hold_are_told_as_a_change_and_past_the_cap_they_are_not() -> None:
    # past the cap the heartbeats' rechecks cover them: telling would recheck in a loop, each recheck
    # asking again, re-adding folders the cap drops and so beginning a watch over them again
    watch = DiscoveredWatch(cap=1)
    watch.learn([Interest("/w/a", None)])
    watch.began()
    told, changes = watch.report()
    watch.told(changes)
    watch.learn([Interest("/w/b", None)])  # /w/a dropped past the cap
    watch.began()
    assert told.changed is True
    assert watch.report()[0] == DiscoveredWatchInfo(watching=False, changed=False)


def test_a_watched_folder_that_gains_a_name_is_told_as_changed_at_once() -> None:
    # its watch dropped a change of that name made while the answer was read: the name did not matter yet
    watch = DiscoveredWatch(cap=10)
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md"}))])
    new_folder = watch.report()[0].changed  # its watch tells it once up
    watch.learn([Interest("/w/a", frozenset({"AGENTS.md"}))])
    asked_again = watch.report()[0].changed
    watch.learn([Interest("/w/a", frozenset({"CLAUDE.md"}))])
    assert (new_folder, asked_again) == (False, False)
    assert watch.report()[0].changed is True
