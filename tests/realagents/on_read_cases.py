"""Monorepo workspaces where the model reads a file below the work dir (two model turns).

Each is run through the real Claude Code: the first answer asks it to ``Read`` ``read``,
and what it sends with the tool result must be what ``applicable()`` finds under the
``claude`` profile, rendered by ``claude_nested.render`` (files, order and bytes).
"""

from __future__ import annotations

from tests.realagents.harness import Workspace

GIT = {"w/repo/.git/HEAD": "ref: refs/heads/main\n"}
CLAUDE = ("claude",)
CODE = "x = 1\n"


def on_read(name: str, files: dict[str, str | bytes], read: str, cwd: str = "w/repo") -> Workspace:
    return Workspace(name, {**GIT, **files, read: CODE}, cwd=cwd, agents=CLAUDE, read=read)


ON_READ: tuple[Workspace, ...] = (
    on_read(
        "read_nested_family",
        {
            "w/repo/CLAUDE.md": "root claude\n",
            "w/repo/.claude/rules/other.md": '---\npaths: ["other/**"]\n---\nroot rule other\n',
            "w/repo/sub/CLAUDE.md": "sub claude no newline",
            "w/repo/sub/.claude/CLAUDE.md": "sub dotclaude\n\n\n",
            "w/repo/sub/CLAUDE.local.md": "sub local\n",
            "w/repo/sub/.claude/rules/b.md": "B unconditional\n",
            "w/repo/sub/.claude/rules/a.md": "---\npaths: ['**/*.py']\n---\nA matching\n",
            "w/repo/sub/.claude/rules/c.md": "---\npaths: ['deep/*.md']\n---\nC other files\n",
            "w/repo/sub/.claude/rules/z/d.md": "D nested unconditional\n",
            "w/repo/sub/deep/AGENTS.md": "deep agents: not read next to a CLAUDE.md\n",
        },
        "w/repo/sub/deep/code.py",
    ),
    on_read(
        "read_glob_bases",
        {
            "w/repo/CLAUDE.md": "root claude\n",
            "w/repo/.claude/rules/g.md": '---\npaths: ["sub/deep/*.py"]\n---\nroot rule, root-relative\n',
            "w/repo/.claude/rules/h.md": '---\npaths: ["deep/*.py"]\n---\nroot rule, sub-relative\n',
            "w/repo/sub/.claude/rules/e.md": '---\npaths: ["deep/*.py"]\n---\nsub-relative glob\n',
            "w/repo/sub/.claude/rules/f.md": '---\npaths: ["sub/deep/*.py"]\n---\nroot-relative glob in sub\n',
            "w/repo/sub/CLAUDE.md": "sub <!-- hidden --> claude\n<!-- whole line -->\nafter\n",
        },
        "w/repo/sub/deep/code.py",
    ),
    on_read(
        "read_user_and_ancestor_rules",
        {
            "w/repo/CLAUDE.md": "root\n",
            "w/.claude/rules/above.md": "---\npaths: ['repo/pkg/deep/*.py']\n---\nabove the git root\n",
            "w/repo/.claude/rules/r1.md": "---\npaths: ['pkg/deep/*.py']\n---\nrepo-relative\n",
            "w/repo/.claude/rules/r2.md": "---\npaths: ['deep/*.py']\n---\nnot repo-relative\n",
            "w/repo/pkg/CLAUDE.md": "pkg claude\n",
            "w/repo/pkg/.claude/rules/p1.md": "---\npaths: ['deep/*.py']\n---\npkg rule\n",
            "w/repo/pkg/deep/CLAUDE.md": "deep claude\n",
            "home/.claude/rules/h1.md": "---\npaths: ['deep/*.py']\n---\nuser rule, cwd-relative\n",
            "home/.claude/rules/h2.md": "---\npaths: ['pkg/deep/*.py']\n---\nuser rule, repo-relative\n",
        },
        "w/repo/pkg/deep/code.py",
        cwd="w/repo/pkg",
    ),
    on_read(
        "read_agents_fallback",
        {
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/sub/AGENTS.md": "sub agents\n",
            "w/repo/sub/deep/AGENTS.md": "deep agents\n\n\n",
            "w/repo/sub/deep/.claude/AGENTS.md": "deep dot agents\n",
        },
        "w/repo/sub/deep/code.py",
    ),
    on_read(
        "read_fallback_per_folder",
        {
            "w/repo/README.md": "no instructions at the root\n",
            "w/repo/sub/AGENTS.md": "sub agents @imp.md\n",
            "w/repo/sub/imp.md": "imported by AGENTS.md\n",
            "w/repo/sub/.claude/rules/a.md": "sub rule\n",
            "w/repo/sub/e/CLAUDE.md": "",
            "w/repo/sub/e/AGENTS.md": "---\nname: x\n---\n\n<!-- c -->\n  e agents\r\n\n",
            "w/repo/sub/e/f/.claude/CLAUDE.md": "f dot claude\n",
            "w/repo/sub/e/f/AGENTS.md": "f agents: a CLAUDE.md here wins\n",
            "w/repo/sub/e/f/g/CLAUDE.local.md": "g local\n",
            "w/repo/sub/e/f/g/AGENTS.md": "g agents: CLAUDE.local.md wins\n",
            "w/repo/sub/e/f/g/h/AGENTS.md": "\n\n",
        },
        "w/repo/sub/e/f/g/h/x.py",
    ),
    on_read(
        "read_text_and_imports",
        {
            "w/repo/CLAUDE.md": "root\n",
            "w/other.md": "outside the work dir\n",
            "w/repo/a/CLAUDE.md": "\n\n  lead\r\nline2\r\n\r\n",
            "w/repo/a/.claude/CLAUDE.md": "",
            "w/repo/a/CLAUDE.local.md": "---\ntitle: x\n---\n\n<!-- c -->\nafter fm @imp.md @../../other.md\n",
            "w/repo/a/imp.md": "imported\n@deeper.md\n",
            "w/repo/a/deeper.md": "deeper\n",
            "w/repo/a/b/CLAUDE.md": "<!-- only a comment -->\n",
            "w/repo/a/b/c/CLAUDE.md": "\ufeffbom kept\n",
            "w/repo/a/b/c/CLAUDE.local.md": "   \n",
        },
        "w/repo/a/b/c/x.py",
    ),
    on_read(
        "read_globs",
        {
            "w/repo/CLAUDE.md": "root\n",
            "w/repo/sub/.claude/rules/a.md": "---\npaths: deep/**\n---\ntrailing\n",
            "w/repo/sub/.claude/rules/b.md": "---\npaths: 'deep/*.{py,ts}'\n---\nbraces\n",
            "w/repo/sub/.claude/rules/c.md": "---\npaths: '*.py'\n---\nbasename at any depth\n",
            "w/repo/sub/.claude/rules/d.md": "---\npaths: '**/code.py'\n---\nstarstar\n",
            "w/repo/sub/.claude/rules/e.md": "---\npaths: 'deep, other'\n---\ncomma separated\n",
            "w/repo/sub/.claude/rules/f.md": "---\npaths: ['./deep/code.py']\n---\ndot slash\n",
            "w/repo/sub/.claude/rules/g.md": "---\npaths: ['/deep/code.py']\n---\nleading slash\n",
            "w/repo/sub/.claude/rules/h.md": "---\npaths: [': bad\n---\nmalformed: never loaded\n",
            "w/repo/sub/.claude/rules/i.md": "---\npaths: 5\n---\na number: unconditional\n",
            "w/repo/sub/.claude/rules/j.md": "---\npaths: '!deep/code.py'\n---\nnegated\n",
            "w/repo/sub/.claude/rules/k.md": "---\npaths: 'DEEP/CODE.PY'\n---\nany case\n",
            "w/repo/sub/.claude/rules/l.md": "---\npaths: {a: 1}\n---\na mapping: unconditional\n",
            "w/repo/sub/.claude/rules/m.md": "---\npaths: ['" + "**/" * 30 + "*.zz']\n---\nmany stars\n",
            "w/repo/sub/.claude/rules/n.md": "---\npaths: '" + "{a,b}" * 12 + "/x.py'\n---\nbrace bomb\n",
        },
        "w/repo/sub/deep/code.py",
    ),
    on_read(
        "read_hidden_vendor_and_child",
        {
            "w/repo/CLAUDE.md": "root\n",
            "w/repo/node_modules/CLAUDE.md": "node_modules is read\n",
            "w/repo/node_modules/pkg/.claude/CLAUDE.md": "so is a hidden folder\n",
            "w/repo/node_modules/pkg/child/.git/HEAD": "ref: refs/heads/main\n",
            "w/repo/node_modules/pkg/child/CLAUDE.md": "a nested checkout changes nothing\n",
            "w/repo/node_modules/pkg/child/.claude/rules/r.md": "---\npaths: ['src/*.js']\n---\nchild rule\n",
            "w/repo/sibling/CLAUDE.md": "a sibling folder is not read\n",
        },
        "w/repo/node_modules/pkg/child/src/index.js",
    ),
    on_read(
        "read_in_the_work_dir",
        {
            "w/repo/CLAUDE.md": "root\n",
            "w/repo/.claude/rules/r.md": "---\npaths: ['*.py']\n---\nroot py\n",
            "w/repo/.claude/rules/bad.md": "---\npaths: [': bad\n---\nmalformed: not loaded at startup either\n",
            "w/repo/.claude/rules/num.md": "---\npaths: 5\n---\na number: loaded at startup\n",
            "w/repo/sub/CLAUDE.md": "sub: not read for a file above it\n",
        },
        "w/repo/x.py",
    ),
)
