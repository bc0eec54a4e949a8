"""One count of a snapshot: every surface summarises resources with :mod:`agentcontext.snapshot`."""

from __future__ import annotations

from agentcontext.resource import Kind, Status
from agentcontext.snapshot import count_statuses, shown_status, summary_text

SNAPSHOT = [
    (Kind.INSTRUCTION_FILE, Status.OK),
    (Kind.INSTRUCTION_FILE, Status.SHADOWED),
    (Kind.SKILL, Status.OK),
    (Kind.MCP_CONFIG, Status.OK),
    (Kind.MCP_SERVER, Status.DISABLED),
]


def test_every_kind_is_counted_and_a_server_waiting_for_approval_counts_as_pending() -> None:
    counts = count_statuses(SNAPSHOT)
    assert counts == {"ok": 3, "pending": 1, "shadowed": 1}
    assert summary_text(counts) == "3 ok, 1 pending, 1 shadowed"


def test_an_approval_changes_only_what_it_approved_in_the_count() -> None:
    approved = [*SNAPSHOT[:-1], (Kind.MCP_SERVER, Status.OK)]
    assert count_statuses(approved) == {"ok": 4, "shadowed": 1}


def test_only_mcp_servers_are_pending_a_disabled_file_stays_disabled() -> None:
    assert shown_status(Kind.INSTRUCTION_FILE, Status.DISABLED) == "disabled"
    assert shown_status("mcp_server", "disabled") == "pending"
    assert summary_text({}) == "none"
