"""The resource value: frozen, compared and hashed by its fields, built by a hand-written (faster) constructor."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status, make


def sample() -> Resource:
    return Resource(
        Kind.SKILL, "/repo/.agents/skills/a/SKILL.md", Scope.REPO, Status.OK, 12, "ab" * 32, "text", None,
        ("a warning",), "a", "does a", None, "/src", load=Load(LoadType.STARTUP),
    )  # fmt: skip


def test_the_constructor_takes_every_field_in_order_with_its_default() -> None:
    parameters = list(inspect.signature(Resource.__init__).parameters.values())[1:]
    fields = dataclasses.fields(Resource)
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert [p.default for p in parameters] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]


def test_the_fast_maker_takes_the_constructors_parameters_and_builds_an_equal_frozen_resource() -> None:
    parameters = list(inspect.signature(Resource.__init__).parameters.values())[1:]
    assert list(inspect.signature(make).parameters.values()) == parameters
    built = make(*(getattr(sample(), f.name) for f in dataclasses.fields(Resource)))
    assert built == sample() and type(built) is Resource and hash(built) == hash(sample())
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "b"  # type: ignore[misc]


def test_a_built_resource_is_frozen_and_an_exact_resource() -> None:
    resource = sample()
    assert type(resource) is Resource
    with pytest.raises(dataclasses.FrozenInstanceError):
        resource.name = "b"  # type: ignore[misc]


def test_a_resource_keeps_every_field_it_was_given_and_equals_its_copies() -> None:
    resource = sample()
    assert resource.path == "/repo/.agents/skills/a/SKILL.md" and resource.warnings == ("a warning",)
    assert resource.source == "/src" and resource.load == Load(LoadType.STARTUP) and resource.connect is True
    for twin in (dataclasses.replace(resource), copy.deepcopy(resource), pickle.loads(pickle.dumps(resource))):
        assert twin == resource and hash(twin) == hash(resource) and type(twin) is Resource
    assert dataclasses.replace(resource, name="b") != resource
    assert Resource.from_dict(resource.to_dict()) == resource
