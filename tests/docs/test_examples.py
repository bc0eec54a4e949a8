"""The docs doctest: every ``agentcontext`` command the README and ``docs/`` show is one the CLI has, and the
README's tour runs on an example repository doing what each line's comment says.

A page names commands in fenced blocks (``$ agentcontext scan``) and in running text
(``agentcontext doc --for PATH``); each is parsed against the Typer app: its command path must
exist and every flag it shows must be one of that command's, so a renamed command or flag fails
here before a reader meets it. Commands that serve (``server``, ``agent``, ``mcp``, ``up``) are
checked this way only: their behaviour has tests of their own (tests/cli, tests/local, tests/mcp).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from agentcontext.cli import app
from agentcontext.testing import make_workspace, skill_md

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCED = re.compile(r"```\w*\n(.*?)```", re.DOTALL)
INLINE = re.compile(r"`(agentcontext(?: [^`\n]*)?)`")
GENERATED = {"cli.md"}  # generated from the CLI itself (tests/cli/test_reference.py)


def examples() -> Iterator[tuple[str, str]]:
    """Every ``agentcontext`` command line of the pages, with the page it is on."""
    for page in PAGES:
        if page.name in GENERATED:
            continue
        text = page.read_text(encoding="utf-8")
        for block in FENCED.findall(text):
            for line in block.splitlines():
                line = line.strip().removeprefix("$ ")
                if line == "agentcontext" or line.startswith("agentcontext "):
                    yield page.name, line.split("  #", 1)[0].split(" # ", 1)[0].strip()
        for span in INLINE.findall(FENCED.sub("", text)):
            yield page.name, span


def words(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:  # an unbalanced quote in running text: the words still name the flags
        return line.split()


def problems(line: str, root: Any) -> list[str]:
    """What in ``line`` the CLI does not have (nothing: it is a command the CLI knows)."""
    found: list[str] = []
    for variant in _variants(words(line)[1:]):
        command, rest = root, variant
        while _is_group(command) and rest and rest[0] in command.commands:
            command, rest = command.commands[rest[0]], rest[1:]
        if _is_group(command) and rest and rest[0] in ("...", "…"):
            continue  # "chats ... --json": any of its commands
        if _is_group(command) and rest and not rest[0].startswith(("-", "[")) and _needs_name(command):
            found.append(f"no command {rest[0]!r} under {command.name!r}")
            continue
        known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help", "-h"}
        for word in rest:
            flag = word.strip("[]().,;:").split("=", 1)[0]
            if re.fullmatch(r"--?[A-Za-z][\w-]*", flag) and flag not in known:
                found.append(f"{command.name}: no option {flag}")
    return found


def _variants(tokens: list[str]) -> Iterator[list[str]]:
    """``workspace-agents create|rotate``: each alternative of the first word that has some."""
    for index, token in enumerate(tokens):
        if "|" in token and not token.startswith("-") and "[" not in token:
            for choice in token.split("|"):
                yield [*tokens[:index], choice, *tokens[index + 1 :]]
            return
    yield tokens


def _is_group(command: Any) -> bool:
    return hasattr(command, "commands")  # Typer vendors click: its groups are not ``click.Group``s


def _needs_name(group: Any) -> bool:
    return not group.invoke_without_command


def test_the_pages_show_commands_at_all() -> None:
    assert len(list(examples())) > 80


@pytest.mark.parametrize(("page", "line"), sorted(set(examples())))
def test_every_command_a_page_shows_is_one_the_cli_has(page: str, line: str) -> None:
    assert problems(line, typer.main.get_command(app)) == [], f"{page}: {line}"


def test_a_renamed_flag_or_command_would_be_caught() -> None:
    root = typer.main.get_command(app)
    assert problems("agentcontext scan --chek", root) == ["scan: no option --chek"]
    assert problems("agentcontext skils list", root) == ["no command 'skils' under 'agentcontext'"]
    assert problems("agentcontext workspace-agents create|rotate --json", root) == []


# --- the README's tour, run on an example repository -----------------------------------------------


def tour_repository(root: Path) -> Path:
    return make_workspace(
        root,
        {
            ".git/": "",
            "AGENTS.md": "# Rules\nUse pytest.\n",
            "CLAUDE.md": "Claude's own rules\n",
            "services/billing/AGENTS.md": "Billing: money is integer cents.\n",
            "services/billing/api.py": "",
            ".agents/skills/deploy/SKILL.md": skill_md("deploy", "Ship a release"),
        },
    )


def run(root: Path, home: Path, line: str) -> subprocess.CompletedProcess[str]:
    """``line`` as a shell runs it (globs expanded), with this interpreter's ``agentcontext``."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1", "PATH": path}
    return subprocess.run(["bash", "-c", line], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def readme_tour() -> list[str]:
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("```console\n", 1)[1].split("```", 1)[0]
    return [line.removeprefix("$ ").split("  #", 1)[0].strip() for line in block.splitlines() if "agentcontext" in line]


def test_the_readme_tour_runs_as_its_comments_say(tmp_path: Path, home: Path) -> None:
    root = tour_repository(tmp_path / "repo")
    lines = readme_tour()
    assert [line.split()[1] for line in lines] == ["scan", "explain", "doc", "agents", "doc", "skills", "audit"]
    done = {line: run(root, home, line) for line in lines}
    codes = [done[line].returncode for line in lines]
    assert codes == [0, 1, 0, 0, 0, 0, 0], {k: v.stderr for k, v in done.items()}  # explain: 1, the file is not used
    scan, explain, doc, agents, doc_for, validate, audit = (done[line].stdout for line in lines)
    assert "AGENTS.md" in scan and "shadowed" in scan  # every file looked at, with its status
    assert "CLAUDE.md" in explain and "AGENTS.md" in explain  # why CLAUDE.md is ignored: AGENTS.md wins
    assert doc.strip().startswith("# Rules")  # the exact doc
    assert all(agent in agents for agent in ("Codex", "Claude Code", "Gemini CLI", "Cursor", "Coder"))
    assert "Billing: money is integer cents." in doc_for  # the nested rules of services/billing
    assert "Valid skill:" in validate
    assert "audit of" in audit


def test_the_blind_spot_examples_of_agents_md_run_as_their_comments_say(tmp_path: Path, home: Path) -> None:
    root = tour_repository(tmp_path / "repo")
    named = json.loads(run(root, home, "agentcontext audit . --agents codex,claude,gemini --json").stdout)
    by_default = json.loads(run(root, home, "agentcontext audit . --json").stdout)
    none = json.loads(run(root, home, "agentcontext audit . --agents none --json").stdout)
    spots = [f["severity"] for f in named["findings"] if f["code"] == "agent-blind-spot"]
    assert spots and set(spots) == {"warning"}
    assert {f["severity"] for f in by_default["findings"] if f["code"] == "agent-blind-spot"} == {"info"}
    assert [f for f in none["findings"] if f["code"] == "agent-blind-spot"] == []
