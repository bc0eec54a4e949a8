"""Snapshot caps, ordering and hashing: Coder's resolver tests (coder.md 8.1) and rules (1.4, 1.5, 4.1)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status, Tool
from agentcontext.scan import ScanResult
from agentcontext.settings.config import SnapshotSettings
from agentcontext.settings.profiles import PROFILES
from agentcontext.snapshot import Snapshot, aggregate_hash, apply_caps, apply_mcp_caps, build, diff
from agentcontext.testing import make_workspace, scan_tree, skill_md
from agentcontext.wire.sync import PushRequest, validated


def scan_with(work_dir: Path, home: Path, settings: dict[str, Any]) -> ScanResult:
    """``scan_tree`` with dotted-key settings."""
    return scan_tree(work_dir, home=home, settings=settings)


def caps(*, max_snapshot_bytes: int = 2 * 1024 * 1024, max_resources: int = 500) -> SnapshotSettings:
    return SnapshotSettings(64 * 1024, max_snapshot_bytes, max_resources)


def file_resource(path: str, content: str, kind: Kind = Kind.INSTRUCTION_FILE, status: Status = Status.OK) -> Resource:
    data = content.encode("utf-8")
    return Resource(
        kind,
        path,
        Scope.PROJECT,
        status,
        size_bytes=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
        content=content if status.carries_content else None,
    )


def server_resource(name: str, tools: tuple[Tool, ...]) -> Resource:
    return Resource(Kind.MCP_SERVER, name, Scope.PROJECT, Status.OK, name=name, tools=tools)


def make_snapshot(resources: list[Resource], servers: tuple[Resource, ...] = (), **kwargs: int) -> Snapshot:
    return build(
        version=1,
        work_dir="/w",
        project_root="/w",
        profile="default",
        resources=resources,
        caps=caps(**kwargs),
        mcp_servers=servers,
    )


def excluded(resources: list[Resource]) -> list[Resource]:
    return [r for r in resources if r.status is Status.EXCLUDED]


def test_aggregate_cap_excludes() -> None:
    resources = [file_resource("/r/a/AGENTS.md", "aaaaa"), file_resource("/r/b/AGENTS.md", "bbbb")]
    resources.append(file_resource("/r/c/AGENTS.md", "cccc"))
    capped = apply_caps(resources, caps(max_snapshot_bytes=9))
    assert len(capped) == 3
    assert [r.path for r in excluded(capped)] == ["/r/c/AGENTS.md"]
    dropped = excluded(capped)[0]
    assert dropped.error == "dropped to fit 9-byte aggregate cap"
    assert dropped.content is None
    assert dropped.content_hash == resources[2].content_hash
    assert dropped.size_bytes == 4


def test_count_cap_excludes() -> None:
    resources = [file_resource(f"/root{i}/AGENTS.md", f"root {i}") for i in range(5)]
    capped = apply_caps(resources, caps(max_resources=3))
    assert len(capped) == 5
    assert [r.path for r in excluded(capped)] == ["/root3/AGENTS.md", "/root4/AGENTS.md"]
    assert {r.error for r in excluded(capped)} == {"dropped to fit 3-resource snapshot count cap"}
    assert all(r.content is None for r in excluded(capped))


def test_caps_are_applied_in_kind_then_path_order() -> None:
    skill = file_resource("/a/skills/x/SKILL.md", "skill", Kind.SKILL)
    config = Resource(Kind.MCP_CONFIG, "/a/.mcp.json", Scope.PROJECT, Status.OK, size_bytes=2)
    instruction = file_resource("/z/AGENTS.md", "instructions")
    capped = apply_caps([config, skill, instruction], caps(max_resources=1))
    assert [(r.kind, r.status) for r in capped] == [
        (Kind.INSTRUCTION_FILE, Status.OK),
        (Kind.SKILL, Status.EXCLUDED),
        (Kind.MCP_CONFIG, Status.EXCLUDED),
    ]


def test_byte_cap_prefers_instruction_files_over_skills() -> None:
    skill = file_resource("/a/skills/x/SKILL.md", "s" * 8, Kind.SKILL)
    instruction = file_resource("/z/AGENTS.md", "i" * 8)
    capped = apply_caps([skill, instruction], caps(max_snapshot_bytes=10))
    assert [(r.path, r.status) for r in capped] == [("/z/AGENTS.md", Status.OK), (skill.path, Status.EXCLUDED)]


def test_a_resource_too_big_for_the_byte_cap_does_not_block_smaller_later_ones() -> None:
    resources = [file_resource("/a", "12345"), file_resource("/b", "123456"), file_resource("/c", "1234")]
    capped = apply_caps(resources, caps(max_snapshot_bytes=9))
    assert [(r.path, r.status) for r in capped] == [("/a", Status.OK), ("/b", Status.EXCLUDED), ("/c", Status.OK)]


def test_resources_without_content_use_no_bytes() -> None:
    invalid = file_resource("/a", "x" * 100, status=Status.INVALID)
    capped = apply_caps([invalid, file_resource("/b", "12345")], caps(max_snapshot_bytes=5))
    assert [r.status for r in capped] == [Status.INVALID, Status.OK]


def test_byte_cap_counts_utf8_bytes_not_characters() -> None:
    capped = apply_caps([file_resource("/a", "ééé")], caps(max_snapshot_bytes=5))
    assert capped[0].status is Status.EXCLUDED


def test_mcp_resources_respect_aggregate_byte_cap() -> None:
    big = server_resource("big", (Tool("dump", "x" * 1024, {"type": "object", "properties": {}}),))
    snapshot = make_snapshot([file_resource("/w/AGENTS.md", "rules")], (big,), max_snapshot_bytes=512)
    server = snapshot.find("big")
    assert server is not None
    assert server.status is Status.EXCLUDED
    assert server.error == "dropped to fit 512-byte aggregate cap"
    assert server.tools == ()
    assert snapshot.error == "snapshot exceeds 512-byte aggregate cap"
    instruction = snapshot.find("/w/AGENTS.md")
    assert instruction is not None
    assert instruction.status is Status.OK


def test_mcp_resources_respect_the_count_cap() -> None:
    files = [file_resource("/w/AGENTS.md", "rules"), file_resource("/w/skills/a/SKILL.md", "skill", Kind.SKILL)]
    server = server_resource("srv", (Tool("t"),))
    snapshot = make_snapshot(files, (server,), max_resources=2)
    dropped = snapshot.find("srv")
    assert dropped is not None
    assert dropped.status is Status.EXCLUDED
    assert dropped.error == "dropped to fit 2-resource snapshot count cap"
    assert dropped.tools == ()
    assert snapshot.error == "snapshot exceeds 2-resource count cap"


def test_mcp_servers_are_added_after_the_caps_and_never_crowd_out_files() -> None:
    servers = tuple(server_resource(f"srv{i}", (Tool("t", "d" * 50),)) for i in range(3))
    files = [file_resource("/w/AGENTS.md", "x" * 60)]
    snapshot = make_snapshot(files, servers, max_snapshot_bytes=100, max_resources=2)
    statuses = {r.path: r.status for r in snapshot.resources}
    excluded_servers = {"srv0": Status.EXCLUDED, "srv1": Status.EXCLUDED, "srv2": Status.EXCLUDED}
    assert statuses == {"/w/AGENTS.md": Status.OK, **excluded_servers}
    assert snapshot.error == "snapshot exceeds 100-byte aggregate cap"


def test_apply_mcp_caps_reports_each_cap_hit() -> None:
    files = apply_caps([file_resource("/w/AGENTS.md", "rules")], caps(max_resources=2))
    servers = [server_resource("a", (Tool("t", "x" * 40),)), server_resource("b", (Tool("t"),))]
    servers.append(server_resource("c", (Tool("t"),)))
    out, errors = apply_mcp_caps(files, servers, caps(max_snapshot_bytes=40, max_resources=2))
    assert [(r.path, r.status) for r in out] == [
        ("/w/AGENTS.md", Status.OK),
        ("a", Status.EXCLUDED),
        ("b", Status.EXCLUDED),
        ("c", Status.EXCLUDED),
    ]
    assert errors == [
        "snapshot exceeds 40-byte aggregate cap",
        "snapshot exceeds 2-resource count cap",
        "snapshot exceeds 2-resource count cap",
    ]


def test_a_given_error_wins_over_mcp_cap_errors() -> None:
    big = server_resource("big", (Tool("dump", "x" * 100),))
    snapshot = build(
        version=1,
        work_dir="/w",
        project_root=None,
        profile="default",
        resources=[],
        caps=caps(max_snapshot_bytes=10),
        mcp_servers=(big,),
        error="watcher degraded",
    )
    assert snapshot.error == "watcher degraded"


def test_snapshot_resources_are_sorted_by_id_with_payload_bytes_summed() -> None:
    resources = [
        file_resource("/w/skills/b/SKILL.md", "bb", Kind.SKILL),
        file_resource("/w/AGENTS.md", "ééé"),
        Resource(Kind.MCP_CONFIG, "/w/.mcp.json", Scope.PROJECT, Status.OK, size_bytes=10),
        file_resource("/w/skills/a/SKILL.md", "a", Kind.SKILL),
    ]
    snapshot = make_snapshot(resources, (server_resource("srv", ()),))
    assert [r.id for r in snapshot.resources] == [
        "instruction_file:/w/AGENTS.md",
        "mcp_config:/w/.mcp.json",
        "mcp_server:srv",
        "skill:/w/skills/a/SKILL.md",
        "skill:/w/skills/b/SKILL.md",
    ]
    assert snapshot.payload_bytes == 6 + 2 + 1
    assert snapshot.error is None
    assert snapshot.aggregate_hash == aggregate_hash(resources)


def test_servers_given_both_as_resources_and_as_connected_servers_come_out_in_path_order() -> None:
    given = [server_resource("b", ()), file_resource("/w/AGENTS.md", "x")]
    snapshot = make_snapshot(given, (server_resource("c", ()), server_resource("a", ())))
    assert [r.id for r in snapshot.resources] == [
        "instruction_file:/w/AGENTS.md",
        "mcp_server:a",
        "mcp_server:b",
        "mcp_server:c",
    ]


def test_mcp_excluded_from_aggregate_hash() -> None:
    files = [file_resource("/w/AGENTS.md", "rules"), file_resource("/w/skills/a/SKILL.md", "s", Kind.SKILL)]
    config = Resource(Kind.MCP_CONFIG, "/w/.mcp.json", Scope.PROJECT, Status.OK, content_hash="ab" * 32)
    server = server_resource("srv", (Tool("t"),))
    assert aggregate_hash([*files, config, server]) == aggregate_hash(files)
    assert make_snapshot(files, (server,)).aggregate_hash == make_snapshot(files).aggregate_hash


def test_compute_aggregate_hash_deterministic_across_order() -> None:
    resources = [
        file_resource("/w/AGENTS.md", "a"),
        file_resource("/w/skills/x/SKILL.md", "x", Kind.SKILL),
        file_resource("/w/sub/AGENTS.md", "b", status=Status.OVERSIZE),
    ]
    assert aggregate_hash(resources) == aggregate_hash(list(reversed(resources)))
    assert aggregate_hash(resources) == aggregate_hash([resources[1], resources[2], resources[0]])


def test_compute_aggregate_hash_changes_on_content() -> None:
    base = [file_resource("/w/AGENTS.md", "a"), file_resource("/w/skills/x/SKILL.md", "x", Kind.SKILL)]
    edited = [file_resource("/w/AGENTS.md", "b"), base[1]]
    status_changed = [base[0]._replace(status=Status.EXCLUDED), base[1]]
    hashes = {aggregate_hash(base), aggregate_hash(edited), aggregate_hash(status_changed)}
    assert len(hashes) == 3


def test_aggregate_hash_changes_when_a_resource_is_added_or_moved() -> None:
    base = [file_resource("/w/AGENTS.md", "a")]
    added = [*base, file_resource("/w/sub/AGENTS.md", "a")]
    moved = [file_resource("/w/CLAUDE.md", "a")]
    assert len({aggregate_hash(base), aggregate_hash(added), aggregate_hash(moved)}) == 3


def test_aggregate_hash_uses_coders_netstring_encoding() -> None:
    skill = file_resource("/w/skills/x/SKILL.md", "body", Kind.SKILL, Status.OK)
    unread = Resource(Kind.INSTRUCTION_FILE, "/w/AGENTS.md", Scope.PROJECT, Status.UNREADABLE)
    expected = hashlib.sha256()
    for resource, raw_hash in ((unread, bytes(32)), (skill, hashlib.sha256(b"body").digest())):
        for text in (resource.id, str(resource.kind), resource.path):
            expected.update(f"{len(text.encode())}:{text}".encode())
        expected.update(raw_hash)
        expected.update(f"{len(str(resource.status))}:{resource.status}".encode())
        expected.update(b"\x00")
    assert aggregate_hash([skill, unread]) == expected.hexdigest()


def test_aggregate_hash_of_nothing_is_the_hash_of_no_bytes() -> None:
    assert aggregate_hash([]) == hashlib.sha256(b"").hexdigest()


def test_aggregate_hash_length_prefixes_count_utf8_bytes() -> None:
    resource = file_resource("/w/é/AGENTS.md", "x")
    expected = hashlib.sha256()
    for text in (resource.id, "instruction_file", resource.path):
        expected.update(str(len(text.encode("utf-8"))).encode() + b":" + text.encode("utf-8"))
    expected.update(hashlib.sha256(b"x").digest() + b"2:ok\x00")
    assert aggregate_hash([resource]) == expected.hexdigest()


_PATHS = st.text(alphabet="abc/é", min_size=1, max_size=6).map(lambda s: "/" + s)
# A missing hash is hashed as 32 zero bytes (Coder's zero [32]byte), so no real hash may be all zeros.
_HASHES = st.binary(min_size=32, max_size=32).map(bytes.hex).filter(lambda h: h != "0" * 64)


def _hashed(kind: Kind, path: str, scope: Scope, status: Status, content_hash: str) -> Resource:
    return Resource(kind, path, scope, status, content_hash=content_hash)


_RESOURCES = st.lists(
    st.builds(
        _hashed,
        kind=st.sampled_from([Kind.INSTRUCTION_FILE, Kind.SKILL]),
        path=_PATHS,
        scope=st.just(Scope.PROJECT),
        status=st.sampled_from(list(Status)),
        content_hash=st.one_of(st.just(""), _HASHES),
    ),
    min_size=1,
    max_size=8,
    unique_by=lambda r: r.id,
)


@given(resources=_RESOURCES, data=st.data())
def test_aggregate_hash_is_order_independent_and_sensitive_to_each_resource(
    resources: list[Resource], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(resources))
    assert aggregate_hash(shuffled) == aggregate_hash(resources)
    index = data.draw(st.integers(0, len(resources) - 1))
    target = resources[index]
    new_hash = data.draw(_HASHES.filter(lambda h: h != target.content_hash))
    new_status = data.draw(st.sampled_from([s for s in Status if s is not target.status]))
    for changed in (target._replace(content_hash=new_hash), target._replace(status=new_status)):
        altered = [*resources[:index], changed, *resources[index + 1 :]]
        assert aggregate_hash(altered) != aggregate_hash(resources)


def test_diff_reports_added_removed_and_changed_paths() -> None:
    keep = file_resource("/w/AGENTS.md", "same")
    edit = file_resource("/w/sub/AGENTS.md", "old")
    flip = file_resource("/w/skills/a/SKILL.md", "skill", Kind.SKILL)
    gone = file_resource("/w/gone/AGENTS.md", "bye")
    tools = server_resource("srv", (Tool("a"),))
    old = [keep, edit, flip, gone, tools]
    new = [
        keep,
        file_resource("/w/sub/AGENTS.md", "new"),
        flip._replace(status=Status.SHADOWED, content=None),
        file_resource("/w/new/AGENTS.md", "hi"),
        tools._replace(tools=(Tool("a"), Tool("b"))),
    ]
    result = diff(old, new)
    assert result.added == ("/w/new/AGENTS.md",)
    assert result.removed == ("/w/gone/AGENTS.md",)
    assert result.changed == ("/w/skills/a/SKILL.md", "/w/sub/AGENTS.md", "srv")
    assert not result.empty
    assert result.to_dict() == {
        "added": ["/w/new/AGENTS.md"],
        "removed": ["/w/gone/AGENTS.md"],
        "changed": ["/w/skills/a/SKILL.md", "/w/sub/AGENTS.md", "srv"],
    }


def test_diff_of_identical_inventories_is_empty() -> None:
    resources = [file_resource("/w/AGENTS.md", "x"), server_resource("srv", (Tool("t"),))]
    result = diff(resources, list(reversed(resources)))
    assert result.empty
    assert result.to_dict() == {"added": [], "removed": [], "changed": []}


def test_diff_tells_kinds_apart_at_the_same_path() -> None:
    as_file = file_resource("/w/x", "x")
    as_skill = file_resource("/w/x", "x", Kind.SKILL)
    result = diff([as_file], [as_skill])
    assert (result.added, result.removed, result.changed) == (("/w/x",), ("/w/x",), ())


def test_snapshot_round_trips_through_to_dict_and_from_dict() -> None:
    resources = [
        file_resource("/w/AGENTS.md", "rules\n")._replace(doc_order=0, description="rules"),
        file_resource("/w/skills/a/SKILL.md", "---\n", Kind.SKILL)._replace(name="a", description="does a"),
        file_resource("/w/skills/b/SKILL.md", "x", Kind.SKILL, Status.INVALID)._replace(error="bad", warnings=("w",)),
        Resource(
            Kind.MCP_CONFIG,
            "/src/.mcp.json",
            Scope.SOURCE,
            Status.OK,
            size_bytes=12,
            content_hash="ab" * 32,
            servers=("remote",),
            connect=False,
            source="/src",
        ),
        file_resource("/w/big/AGENTS.md", "x" * 50)._replace(doc_order=1),
    ]
    server = Resource(
        Kind.MCP_SERVER,
        "srv",
        Scope.PROJECT,
        Status.OK,
        name="srv",
        description="a server",
        tools=(Tool("search", "find things", {"type": "object", "properties": {"q": {"type": "string"}}}),),
    )
    snapshot = make_snapshot(resources, (server,), max_snapshot_bytes=40)
    assert snapshot.find("/w/big/AGENTS.md") is not None
    round_tripped = Snapshot.from_dict(snapshot.to_dict())
    assert round_tripped == snapshot
    assert round_tripped.to_json() == snapshot.to_json()


def test_end_to_end_count_cap_keeps_instruction_files_before_skills(tmp_path: Path, home: Path) -> None:
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "AGENTS.md": "rules",
            ".agents/skills/alpha/SKILL.md": skill_md("alpha"),
            ".agents/skills/beta/SKILL.md": skill_md("beta"),
            ".agents/skills/gamma/SKILL.md": skill_md("gamma"),
        },
    )
    result = scan_with(tmp_path, home, {"snapshot.max_resources": 2})
    statuses = {Path(r.path).relative_to(tmp_path).as_posix(): (r.status, r.error) for r in result.snapshot.resources}
    dropped = (Status.EXCLUDED, "dropped to fit 2-resource snapshot count cap")
    assert statuses == {
        "AGENTS.md": (Status.OK, None),
        ".agents/skills/alpha/SKILL.md": (Status.OK, None),
        ".agents/skills/beta/SKILL.md": dropped,
        ".agents/skills/gamma/SKILL.md": dropped,
    }
    assert result.snapshot.error is None


def test_end_to_end_byte_cap_excludes_what_does_not_fit(tmp_path: Path, home: Path) -> None:
    alpha, beta = skill_md("alpha"), skill_md("beta", body="A longer body that does not fit.\n")
    make_workspace(
        tmp_path,
        {
            ".git/": "",
            "AGENTS.md": "rules",
            ".agents/skills/alpha/SKILL.md": alpha,
            ".agents/skills/beta/SKILL.md": beta,
        },
    )
    limit = len("rules") + len(alpha) + 10
    result = scan_with(tmp_path, home, {"snapshot.max_snapshot_bytes": limit})
    snapshot = result.snapshot
    beta_resource = snapshot.find(str(tmp_path / ".agents/skills/beta/SKILL.md"))
    assert beta_resource is not None
    assert (beta_resource.status, beta_resource.error) == (
        Status.EXCLUDED,
        f"dropped to fit {limit}-byte aggregate cap",
    )
    assert beta_resource.content is None
    assert [r.status for r in snapshot.resources if r is not beta_resource] == [Status.OK, Status.OK]
    assert snapshot.payload_bytes == len("rules") + len(alpha)
    unlimited = scan_tree(tmp_path, home=home).snapshot
    assert unlimited.aggregate_hash != snapshot.aggregate_hash


def test_a_file_met_twice_is_one_resource_kept_as_loaded_first_with_the_other_way_said() -> None:
    shadowed = file_resource("/w/AGENTS.md", "rules")._replace(
        status=Status.SHADOWED, content=None, load=Load(LoadType.NOT_LOADED, reason="a CLAUDE.md is there")
    )
    imported = file_resource("/w/AGENTS.md", "rules")._replace(load=Load(LoadType.IMPORT, importer="/w/CLAUDE.md"))
    started = file_resource("/w/AGENTS.md", "rules")._replace(load=Load(LoadType.STARTUP))
    for order in ((shadowed, imported), (imported, shadowed)):
        [one] = build(
            version=1, work_dir="/w", project_root=None, profile="claude", resources=order, caps=caps()
        ).resources
        assert (one.status, one.load, one.content) == (Status.OK, imported.load, "rules")
        assert one.warnings == ("also looked at on its own: shadowed: a CLAUDE.md is there",)
    [one] = build(
        version=1, work_dir="/w", project_root=None, profile="copilot", resources=(imported, started), caps=caps()
    ).resources
    assert (one.load, one.warnings) == (started.load, ("also imported by /w/CLAUDE.md",))
    skill = file_resource("/w/AGENTS.md", "rules", kind=Kind.SKILL)  # another kind at the same path: its own id
    assert (
        len(
            build(
                version=1, work_dir="/w", project_root=None, profile="x", resources=(started, skill), caps=caps()
            ).resources
        )
        == 2
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_a_claude_md_importing_agents_md_gives_a_snapshot_the_control_plane_takes_under_every_profile(
    tmp_path: Path, home: Path, profile: str
) -> None:
    # the pattern Claude Code's own docs suggest; its AGENTS.md was listed twice (shadowed, and imported), and the
    # control plane refuses a push that repeats an id: that workspace never synced under `claude` and `copilot`
    git = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}
    work = make_workspace(
        tmp_path, {**git, "AGENTS.md": "Use tabs.\n", "CLAUDE.md": "@AGENTS.md\n", "GEMINI.md": "@AGENTS.md\n"}
    )
    snapshot = scan_tree(work, home=home, profile=profile).snapshot
    validated(PushRequest, {**snapshot.to_dict(), "initial": True, "agent": {}})
    assert len({r.id for r in snapshot.resources}) == len(snapshot.resources)
