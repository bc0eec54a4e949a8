"""Where ``agentcontext up`` listens: a given address must be free; the default gives way to a free port. One
``up`` a work dir."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcontext.errors import ConfigError, UnavailableError
from agentcontext.local.stack import Address, choose_address, claim, parse_address
from agentcontext.local.supervisor import start_time


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


def test_a_second_claim_of_a_work_dir_is_refused_naming_the_first_its_urls_and_how_to_stop_it(tmp_path: Path) -> None:
    first = claim(tmp_path / "app", tmp_path / "run")
    first.note(work_dir=str(tmp_path / "app"), agent="http://127.0.0.1:4001", dashboard="http://127.0.0.1:8765/")
    with pytest.raises(UnavailableError) as caught:
        claim(tmp_path / "app", tmp_path / "run")
    assert str(caught.value) == (
        f"an `up` of {tmp_path / 'app'} is already running (pid {os.getpid()}; agent http://127.0.0.1:4001;"
        f" dashboard http://127.0.0.1:8765/): use that one, or stop it first (Ctrl-C where it runs, or kill"
        f" {os.getpid()})"
    )
    other = claim(tmp_path / "lib", tmp_path / "run")  # another folder is another claim
    first.release()
    again = claim(tmp_path / "app", tmp_path / "run")
    for held in (other, again):
        held.release()


def test_a_claim_is_refused_while_the_agent_a_killed_up_started_still_runs_and_taken_once_it_has_ended(
    tmp_path: Path,
) -> None:
    """The lock dies with ``up``; its agent may still be stopping (or, without PR_SET_PDEATHSIG, running on)."""
    living = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    with living:
        first = claim(tmp_path / "app", tmp_path / "run")
        first.note(agent_pid=living.pid, agent_started=start_time(living.pid))
        os.close(first.fd)  # as a SIGKILL of ``up`` would: the lock let go, the note left (``release`` clears it)
        with pytest.raises(UnavailableError) as caught:
            claim(tmp_path / "app", tmp_path / "run")
        assert str(caught.value) == (
            f"the agent an earlier `up` of {tmp_path / 'app'} started (pid {living.pid}) still runs: stop it first"
            f" (kill {living.pid}), or wait until it has stopped"
        )
    claim(tmp_path / "app", tmp_path / "run").release()  # it has ended: the folder is free
