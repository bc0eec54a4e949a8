"""We use what we build: this repository's own AGENTS.md is found, fits the caps, and audits clean."""

from __future__ import annotations

from pathlib import Path

from agentcontext.audit.report import audit
from agentcontext.resource import Kind, Status
from agentcontext.scan import scan_full
from agentcontext.testing import isolated_environ

ROOT = Path(__file__).resolve().parents[1]


def test_our_agents_md_is_found_whole_and_within_the_doc_budget(home: Path) -> None:
    result = scan_full(ROOT, environ=isolated_environ(home))
    path = str(ROOT / "AGENTS.md")
    ours = [r for r in result.snapshot.resources if r.kind is Kind.INSTRUCTION_FILE and r.path == path]
    assert [r.status for r in ours] == [Status.OK]
    assert 0 < ours[0].size_bytes < result.config.project_doc.max_bytes // 4
    assert "scripts/test" in result.project_doc().content


def test_audit_of_this_repository_has_no_warnings_or_errors(home: Path) -> None:
    report = audit(scan_full(ROOT, environ=isolated_environ(home)))
    assert [f for f in report.findings if f.severity != "info"] == []
