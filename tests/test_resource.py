"""The resource value: immutable, compared and hashed by its fields, encoded and decoded by its one codec."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from agentcontext.resource import (
    Kind,
    Load,
    LoadType,
    McpApproval,
    Resource,
    Runs,
    RunsFile,
    Scope,
    Status,
    Tool,
    ToolChange,
    make,
)


def sample() -> Resource:
    return Resource(
        Kind.SKILL, "/repo/.agents/skills/a/SKILL.md", Scope.REPO, Status.OK, 12, "ab" * 32, "text", None,
        ("a warning",), "a", "does a", None, "/src", load=Load(LoadType.STARTUP),
    )  # fmt: skip


def test_the_fast_maker_builds_an_equal_resource() -> None:
    built = make(*(getattr(sample(), name) for name in Resource._fields))
    assert built == sample() and type(built) is Resource and hash(built) == hash(sample())
    assert make(Kind.SKILL, "/p", Scope.REPO, Status.OK, name="a") == Resource(
        Kind.SKILL, "/p", Scope.REPO, Status.OK, name="a"
    )


def test_a_resource_is_immutable() -> None:
    resource = sample()
    with pytest.raises(AttributeError):
        resource.name = "b"  # type: ignore[misc]


def test_a_resource_keeps_every_field_it_was_given_and_equals_its_copies() -> None:
    resource = sample()
    assert resource.path == "/repo/.agents/skills/a/SKILL.md" and resource.warnings == ("a warning",)
    assert resource.source == "/src" and resource.load == Load(LoadType.STARTUP) and resource.connect is True
    for twin in (resource._replace(), copy.deepcopy(resource), pickle.loads(pickle.dumps(resource))):
        assert twin == resource and hash(twin) == hash(resource) and type(twin) is Resource
    assert resource._replace(name="b") != resource


def test_a_resource_is_a_value_not_a_sequence() -> None:
    resource = sample()
    assert resource != tuple(resource) and not resource == tuple(resource)  # noqa: SIM201
    with pytest.raises(TypeError):
        sorted([resource, resource._replace(path="/other")])
    with pytest.raises(TypeError):
        assert resource < resource._replace(path="/other")


def every_field_set() -> list[Resource]:
    """A resource of each kind with every field it writes set to something other than its default."""
    runs = Runs(
        "stdio", "srv --x", "/usr/bin/srv", "/opt/srv", ("--x",), "/w", (("K", "V"),), "", (), 
        (RunsFile("/w/srv.py", "program", "cd" * 32, 3),), ("a note",),
    )  # fmt: skip
    approval = McpApproval(
        "changed", "/w/.mcp.json", "ef" * 32, "srv --x", (ToolChange("t", "changed", "-a\n+b"),), "01" * 32, runs, "d"
    )
    tool = Tool("t", "does t", {"type": "object"}, {"readOnlyHint": True})
    load = Load(LoadType.IMPORT, ("*.py",), "/w/CLAUDE.md", ("/w/CLAUDE.md",), "imported", "/w/child")
    return [
        Resource(
            Kind.INSTRUCTION_FILE, "/w/AGENTS.md", Scope.PROJECT, Status.TRUNCATED, 40, "ab" * 32, "rules", "cut",
            ("w1", "w2"), "AGENTS.md", "the rules", 3, "/src", load=load,
        ),
        Resource(
            Kind.SKILL, "/w/s/SKILL.md", Scope.REPO, Status.OK, 9, "cd" * 32, "body", None, ("w",), "s", "does s",
            source="/src", load=Load(LoadType.STARTUP),
        ),
        Resource(
            Kind.MCP_CONFIG, "/w/.mcp.json", Scope.PROJECT, Status.OK, 5, "ef" * 32, warnings=("w",),
            servers=("a", "b"), connect=False, source="/src",
        ),
        Resource(
            Kind.MCP_SERVER, "srv", Scope.PROJECT, Status.OK, error="e", name="srv", description="a server",
            tools=(tool,), approval=approval,
        ),
    ]  # fmt: skip


def test_the_codec_gives_back_each_field_it_writes() -> None:
    for resource in every_field_set():
        data = resource.to_dict()
        assert Resource.from_dict(data) == resource
        assert Resource.from_dict(json.loads(json.dumps(data))) == resource  # as JSON, the snapshot's and the push's


def test_the_codec_leaves_a_field_it_does_not_know_and_defaults_one_it_lacks() -> None:
    data = {**sample().to_dict(), "a_newer_field": {"x": 1}}
    assert Resource.from_dict(data) == sample()
    bare = Resource.from_dict({"kind": "skill", "path": "/p", "scope": "repo", "status": "ok"})
    assert bare == Resource(Kind.SKILL, "/p", Scope.REPO, Status.OK)
