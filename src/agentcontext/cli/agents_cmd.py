"""``agentcontext agents [DIR]``: every agent's own view of a work dir, side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from typer.core import TyperCommand

from agentcontext.cli.common import (
    ConfigOption,
    DirArgument,
    JsonOption,
    fitted,
    human_size,
    print_json,
    run_scan,
    shown_path,
)
from agentcontext.cli.common import stdout as console_out
from agentcontext.fs.paths import absolute
from agentcontext.resource import LoadType, Resource
from agentcontext.terminal import shown
from agentcontext.views.agents import AGENTS, DOCUMENTED, VERIFIED, VIEW_PROFILES, AgentView, why

# the workspace agents' commands once lived here; their old spelling works, with a note, for one release
_MOVED = ("create", "rotate", "show")
MOVED_TO = "workspace-agents"


class AgentsView(TyperCommand):
    """``agents [DIR]``: the AI agents' views, whose ``--help`` is its own; ``agents create|rotate`` (the
    workspace agents' old spelling) is handed to ``workspace-agents`` with a deprecation note."""

    def make_context(  # type: ignore[override]
        self, info_name: str | None, args: list[str], parent: typer.Context | None = None, **extra: Any
    ) -> typer.Context:
        if args and args[0] in _MOVED[:2] and parent is not None:
            moved = parent.command.get_command(parent, MOVED_TO)  # type: ignore[attr-defined]
            note = f"`agents {args[0]}` is now `{MOVED_TO} {args[0]}`; the old spelling goes in the next release"
            typer.echo(f"agentcontext: {note}", err=True)
            context: typer.Context = moved.make_context(MOVED_TO, args, parent=parent, **extra)
            return context
        if args and args[0] == "show":  # ``agents show DIR``, the view's old spelling
            args = args[1:]
        return super().make_context(info_name, args, parent=parent, **extra)  # type: ignore[return-value]


def show(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    path: Path | None = typer.Option(
        None, "--path", help="Also say what loads when the agent opens this file (relative to DIR or absolute)."
    ),
    config_file: Path | None = ConfigOption,
) -> None:
    """What each agent (Codex, Claude Code, Gemini CLI, OpenCode, Copilot CLI, Cursor, Coder, our default) loads here.

    One scan per profile: the instruction files loaded (in order, with bytes against the
    agent's doc budget), those not loaded with the reason, the skills offered and those
    not. `--json` prints `{"work_dir", "path", "agents": [...]}`.

    The workspace agents (`agentcontext agent`) and their tokens are `workspace-agents create|rotate`.
    """
    target = None if path is None else absolute(path if path.is_absolute() else work_dir / path)
    views: list[tuple[AgentView, str]] = []  # each view, and the folder its paths are shown relative to
    for profile in VIEW_PROFILES:
        result = run_scan(work_dir, profile, config_file)
        view = AgentView.of_scan(profile, result, target)
        views.append((view, result.snapshot.project_root or result.snapshot.work_dir))
    if as_json:
        print_json({"work_dir": result.snapshot.work_dir, "path": target, "agents": [v.to_dict() for v, _ in views]})
        return
    for view, base in views:
        _print(view, target, base)


def _print(view: AgentView, target: str | None, base: str) -> None:
    console = console_out()
    version = VERIFIED.get(view.profile)
    title = AGENTS[view.profile] + (f" {version} (verified)" if version else "")
    if view.profile in DOCUMENTED:
        title += " (documented, not checked against the binary)"
    budget = "no budget" if view.budget is None else f"budget {human_size(view.budget)}"
    console.print(f"\n[bold]{title}[/] · profile {view.profile} · doc {human_size(view.doc_bytes())}, {budget}")
    table = Table(header_style="bold", expand=False)
    for column in ("", "path", "scope", "how / why"):
        table.add_column(column, overflow="fold", no_wrap=not column)  # loads, later, not...
    for resource in view.loads():
        table.add_row("[green]loads[/]", *_cells(resource, base))
    for resource in view.not_loaded():
        later = resource.load is not None and resource.load.type in _LATER  # not at startup, yet it can load
        table.add_row("[cyan]later[/]" if later else "[yellow]not[/]", *_cells(resource, base))
    if view.opened is not None:
        for resource in view.opened:
            table.add_row("[cyan]opened[/]", *_cells(resource, base))
        for resource in view.started_there:
            table.add_row("[cyan]there[/]", *_cells(resource, base))
    if table.row_count:
        console.print(fitted(table, console, wide=("path", "how / why")))
    skills: list[Any] = [s.name for s in view.skills]
    console.print(f"skills offered ({len(skills)}): {shown(', '.join(skills)) if skills else 'none'}")
    for resource in view.skills_not_offered():
        reason = why(resource) or resource.status
        console.print(f"  [yellow]not offered[/] {shown(shown_path(resource.path, base))}: {shown(reason)}")
    if target is not None and not view.opened:
        there = (
            f"; a session started in its folder also loads the {len(view.started_there)} marked there"
            if view.started_there
            else ""
        )
        console.print(f"opening {shown(target)} loads nothing more in the session{there}")


_LATER = (LoadType.ON_DEMAND, LoadType.PATH_SCOPED, LoadType.AGENT_REQUESTED, LoadType.MANUAL)


def _cells(resource: Resource, base: str) -> tuple[str, str, str]:
    return shown(shown_path(resource.path, base)), str(resource.scope), shown(why(resource) or "")
