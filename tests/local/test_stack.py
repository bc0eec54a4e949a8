"""Where ``agentcontext up`` listens: a given address must be free; the default gives way to a free port."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.local.stack import Address, choose_address, parse_address


@pytest.fixture
def taken() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def test_a_given_address_that_is_taken_is_an_error_naming_it_and_the_option(taken: str) -> None:
    with pytest.raises(UnavailableError) as caught:
        choose_address(taken, None, "--listen")
    assert str(caught.value) == f"{taken} is already in use: stop what listens there or pass another --listen"


def test_a_taken_default_gives_way_to_a_free_port_and_says_so(taken: str) -> None:
    address, note = choose_address(None, taken, "--listen")
    assert address.host == "127.0.0.1" and str(address) != taken
    assert note == f"{taken} is in use, so the control plane listens on {address} instead"


def test_a_free_given_address_is_taken_as_it_is() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert choose_address(f"127.0.0.1:{port}", None, "--listen") == (Address("127.0.0.1", port), "")


@pytest.mark.parametrize("value", ["8765", "host:", "host:port", "h:70000"])
def test_an_address_that_is_not_host_port_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError):
        parse_address(value, "--listen")


@pytest.mark.parametrize(
    ("address", "url"),
    [
        (Address("0.0.0.0", 80), "http://127.0.0.1:80"),
        (Address("::", 80), "http://[::1]:80"),
        (Address("::1", 80), "http://[::1]:80"),
        (Address("localhost", 80), "http://localhost:80"),
    ],
)
def test_a_wildcard_address_is_reached_on_loopback(address: Address, url: str) -> None:
    assert address.url == url
