"""``agentcontext config show``: the effective settings and where each came from."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from agentcontext.cli.common import ConfigOption, DirArgument, JsonOption, ProfileOption, configure, print_json, stdout
from agentcontext.config import env_name

app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True, rich_markup_mode="markdown")


@app.command("show")
def show(
    work_dir: Path = DirArgument,
    as_json: bool = JsonOption,
    profile: str | None = ProfileOption,
    config_file: Path | None = ConfigOption,
) -> None:
    """Print every setting, its value, and where it came from.

    Sources, lowest precedence first: the profile's defaults, the config file
    (`--config`, else `agentcontext.toml` at the project root, else
    `~/.config/agentcontext/config.toml`), Coder's `CODER_AGENT_EXP_*` variables,
    `AGENTCONTEXT_*` variables, then flags.
    """
    config = configure(work_dir, profile, config_file)
    data = config.to_dict()
    if as_json:
        print_json({"config_file": config.config_file, "settings": data})
        return
    console = stdout()
    console.print(f"config file: {config.config_file or '(none)'}")
    table = Table(header_style="bold")
    for column in ("setting", "value", "from", "variable"):
        table.add_column(column, overflow="fold")
    for key, entry in data.items():
        value = entry["value"]
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        table.add_row(key, shown, entry["from"], env_name(key) if key != "profile" else "AGENTCONTEXT_PROFILE")
    console.print(table)
