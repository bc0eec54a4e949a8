"""``agentcontext audit``: what in the agent context deserves a human look, with exit codes for CI."""

from __future__ import annotations

from enum import StrEnum
from itertools import groupby
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from agentcontext.audit import audit as run_audit
from agentcontext.cli.common import (
    ConfigOption,
    DirArgument,
    JsonOption,
    ProfileOption,
    print_json,
    run_scan,
    shown_path,
    stdout,
)
from agentcontext.findings import Report, Severity, printable

SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


class FailOn(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"


def audit(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
    fail_on: FailOn = typer.Option(
        FailOn.ERROR, "--fail-on", help="Exit with 1 when a finding is at or above this severity.", case_sensitive=False
    ),
) -> None:
    """Audit the agent context: hidden text, HTML comments, sizes, broad skills, MCP servers and secrets.

    Every finding has a severity (**error**, **warning**, **info**), a stable code, the file,
    the line and column where they apply, and a message. Secret values are never printed.

    `--json` prints `{"dir", "project_root", "findings": [{"code", "severity", "path", "line",
    "column", "message"}], "counts"}`. Exits with 1 when a finding is at or above `--fail-on`
    (default `error`), 2 when the audit cannot run.
    """
    result = run_scan(work_dir, profile, config_file)
    report = run_audit(result)
    if as_json:
        print_json(report.to_dict())
    else:
        _print(report, fail_on)
    if report.fails(None if fail_on is FailOn.NEVER else Severity(fail_on.value)):
        raise typer.Exit(1)


def _print(report: Report, fail_on: FailOn) -> None:
    console = stdout()
    base = report.project_root or report.dir
    console.print(f"audit of [bold]{escape(printable(report.dir))}[/] · project root {report.project_root or '(none)'}")
    if not report.findings:
        console.print("No findings.")
        return
    table = Table(header_style="bold", expand=False)
    for column in ("file", "where", "severity", "code", "message"):
        table.add_column(column, overflow="fold", no_wrap=column in ("where", "severity", "code"))
    for index, (path, group) in enumerate(groupby(report.findings, key=lambda f: f.path)):
        if index:
            table.add_section()
        for row, finding in enumerate(group):
            where = (
                ""
                if finding.line is None
                else f"{finding.line}:{finding.column}"
                if finding.column
                else str(finding.line)
            )
            style = SEVERITY_STYLE[finding.severity]
            table.add_row(
                escape(printable(shown_path(path, base))) if row == 0 else "",
                where,
                f"[{style}]{finding.severity}[/]",
                finding.code,
                escape(finding.message),
            )
    console.print(table)
    counts = report.counts()
    files = len({f.path for f in report.findings})
    errors, warnings, infos = counts["error"], counts["warning"], counts["info"]
    summary = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}, {infos} info"
    total = _count(len(report.findings), "finding")
    console.print(f"{total} in {_count(files, 'file')}: {summary} (failing on {fail_on})")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
