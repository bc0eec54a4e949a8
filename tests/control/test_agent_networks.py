"""Where the control plane calls agents: the advertised URL's form (``sync_contract``) and the operator's list."""

from __future__ import annotations

import pytest

from agentcontext.control.agent_networks import AgentNetworks
from agentcontext.errors import ConfigError
from agentcontext.wire.sync import agent_url_problem


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8766", "http://127.0.0.1:9/", "http://[::1]:8766", "https://agents.example", "http://H:1"]
)
def test_a_scheme_a_host_and_a_port_is_an_agents_url(url: str) -> None:
    assert agent_url_problem(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://h:1",
        "http://h:1/api",
        "http://h:1?x=",
        "http://h:1#x",
        "http://u:p@h:1",
        "http://h:1\\x",
        "http://h :1",
        "http://h\x7f:1",
        "http://",
        "http://h:",
        "http://h:0",
        "http://h:65536",
        "http://h:08766",
        "http://::1:8766",
        "http://[::1",
        "http://[::1]x",
    ],
)
def test_anything_more_or_less_than_a_scheme_host_and_port_is_refused(url: str) -> None:
    assert agent_url_problem(url) is not None


def test_the_operator_lists_networks_addresses_and_names_and_default_stands_for_the_default_list() -> None:
    listed = AgentNetworks.parse(["10.9.0.0/16", "192.0.2.7", "[2001:db8::1]", "Agents.Internal", "default"])
    assert listed.refusal("http://10.9.200.1:8766") is None
    assert listed.refusal("http://192.0.2.7:1") is None and listed.refusal("http://192.0.2.8:1") is not None
    assert listed.refusal("http://[2001:db8::1]:1") is None
    assert listed.refusal("http://agents.internal:8766") is None  # names compare case-insensitively
    assert listed.refusal("http://127.0.0.1:1") is None  # from the default list
    only = AgentNetworks.parse(["10.9.0.0/16"])
    assert only.refusal("http://127.0.0.1:1") is not None  # given, the list replaces the default


@pytest.mark.parametrize("entry", ["", "no spaces", "a/b/c", "-flag", "10.0.0.0/33", "bücher.example"])
def test_an_entry_that_is_no_network_address_or_name_is_a_config_error(entry: str) -> None:
    with pytest.raises(ConfigError, match="--agent-network"):
        AgentNetworks.parse([entry])
