"""The small caches that make a repeated turn cost one query: entries tagged with a key, bounded, expiring."""

from __future__ import annotations

from agentcontext.control.turn_cache import Expiring, Recent


def test_an_entry_answers_only_to_the_key_it_was_stored_with() -> None:
    cache: Recent[bytes] = Recent()
    cache.put("chat", ("pin-1", 3), b"first")
    assert cache.get("chat", ("pin-1", 3)) == b"first"
    assert cache.get("chat", ("pin-2", 3)) is None
    cache.put("chat", ("pin-2", 3), b"second")
    assert cache.get("chat", ("pin-1", 3)) is None
    assert cache.get("chat", ("pin-2", 3)) == b"second"


def test_the_least_recently_used_entry_goes_first_when_full() -> None:
    cache: Recent[int] = Recent(capacity=2)
    cache.put("a", 0, 1)
    cache.put("b", 0, 2)
    assert cache.get("a", 0) == 1  # a is now the most recent
    cache.put("c", 0, 3)
    assert cache.get("b", 0) is None
    assert (cache.get("a", 0), cache.get("c", 0)) == (1, 3)


def test_an_expiring_entry_is_gone_once_its_time_has_passed() -> None:
    clock = [100.0]
    cache: Expiring[str] = Expiring(ttl=2.0, clock=lambda: clock[0])
    cache.put("token", "alice")
    clock[0] = 101.9
    assert cache.get("token") == "alice"
    clock[0] = 102.0
    assert cache.get("token") is None
    assert cache.get("never stored") is None


def test_a_zero_time_to_live_keeps_nothing() -> None:
    cache: Expiring[str] = Expiring(ttl=0)
    cache.put("token", "alice")
    assert cache.get("token") is None
