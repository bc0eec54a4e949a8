"""The workspaces OpenCode is run on: each is a fact the ``opencode`` profile must reproduce.

Paths are relative to the workspace folder: ``w/`` holds projects, ``home/`` is HOME. OpenCode
asks git for the worktree root, so a repository here is one git accepts (``HEAD``, ``objects/``,
``refs/``); several facts share a workspace to keep the runs few. OpenCode's glob (node-glob) promises no order
among one folder's matches, so no pattern here matches two files of one folder.
"""

from __future__ import annotations

import json

from tests.realagents.detail_cases import yaml_words
from tests.realagents.harness import Workspace, skill

OPENCODE = ("opencode",)
GIT_DIRS = ("w/repo/.git/objects", "w/repo/.git/refs")
GIT = {"w/repo/.git/HEAD": "ref: refs/heads/main\n"}


def opencode(
    name: str, files: dict[str, str | bytes], cwd: str = "w/repo", git: bool = True, **more: object
) -> Workspace:
    dirs = GIT_DIRS if git else ()
    return Workspace(name, {**(GIT if git else {}), **files}, cwd=cwd, agents=OPENCODE, dirs=dirs, **more)  # type: ignore[arg-type]


def config(*patterns: str) -> str:
    return json.dumps({"instructions": list(patterns)})


OPENCODE_CASES: tuple[Workspace, ...] = (
    opencode(
        "opencode_walk",
        {
            "home/.config/opencode/AGENTS.md": "config agents: first\n",
            "home/.claude/CLAUDE.md": "claude home: hidden by the config's AGENTS.md\n",
            "home/.codex/AGENTS.md": "codex home, not read\n",
            "w/AGENTS.md": "above the worktree root\n",
            "w/repo/AGENTS.md": b"\xef\xbb\xbfroot: BOM dropped\r\nCRLF kept\r\n\r\n",
            "w/repo/CLAUDE.md": "hidden by the AGENTS.md of the walk\n",
            "w/repo/a/AGENTS.md": "",
            "w/repo/a/CLAUDE.md": "hidden too\n",
            "w/repo/a/b/AGENTS.md": "  \n\n",
            "w/repo/a/b/cwd/AGENTS.md": "cwd <!-- comment kept -->\nzero\u200bwidth, no final newline",
            "w/repo/a/b/cwd/below/AGENTS.md": "below the cwd\n",
            "w/repo/other/AGENTS.md": "a sibling\n",
        },
        cwd="w/repo/a/b/cwd",
    ),
    opencode(
        "opencode_claude_fallback",
        {
            "home/.claude/CLAUDE.md": "claude home\n",
            "w/repo/CLAUDE.md": "root claude\n",
            "w/repo/CONTEXT.md": "hidden by the CLAUDE.md of the walk\n",
            "w/repo/sub/CLAUDE.md": b"bad \xff byte\n",
            "w/repo/sub/.claude/CLAUDE.md": "not a name OpenCode reads\n",
            "w/repo/sub/CLAUDE.local.md": "not read\n",
            "w/repo/sub/AGENTS.override.md": "not read\n",
        },
        cwd="w/repo/sub",
    ),
    opencode(
        "opencode_context",
        {"w/repo/CONTEXT.md": "root context\n", "w/repo/sub/CONTEXT.md": "sub context\n"},
        cwd="w/repo/sub",
    ),
    opencode(
        "opencode_folder_named_agents",
        {"w/repo/CLAUDE.md": "hidden: a folder named AGENTS.md counts as found\n", "w/repo/sub/AGENTS.md/x": "x\n"},
        cwd="w/repo/sub",
    ),
    opencode(
        "opencode_no_git",
        {"w/AGENTS.md": "two folders up: no worktree, the walk goes on\n", "w/x/y/AGENTS.md": "y\n"},
        cwd="w/x/y",
        git=False,
    ),
    opencode(
        "opencode_instructions",
        {
            "home/.config/opencode/opencode.json": config("docs/*.md", "~/notes/n.md", "rules/**/*.md", "CONTEXT.md"),
            "home/notes/n.md": "the user's notes\n",
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/docs/a.md": "docs a\n",
            "w/repo/docs/c.txt": "not .md\n",
            "w/repo/sub/docs/z.md": "sub docs z: nearer, first\n",
            "w/repo/rules/top.md": "top rule\n",
            "w/repo/rules/.h/dot.md": "a dot folder's rule\n",
            "w/repo/rules/x/y.md": "deep rule\n",
            "w/repo/CONTEXT.md": "a CONTEXT.md named by instructions\n",
            "w/repo/opencode.json": config("proj/*.md", "AGENTS.md", "docs/a.md", "{one,none}.md"),
            "w/repo/proj/p.md": "proj\n",
            "w/repo/one.md": "one\n",
            "w/repo/sub/opencode.jsonc": (
                '{\n  // comments and a trailing comma\n  "instructions": ["subcfg.md",],\n}\n'
            ),
            "w/repo/subcfg.md": "subcfg at the root\n",
            "w/repo/sub/subcfg.md": "subcfg at sub\n",
            "w/repo/.opencode/opencode.json": config("dotoc.md"),
            "w/repo/dotoc.md": "named by .opencode/opencode.json\n",
        },
        cwd="w/repo/sub",
    ),
    opencode(
        "opencode_skills",
        {
            **{
                f"w/repo/sub/.agents/skills/o{i}/SKILL.md": skill(n, f"order {n}")
                for i, n in enumerate(["a1", "B2", "_d4", "Zz", "m-13", "k11", "m_1", "m1", "M1", "a.b"])
            },
            "w/repo/sub/.claude/skills/cl/SKILL.md": skill("from-claude", "cwd .claude"),
            "w/repo/.agents/skills/root/SKILL.md": skill("at-root", "the worktree root's .agents"),
            "w/repo/.claude/skills/rootc/SKILL.md": skill("at-root-claude", "the worktree root's .claude"),
            "w/.agents/skills/above/SKILL.md": skill("above", "above the worktree root: not found"),
            "w/repo/sub/.agents/skills/g1/g2/deeper/SKILL.md": skill("deeper", "three folders down"),
            "w/repo/sub/.agents/skills/SKILL.md": skill("top", "right in the skills folder"),
            "w/repo/sub/.agents/skills/other/SKILL.md": skill("name-not-folder", "named by its frontmatter"),
            "w/repo/sub/.agents/skills/nodesc/SKILL.md": skill("nodesc", None),
            "w/repo/sub/.agents/skills/noname/SKILL.md": skill(None, "no name"),
            "w/repo/sub/.agents/skills/nofm/SKILL.md": "no frontmatter\n",
            "w/repo/sub/.agents/skills/badyaml/SKILL.md": "---\nname: badyaml\ndescription: [unclosed\n---\nx\n",
            "w/repo/sub/.agents/skills/numdesc/SKILL.md": skill("numdesc", "42"),
            "w/repo/sub/.agents/skills/numname/SKILL.md": skill("123", "a number is no name"),
            "w/repo/sub/.agents/skills/yes/SKILL.md": skill("yes-desc", "yes"),
            "w/repo/sub/.agents/skills/empty/SKILL.md": skill("emptydesc", '""'),
            "w/repo/sub/.agents/skills/folded/SKILL.md": "---\nname: folded\ndescription: >\n  one\n  two\n---\nx\n",
            "w/repo/sub/.agents/skills/kept/SKILL.md": "---\nname: kept\ndescription: |+\n  kept\n\n---\nx\n",
            "w/repo/sub/.agents/skills/quoted/SKILL.md": skill("quoted", "'it''s \"q\" <b> & c'"),
            "w/repo/sub/.agents/skills/unclosed/SKILL.md": "---\nname: unclosed\ndescription: never closed\n",
            "w/repo/sub/.agents/skills/bom/SKILL.md": "\ufeff" + skill("bom", "bom skill"),
            "w/repo/sub/.agents/skills/latin/SKILL.md": skill("latin", "caf\xe9").encode("latin-1"),
            "w/repo/sub/.agents/skills/wide/SKILL.md": skill("wide", "UTF-16").encode("utf-16"),
            "w/repo/sub/.agents/skills/crlf/SKILL.md": skill("crlf", "crlf skill").replace("\n", "\r\n"),
            "w/repo/sub/.agents/skills/a&b/SKILL.md": skill("amp", "an ampersand in its path"),
            "w/repo/sub/.agents/skills/lower/skill.md": skill("lowercase", "not SKILL.md"),
            "w/repo/sub/.codex/skills/cx/SKILL.md": skill("codex-folder", "not read"),
            "w/repo/sub/.gemini/skills/gm/SKILL.md": skill("gemini-folder", "not read"),
            "w/repo/sub/skills/plain/SKILL.md": skill("plain", "not read"),
            "w/repo/.opencode/skills/oc/SKILL.md": skill("oc-skills", "the .opencode/skills folder"),
            "w/repo/.opencode/skill/oc1/SKILL.md": skill("oc-skill", "the .opencode/skill folder"),
            "home/.config/opencode/skills/g/SKILL.md": skill("config-skill", "the user's config folder"),
            "home/.agents/skills/ua/SKILL.md": skill("user-agents", "~/.agents/skills"),
            "home/.claude/skills/uc/SKILL.md": skill("user-claude", "~/.claude/skills"),
            "home/shared/linked/SKILL.md": skill("linked", "through a link in home"),
        },
        cwd="w/repo/sub",
        links={"home/.agents/skills/linked": "../../shared/linked"},
    ),
    opencode(
        "opencode_on_read",
        {
            "w/repo/AGENTS.md": "root, sent at startup\n",
            "w/repo/a/AGENTS.md": "a agents\n",
            "w/repo/a/b/CLAUDE.md": "b claude: per folder, not per walk\n",
            "w/repo/a/b/c/CONTEXT.md": "c context\n",
            "w/repo/a/b/c/x.py": "x = 1\n",
        },
        read="w/repo/a/b/c/x.py",
    ),
    # js-yaml 3 types as YAML 1.1 but for booleans (true, false) and floats (1e3 is one, 00.5 is text); a
    # description that is not text drops the skill
    opencode("opencode_yaml_words", {"w/repo/AGENTS.md": "repo\n", **yaml_words("w/repo/.claude/skills")}),
)
