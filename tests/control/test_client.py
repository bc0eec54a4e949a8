"""The Python client's side of a control plane that does not answer: bounded waits, and errors that say which."""

from __future__ import annotations

import socket
import time

import pytest

from agentcontext.control.client import ControlClient
from agentcontext.errors import UnavailableError
from tests.helpers import free_port


def test_a_server_that_takes_the_request_and_never_answers_is_given_up_on_saying_it_may_still_act() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()  # the kernel takes the connection; nobody reads it
        started = time.monotonic()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with ControlClient(url, "acu_x", timeout=1.0) as client, pytest.raises(UnavailableError) as raised:
            client.create_chat("ws")
    assert time.monotonic() - started < 10
    said = str(raised.value)
    assert "gave no answer to POST /api/v1/chats within 1 s" in said and "it may still do what was asked" in said
    assert "cannot reach" not in said


def test_a_server_nobody_listens_for_is_said_to_be_unreachable() -> None:
    with (
        ControlClient(f"http://127.0.0.1:{free_port()}", "acu_x", timeout=1.0) as client,
        pytest.raises(UnavailableError, match="cannot reach the control plane at "),
    ):
        client.chats()
