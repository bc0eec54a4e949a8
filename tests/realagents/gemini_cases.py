"""The workspaces Gemini CLI is run on: each is a fact the ``gemini`` profile must reproduce.

Paths are relative to the workspace folder: ``w/`` holds projects, ``home/`` is HOME.
"""

from __future__ import annotations

import json

from tests.realagents.harness import Workspace, import_chain, skill

GIT = {"w/repo/.git/HEAD": "ref: refs/heads/main\n"}
GEMINI = ("gemini",)


def gemini(name: str, files: dict[str, str | bytes], cwd: str = "w/repo", **more: object) -> Workspace:
    return Workspace(name, files, cwd=cwd, agents=GEMINI, **more)  # type: ignore[arg-type]


def settings(names: object) -> str:
    return json.dumps({"context": {"fileName": names}})


GEMINI_CASES: tuple[Workspace, ...] = (
    gemini(
        "gemini_walk",
        {
            **GIT,
            "home/.gemini/GEMINI.md": "global\n",
            "home/GEMINI.md": "home root, not read\n",
            "home/.claude/CLAUDE.md": "claude home\n",
            "home/.codex/AGENTS.md": "codex home\n",
            "w/GEMINI.md": "above the git root\n",
            "w/repo/GEMINI.md": "root\n",
            "w/repo/AGENTS.md": "agents, not read\n",
            "w/repo/CLAUDE.md": "claude, not read\n",
            "w/repo/sub/GEMINI.md": "sub\n",
            "w/repo/sub/cwd/GEMINI.md": "cwd\n",
            "w/repo/sub/cwd/below/GEMINI.md": "below the cwd\n",
            "w/repo/other/GEMINI.md": "a sibling\n",
        },
        cwd="w/repo/sub/cwd",
    ),
    gemini(
        "gemini_sorted_paths",
        {
            **GIT,
            "w/repo/GEMINI.md": "root\n",
            "w/repo/A/GEMINI.md": "upper A sorts before the root's file\n",
            "w/repo/A/b/GEMINI.md": "A b\n",
            "w/repo/A/b/_c/GEMINI.md": "underscore\n",
        },
        cwd="w/repo/A/b/_c",
    ),
    gemini("gemini_no_git", {"w/x/GEMINI.md": "x\n", "w/x/y/GEMINI.md": "y\n"}, cwd="w/x/y"),
    gemini(
        "gemini_nested_repo",
        {
            **GIT,
            "w/repo/GEMINI.md": "outer\n",
            "w/repo/inner/.git/HEAD": "ref: refs/heads/main\n",
            "w/repo/inner/GEMINI.md": "inner\n",
            "w/repo/inner/src/GEMINI.md": "inner src\n",
        },
        cwd="w/repo/inner/src",
    ),
    gemini(
        "gemini_git_file",
        {
            "w/repo/.git": "gitdir: /nonexistent/worktrees/x\n",
            "w/repo/GEMINI.md": "wt\n",
            "w/repo/pkg/GEMINI.md": "p\n",
        },
        cwd="w/repo/pkg",
    ),
    gemini(
        "gemini_text",
        {
            **GIT,
            "w/repo/GEMINI.md": b"\xef\xbb\xbfbom line\r\nsecond\r\n\r\n",
            "w/repo/a/GEMINI.md": " \n\t\n",
            "w/repo/a/b/GEMINI.md": "",
            "w/repo/a/b/c/GEMINI.md": (
                "\n\n   indented start\ntrailing spaces   \n<!-- kept comment -->\n"
                "zero\u200bwidth \u202eright to left\u202c\n\n\n"
            ),
            "w/repo/a/b/c/d/GEMINI.md": b"bad \xff byte\n",
        },
        cwd="w/repo/a/b/c/d",
    ),
    gemini(
        "gemini_imports",
        {
            **GIT,
            "w/repo/GEMINI.md": (
                "root\n@imp1.md\nsee @./imp2.md and @sub/below.md\n@missing.md\nmail a@imp3.md x\n`@imp4.md`\n"
                "```\n@imp5.md\n```\n@imp6.md, @imp7.md: text\n@~/homeimp.md\n@../outside.md\n"
                "# Heading @h.md\n- item @li.md\n> quote @q.md\n@1digit.md\n@_under.md\n@dir\n@bom.md\n"
                "@crlf.md\n@empty.md\n@file://x.md\n@notes.md#section\n\t@tabbed.md\n@sub/../imp2.md\n"
            ),
            "w/repo/imp1.md": "one\n@nested1.md\n",
            "w/repo/nested1.md": "nested one, no newline",
            "w/repo/imp2.md": "two\n",
            "w/repo/sub/below.md": "below\n@sibling.md\n",
            "w/repo/sub/sibling.md": "sibling, relative to its importer\n",
            **{f"w/repo/{n}.md": f"{n}\n" for n in ("imp3", "imp4", "imp5", "imp6", "imp7", "h", "li", "q", "tabbed")},
            "w/repo/1digit.md": "digit\n",
            "w/repo/_under.md": "under\n",
            "home/homeimp.md": "home\n",
            "w/outside.md": "outside\n",
            "w/repo/dir/x.md": "x\n",
            "w/repo/bom.md": b"\xef\xbb\xbfbom import\n",
            "w/repo/crlf.md": b"crlf\r\nimport\r\n",
            "w/repo/empty.md": "",
            "w/repo/notes.md": "notes\n",
        },
    ),
    gemini(
        "gemini_import_cycles",
        {
            **GIT,
            "w/repo/GEMINI.md": "top\n@GEMINI.md\n@a.md\n@a.md\n",
            "w/repo/a.md": "a\n@b.md\n@a.md\n",
            "w/repo/b.md": "b\n@a.md\n@GEMINI.md\n",
        },
    ),
    gemini("gemini_import_depth", {**GIT, "w/repo/GEMINI.md": "top\n@imp1.md\n", **import_chain(7)}),
    gemini(
        "gemini_import_links",
        {
            **GIT,
            "w/repo/GEMINI.md": "root\n@out-link.md\n@in-link.md\n@sub/GEMINI.md\n",
            "w/repo/inside.md": "inside\n",
            "w/repo/sub/GEMINI.md": "sub file, also imported\n",
            "w/secret.md": "secret\n",
        },
        cwd="w/repo/sub",
        links={"w/repo/out-link.md": "../secret.md", "w/repo/in-link.md": "inside.md"},
    ),
    gemini(
        "gemini_import_no_git",
        {
            "w/x/GEMINI.md": "x\n@sub/a.md\n@../up.md\n@sub/b.md\n",
            "w/x/sub/a.md": "a\n",
            "w/x/sub/b.md": "b\n@../../up.md\n",
            "w/up.md": "up\n",
        },
        cwd="w/x",
    ),
    gemini(
        "gemini_global_imports",
        {
            **GIT,
            "home/.gemini/GEMINI.md": "global\n@g1.md\n@../home-file.md\n@rules/r.md\n",
            "home/.gemini/g1.md": "g1\n",
            "home/.gemini/rules/r.md": "rule\n@../g1.md\n",
            "home/home-file.md": "in home, outside .gemini\n",
            "w/repo/GEMINI.md": "project\n",
        },
    ),
    gemini("gemini_global_only", {"home/.gemini/GEMINI.md": "  global only  \n\n"}, cwd="w/plain"),
    gemini(
        "gemini_same_file_twice",
        {**GIT, "w/repo/GEMINI.md": "the one file\n"},
        cwd="w/repo/sub",
        links={"w/repo/sub/GEMINI.md": "../GEMINI.md"},
    ),
    gemini("gemini_directory_named_like_a_file", {**GIT, "w/repo/sub/GEMINI.md": "sub\n"}, dirs=("w/repo/GEMINI.md",)),
    gemini(
        "gemini_big_files",
        {**GIT, "w/repo/GEMINI.md": ("g" * 40958) + "\n", "w/repo/sub/GEMINI.md": ("h" * 40958) + "\n"},
        cwd="w/repo/sub",
    ),
    gemini(
        "gemini_file_names_of_the_user",
        {
            **GIT,
            "home/.gemini/settings.json": settings(["AGENTS.md", " docs/RULES.md ", "/abs.md", "AGENTS.md"]),
            "home/.gemini/AGENTS.md": "global agents\n",
            "home/.gemini/GEMINI.md": "global gemini\n",
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/GEMINI.md": "root gemini, still read\n",
            "w/repo/docs/RULES.md": "root rules\n",
            "w/repo/sub/AGENTS.md": "sub agents\n",
            "w/repo/sub/abs.md": "an absolute name joins below the folder\n",
            "w/repo/sub/CLAUDE.md": "not named\n",
        },
        cwd="w/repo/sub",
    ),
    gemini(
        "gemini_file_names_of_the_project",
        {
            **GIT,
            "home/.gemini/settings.json": settings("USER.md"),
            "home/.gemini/USER.md": "the user's name, replaced by the project's\n",
            "w/repo/USER.md": "not read\n",
            "w/repo/CLAUDE.md": "root claude\n",
            "w/repo/up.md": "read as sub/../up.md\n",
            "w/repo/sub/CLAUDE.md": "sub claude\n",
            "w/repo/sub/.gemini/settings.json": (
                '{\n  // the project\'s own\n  "context": {"fileName": ["CLAUDE.md", "../up.md"] /* two */}\n}\n'
            ),
        },
        cwd="w/repo/sub",
    ),
    gemini(
        "gemini_file_names_blank",
        {
            **GIT,
            "home/.gemini/settings.json": settings(["AGENTS.md"]),
            "w/repo/.gemini/settings.json": settings(""),
            "w/repo/AGENTS.md": "not read: the project's blank name list wins\n",
            "w/repo/GEMINI.md": "gemini\n",
        },
    ),
    gemini("gemini_nothing", {**GIT, "w/repo/README.md": "nothing for agents\n"}),
    gemini(
        "gemini_skills",
        {
            **GIT,
            "w/repo/sub/.gemini/skills/alpha/SKILL.md": skill("alpha", "Alpha does a"),
            "w/repo/sub/.gemini/skills/folder-b/SKILL.md": skill("other-name", "B desc"),
            "w/repo/sub/.gemini/skills/upper/SKILL.md": skill("Upper_Case", "upper"),
            "w/repo/sub/.gemini/skills/nodesc/SKILL.md": skill("nodesc", None),
            "w/repo/sub/.gemini/skills/noname/SKILL.md": skill(None, "No name"),
            "w/repo/sub/.gemini/skills/emptydesc/SKILL.md": skill("emptydesc", ""),
            "w/repo/sub/.gemini/skills/nofm/SKILL.md": "no frontmatter\n",
            "w/repo/sub/.gemini/skills/badyaml/SKILL.md": "---\nname: badyaml\ndescription: [unclosed\n---\nbad\n",
            "w/repo/sub/.gemini/skills/multi/SKILL.md": skill("multi", "|\n  line one\n  line two"),
            # a kept block last: its line breaks as js-yaml reads the block without its own closing one
            "w/repo/sub/.gemini/skills/kept/SKILL.md": "---\nname: kept\ndescription: |+\n  kept\n\n---\nx\n",
            "w/repo/sub/.gemini/skills/folded-key/SKILL.md": skill("folded-key", ">\n  one\n  two", "license: MIT\n"),
            "w/repo/sub/.gemini/skills/folded/SKILL.md": "---\nname: folded\ndescription: first\n  second\n",
            "w/repo/sub/.gemini/skills/long/SKILL.md": skill("long", "x" * 1100),
            "w/repo/sub/.gemini/skills/bom/SKILL.md": "\ufeff" + skill("bom", "Bom skill"),
            "w/repo/sub/.gemini/skills/latin/SKILL.md": skill("latin", "caf\xe9").encode("latin-1"),
            "w/repo/sub/.gemini/skills/wide/SKILL.md": skill("wide", "UTF-16").encode("utf-16"),
            "w/repo/sub/.gemini/skills/crlf/SKILL.md": skill("crlf", "Crlf skill").replace("\n", "\r\n"),
            "w/repo/sub/.gemini/skills/colon/SKILL.md": skill('"a:b/c"', "Name sanitized"),
            "w/repo/sub/.gemini/skills/xml/SKILL.md": skill("xml", '"a <b> & c"'),
            "w/repo/sub/.gemini/skills/yes/SKILL.md": skill("yes", "yes"),
            "w/repo/sub/.gemini/skills/group/inner/SKILL.md": skill("inner", "nested, not found"),
            "w/repo/sub/.gemini/skills/.hidden/SKILL.md": skill("hidden", "a dot folder"),
            "w/repo/sub/.gemini/skills/node_modules/SKILL.md": skill("nm", "node_modules"),
            "w/repo/sub/.agents/skills/agentsk/SKILL.md": skill("agentsk", "workspace agents"),
            "w/repo/sub/.agents/skills/Case/SKILL.md": skill("Dup", "upper Dup"),
            "w/repo/sub/.gemini/skills/dup/SKILL.md": skill("dup", "workspace gemini dup"),
            "w/repo/sub/.agents/skills/dup2/SKILL.md": skill("dup", "workspace agents dup"),
            "home/.gemini/skills/dup/SKILL.md": skill("dup", "user gemini dup"),
            "home/.agents/skills/dup/SKILL.md": skill("dup", "user agents dup"),
            "home/.gemini/skills/userone/SKILL.md": skill("userone", "User one"),
            "home/.agents/skills/usertwo/SKILL.md": skill("usertwo", "User two"),
            "home/.gemini/skills/creator/SKILL.md": skill("skill-creator", "The user's own skill-creator"),
            "home/shared/linked/SKILL.md": skill("linked", "through a link in home"),
            "w/repo/.gemini/skills/atroot/SKILL.md": skill("atroot", "at the git root, not the cwd"),
            "w/repo/sub/.claude/skills/cl/SKILL.md": skill("cl", "claude folder"),
            "w/repo/sub/skills/plain/SKILL.md": skill("plain", "plain skills folder"),
        },
        cwd="w/repo/sub",
        links={"home/.gemini/skills/linked": "../../shared/linked"},
    ),
    gemini(
        "gemini_skills_order",
        {
            **GIT,
            **{
                f"w/repo/.agents/skills/{n}/SKILL.md": skill(n, f"d {n}")
                for n in ("a1", "B2", "c3", "_d4", "e5", "F6", "g7", "Zz", "m-13", "k11")
            },
            **{f"w/repo/.gemini/skills/{n}/SKILL.md": skill(n, f"g {n}") for n in ("zeta", "Alpha", "beta")},
            **{f"home/.agents/skills/{n}/SKILL.md": skill(n, f"u {n}") for n in ("b", "a", "c3")},
            "home/.agents/skills/SKILL.md": skill("top-user", "a SKILL.md right in the skills folder"),
            "w/repo/.gemini/skills/SKILL.md": skill("top", "first of its folder"),
        },
    ),
)
