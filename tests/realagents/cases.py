"""The workspaces the real agents are run on: each is a fact our profiles must reproduce.

Paths are relative to the workspace folder: ``w/`` holds projects, ``home/`` is HOME.
"""

from __future__ import annotations

from tests.realagents.copilot_cases import COPILOT_CASES
from tests.realagents.detail_cases import DETAILS
from tests.realagents.gemini_cases import GEMINI_CASES
from tests.realagents.harness import Workspace, import_chain, skill
from tests.realagents.on_read_cases import ON_READ
from tests.realagents.opencode_cases import OPENCODE_CASES

GIT = {"w/repo/.git/HEAD": "ref: refs/heads/main\n"}
BOTH = ("claude", "codex")
CLAUDE = ("claude",)
CODEX = ("codex",)


CASES: tuple[Workspace, ...] = (
    Workspace(
        "basic", {**GIT, "w/repo/CLAUDE.md": "# Claude\nUse pnpm.\n", "w/repo/AGENTS.md": "# Agents\nUse npm.\n"}
    ),
    Workspace(
        "chain_to_cwd",
        {
            **GIT,
            **{f"{d}/CLAUDE.md": f"claude {d[-1]}\n" for d in ("w/repo", "w/repo/a", "w/repo/a/b")},
            **{f"{d}/AGENTS.md": f"agents {d[-1]}\n" for d in ("w/repo", "w/repo/a", "w/repo/a/b")},
            "w/repo/a/b/c/CLAUDE.md": "below the cwd\n",
            "w/repo/a/b/c/AGENTS.md": "below the cwd\n",
        },
        cwd="w/repo/a/b",
    ),
    Workspace(
        "above_git_root",
        {
            **GIT,
            "w/CLAUDE.md": "above\n",
            "w/AGENTS.md": "above\n",
            "w/repo/CLAUDE.md": "in\n",
            "w/repo/AGENTS.md": "in\n",
        },
    ),
    Workspace(
        "no_git",
        {
            "w/x/CLAUDE.md": "x claude\n",
            "w/x/AGENTS.md": "x agents\n",
            "w/x/y/CLAUDE.md": "y\n",
            "w/x/y/AGENTS.md": "y\n",
        },
        cwd="w/x/y",
    ),
    Workspace(
        "nested_repo",
        {
            **GIT,
            "w/repo/CLAUDE.md": "outer\n",
            "w/repo/AGENTS.md": "outer\n",
            "w/repo/inner/.git/HEAD": "ref: refs/heads/main\n",
            "w/repo/inner/CLAUDE.md": "inner\n",
            "w/repo/inner/AGENTS.md": "inner\n",
        },
        cwd="w/repo/inner/src",
    ),
    Workspace(
        "git_file",
        {"w/repo/.git": "gitdir: /nonexistent/worktrees/x\n", "w/repo/AGENTS.md": "wt\n", "w/repo/CLAUDE.md": "wt\n"},
        cwd="w/repo/pkg",
    ),
    Workspace(
        "override",
        {**GIT, "w/repo/AGENTS.override.md": "override\n", "w/repo/AGENTS.md": "plain\n", "w/repo/CLAUDE.md": "c\n"},
    ),
    Workspace(
        "blank_files",
        {
            **GIT,
            "w/repo/AGENTS.override.md": "  \n\n",
            "w/repo/AGENTS.md": "hidden by a blank override\n",
            "w/repo/CLAUDE.md": " \n\t\n",
            "w/repo/sub/AGENTS.md": "sub agents\n",
        },
        cwd="w/repo/sub",
    ),
    Workspace(
        "fallback_agents", {**GIT, "w/repo/AGENTS.md": "root\n", "w/repo/sub/AGENTS.md": "sub\n"}, cwd="w/repo/sub"
    ),
    Workspace(
        "fallback_off_by_sub_claude",
        {**GIT, "w/repo/AGENTS.md": "root agents\n", "w/repo/sub/CLAUDE.md": "sub claude\n"},
        cwd="w/repo/sub",
        agents=CLAUDE,
    ),
    Workspace(
        "fallback_off_by_local",
        {**GIT, "w/repo/AGENTS.md": "agents\n", "w/repo/CLAUDE.local.md": "mine\n"},
        agents=CLAUDE,
    ),
    Workspace("fallback_dot_claude", {**GIT, "w/repo/.claude/AGENTS.md": "dot claude agents\n"}, agents=CLAUDE),
    Workspace(
        "fallback_with_rules",
        {
            **GIT,
            "w/repo/AGENTS.md": "root agents\n@extra.md\n",
            "w/repo/extra.md": "extra\n",
            "w/repo/.claude/rules/style.md": "style rule\n",
            "w/repo/sub/AGENTS.md": "sub agents\n",
            "w/repo/sub/.claude/rules/sub.md": "sub rule\n",
        },
        cwd="w/repo/sub",
        agents=CLAUDE,
    ),
    Workspace(
        "fallback_with_home_claude",
        {**GIT, "home/.claude/CLAUDE.md": "user\n", "w/repo/AGENTS.md": "agents\n"},
        agents=CLAUDE,
    ),
    Workspace(
        "imports",
        {
            **GIT,
            "w/repo/CLAUDE.md": (
                "root\n@imp1.md\nsee @./imp2.md and @sub/below.md\n@missing.md\nmail a@imp3.md x\n`@imp4.md`\n"
                "```\n@imp5.md\n```\n@imp6.md, @imp7.md: @imp8.md\n@~/homeimp.md\n@../outside.md\n"
                "@dir\n@data.json\n@noext\n@page.markdown\n@UP.MD\n@my\\ file.md\n@notes.md#section\n"
            ),
            "w/repo/imp1.md": "one\n@nested1.md\n",
            "w/repo/nested1.md": "nested one\n",
            "w/repo/imp2.md": "two\n",
            "w/repo/sub/below.md": "below\n",
            "w/repo/imp3.md": "three\n",
            "w/repo/imp4.md": "four\n",
            "w/repo/imp5.md": "five\n",
            "w/repo/imp6.md": "six\n",
            "w/repo/imp7.md": "seven\n",
            "w/repo/imp8.md": "eight\n",
            "home/homeimp.md": "home\n",
            "w/outside.md": "outside\n",
            "w/repo/dir/x.md": "x\n",
            "w/repo/data.json": '{"a": 1}\n',
            "w/repo/noext": "no extension\n",
            "w/repo/page.markdown": "markdown\n",
            "w/repo/UP.MD": "upper\n",
            "w/repo/my file.md": "spaced\n",
            "w/repo/notes.md": "notes\n",
        },
        agents=CLAUDE,
    ),
    Workspace("import_depth", {**GIT, "w/repo/CLAUDE.md": "top\n@imp1.md\n", **import_chain(7)}, agents=CLAUDE),
    Workspace(
        "import_cycles",
        {
            **GIT,
            "w/repo/CLAUDE.md": "top\n@CLAUDE.md\n@a.md\n",
            "w/repo/a.md": "a\n@b.md\n@a.md\n",
            "w/repo/b.md": "b\n@a.md\n@CLAUDE.md\n",
            "w/repo/.claude/CLAUDE.md": "dot\n@../a.md\n@../c.md\n",
            "w/repo/c.md": "c\n",
        },
        agents=CLAUDE,
    ),
    Workspace(
        "imports_above_cwd",
        {
            **GIT,
            "w/repo/CLAUDE.md": "root\n@up.md\n@sub/down.md\n",
            "w/repo/up.md": "up\n",
            "w/repo/sub/down.md": "down\n",
            "w/repo/sub/CLAUDE.md": "sub\n@../up.md\n@./here.md\n",
            "w/repo/sub/here.md": "here\n",
        },
        cwd="w/repo/sub",
        agents=CLAUDE,
    ),
    Workspace(
        "imports_in_markdown",
        {
            **GIT,
            "w/repo/CLAUDE.md": (
                "# Heading @h.md\n\n- item @li.md\n- `code @lc.md` text\n\n> quote @q.md\n\n"
                "| col |\n|-----|\n| @t.md |\n\n**bold**@b.md and *em @e.md*\n\n    @indented.md\n\n"
                "<!-- note -->\n@after.md\n\n<div>\n@html.md\n</div>\n\n![@img.md](x.png) [@link.md](y)\n"
                "\\@esc.md\n"
            ),
            **{
                f"w/repo/{n}.md": f"{n}\n"
                for n in ("h", "li", "lc", "q", "t", "b", "e", "indented", "after", "html", "img", "link", "esc")
            },
        },
        agents=CLAUDE,
    ),
    Workspace(
        "rules",
        {
            **GIT,
            "w/repo/CLAUDE.md": "root\n",
            "w/repo/.claude/rules/zeta.md": "zeta rule\n",
            "w/repo/.claude/rules/nested/deep/alpha.md": "alpha rule\n",
            "w/repo/.claude/rules/notes.txt": "not a rule\n",
            "w/repo/.claude/rules/py.md": "---\npaths:\n  - src/**/*.py\n---\npython rule\n",
            "w/repo/.claude/rules/all.md": '---\npaths: "**"\n---\nalways rule\n',
            "w/repo/.claude/rules/meta.md": "---\ndescription: a rule with frontmatter\n---\nmeta rule\n",
            "w/repo/.claude/rules/scoped-import.md": "---\npaths: docs/**\n---\nscoped\n@../../shared.md\n",
            "w/repo/shared.md": "shared text\n",
        },
        agents=CLAUDE,
    ),
    Workspace(
        "local_files",
        {
            **GIT,
            "w/repo/CLAUDE.local.md": "local root\n@mine.md\n",
            "w/repo/mine.md": "mine\n",
            "w/repo/CLAUDE.md": "shared\n",
            "w/repo/sub/CLAUDE.local.md": "local sub\n",
        },
        cwd="w/repo/sub",
        agents=CLAUDE,
    ),
    Workspace(
        "dot_claude",
        {**GIT, "w/repo/.claude/CLAUDE.md": "dot claude\n", "w/repo/CLAUDE.md": "plain\n", "w/repo/AGENTS.md": "a\n"},
    ),
    Workspace(
        "home_files",
        {
            **GIT,
            "home/.claude/CLAUDE.md": "user\n@~/notes/u1.md\n@u2.md\n",
            "home/notes/u1.md": "u1\n",
            "home/.claude/u2.md": "u2\n",
            "home/.claude/rules/r1.md": "user rule\n",
            "home/.claude/rules/deep/r2.md": "deep user rule\n",
            "home/.codex/AGENTS.md": "codex home\n",
            "w/repo/CLAUDE.md": "project\n",
            "w/repo/AGENTS.md": "project agents\n",
        },
    ),
    Workspace(
        "codex_home_override",
        {**GIT, "home/.codex/AGENTS.override.md": "home override\n", "home/.codex/AGENTS.md": "home plain\n"},
        agents=CODEX,
    ),
    Workspace(
        "html_comments",
        {
            **GIT,
            "w/repo/CLAUDE.md": (
                "# Title\nvisible\n<!-- one line -->\nafter\n\n<!--\nmulti\nline\n-->\n\n\nnext\n"
                "inline <!-- kept --> text\n<!-- c --> tail kept\n```\n<!-- in code -->\n```\n"
                "- item\n  <!-- in list -->\n"
            ),
            "w/repo/AGENTS.md": "keep <!-- this -->\n",
            "w/repo/.claude/rules/only-comment.md": "<!-- nothing else -->\n",
        },
    ),
    Workspace(
        "frontmatter",
        {
            **GIT,
            "w/repo/CLAUDE.md": "---\ntitle: x\npaths: src/**\n---\nbody after frontmatter\n",
            "w/repo/AGENTS.md": "---\na: b\n---\nkept\n",
        },
    ),
    Workspace(
        "bom_crlf",
        {
            **GIT,
            "w/repo/CLAUDE.md": b"\xef\xbb\xbfbom line\r\nsecond\r\n\r\n",
            "w/repo/AGENTS.md": b"\xef\xbb\xbfbom agents\r\nsecond\r\n",
            "w/repo/.claude/rules/crlf-comment.md": b"a\r\n<!-- c -->\r\nb\r\n",
        },
    ),
    Workspace(
        "hidden_characters",
        {
            **GIT,
            "w/repo/CLAUDE.md": "zero\u200bwidth and \u202eright to left\u202c and tag\U000e0041\n",
            "w/repo/AGENTS.md": "zero\u200bwidth \u2066isolate\u2069\n",
        },
    ),
    Workspace(
        "whitespace_trim",
        {
            **GIT,
            "w/repo/CLAUDE.md": "\n\n   indented start\ntrailing spaces   \n\n\n",
            "w/repo/AGENTS.md": "\n\n x \n\n",
        },
    ),
    Workspace(
        "big_files",
        {
            **GIT,
            "w/repo/CLAUDE.md": ("claude " * 5850) + "end\n",
            "w/repo/AGENTS.md": ("a" * 20000) + "\n",
            "w/repo/sub/AGENTS.md": ("b" * 20000) + "\n",
        },
        cwd="w/repo/sub",
    ),
    Workspace(
        "tabs_and_comment",
        {**GIT, "w/repo/CLAUDE.md": "list:\n\t- tabbed\n\t\tdouble\n<!-- c -->\nend\n"},
        agents=CLAUDE,
    ),
    Workspace(
        "claude_skills",
        {
            **GIT,
            "w/repo/.claude/skills/alpha/SKILL.md": skill("alpha", "Alpha does a"),
            "w/repo/.claude/skills/folder-b/SKILL.md": skill("other-name", "B desc"),
            "w/repo/.claude/skills/nodesc/SKILL.md": skill("nodesc", None, body="\n\n# Heading here\nrest\n"),
            "w/repo/.claude/skills/nodesc2/SKILL.md": skill("nodesc2", None, body="plain first line, long " * 6 + "\n"),
            "w/repo/.claude/skills/nofm/SKILL.md": "no frontmatter at all\nline2\n",
            "w/repo/.claude/skills/long/SKILL.md": skill("long", ("word " * 400).strip()),
            "w/repo/.claude/skills/badyaml/SKILL.md": "---\nname: badyaml\ndescription: [unclosed\n---\nbad body\n",
            "w/repo/.claude/skills/group/inner/SKILL.md": skill("inner", "nested"),
            "w/repo/.claude/skills/dup/SKILL.md": skill("dup", "project dup"),
            "home/.claude/skills/dup/SKILL.md": skill("dup", "user dup"),
            "home/.claude/skills/userone/SKILL.md": skill("userone", "User one"),
            "w/repo/.claude/skills/Case-A/SKILL.md": skill("Case-A", "upper"),
            "w/repo/.claude/skills/case-a/SKILL.md": skill("case-a", "lower"),
            "w/repo/.claude/skills/wtu/SKILL.md": skill("wtu", "With when", extra="when_to_use: Use when testing\n"),
            "w/repo/.claude/skills/dmi/SKILL.md": skill("dmi", "Hidden", extra="disable-model-invocation: true\n"),
            "w/repo/.claude/skills/multi/SKILL.md": skill("multi", "|\n  line one\n  line two"),
            "w/repo/.claude/skills/bom/SKILL.md": "\ufeff" + skill("bom", "Bom skill"),
            "w/repo/.claude/skills/crlf/SKILL.md": skill("crlf", "Crlf skill").replace("\n", "\r\n"),
            "w/repo/sub/.claude/skills/subskill/SKILL.md": skill("subskill", "In sub"),
            "w/.claude/skills/above/SKILL.md": skill("above", "Above the git root"),
            "w/repo/sub/deeper/.claude/skills/below/SKILL.md": skill("below", "below the cwd"),
            "w/repo/.agents/skills/agentsk/SKILL.md": skill("agentsk", "agents folder"),
        },
        cwd="w/repo/sub",
        agents=CLAUDE,
    ),
    Workspace(
        "codex_skills",
        {
            **GIT,
            "w/repo/.codex/skills/cx/SKILL.md": skill("cx", "repo codex"),
            "w/repo/.agents/skills/ag/SKILL.md": skill("ag", "repo agents"),
            "w/repo/sub/.agents/skills/subag/SKILL.md": skill("subag", "sub agents"),
            "w/repo/sub/.codex/skills/subcx/SKILL.md": skill("subcx", "sub codex"),
            "home/.agents/skills/uag/SKILL.md": skill("uag", "user agents"),
            "home/.codex/skills/ucx/SKILL.md": skill("ucx", "user codex"),
            "w/repo/.agents/skills/dup/SKILL.md": skill("dup", "dup repo"),
            "home/.agents/skills/dup/SKILL.md": skill("dup", "dup user agents"),
            "home/.codex/skills/dup/SKILL.md": skill("dup", "dup user codex"),
            "w/repo/.codex/skills/dup/SKILL.md": skill("dup", "dup repo codex"),
            "w/repo/.agents/skills/long/SKILL.md": skill("long", "x" * 1100),
            "w/repo/.agents/skills/exact/SKILL.md": skill("exact", "y" * 1024),
            "w/repo/.agents/skills/nodesc/SKILL.md": skill("nodesc", None),
            "w/repo/.agents/skills/nofm/SKILL.md": "plain\n",
            "w/repo/.agents/skills/g1/g2/deep/SKILL.md": skill("deep", "three deep"),
            "w/repo/.agents/skills/noname/SKILL.md": skill(None, "No name given"),
            "w/repo/.agents/skills/badyaml/SKILL.md": "---\nname: badyaml\ndescription: [unclosed\n---\nbad\n",
            "w/repo/.agents/skills/multi/SKILL.md": skill("multi", "|\n  line one\n  line two"),
            "w/repo/.claude/skills/cl/SKILL.md": skill("cl", "claude folder"),
            # bytes Codex does not read as a skill: a BOM, Latin-1, UTF-16 (CRLF it reads)
            "w/repo/.agents/skills/bom/SKILL.md": "\ufeff" + skill("bom", "Bom skill"),
            "w/repo/.agents/skills/latin/SKILL.md": skill("latin", "caf\xe9").encode("latin-1"),
            "w/repo/.agents/skills/wide/SKILL.md": skill("wide", "UTF-16").encode("utf-16"),
            "w/repo/.agents/skills/crlf/SKILL.md": skill("crlf", "Crlf skill").replace("\n", "\r\n"),
            # YAML that gives a mapping or a list where Codex wants text: read again after its repair
            "w/repo/.agents/skills/flowmap/SKILL.md": skill("flowmap", "{a: 1, b: two}"),
            "w/repo/.agents/skills/quotedkey/SKILL.md": skill("quotedkey", '{"a": "b"}'),
            "w/repo/.agents/skills/mapthen/SKILL.md": skill("mapthen", "{a: 1} tail"),
            "w/repo/.agents/skills/emptymap/SKILL.md": skill("emptymap", "{}"),
            "w/repo/.agents/skills/flowlist/SKILL.md": skill("flowlist", "[a, b]"),
            "w/repo/.agents/skills/blockmap/SKILL.md": skill("blockmap", "\n  a: 1\n  b: 2"),
            "w/repo/.agents/skills/namemap/SKILL.md": skill("{x: 1}", "a mapping as its name"),
            "w/repo/.agents/skills/namelist/SKILL.md": skill("[x]", "a list as its name"),
            "w/repo/.agents/skills/tagged/SKILL.md": skill("tagged", "!!str 12"),
            "w/repo/AGENTS.md": "root agents\n",
        },
        cwd="w/repo/sub",
        agents=CODEX,
    ),
    Workspace("no_instructions", {**GIT, "w/repo/README.md": "nothing for agents\n"}),
    *ON_READ,
    *GEMINI_CASES,
    *OPENCODE_CASES,
    *DETAILS,
    *COPILOT_CASES,
)
