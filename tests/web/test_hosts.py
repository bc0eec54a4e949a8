"""Which Host and Origin values name a server: loopback on its own port, and the names it is given."""

from __future__ import annotations

import socket

import pytest

from agentcontext.web.hosts import ServedHosts, is_loopback, served_hosts, split_authority

LOOPBACK_ONLY = ServedHosts()


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1:8766", ("127.0.0.1", 8766)),
        ("LOCALHOST", ("localhost", 80)),
        ("[::1]:8766", ("[::1]", 8766)),
        ("[::1]", ("[::1]", 80)),
        ("control", ("control", 80)),
        ("a:b", None),
        ("[::1", None),
        ("[::1]x", None),
        ("", None),
        ("user@host", None),
        ("host/path", None),
        ("host:0", None),
        ("host:65536", None),
    ],
)
def test_a_host_header_splits_into_name_and_port_or_is_malformed(value: str, parsed: tuple[str, int] | None) -> None:
    assert split_authority(value) == parsed


def test_loopback_names_are_served_on_the_servers_port_only() -> None:
    for host in ("127.0.0.1:8766", "localhost:8766", "[::1]:8766", "127.9.9.9:8766", "LocalHost:8766"):
        assert LOOPBACK_ONLY.allows(host, 8766), host
    for host in ("localhost:9999", "localhost", "attacker.example:8766", "127.0.0.1.nip.io:8766", "[::2]:8766", ""):
        assert not LOOPBACK_ONLY.allows(host, 8766), host
    assert LOOPBACK_ONLY.allows("localhost", 80) and LOOPBACK_ONLY.allows("localhost:1234", None)
    assert is_loopback("::1") and is_loopback("[::1]") and not is_loopback("0.0.0.0") and not is_loopback("")


def test_names_given_are_served_on_any_port_or_on_the_one_given() -> None:
    hosts = served_hosts("127.0.0.1", ["Control", "proxy.example:443", "fe80::1"])
    assert hosts.names == frozenset({"control", "proxy.example:443", "[fe80::1]"})
    assert hosts.allows("control:8765", 8765) and hosts.allows("CONTROL", 8765)
    assert hosts.allows("proxy.example", 8765, default_port=443) and not hosts.allows("proxy.example:80", 8765)
    assert hosts.allows("[fe80::1]:8765", 8765)


def test_a_loopback_name_on_another_port_is_served_only_as_given() -> None:
    behind_a_local_proxy = served_hosts("127.0.0.1", ["localhost:8443"])
    assert behind_a_local_proxy.allows("localhost:8443", 8765) and behind_a_local_proxy.allows("localhost:8765", 8765)
    assert behind_a_local_proxy.allows_origin("https://localhost:8443", 8765)
    for host in ("localhost:9999", "127.0.0.1:8443", "localhost"):
        assert not behind_a_local_proxy.allows(host, 8765), host


def test_the_listen_address_and_the_advertised_url_are_served() -> None:
    hosts = served_hosts("10.0.0.5", advertised=["http://agent.internal:8766/", "http://127.0.0.1:8766"])
    assert hosts.names == frozenset({"10.0.0.5", "agent.internal"})
    wildcard = served_hosts("0.0.0.0")
    assert socket.gethostname().lower() in wildcard.names


def test_a_name_that_is_not_a_host_is_refused() -> None:
    with pytest.raises(ValueError, match="not a host name or host:port: 'http://x'"):
        served_hosts("127.0.0.1", ["http://x"])


def test_only_pages_of_a_served_name_are_our_origins() -> None:
    hosts = served_hosts("127.0.0.1", ["control"])
    for origin in ("http://127.0.0.1:8765", "http://localhost:8765", "https://control", "http://control:8765"):
        assert hosts.allows_origin(origin, 8765), origin
    refused = (
        "null",
        "http://attacker.example",
        "http://localhost:3000",
        "file://",
        "http://control/x",
        "ftp://control",
    )
    for origin in (*refused, "http://user@control", ""):
        assert not hosts.allows_origin(origin, 8765), origin


def test_the_sdk_is_given_the_same_names() -> None:
    hosts, origins = served_hosts("127.0.0.1", ["control", "proxy:443"]).sdk_patterns(8765)
    assert hosts == ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "control", "control:*", "proxy:443"]
    assert "http://control:*" in origins and "https://proxy:443" in origins and "http://localhost:8765" in origins
    assert served_hosts("127.0.0.1").sdk_patterns(0)[0][0] == "127.0.0.1:*"
