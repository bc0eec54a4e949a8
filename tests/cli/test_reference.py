"""``docs/cli.md`` is generated from the CLI: every command, argument and option, as ``--help`` knows them."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from agentcontext.cli import app
from agentcontext.cli.reference import END, reference_markdown, splice

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_cli_page_is_the_reference_generated_from_the_cli() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert splice(page, app) == page, "docs/cli.md is stale: run scripts/docs"
    assert page.count(END) == 1


def test_every_option_of_every_command_is_on_the_page() -> None:
    page = reference_markdown(app)
    for path in (["scan"], ["agent"], ["server"], ["mcp"], ["skills", "prompt"], ["workspace-agents", "create"]):
        help_text = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300", "NO_COLOR": "1"}).stdout
        section = page.split(f"### `agentcontext {' '.join(path)}`", 1)[1].split("\n### ", 1)[0]
        flags = set(re.findall(r"^│\s+\*?\s*(--[a-z][a-z-]*)", help_text, re.MULTILINE)) - {"--help"}
        assert flags, help_text
        for flag in flags:
            assert f"`{flag}`" in section, f"{flag} of {' '.join(path)} is not in its section"


def test_a_new_option_appears_in_the_reference_with_its_default_and_help() -> None:
    extra = typer.Typer()

    @extra.command("probe")
    def probe(depth: int = typer.Option(3, "--depth", help="How deep to look.")) -> None:
        """Look somewhere.

        More about it."""

    @extra.command("other")
    def other() -> None:
        """Another."""

    page = reference_markdown(extra)
    assert "| [`agentcontext probe`](#agentcontext-probe) | Look somewhere. |" in page
    assert "    agentcontext probe [OPTIONS]\n" in page
    assert "| `--depth` | `3` | How deep to look. |" in page
