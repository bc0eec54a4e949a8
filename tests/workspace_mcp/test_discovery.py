"""MCP config files in a scan: Coder's resolver rules for .mcp.json (coder.md 1.4, 3.2) through real workspaces."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.scan import ScanResult
from agentcontext.testing import isolated_environ, make_workspace, scan_tree

FAKE_TOKEN = "ghp_FAKEfakeFAKEfake0123456789abcdef"


def scan_with(work_dir: Path, home: Path, settings: dict[str, Any]) -> ScanResult:
    """``scan_tree`` with dotted-key settings."""
    return scan_tree(work_dir, home=home, settings=settings)


def config_bytes(servers: dict[str, Any]) -> bytes:
    return json.dumps({"mcpServers": servers}, indent=2).encode("utf-8")


def mcp_configs(result: ScanResult) -> list[Resource]:
    return list(result.snapshot.of_kind(Kind.MCP_CONFIG))


def config_at(result: ScanResult, path: Path) -> Resource:
    resource = result.snapshot.find(str(path))
    assert resource is not None, f"{path} not in the inventory"
    assert resource.kind is Kind.MCP_CONFIG
    return resource


def test_mcp_config_emitted(tmp_path: Path, home: Path) -> None:
    data = config_bytes(
        {
            "github": {"url": "https://api.example.com/mcp", "headers": {"Authorization": f"Bearer {FAKE_TOKEN}"}},
            "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "env": {"TOKEN": FAKE_TOKEN}},
        }
    )
    make_workspace(tmp_path, {".git/": "", ".mcp.json": data})
    result = scan_tree(tmp_path, home=home)
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.status is Status.OK
    assert resource.scope is Scope.PROJECT
    assert resource.size_bytes == len(data)
    assert resource.content_hash == hashlib.sha256(data).hexdigest()
    assert resource.servers == ("fetch", "github")
    assert resource.connect is True
    assert resource.content is None
    assert resource.payload_bytes == 0
    assert resource.error is None
    assert resource.warnings == ()
    assert "content" not in resource.to_dict()
    assert FAKE_TOKEN not in result.snapshot.to_json()
    assert [s.name for s in result.servers] == ["fetch", "github"]


def test_servers_to_connect_carry_their_expanded_settings(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".mcp.json": config_bytes({"fetch": {"command": "${BIN}"}})})
    result = scan_tree(tmp_path, home=home, environ=isolated_environ(home, BIN="/opt/fetch"))
    assert [(s.name, s.command, s.config_path) for s in result.servers] == [
        ("fetch", "/opt/fetch", str(tmp_path / ".mcp.json"))
    ]


def test_malformed_json_is_invalid_with_the_json_error(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".mcp.json": "{not valid json"})
    result = scan_tree(tmp_path, home=home)
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.status is Status.INVALID
    assert resource.error == "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    assert resource.size_bytes == len("{not valid json")
    assert resource.content_hash == hashlib.sha256(b"{not valid json").hexdigest()
    assert resource.servers == ()
    assert result.servers == ()
    assert result.snapshot.error is None


def test_per_entry_errors_become_warnings_without_dropping_siblings(tmp_path: Path, home: Path) -> None:
    data = config_bytes({"good": {"command": "run"}, "no-cmd": {}, "bad__sep": {"command": "run"}, "not-obj": "x"})
    make_workspace(tmp_path, {".git/": "", ".mcp.json": data})
    result = scan_tree(tmp_path, home=home)
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.status is Status.OK
    assert resource.servers == ("good",)
    assert resource.warnings == (
        'server name "bad__sep" contains reserved separator "__" or leading/trailing underscore',
        'server "no-cmd" has no command or url',
        'server "not-obj" must be a JSON object',
    )
    assert [s.name for s in result.servers] == ["good"]


def test_unset_variable_fails_only_its_server_under_strict_settings(tmp_path: Path, home: Path) -> None:
    data = config_bytes({"needs-key": {"command": "run", "env": {"KEY": "${MISSING_KEY}"}}, "plain": {"command": "p"}})
    make_workspace(tmp_path, {".git/": "", ".mcp.json": data})
    result = scan_tree(tmp_path, home=home)
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.servers == ("plain",)
    assert resource.warnings == ('server "needs-key": environment variable "MISSING_KEY" (in env) is not set',)


def test_unset_variable_expands_to_nothing_under_lenient_settings(tmp_path: Path, home: Path) -> None:
    data = config_bytes({"needs-key": {"command": "run", "env": {"KEY": "${MISSING_KEY}"}}})
    make_workspace(tmp_path, {".git/": "", ".mcp.json": data})
    result = scan_with(tmp_path, home, {"mcp.unset_variables": "lenient"})
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.servers == ("needs-key",)
    assert resource.warnings == (
        'server "needs-key": environment variable "MISSING_KEY" (in env) is not set; expanded to an empty string',
    )
    assert [s.env for s in result.servers] == [(("KEY", ""),)]


def test_first_definition_of_a_server_name_wins_across_files(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".mcp.json": config_bytes({"shared": {"command": "first"}, "only-first": {"command": "a"}}),
            "tools/mcp.json": config_bytes({"shared": {"command": "second"}, "only-second": {"command": "b"}}),
        },
    )
    result = scan_with(tmp_path, home, {"mcp.config_files": [".mcp.json", "tools/mcp.json"]})
    first = config_at(result, tmp_path / ".mcp.json")
    second = config_at(result, tmp_path / "tools" / "mcp.json")
    assert first.servers == ("only-first", "shared")
    assert first.warnings == ()
    assert second.servers == ("only-second",)
    assert second.warnings == (
        f'server "shared" is already defined in {tmp_path / ".mcp.json"}; this definition is ignored',
    )
    assert [(s.name, s.command) for s in result.servers] == [
        ("only-first", "a"),
        ("shared", "first"),
        ("only-second", "b"),
    ]


def test_config_files_are_taken_in_configured_order(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            ".mcp.json": config_bytes({"shared": {"command": "root"}}),
            "tools/mcp.json": config_bytes({"shared": {"command": "tools"}}),
        },
    )
    result = scan_with(tmp_path, home, {"mcp.config_files": ["tools/mcp.json", ".mcp.json"]})
    assert [(s.name, s.command) for s in result.servers] == [("shared", "tools")]
    assert config_at(result, tmp_path / ".mcp.json").servers == ()


def test_config_in_a_declared_source_is_listed_but_not_connected(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    source = tmp_path / "shared-rules"
    make_workspace(project, {".git/": "", ".mcp.json": config_bytes({"local": {"command": "run"}})})
    make_workspace(source, {".mcp.json": config_bytes({"remote": {"command": "danger"}})})
    result = scan_tree(project, home=home, settings={"sources": [str(source)]})
    listed = config_at(result, source / ".mcp.json")
    assert listed.status is Status.OK
    assert listed.connect is False
    assert listed.scope is Scope.SOURCE
    assert listed.source == str(source)
    assert listed.servers == ("remote",)
    assert listed.to_dict()["connect"] is False
    assert config_at(result, project / ".mcp.json").connect is True
    assert [s.name for s in result.servers] == ["local"]


def test_parse_config_file_not_found_is_simply_absent(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "rules"})
    result = scan_with(tmp_path, home, {"mcp.config_files": [".mcp.json", "missing/mcp.json"]})
    assert mcp_configs(result) == []
    assert result.servers == ()
    assert result.snapshot.error is None


def test_mcp_config_only_at_the_project_root(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "sub/.mcp.json": config_bytes({"nested": {"command": "run"}})})
    result = scan_tree(tmp_path / "sub", home=home)
    assert mcp_configs(result) == []
    assert result.servers == ()


def test_coder_profile_reads_the_work_dir_config(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".mcp.json": config_bytes({"srv": {"command": "run"}})})
    result = scan_tree(tmp_path, home=home, profile="coder")
    assert config_at(result, tmp_path / ".mcp.json").servers == ("srv",)
    assert [s.name for s in result.servers] == ["srv"]


def test_oversize_config_is_not_parsed(tmp_path: Path, home: Path) -> None:
    data = config_bytes({"srv": {"command": "run", "args": ["x" * 200]}})
    make_workspace(tmp_path, {".git/": "", ".mcp.json": data})
    result = scan_with(tmp_path, home, {"snapshot.max_resource_bytes": 100})
    resource = config_at(result, tmp_path / ".mcp.json")
    assert resource.status is Status.OVERSIZE
    assert resource.error == f"file size {len(data)} exceeds per-resource cap of 100 bytes"
    assert resource.size_bytes == len(data)
    assert resource.content_hash == hashlib.sha256(data[:100]).hexdigest()
    assert result.servers == ()


def test_a_directory_named_like_a_config_is_invalid(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", ".mcp.json/": ""})
    resource = config_at(scan_tree(tmp_path, home=home), tmp_path / ".mcp.json")
    assert resource.status is Status.INVALID
    assert resource.error == "a directory, not a regular file"


def test_a_symlinked_config_outside_the_project_is_refused(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside-the-roots" / "mcp.json"
    make_workspace(
        tmp_path, {"project/.git/": "", "outside-the-roots/mcp.json": config_bytes({"x": {"command": "run"}})}
    )
    os.symlink(outside, project / ".mcp.json")
    result = scan_tree(project, home=home)
    resource = config_at(result, project / ".mcp.json")
    assert resource.status is Status.INVALID
    assert resource.error == f'symlink target "{outside}" escapes scan root "{project}"'
    assert result.servers == ()


def test_mcp_config_never_changes_the_aggregate_hash(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "rules"})
    without = scan_tree(tmp_path, home=home).snapshot
    make_workspace(tmp_path, {".mcp.json": config_bytes({"a": {"command": "run"}})})
    added = scan_tree(tmp_path, home=home).snapshot
    make_workspace(tmp_path, {".mcp.json": config_bytes({"a": {"command": "other"}, "b": {"url": "https://h"}})})
    altered = scan_tree(tmp_path, home=home).snapshot
    make_workspace(tmp_path, {".mcp.json": "{broken"})
    broken = scan_tree(tmp_path, home=home).snapshot
    assert len(added.of_kind(Kind.MCP_CONFIG)) == 1
    assert added.of_kind(Kind.MCP_CONFIG) != altered.of_kind(Kind.MCP_CONFIG)
    assert without.aggregate_hash == added.aggregate_hash == altered.aggregate_hash == broken.aggregate_hash
    make_workspace(tmp_path, {"AGENTS.md": "rules, edited"})
    assert scan_tree(tmp_path, home=home).snapshot.aggregate_hash != without.aggregate_hash
