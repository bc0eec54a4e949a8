"""``agentcontext audit``: what in the agent context deserves a human look, with exit codes for CI."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from enum import StrEnum
from itertools import groupby
from pathlib import Path

import typer
from rich.table import Table
from typer import BadParameter

from agentcontext.audit.findings import Finding, Report, Severity
from agentcontext.audit.report import audit as run_audit
from agentcontext.audit.skills import DEFAULT_SECONDS, Budget
from agentcontext.cli.common import (
    ConfigOption,
    DirArgument,
    JsonOption,
    ProfileOption,
    fitted,
    print_json,
    run_scan,
    shown_path,
    stderr,
    stdout,
)
from agentcontext.scan import ScanResult
from agentcontext.settings.profiles import PROFILES
from agentcontext.terminal import shown
from agentcontext.views.agents import AI_AGENTS
from agentcontext.workspace_mcp.trust import TrustStore

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
    time_limit: float = typer.Option(
        DEFAULT_SECONDS,
        "--time-limit",
        min=0.0,
        help="Seconds the audit may spend walking skill folders; when they run out it says so and exits 1.",
    ),
    agents: str | None = typer.Option(
        None,
        "--agents",
        help="Comma-separated agents (profiles) your team uses, compared for files some of them never load"
        " (agent-blind-spot); default: the `agents` setting, else every agent; `none` turns it off.",
    ),
    connect: bool = typer.Option(
        False,
        "--connect",
        help="Also start the MCP servers you approved (only those), list their tools and check them.",
    ),
) -> None:
    """Audit the agent context: hidden text, HTML comments, sizes, broad skills, MCP servers and secrets.

    Every finding has a severity (**error**, **warning**, **info**), a stable code, the file,
    the line and column where they apply, and a message. Secret values are never printed.
    Every SKILL.md below the skill folders is checked, also those past the scan's folder cap
    or depth, within `--time-limit`; MCP servers that would start without your approval are
    errors. `--connect` starts the servers you approved and checks their tools (hidden text,
    long descriptions, changes since approval). The agents your team uses (`--agents
    codex,claude,gemini`, else the `agents` setting, else every agent) are compared: a file of
    the repository that some of them load and others never do is an `agent-blind-spot`,
    naming who misses it and why.

    `--json` prints `{"dir", "project_root", "findings": [{"code", "severity", "path", "line",
    "column", "message"}], "counts", "complete"}`. Exits with 1 when a finding is at or above
    `--fail-on` (default `error`) or when the time ran out before everything was looked at
    (`complete: false`, whatever `--fail-on` says), 2 when the audit cannot run.

    Examples:

        agentcontext audit                     # this folder; exit 1 on an error finding
        agentcontext audit . --fail-on warning --json
    """
    result = run_scan(work_dir, profile, config_file)
    named = agents is not None or bool(result.config.agents)
    with stderr().status("Auditing: hidden text, skills, MCP servers …") if sys.stderr.isatty() else nullcontext():
        report = run_audit(result, budget=Budget(time_limit), agents=_agents(agents, result), named=named)
    if connect:
        report = _with_tools(report, result)
    if as_json:
        print_json(report.to_dict())
    else:
        _print(report, fail_on)
    if not report.complete or report.fails(None if fail_on is FailOn.NEVER else Severity(fail_on.value)):
        raise typer.Exit(1)


def _agents(option: str | None, result: ScanResult) -> tuple[str, ...]:
    """The agents to compare: the option's, else the setting's, else every agent we know."""
    if option is None:
        return result.config.agents or AI_AGENTS
    if option.strip().lower() == "none":
        return ()
    names = tuple(dict.fromkeys(name.strip() for name in option.split(",") if name.strip()))
    unknown = [name for name in names if name not in PROFILES]
    if unknown:
        raise BadParameter(
            f"unknown agent {', '.join(unknown)}: choose from {', '.join(PROFILES)}", param_hint="--agents"
        )
    return names


def _with_tools(report: Report, result: ScanResult) -> Report:
    """The report with the approved MCP servers' tool findings (``--connect``)."""
    import anyio

    from agentcontext.workspace_mcp.client.audit_tools import tool_findings

    async def run() -> list[Finding]:
        return await tool_findings(
            result.servers,
            result.config.mcp,
            work_dir=result.snapshot.work_dir,
            environ=os.environ,
            store=TrustStore.default(),
        )

    if sys.stderr.isatty():
        with stderr().status("Connecting to the approved MCP servers …"):
            found = anyio.run(run)
    else:
        found = anyio.run(run)
    findings = tuple(sorted((*report.findings, *found), key=lambda f: f.sort_key))
    return Report(report.dir, report.project_root, findings, report.complete)


def _print(report: Report, fail_on: FailOn) -> None:
    console = stdout()
    base = report.project_root or report.dir
    console.print(f"audit of [bold]{shown(report.dir)}[/] · project root {shown(report.project_root or '(none)')}")
    if not report.findings:
        console.print("No findings.")
        return
    table = Table(header_style="bold", expand=False)
    for column in ("file", "where", "severity", "code", "message"):
        table.add_column(column, overflow="fold", no_wrap=column == "severity")
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
                shown(shown_path(path, base)) if row == 0 else "",
                where,
                f"[{style}]{finding.severity}[/]",
                finding.code,
                shown(finding.message),
            )
    console.print(fitted(table, console, wide=("file", "message")))
    counts = report.counts()
    files = len({f.path for f in report.findings})
    errors, warnings, infos = counts["error"], counts["warning"], counts["info"]
    summary = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}, {infos} info"
    total = _count(len(report.findings), "finding")
    console.print(f"{total} in {_count(files, 'file')}: {summary} (failing on {fail_on})")
    if not report.complete:
        console.print("[red]The audit is incomplete:[/] it ran out of time (see audit-incomplete above).")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
