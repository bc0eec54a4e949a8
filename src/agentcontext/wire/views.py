"""Each agent's view on the wire: one definition for the workspace agent's answer and the control plane's relay.

The agent answers ``GET /api/v0/context/agents`` with :class:`AgentViewsBody` (one
:meth:`AgentView.to_dict` a profile), cut to ``max_bytes`` by :func:`bounded`: rows leave
the longest lists first, and ``omitted`` counts them, so a huge workspace gives a short
answer that says what it left out rather than a long one. The control plane reads the
agent's answer with the same models, so an agent cannot hand the dashboard more rows or
other shapes than these. No row carries file content.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

MAX_ROWS = 2000  # a list longer than this is no answer of ours (the snapshot holds at most 500 resources)
LISTS = ("loads", "not_loaded", "skills", "skills_not_offered")


class ViewRow(BaseModel):
    path: str
    scope: str
    status: str
    bytes: int
    load: dict[str, Any] | None = None
    reason: str | None = None


class ViewSkill(BaseModel):
    name: str | None
    scope: str
    path: str


class AgentViewBody(BaseModel):
    profile: str
    agent: str
    verified_version: str | None
    checked_against: str | None = Field(
        default=None, description="`binary`, `documentation` (no binary could be run), or null (our own profile)"
    )
    doc_bytes: int
    budget_bytes: int | None = Field(description="the doc budget; null: no budget")
    loads: list[ViewRow] = Field(max_length=MAX_ROWS, description="instruction files it loads, in order")
    not_loaded: list[ViewRow] = Field(max_length=MAX_ROWS, description="instruction files found and not loaded")
    skills: list[ViewSkill] = Field(max_length=MAX_ROWS, description="skills it offers")
    skills_not_offered: list[ViewRow] = Field(max_length=MAX_ROWS)
    omitted: dict[str, int] = Field(default_factory=dict, description="rows left out of each list to fit the cap")


class AgentViewsBody(BaseModel):
    work_dir: str
    version: int = Field(description="the agent's snapshot version the views were computed at")
    agents: list[AgentViewBody] = Field(max_length=16)


def bounded(data: dict[str, Any], max_bytes: int) -> bytes:
    """``data`` (an :class:`AgentViewsBody` as a dict) as JSON of at most ``max_bytes``, rows cut as needed."""
    body = _dumps(data)
    views: list[dict[str, Any]] = data["agents"]
    while len(body) > max_bytes:
        longest = max(((view, key) for view in views for key in LISTS), key=lambda vk: len(vk[0][vk[1]]))
        view, key = longest
        if not view[key]:
            raise ValueError(f"the views do not fit in {max_bytes} bytes even without rows")
        excess = len(body) - max_bytes
        while excess > 0 and view[key]:  # drop about enough from this list, then measure again
            excess -= len(_dumps(view[key].pop())) + 1
            view.setdefault("omitted", {})[key] = view.get("omitted", {}).get(key, 0) + 1
        body = _dumps(data)
    return body


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
