"""The benchmark workspace: 1,000 skills with 3 supporting files each, a 12-level AGENTS.md chain, 50 MCP servers.

With ``claude=True`` it is the same workspace as Claude Code would have it: the skills in
``.claude/skills`` (where Claude Code reads them; ``.agents/skills`` otherwise), and the root
also holds a CLAUDE.md importing 20 files and 30 rules in ``.claude/rules`` (5 of them
path-scoped).
"""

from __future__ import annotations

import json
from pathlib import Path

from agentcontext.testing import backdate

SKILLS = 1000
CHAIN_LEVELS = 12
MCP_SERVERS = 50
CLAUDE_IMPORTS = 20
CLAUDE_RULES = 30


def build(
    root: Path, *, skills: int = SKILLS, levels: int = CHAIN_LEVELS, servers: int = MCP_SERVERS, claude: bool = False
) -> Path:
    """Write the workspace under ``root``; returns the work dir (the bottom of the chain)."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    container = root / (".claude" if claude else ".agents") / "skills"
    for index in range(skills):
        name = f"skill-{index:04d}"
        folder = container / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "scripts").mkdir(exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Does task number {index} the way this team does it; "
            f"use when asked about area {index % 37}.\nlicense: MIT\n---\n\n# {name}\n\n"
            + "Follow these steps carefully.\n"
            * 40,
            encoding="utf-8",
        )
        (folder / "references" / "guide.md").write_text("reference\n" * 50, encoding="utf-8")
        (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n", encoding="utf-8")
        (folder / "template.txt").write_text("template\n", encoding="utf-8")
    work = root
    for level in range(levels):
        if level:
            work = work / f"level{level:02d}"
            work.mkdir(exist_ok=True)
        (work / "AGENTS.md").write_text(f"# Level {level}\n" + "Rule: keep it tidy.\n" * 30, encoding="utf-8")
    config = {"mcpServers": {f"server-{i:02d}": {"command": "mcp-server", "args": [str(i)]} for i in range(servers)}}
    (root / ".mcp.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    if claude:
        _claude_files(root)
    return work


def build_bare(root: Path, *, levels: int = CHAIN_LEVELS) -> Path:
    """The same folders as :func:`build` (the root marker and the chain), no file in any; returns the work dir."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    work = root
    for level in range(1, levels):
        work = work / f"level{level:02d}"
        work.mkdir(exist_ok=True)
    return work


def _claude_files(root: Path) -> None:
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    imports = "".join(f"- @docs/part-{i:02d}.md\n" for i in range(CLAUDE_IMPORTS))
    (root / "CLAUDE.md").write_text("# Project\n\n" + imports + "Keep it tidy.\n" * 20, encoding="utf-8")
    for i in range(CLAUDE_IMPORTS):
        (docs / f"part-{i:02d}.md").write_text(f"# Part {i}\n" + "Detail line.\n" * 30, encoding="utf-8")
    rules = root / ".claude" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    for i in range(CLAUDE_RULES):
        front = f"---\npaths: src/mod{i}/**/*.py\n---\n" if i % 6 == 0 else ""
        (rules / f"rule-{i:02d}.md").write_text(front + f"# Rule {i}\n" + "Do it this way.\n" * 15, encoding="utf-8")


def age(root: Path, seconds: float = 60.0) -> None:
    """Backdate every entry so rescans are outside the racy-clean window."""
    backdate(root, seconds)
