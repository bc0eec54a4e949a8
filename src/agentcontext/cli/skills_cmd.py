"""``agentcontext skills list|validate|prompt``: the skills an agent is offered, linted and rendered."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

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
    print_json,
    run_scan,
    shown_path,
    stdout,
    validation_note,
)
from agentcontext.peers.claude.skills import claude_skill_lines
from agentcontext.peers.coder.render import IndexEntry, available_skills
from agentcontext.peers.codex.render import Budget, codex_skills_block
from agentcontext.peers.copilot.skills import copilot_skills_xml
from agentcontext.peers.gemini.skills import gemini_skills_xml
from agentcontext.peers.opencode.skills import opencode_skills_xml
from agentcontext.resource import Kind, Status
from agentcontext.scan import skill_roots
from agentcontext.skills.validation import Report, validate_path
from agentcontext.terminal import plain, plain_lines, shown
from agentcontext.views.render import CatalogEntry, XmlSkill, agent_skills_xml, skill_catalog

app = typer.Typer(
    help="List the skills an agent is offered, lint skill folders, render the skills prompt.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


class Mode(StrEnum):
    spec = "spec"
    lenient = "lenient"
    codex = "codex"
    coder = "coder"
    claude = "claude"
    gemini = "gemini"
    opencode = "opencode"
    copilot = "copilot"


class Format(StrEnum):
    coder = "coder"
    codex = "codex"
    claude = "claude"
    gemini = "gemini"
    opencode = "opencode"
    copilot = "copilot"
    xml = "xml"
    catalog = "catalog"


@app.command("list")
def list_skills(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Every skill found, offered or not, with the reason when it is not offered.

    Skills are checked with the profile's rules (`skills.validation`: `lenient` by default, the
    agent's own under `codex`, `claude`, `gemini`, `coder`), named under the table; `skills
    validate` checks with `spec` unless told otherwise.
    """
    result = run_scan(work_dir, profile, config_file)
    skills = result.snapshot.of_kind(Kind.SKILL)
    if as_json:
        print_json([r.to_dict() | {"content": None} for r in skills])
        return
    console = stdout()
    if not skills:
        console.print("No skills found. Searched:")
        for container in result.layout.skill_containers:
            console.print(f"  {shown(container.path)} ({container.scope})")
        return
    table = Table(header_style="bold")
    for column in ("name", "scope", "status", "description or reason", "path"):
        table.add_column(column, overflow="fold", no_wrap=column == "status")
    base = result.snapshot.project_root or result.snapshot.work_dir
    for skill in skills:
        style = STATUS_STYLE.get(str(skill.status), "")
        detail = skill.description if skill.status is Status.OK else skill.error
        table.add_row(
            shown(skill.name or f"({os.path.basename(os.path.dirname(skill.path))})"),
            str(skill.scope),
            f"[{style}]{skill.status}[/]",
            shown(detail or ""),
            shown(shown_path(skill.path, base)),
        )
    console.print(fitted(table, console, wide=("description or reason", "path")))
    console.print(validation_note(result.config))


@app.command("validate")
def validate(
    paths: list[Path] = typer.Argument(..., help="Skill folders (or their SKILL.md files) to check."),
    as_json: bool = JsonOption,
    validation: Mode = typer.Option(
        Mode.spec,
        "--validation",
        help="Rules: spec (skills-ref), lenient, codex, coder, claude, gemini, opencode or copilot.",
    ),
) -> None:
    """Lint skill folders, for CI. Prints every error of every skill; exits 1 when any has one.

    The default `spec` mode applies the Agent Skills specification exactly as the
    `skills-ref` validator does, with its messages (`skills list` and `scan` use the profile's
    `skills.validation` instead: `lenient` by default). The rules used are named on stderr.
    `--json` prints a list of `{"path", "valid", "errors", "warnings", "validation"}`.

    Examples:

        agentcontext skills validate .agents/skills/*
        agentcontext skills validate my-skill --validation claude --json
    """
    reports = [validate_path(p, validation.value) for p in paths]
    if as_json:
        print_json([r.to_dict() | {"validation": validation.value} for r in reports])
    else:
        for report in reports:
            _print_report(report)
        typer.echo(f"(checked with the {validation.value} rules: --validation chooses)", err=True)
    if not all(r.valid for r in reports):
        raise typer.Exit(1)


def _print_report(report: Report) -> None:
    if report.valid:
        typer.echo(f"Valid skill: {plain(report.path)}")
    else:
        typer.echo(f"Validation failed for {plain(report.path)}:", err=True)
        for error in report.errors:
            typer.echo(f"  - {plain_lines(error, '    ')}", err=True)
    for warning in report.warnings:
        typer.echo(f"  ! {plain_lines(warning, '    ')}", err=True)


@app.command("prompt")
def prompt(
    work_dir: Path = DirArgument,
    output: Format = typer.Option(
        Format.catalog, "--format", "-f", help="coder, codex, claude, gemini, opencode, copilot, xml or catalog."
    ),
    context_window: int | None = typer.Option(
        None,
        "--context-window",
        min=1,
        help="codex format: budget 2% of this many tokens (default 8,000 characters).",
    ),
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Render the offered skills as a model would see them.

    **coder**: Coder's `<available-skills>` block. **codex**: Codex's `## Skills` section,
    budgeted, with its skill roots table. **claude**: Claude Code's `- name: description`
    lines (its built-in skills aside). **gemini**: Gemini CLI's `<available_skills>` block (its
    built-in skills aside). **opencode**: OpenCode's `<available_skills>` block (its built-in
    `customize-opencode` aside). **copilot**: GitHub Copilot CLI's `<available_skills>` block (its built-in
    skills aside). **xml**: the Agent Skills `<available_skills>` XML of `skills-ref to-prompt`.
    **catalog**: the `## Skills` lines of our MCP server's instructions.
    """
    result = run_scan(work_dir, profile, config_file)
    offered = [r for r in result.snapshot.of_kind(Kind.SKILL) if r.status is Status.OK and r.name]
    text = ""
    if output is Format.coder:
        text = available_skills([IndexEntry(r.name or "", r.description or "") for r in offered])
    elif output is Format.codex:
        roots = skill_roots(result)
        text, warning = codex_skills_block(offered, roots, Budget.for_window(context_window))
        if warning:
            typer.echo(f"warning: {plain(warning)}", err=True)
    elif output is Format.claude:
        text = "\n".join(claude_skill_lines(offered, [path for path, _ in skill_roots(result)]))
    elif output is Format.gemini:
        found = result.snapshot.of_kind(Kind.SKILL)  # a shadowed copy says where its name is listed
        text = gemini_skills_xml(found, [path for path, _ in skill_roots(result)])
    elif output is Format.opencode:
        text = opencode_skills_xml(offered)
    elif output is Format.copilot:
        layout = result.layout
        found_in = [path for path, _ in skill_roots(result)]
        text = copilot_skills_xml(offered, found_in, layout.work_dir, layout.doc_boundary, result.config.home)
    elif output is Format.xml:
        text = agent_skills_xml([XmlSkill(r.name or "", r.description or "", r.path) for r in offered])
    else:
        text = skill_catalog([CatalogEntry(r.name or "", str(r.scope), r.description or "") for r in offered])
    if text:
        echo_exact(text)
    else:
        typer.echo("No skills to offer.", err=True)
