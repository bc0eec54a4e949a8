"""Tool names of the workspace's MCP servers: ``server__tool``, routing, the 64-character limit.

Coder's TestSplitToolName table (coder.md 8.5) plus what Coder lacks: names over 64
characters are cut deterministically, stay distinct, and still route.
"""

from __future__ import annotations

import hashlib

import pytest

from agentcontext.workspace_mcp.tool_names import MAX_NAME, InvalidToolName, UnknownServer, assign, split_tool_name


@pytest.mark.parametrize(
    ("name", "server", "tool"),
    [
        pytest.param("server__tool", "server", "tool", id="Valid"),
        pytest.param("server__my_tool", "server", "my_tool", id="ValidWithUnderscoresInTool"),
        pytest.param("server__my__tool", "server", "my__tool", id="SplitsAtTheFirstSeparator"),
    ],
)
def test_split_tool_name(name: str, server: str, tool: str) -> None:
    assert split_tool_name(name) == (server, tool)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("servertool", id="MissingSeparator"),
        pytest.param("__tool", id="EmptyServer"),
        pytest.param("server__", id="EmptyTool"),
        pytest.param("__", id="JustSeparator"),
    ],
)
def test_split_tool_name_rejects(name: str) -> None:
    with pytest.raises(InvalidToolName) as caught:
        split_tool_name(name)
    assert str(caught.value) == f'invalid tool name format: expected format "server__tool", got "{name}"'


def test_short_names_are_exposed_as_server__tool_and_route_back() -> None:
    names = assign([("time", "get_current_time"), ("git", "git_status")])
    assert names.exposed("time", "get_current_time") == "time__get_current_time"
    assert names.route("git__git_status", ["git", "time"]) == ("git", "git_status")


def test_a_name_for_a_server_nobody_declared_does_not_route() -> None:
    names = assign([("time", "get_current_time")])
    with pytest.raises(UnknownServer, match='^unknown MCP server: "nosuch"$'):
        names.route("nosuch__tool", ["time"])
    with pytest.raises(InvalidToolName):
        names.route("time-get_current_time", ["time"])


def test_a_tool_of_a_known_server_routes_even_before_it_is_listed() -> None:
    assert assign([]).route("time__later", ["time"]) == ("time", "later")


def test_names_over_64_characters_are_shortened_deterministically_and_route() -> None:
    tool = "t" * 80
    names = assign([("srv", tool), ("srv", "short")])
    exposed = names.exposed("srv", tool)
    assert len(exposed) == MAX_NAME
    assert exposed.startswith("srv__ttt")
    assert exposed == assign([("srv", "short"), ("srv", tool)]).exposed("srv", tool)  # order does not matter
    assert names.route(exposed, ["srv"]) == ("srv", tool)
    assert names.exposed("srv", "short") == "srv__short"


def test_long_names_that_share_a_prefix_stay_unique() -> None:
    prefix = "p" * 70
    pairs = [("srv", f"{prefix}_{index}") for index in range(50)] + [("other", f"{prefix}_0")]
    names = assign(pairs)
    exposed = {names.exposed(server, tool) for server, tool in pairs}
    assert len(exposed) == len(pairs)
    assert all(len(name) <= MAX_NAME for name in exposed)
    assert {names.route(name, ["srv", "other"]) for name in exposed} == set(pairs)


def test_a_cut_name_that_meets_another_name_gets_a_longer_hash() -> None:
    long_tool = "x" * 80
    full = f"srv__{long_tool}"
    cut = f"{full[: MAX_NAME - 11]}_{hashlib.sha256(full.encode()).hexdigest()[:10]}"
    server, tool = cut.split("__", 1)  # a real 64-character name equal to the default cut
    names = assign([("srv", long_tool), (server, tool)])
    assert names.exposed(server, tool) == cut
    longer = names.exposed("srv", long_tool)
    assert longer != cut
    assert len(longer) == MAX_NAME
    assert names.route(longer, ["srv"]) == ("srv", long_tool)
