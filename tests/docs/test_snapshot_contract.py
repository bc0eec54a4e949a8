"""``docs/snapshot.md``'s JSON contract agrees with the model: its keys and every value list it names.

The page shows one resource with every key :meth:`Resource.to_dict` can write, and spells the
kinds, scopes, statuses and load types as ``a | b | c``: each list must be exactly the enum's
values, so adding a status, a scope or a load type without saying so on the page fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentcontext.resource import Kind, Load, LoadType, Resource, Scope, Status
from agentcontext.snapshot import Snapshot

PAGE = Path(__file__).resolve().parents[2] / "docs" / "snapshot.md"


def contract() -> dict[str, Any]:
    block = PAGE.read_text(encoding="utf-8").split("## JSON contract", 1)[1].split("```json\n", 1)[1]
    data: dict[str, Any] = json.loads(block.split("```", 1)[0])
    return data


def shown_resource() -> dict[str, Any]:
    (shown,) = contract()["resources"]
    assert isinstance(shown, dict)
    return shown


def choices(text: object) -> set[str]:
    return set(re.split(r"\s*\|\s*", str(text)))


def test_the_top_level_keys_are_the_snapshot_s() -> None:
    snapshot = Snapshot(1, "", "/w", None, "default", (), 0)
    assert set(contract()) == set(snapshot.to_dict())


def test_the_resource_shows_every_key_a_resource_can_have() -> None:
    shown = shown_resource()
    load = Load(LoadType.STARTUP)
    written: set[str] = set()
    for kind in Kind:
        resource = Resource(kind, "/w/x", Scope.PROJECT, Status.OK, content="x", load=load, source="/s")
        written |= set(resource.to_dict())
    in_the_text = {"tools", "approval", "source"}  # the kind-specific keys the page names under the block
    assert written - in_the_text <= set(shown)
    assert set(shown) <= written


def test_each_value_list_is_exactly_the_model_s() -> None:
    shown = shown_resource()
    assert choices(shown["kind"]) == {str(k) for k in Kind}
    assert choices(shown["scope"]) == {str(s) for s in Scope}
    assert choices(shown["status"]) == {str(s) for s in Status}
    assert choices(shown["load"]["type"]) == {str(t) for t in LoadType}
