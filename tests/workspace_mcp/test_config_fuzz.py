"""Hypothesis over ``.mcp.json`` bytes: nothing raised but :class:`McpConfigError`, nothing lost, nothing slow.

Documents are arbitrary JSON trees in the three shapes, whose entries hold random types for
every field the parser reads, ``${VAR}`` / ``${VAR:-default}`` forms against an environment
with set, empty and unset variables, names that break routing or hold NUL or a lone
surrogate, deep nesting, huge integers, byte order marks and invalid UTF-8. For each:

- :func:`parse` returns or raises :class:`McpConfigError`, and nothing else;
- every entry of the server map is either a spec or an entry error, exactly once;
- every name, message and warning can be stored (UTF-8, no NUL): they reach snapshots;
- a workspace holding the file scans, and its snapshot is JSON a database takes.

Failures these found, now fixed in ``mcp_config.py``: deep nesting raised ``RecursionError``
and a 5,000-digit number ``ValueError`` (both took the scan down); a server name or
transport with ``\\u0000`` or ``\\ud800`` went into the snapshot (the control plane refuses
such a push, the agent's ``GET /context`` answered 500); 64 KiB of unclosed ``${A:-``
took 11 s to expand (quadratic), now milliseconds.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentcontext.errors import McpConfigError
from agentcontext.resource import Kind, Status
from agentcontext.testing import isolated_environ, make_workspace, scan_tree
from agentcontext.workspace_mcp.config import ParsedConfig, parse, server_map

MAX_EXAMPLES = 300
SCAN_EXAMPLES = 40
ENVIRON = {"SET": "value", "EMPTY": "", "HOME": "/home/dev", "PATH": "/usr/bin"}
FUZZ = settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))

_variable = st.sampled_from(["SET", "EMPTY", "UNSET", "HOME", "lower_case", "A1"]) | st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True
)
_odd = st.sampled_from(["\x00", "\ud800", "\udfff", "\u200b", "\U000e0041", "\u202e", "}", "${", ":-", "$", "\\"])
_piece = st.one_of(
    st.text(max_size=12),
    _odd,
    _variable.map(lambda v: f"${{{v}}}"),
    st.tuples(_variable, st.text(max_size=8)).map(lambda p: f"${{{p[0]}:-{p[1]}}}"),
    _variable.map(lambda v: f"${v}"),
)
_template = st.lists(_piece, max_size=6).map("".join)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    _template,
)
_json = st.recursive(
    _leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_template, inner, max_size=3), max_leaves=10
)
_name = st.sampled_from(["github", "docs", "a-b", "x", "", "_lead", "trail_", "a__b", "mcpServers"]) | _template


def _field(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value: mostly well typed, sometimes any JSON at all."""
    return st.one_of(good, good, _json)


_entry = st.fixed_dictionaries(
    {},
    optional={
        "command": _field(_template),
        "args": _field(st.lists(_template, max_size=4)),
        "env": _field(st.dictionaries(_variable, _template, max_size=3)),
        "url": _field(_template | st.just("https://example.test/mcp")),
        "headers": _field(st.dictionaries(st.sampled_from(["Authorization", "X-Key"]), _template, max_size=2)),
        "type": _field(st.sampled_from(["stdio", "http", "streamable-http", "sse", "ws", "STDIO"])),
        "transport": _field(st.sampled_from(["stdio", "http", "sse"])),
        "cwd": _json,
    },
)
_servers = st.dictionaries(_name, _entry | _json, max_size=5)


@st.composite
def _document(draw: st.DrawFn) -> Any:
    servers = draw(_servers)
    shape = draw(st.sampled_from(["mcpServers", "servers", "flat", "both", "odd", "not-object"]))
    if shape == "flat":
        return servers
    if shape == "both":
        return {"mcpServers": servers, "servers": draw(_servers)}
    if shape == "odd":
        return {draw(st.sampled_from(["mcpServers", "servers"])): draw(_json)}
    if shape == "not-object":
        return draw(_json)
    return {shape: servers, **draw(st.dictionaries(_template, _json, max_size=2))}


@st.composite
def _config_bytes(draw: st.DrawFn) -> bytes:
    """The document as a file: ASCII-escaped or raw UTF-8 (surrogatepass), maybe spoiled."""
    document = draw(_document())
    if draw(st.booleans()):
        data = json.dumps(document).encode()
    else:
        data = json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")
    spoil = draw(st.sampled_from(["none"] * 6 + ["bom", "bad-utf8", "deep", "bigint", "truncate"]))
    if spoil == "bom":
        data = b"\xef\xbb\xbf" + data
    elif spoil == "bad-utf8":
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])) + data[at:]
    elif spoil == "deep":
        depth = draw(st.sampled_from([2, 100, 990, 1000, 5000]) | st.integers(min_value=1, max_value=5000))
        data = b'{"mcpServers": {"deep": {"command": "c", "args": ' + b"[" * depth + b"]" * depth + b"}}}"
    elif spoil == "bigint":
        data = b'{"mcpServers": {"x": {"command": "c", "n": ' + b"9" * draw(st.integers(4000, 6000)) + b"}}}"
    elif spoil == "truncate":
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return data


def _storable(text: str) -> bool:
    """What a snapshot may carry: the control plane refuses NUL and lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _expected_entries(data: bytes) -> dict[str, Any] | None:
    """The server map as an independent reading sees it; None when the file as a whole must fail."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    try:
        return server_map(document)
    except McpConfigError:
        return None


def _check_accounting(data: bytes, parsed: ParsedConfig) -> int:
    """Every entry is a spec or an error, once; returns the number of entries."""
    entries = _expected_entries(data)
    assert entries is not None, "a file the parser accepted must be a JSON object with a server map"
    names = [s.name for s in parsed.servers] + [name for name, _ in parsed.entry_errors]
    assert sorted(names) == sorted(entries)  # count in == count out + reported, name by name
    for spec in parsed.servers:
        assert _storable(spec.name)
        assert isinstance(spec.command, str) and all(isinstance(a, str) for a in spec.args)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in (*spec.env, *spec.headers))
        assert spec.command if spec.transport == "stdio" else spec.url
    for _, message in parsed.entry_errors:
        assert _storable(message) and message
    assert all(_storable(w) for w in parsed.warnings)
    return len(entries)


def _record(request: pytest.FixtureRequest, name: str, cases: int, **more: int) -> None:
    """The number of cases a property tried: printed (``-s``) and kept as the test's user properties."""
    request.node.user_properties += [("cases", cases), *more.items()]
    print(f"\n{name}: {cases} cases", *(f"{k}={v}" for k, v in more.items()))


def test_parsing_raises_only_mcp_config_errors_and_accounts_for_every_entry(request: pytest.FixtureRequest) -> None:
    counts = dict.fromkeys(["cases", "entries", "entry_errors", "whole_file_errors"], 0)

    @example(data=b"[" * 100_000 + b"]" * 100_000, strict=True)
    @example(data=b'{"a": ' + b"1" * 5000 + b"}", strict=True)
    @example(data=b'{"mcpServers": {"\\ud800": {"command": "c"}, "ok": {"command": "c"}}}', strict=True)
    @example(data=b'{"mcpServers": {"n\\u0000": {"url": "u"}, "t": {"type": "\\udfff", "url": "u"}}}', strict=True)
    @given(data=_config_bytes(), strict=st.booleans())
    @FUZZ
    def parses_or_fails_as_a_whole(data: bytes, strict: bool) -> None:
        counts["cases"] += 1
        try:
            parsed = parse(data, "/w/.mcp.json", ENVIRON, strict=strict)
        except McpConfigError as exc:
            assert _storable(str(exc)) and str(exc)
            assert _expected_entries(data) is None, "only a file that is not a JSON object with a server map fails"
            counts["whole_file_errors"] += 1
            return
        counts["entries"] += _check_accounting(data, parsed)
        counts["entry_errors"] += len(parsed.entry_errors)

    parses_or_fails_as_a_whole()
    _record(request, "parse .mcp.json", counts.pop("cases"), **counts)


@pytest.mark.parametrize("depth", [*range(960, 1001, 4), 5000])
def test_nesting_at_the_recursion_limit_is_an_error_or_a_server_never_a_crash(depth: int) -> None:
    data = b'{"mcpServers": {"x": {"command": "c", "deep": ' + b"[" * depth + b"]" * depth + b"}}}"
    try:
        parsed = parse(data, "/w/.mcp.json", ENVIRON)
    except McpConfigError as exc:
        assert str(exc) == "invalid JSON: nested too deeply"
    else:
        assert [s.name for s in parsed.servers] == ["x"]


@pytest.mark.parametrize("unit", ["${A:-", "${A", "${", "${A:-${B}"])
def test_expanding_64_kib_of_unclosed_variables_takes_milliseconds(unit: str) -> None:
    value = unit * (64 * 1024 // len(unit))
    data = json.dumps({"mcpServers": {"x": {"command": value, "args": [value], "env": {"E": value}}}}).encode()
    started = time.monotonic()
    parsed = parse(data, "/w/.mcp.json", ENVIRON)
    assert time.monotonic() - started < 1.0  # was 11 s for "${A:-" before the search stopped at the last "}"
    assert len(parsed.servers) == 1


def test_a_default_still_expands_before_an_unclosed_tail() -> None:
    data = json.dumps({"mcpServers": {"x": {"command": "${UNSET:-run} ${A:-tail"}}}).encode()
    assert parse(data, "/w/.mcp.json", {}).servers[0].command == "run ${A:-tail"


def test_a_workspace_with_any_mcp_json_scans_to_a_storable_snapshot(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    cases = 0

    @given(data=_config_bytes())
    @settings(FUZZ, max_examples=SCAN_EXAMPLES)
    def scans(data: bytes) -> None:
        nonlocal cases
        cases += 1
        home = tmp_path_factory.mktemp("home")
        work = make_workspace(tmp_path_factory.mktemp("work"), {".git/": "", ".mcp.json": data})
        snapshot = scan_tree(work, home=home, environ=isolated_environ(home, SET="value", EMPTY="")).snapshot
        [config] = [r for r in snapshot.resources if r.kind is Kind.MCP_CONFIG]
        assert config.status in (Status.OK, Status.INVALID, Status.OVERSIZE)
        if config.status is Status.OK:
            entries = _expected_entries(data)
            assert entries is not None
            assert len(config.servers) + len(config.warnings) == len(entries)  # a server or a warning each
        text = json.dumps(snapshot.to_dict(), ensure_ascii=False)
        assert _storable(text)  # what the agent serves and pushes: a database takes it

    scans()
    _record(request, "scan a workspace's .mcp.json", cases)
