"""The benchmark workspace: 1,000 skills with 3 supporting files each, a 12-level AGENTS.md chain, 50 MCP servers.

With ``claude=True`` it is the same workspace as Claude Code would have it: the skills in
``.claude/skills`` (where Claude Code reads them; ``.agents/skills`` otherwise), and the root
also holds a CLAUDE.md importing 20 files and 30 rules in ``.claude/rules`` (5 of them
path-scoped).

With ``real=`` (:func:`real_skills`) the SKILL.md files are real ones, taken in turn from
folders of published skills, each in a folder of its own whose name is set as its ``name``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from agentcontext.testing import backdate

SKILLS = 1000
CHAIN_LEVELS = 12
MCP_SERVERS = 50
CLAUDE_IMPORTS = 20
CLAUDE_RULES = 30


def build(
    root: Path,
    *,
    skills: int = SKILLS,
    levels: int = CHAIN_LEVELS,
    servers: int = MCP_SERVERS,
    claude: bool = False,
    real: Sequence[tuple[str, str]] = (),
    container: str | None = None,
) -> Path:
    """Write the workspace under ``root``; returns the work dir (the bottom of the chain).

    ``real``: (folder name, SKILL.md text) pairs taken in turn for the skills; ``container``: where
    the skills go, relative to ``root`` (``.claude/skills`` with ``claude``, else ``.agents/skills``).
    """
    for part in ("objects", "refs"):  # a .git that git takes for a repository (Copilot CLI's root)
        (root / ".git" / part).mkdir(parents=True, exist_ok=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    skills_dir = root / (container or (".claude/skills" if claude else ".agents/skills"))
    for name, text in _skill_files(skills, real):
        folder = skills_dir / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "scripts").mkdir(exist_ok=True)
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
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


# where each profile's agent reads a workspace's skills (the others: .agents/skills), and the profiles scanned from
# the root (Coder reads each root's top level only, Gemini CLI and Cursor the work dir's skills only)
SKILLS_AT = {"claude": ".claude/skills", "cursor": ".cursor/skills"}
FROM_ROOT = ("coder", "gemini", "cursor")


def build_for(root: Path, profile: str, real: Sequence[tuple[str, str]] = ()) -> Path:
    """:func:`build` as ``profile``'s agent would have the workspace; returns the dir to scan from."""
    work = build(root, claude=profile == "claude", real=real, container=SKILLS_AT.get(profile))
    return root if profile in FROM_ROOT else work


def _skill_files(skills: int, real: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each skill's folder name and SKILL.md: the synthetic one, or the real ones in turn, cycling."""
    if not real:
        return [
            (
                f"skill-{index:04d}",
                f"---\nname: skill-{index:04d}\ndescription: Does task number {index} the way this team does it; "
                f"use when asked about area {index % 37}.\nlicense: MIT\n---\n\n# skill-{index:04d}\n\n"
                + "Follow these steps carefully.\n"
                * 40,
            )
            for index in range(skills)
        ]
    out: list[tuple[str, str]] = []
    taken: set[str] = set()
    for index in range(skills):
        base, text = real[index % len(real)]
        name, again = base, 1
        while name in taken:  # a second round, or two collections with a folder of the same name
            again += 1
            name = f"{base}-{again}"
        taken.add(name)
        out.append((name, named(text, name)))
    return out


_NAME_LINE = re.compile(r"^name:.*(?:\n[ \t]+.*)*$", re.MULTILINE)  # with any continuation lines


def named(text: str, name: str) -> str:
    """``text`` with its frontmatter's ``name`` set to ``name`` (the line replaced, else added first)."""
    if not text.startswith("---\n"):
        return f"---\nname: {name}\n---\n{text}"
    end = text.find("\n---", 3)
    block = text[4:end] if end >= 0 else ""
    replaced, count = _NAME_LINE.subn(lambda _: f"name: {name}", block, count=1)
    if not count:
        replaced = f"name: {name}\n{block}"
    return f"---\n{replaced}{text[end:]}" if end >= 0 else text


def real_skills(dirs: Sequence[Path]) -> list[tuple[str, str]]:
    """Every ``SKILL.md`` under ``dirs`` (in order, each dir's sorted by path) as (its folder's name, its
    text); a file that is not UTF-8, and a second copy of a text already taken, are left out."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for top in dirs:
        for path in sorted(Path(top).rglob("SKILL.md")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if text not in seen:
                seen.add(text)
                out.append((path.parent.name, text))
    return out


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
