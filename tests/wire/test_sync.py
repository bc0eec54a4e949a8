"""The push contract's own checks, apart from HTTP (``tests/control/test_api.py`` has them over HTTP)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcontext.wire.sync import PushedResource

_TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=200)


@given(
    path=_TEXT.filter(bool),
    content=st.none() | _TEXT,
    error=st.none() | _TEXT,
    name=st.none() | _TEXT,
    description=st.none() | _TEXT,
    warnings=st.lists(_TEXT, max_size=4),
    servers=st.lists(_TEXT.filter(bool), max_size=4),
    doc_order=st.none() | st.integers(0, 2**63 - 1),
    size=st.integers(0, 2**63 - 1),
)
def test_a_resources_size_bound_is_never_below_its_json(
    path: str,
    content: str | None,
    error: str | None,
    name: str | None,
    description: str | None,
    warnings: list[str],
    servers: list[str],
    doc_order: int | None,
    size: int,
) -> None:
    """The caps are checked against a bound where it is within them: it must never be below the JSON."""
    resource = PushedResource.model_validate(
        {
            "id": f"instruction_file:{path}",
            "kind": "instruction_file",
            "path": path,
            "scope": "project",
            "status": "ok",
            "size_bytes": size,
            "content_hash": "a" * 64,
            "content": content,
            "error": error,
            "warnings": warnings,
            "name": name,
            "description": description,
            "doc_order": doc_order,
            "source": path,
            "servers": servers,
            "connect": False,
        }
    )
    bound = resource.json_bytes_at_most()
    assert bound is not None and bound >= resource.json_bytes()
    assert resource.json_bytes_within_cap() >= resource.json_bytes()
