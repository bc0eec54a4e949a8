"""What ``agentcontext audit`` reports: findings with a severity and a stable code, and the report.

A finding names one thing in one file that deserves a look, at a line and column when
it has one (both 1-based; columns count code points). Messages say what and why in one
line and never carry a secret: MCP env and header values are named by key only.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    INFO = "info"  # inventory: what runs or is read, for the record
    WARNING = "warning"  # deserves a look: often fine, sometimes a trick
    ERROR = "error"  # hides text from a reviewer, commits a secret, or breaks a resource

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    path: str
    message: str
    line: int | None = None
    column: int | None = None

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.line or 0, self.column or 0, -self.severity.rank, self.code)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """Every finding of one audit, sorted by path, line and column."""

    dir: str
    project_root: str | None
    findings: tuple[Finding, ...]
    complete: bool = True  # False: the audit ran out of time before it looked at everything

    def counts(self) -> dict[str, int]:
        counts = {str(severity): 0 for severity in Severity}
        for finding in self.findings:
            counts[str(finding.severity)] += 1
        return counts

    def fails(self, level: Severity | None) -> bool:
        """Whether any finding is at or above ``level`` (never, when ``level`` is None)."""
        return level is not None and any(f.severity.rank >= level.rank for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dir": self.dir,
            "project_root": self.project_root,
            "findings": [f.to_dict() for f in self.findings],
            "counts": self.counts(),
            "complete": self.complete,
        }


def printable(text: str) -> str:
    """``text`` with control, format and private-use characters shown as ``\\uXXXX`` escapes."""
    out: list[str] = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"):
            point = ord(char)
            out.append(f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}")
        else:
            out.append(char)
    return "".join(out)
