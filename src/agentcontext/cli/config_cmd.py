"""``agentcontext config show`` and ``config reference``: the effective settings, and every setting there is."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table

from agentcontext.cli.common import (
    ConfigOption,
    DirArgument,
    JsonOption,
    ProfileOption,
    configure,
    fitted,
    print_json,
    stdout,
)
from agentcontext.settings.config import env_name
from agentcontext.settings.reference import reference_markdown
from agentcontext.terminal import shown

app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True, rich_markup_mode="markdown")


@app.command("show")
def show(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Print every setting, its value, and where it came from.

    Sources, lowest precedence first: the profile's defaults, the repository's
    `agentcontext.toml` (only the keys a repository may set: the others are ignored and
    listed as warnings), your config file (`--config`, else
    `~/.config/agentcontext/config.toml`), Coder's `CODER_AGENT_EXP_*` variables,
    `AGENTCONTEXT_*` variables, then flags.
    """
    config = configure(work_dir, profile, config_file)
    data = config.to_dict()
    if as_json:
        files = {"project_file": config.project_file, "user_file": config.user_file}
        print_json({**files, "warnings": list(config.warnings), "settings": data})
        return
    console = stdout()
    console.print(f"project file: {shown(config.project_file or '(none)')}")
    console.print(f"your file:    {shown(config.user_file or '(none)')}")
    for warning in config.warnings:
        console.print(f"[yellow]warning:[/] {shown(warning)}")
    table = Table(header_style="bold")
    for column in ("setting", "value", "from", "variable"):
        table.add_column(column, overflow="fold")
    for key, entry in data.items():
        value = entry["value"]
        text = ", ".join(value) if isinstance(value, list) else str(value)
        table.add_row(key, shown(text), entry["from"], env_name(key) if key != "profile" else "AGENTCONTEXT_PROFILE")
    console.print(fitted(table, console, wide=("value", "from")))


@app.command("reference")
def reference() -> None:
    """Print every setting as Markdown: type, default, whether a repository may set it, variable, meaning.

    This is the reference part of `docs/configuration.md` (`scripts/docs` writes it there).
    """
    sys.stdout.write(reference_markdown())
