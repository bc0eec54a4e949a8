"""One count of a snapshot's resources, the same on every surface (``scan``, ``up``, ``status``, the dashboard).

Resources are counted by status, every kind together; an MCP server that is not started
because it waits for the user's approval (its status ``disabled``) counts as ``pending``,
the word every surface uses for it, so a count before an approval and one after differ only
by what the approval changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from agentcontext.resource import Kind, Status

PENDING = "pending"


def shown_status(kind: str, status: str) -> str:
    """The status a summary shows for one resource."""
    return PENDING if kind == Kind.MCP_SERVER and status == Status.DISABLED else str(status)


def count_statuses(resources: Iterable[tuple[str, str]]) -> dict[str, int]:
    """``(kind, status)`` pairs counted by shown status, sorted by name."""
    return dict(sorted(Counter(shown_status(kind, status) for kind, status in resources).items()))


def summary_text(counts: dict[str, int]) -> str:
    """``3 ok, 1 pending, 1 shadowed``; ``none`` when there is nothing."""
    return ", ".join(f"{n} {name}" for name, n in counts.items()) or "none"
