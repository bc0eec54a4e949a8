"""The small caches that make a repeated turn cost one query: entries tagged with a key, bounded, expiring."""

from __future__ import annotations

from agentcontext.control.turn_cache import Expiring, Recent, Weighed


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


def test_weighed_entries_stay_within_their_bytes_the_least_recently_used_out_first() -> None:
    cache: Weighed[bytes] = Weighed(len, max_bytes=100, max_entries=10)
    for name in "abcd":
        assert cache.put(name, bytes(20))
    assert cache.get("a") is not None  # a is now the most recent
    assert cache.put("e", bytes(20)) and cache.put("f", bytes(20))  # 120 bytes: b goes
    assert cache.bytes == 100 and len(cache) == 5
    assert cache.get("b") is None and cache.get("a") is not None
    assert cache.put("e", bytes(5))  # replaced: its old weight is given back
    assert cache.bytes == 85


def test_a_weighed_entry_heavier_than_a_quarter_of_the_bound_is_not_kept() -> None:
    cache: Weighed[bytes] = Weighed(len, max_bytes=100, max_entries=10)
    assert cache.put("small", bytes(25))
    assert not cache.put("big", bytes(26))
    assert cache.get("big") is None and cache.bytes == 25


def test_weighed_entries_stay_within_their_count() -> None:
    cache: Weighed[bytes] = Weighed(len, max_bytes=1000, max_entries=2)
    for name in "abc":
        cache.put(name, b"x")
    assert (cache.get("a"), len(cache), cache.bytes) == (None, 2, 2)
