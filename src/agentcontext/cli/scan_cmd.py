"""``agentcontext scan``, ``explain`` and ``doc``: what an agent would be given, and why."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from agentcontext.cli.common import (
    STATUS_STYLE,
    ConfigOption,
    DirArgument,
    JsonOption,
    ProfileOption,
    echo_exact,
    fitted,
    human_size,
    lookup,
    print_json,
    run_scan,
    shown_path,
    stderr,
    stdout,
    validation_note,
)
from agentcontext.fs.files import is_within
from agentcontext.fs.paths import absolute
from agentcontext.instructions.applied import Applicable, text
from agentcontext.instructions.explain import applies, explain
from agentcontext.resource import Kind, Resource, Status
from agentcontext.scan import ScanResult
from agentcontext.snapshot import count_statuses, summary_text
from agentcontext.terminal import shown
from agentcontext.views.agents import why


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
    app.command("explain")(explain_cmd)
    app.command("doc")(doc)


def scan(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
    check: bool = typer.Option(
        False,
        "--check",
        help="Exit with 1 when a resource needs fixing: truncated, oversize, invalid, unreadable or excluded (for CI).",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="--check that also fails on shadowed and disabled resources: anything not ok."
    ),
) -> None:
    """List every file the engine looked at, with its status and the reason.

    Statuses: **ok** (used), **truncated** (cut by the doc budget), **shadowed** (another
    file wins), **oversize** (over 64 KiB), **invalid**, **unreadable**, **excluded** (over a
    snapshot cap), **disabled** (turned off by configuration).

    `--json` prints the snapshot: `version`, `aggregate_hash`, `work_dir`, `project_root`,
    `profile`, `payload_bytes`, `error` and `resources`. Keys of the repository's
    `agentcontext.toml` that were ignored are named on stderr (and by `config show --json`).

    Examples:

        agentcontext scan                      # this folder, the default profile
        agentcontext scan ~/src/app -p claude --json
        agentcontext scan --check              # in CI: exit 1 when a file needs fixing
    """
    result = run_scan(work_dir, profile, config_file)
    snapshot = result.snapshot
    if as_json:
        print_json(snapshot.to_dict())
    else:
        _print_table(result)
    for warning in result.config.warnings:
        stderr().print(f"[yellow]config:[/] {shown(warning)}")
    if check or strict:  # --strict is a stricter --check: given alone it still checks
        _check(snapshot.resources, strict=strict)


def _check(resources: Sequence[Resource], *, strict: bool) -> None:
    """Exit 1, naming each resource that fails and why, when one needs fixing (any not ok when ``strict``)."""
    failing = [r for r in resources if (r.status is not Status.OK if strict else r.status.needs_fixing)]
    for resource in failing:
        why = f": {shown(resource.error)}" if resource.error else ""
        stderr().print(f"check: {shown(resource.path)} is {resource.status}{why}")
    if failing:
        raise typer.Exit(1)


def _print_table(result: ScanResult) -> None:
    snapshot = result.snapshot
    console = stdout()
    base = snapshot.project_root or snapshot.work_dir
    table = Table(show_lines=False, header_style="bold", expand=False)
    for column in ("kind", "path", "scope", "status", "size", "reason"):
        table.add_column(column, overflow="fold", no_wrap=column == "status")
    for resource in snapshot.resources:
        reason = why(resource) or ""  # the error, else how it loads (imported, path-scoped, on demand...)
        if resource.name and resource.kind == "skill":
            reason = f"{resource.name}: {reason}" if reason else resource.name
        style = STATUS_STYLE.get(str(resource.status), "")
        table.add_row(
            str(resource.kind),
            shown(shown_path(resource.path, base)),
            str(resource.scope),
            f"[{style}]{resource.status}[/]",
            human_size(resource.size_bytes),
            shown(reason),
        )
    console.print(
        f"work dir [bold]{shown(snapshot.work_dir)}[/] · project root {shown(snapshot.project_root or '(none)')} "
        f"· profile {snapshot.profile}"
    )
    if snapshot.resources:
        console.print(fitted(table, console, wide=("path", "reason")))
    else:
        console.print("No instruction files, skills or MCP configs found.")
    summary = summary_text(count_statuses((r.kind, r.status) for r in snapshot.resources))
    cap = result.config.snapshot.max_snapshot_bytes
    console.print(
        f"{len(snapshot.resources)} resources ({summary}); "
        f"payload {human_size(snapshot.payload_bytes)} of {human_size(cap)}; hash {snapshot.aggregate_hash[:12]}"
    )
    if snapshot.of_kind(Kind.SKILL):
        console.print(validation_note(result.config))
    warnings = [(r, w) for r in snapshot.resources for w in r.warnings]
    if warnings:
        console.print("[bold]warnings[/]")
        for resource, warning in warnings:
            console.print(f"  [yellow]![/] {shown(shown_path(resource.path, base))}: {shown(warning)}")
    if snapshot.error:
        console.print(f"[red]snapshot error:[/] {shown(snapshot.error)}")


def explain_cmd(
    path: Path = typer.Argument(..., help="The file or folder to explain (an AGENTS.md, a skill, a source file...)."),
    work_dir: Path = typer.Option(Path("."), "--work-dir", "-w", help="Where the agent runs (default: here)."),
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
    as_json: bool = JsonOption,
) -> None:
    """Explain what the scan does with PATH, and why: "why is my CLAUDE.md ignored?".

    For a path inside the work dir it also lists what applies when the agent works on
    PATH: the startup files, and the nested instruction files and matching rules it gets
    on demand. Exits with 0 when PATH is used (or, for a source file or folder, when the
    lookup worked), 1 when it is not.

    Examples:

        agentcontext explain CLAUDE.md -p codex
        agentcontext explain src/api/handler.py   # what applies when the agent works there
    """
    result = run_scan(work_dir, profile, config_file)
    target = absolute(path)
    inside = any(is_within(target, root) for root in (result.layout.work_dir, *result.layout.allowed_roots))
    answer = lookup(result, [target]) if is_within(target, result.layout.work_dir) else None
    found = explain(str(path), result, answer)
    if as_json:
        print_json(
            {
                "path": found.path,
                "used": found.used,
                "summary": found.summary,
                "details": list(found.details),
                "resource": found.resource.to_dict() if found.resource else None,
                "applies": _applies_json(answer),
            }
        )
    else:
        console = stdout()
        console.print(f"[bold]{shown(found.path)}[/] {shown(found.summary)}")
        for line in found.details:
            console.print(f"  {shown(line)}")
        if answer is not None and (answer.files or answer.startup or answer.refused):
            console.print(f"when the agent works on {shown(shown_path(target, result.snapshot.work_dir))}:")
            for line in applies(answer):
                console.print(f"  {shown(line)}")
    code_path = found.resource is None and answer is not None and not answer.refused and os.path.lexists(target)
    if not found.used and not (code_path and inside):
        raise typer.Exit(1)


def _applies_json(answer: Applicable | None) -> dict[str, Any] | None:
    if answer is None:
        return None
    data = answer.to_dict()
    for group in ("files", "excluded", "not_loaded"):
        for row in data[group]:
            row.pop("content", None)
    return data


def doc(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
    wrap: bool = typer.Option(
        False,
        "--wrap",
        help="Wrap it the way the agent sends it: Codex's `# AGENTS.md instructions for <cwd>`, "
        "or with `-p claude` Claude Code's `<system-reminder>` blocks.",
    ),
    for_paths: list[str] = typer.Option(
        [],
        "--for",
        help="Also what the agent gets when it works on this file or folder (relative to DIR; repeat it): "
        "nested instruction files and the rules whose globs match.",
    ),
) -> None:
    """Print the exact project doc an agent gets: home instructions, `--- project-doc ---`, then the chain.

    With `-p claude`: one `Contents of <path> (<kind>):` section per file Claude Code loads
    at startup. `--json` prints `{"files": [{"path", "truncated"}], "content"}`.

    With `--for PATH`, what working on PATH adds follows the doc (`--json`: under `"for"`,
    each file with its `load`, `reason`, `bytes` and `content`): with `-p claude --wrap`,
    the blocks Claude Code sends after reading PATH, byte for byte.

    Examples:

        agentcontext doc -p codex --wrap        # the text Codex would be given
        agentcontext doc --for src/api/handler.py
    """
    result = run_scan(work_dir, profile, config_file)
    project_doc = result.project_doc()
    answer = lookup(result, [str(Path(result.snapshot.work_dir) / p) for p in for_paths]) if for_paths else None
    if as_json:
        data = project_doc.to_dict()
        if answer is not None:
            data["for"] = answer.to_dict()
        print_json(data)
        return
    text_out = result.peer.wrap(project_doc, result.snapshot.work_dir) if wrap else project_doc.content
    if project_doc.empty:
        typer.echo("No AGENTS.md found between the project root and the working directory.", err=True)
    parts = [text_out] if text_out else []
    if answer is not None:
        framed = result.peer.wrap_later(answer) if wrap else None
        if framed is not None:
            parts += framed
        else:
            added = text(answer, sanitized=result.config.project_doc.sanitize)
            parts.append(added or f"(nothing more applies to {', '.join(for_paths)})")
        for refused in answer.refused:
            stderr().print(f"[yellow]refused:[/] {shown(refused.path)}: {shown(refused.reason)}")
    if parts:
        echo_exact("\n\n".join(parts))
