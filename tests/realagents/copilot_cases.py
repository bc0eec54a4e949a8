"""The workspaces GitHub Copilot CLI is run on: each packs facts the ``copilot`` profile must reproduce.

Paths are relative to the workspace folder: ``w/`` holds projects, ``home/`` is HOME. Copilot CLI
takes a ``.git`` folder for a repository only when git would (``objects/``, ``refs/`` and a valid
``HEAD``), so these workspaces make one (``copilot_git_roots`` checks a ``HEAD`` alone is not).
"""

from __future__ import annotations

from tests.realagents.harness import Workspace, skill

COPILOT = ("copilot",)


def git(at: str = "w/repo") -> dict[str, str | bytes]:
    return {
        f"{at}/.git/HEAD": "ref: refs/heads/main\n",
        f"{at}/.git/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
        f"{at}/.git/objects/info/.keep": "",
        f"{at}/.git/refs/heads/.keep": "",
    }


def copilot(name: str, files: dict[str, str | bytes], cwd: str = "w/repo", **more: object) -> Workspace:
    return Workspace(name, {**git(), **files}, cwd=cwd, agents=COPILOT, **more)  # type: ignore[arg-type]


# scalars YAML 1.1 and 1.2 type differently: Copilot CLI keeps as text "yes", "Off", the date, "1_000", "1:20",
# "017" and "1_0.5", and drops the skill for the others (not a string)
YAML_WORDS = ("yes", "Off", "2024-01-01", "1_000", "1:20", "~", "0x1F", "1e3", "017", "00.5", "-0x1F", "0b101", "1_0.5")


def command(description: str) -> str:
    return f"---\ndescription: {description}\n---\nbody\n"


def scoped(apply_to: str, body: str, extra: str = "") -> str:
    return f"---\napplyTo: {apply_to}\n{extra}---\n{body}"


FOLDED = "---\nname: folded\ndescription: >\n  folded one\n  folded two\n---\n"
LITERAL = "---\nname: literal\ndescription: |\n  line one\n  line two\n---\n"
BOM_CRLF = b"\xef\xbb\xbf---\r\nname: bom-crlf\r\ndescription: BOM and CRLF\r\n---\r\n"

COPILOT_CASES: tuple[Workspace, ...] = (
    copilot(
        "copilot_walk",
        {
            "home/.copilot/copilot-instructions.md": "home copilot\n",
            "home/.copilot/AGENTS.md": "not read\n",
            "home/AGENTS.md": "not read\n",
            "home/.claude/CLAUDE.md": "not read\n",
            "home/.copilot/instructions/h1.instructions.md": "home always\n",
            "home/.copilot/instructions/deep/h2.instructions.md": scoped('"**/*.py"', "home py\n"),
            "w/AGENTS.md": "above the root: not read\n",
            "w/repo/.github/copilot-instructions.md": "root copilot\n",
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/CLAUDE.md": "root claude\n",
            "w/repo/GEMINI.md": "root gemini\n",
            "w/repo/AGENTS.override.md": "not read\n",
            "w/repo/CLAUDE.local.md": "not read\n",
            "w/repo/.claude/CLAUDE.md": "not read\n",
            "w/repo/.github/AGENTS.md": "not read\n",
            "w/repo/.github/instructions/b.instructions.md": scoped('"**"', "star star\n"),
            "w/repo/.github/instructions/UPPER.INSTRUCTIONS.MD": "upper suffix\n",
            "w/repo/.github/instructions/plain.md": "not read\n",
            "w/repo/.github/instructions/a/z.instructions.md": "nested dir\n",
            "w/repo/.github/instructions/py.instructions.md": scoped(
                '"**/*.py"', "py\n", "description: Python <rules> & more\n"
            ),
            "w/repo/.github/instructions/comma.instructions.md": scoped('"**/*.md, **/*.ts"', "comma\n"),
            "w/repo/.github/instructions/list.instructions.md": scoped('["src/**", "*.go"]', "list\n"),
            "w/repo/.github/instructions/bad.instructions.md": scoped("[unclosed", "bad yaml\n"),
            "w/repo/.github/instructions/ex.instructions.md": scoped(
                '"**"', "excluded\n", "excludeAgent: coding-agent\n"
            ),
            "w/repo/.github/instructions/rev.instructions.md": scoped(
                '"*"', "review only\n", "excludeAgent: code-review\n"
            ),
            "w/repo/.claude/rules/r1.md": "rule always\n",
            "w/repo/.claude/rules/r2.md": '---\npaths:\n  - "**/*.rs"\n---\nrust rule\n',
            "w/repo/.claude/rules/r3.txt": "not read\n",
            "w/repo/sub/.github/copilot-instructions.md": "between copilot\n",
            "w/repo/sub/AGENTS.md": "between agents\n",
            "w/repo/sub/.github/instructions/x.instructions.md": "a folder between: not read\n",
            "w/repo/sub/.claude/rules/r.md": "a folder between: not read\n",
            "w/repo/sub/cwd/.github/copilot-instructions.md": "cwd copilot\n",
            "w/repo/sub/cwd/AGENTS.md": "cwd agents\n",
            "w/repo/sub/cwd/GEMINI.md": "cwd gemini\n",
            "w/repo/sub/cwd/.github/instructions/c.instructions.md": "cwd always\n",
            "w/repo/sub/cwd/.github/instructions/d.instructions.md": scoped("'*.ts'", "cwd ts\n"),
            "w/repo/sub/cwd/below/AGENTS.md": "below the cwd: not at startup\n",
        },
        cwd="w/repo/sub/cwd",
    ),
    copilot(
        "copilot_text",
        {
            "w/repo/.github/copilot-instructions.md": "no final newline\nsecond",
            "w/repo/AGENTS.md": b"\xef\xbb\xbfbom\r\ncrlf  \r\n\r\n<!-- comment -->\n\n\n",
            "w/repo/CLAUDE.md": "",
            "w/repo/GEMINI.md": "  \n\n",
            "w/repo/.github/instructions/a.instructions.md": (
                "zero\u200bwidth\u200c bidi\u202e\u202a\u2066x\u2069 soft\u00adhyphen tag\U000e0041 keep\u200djoin"
                " \u2764\ufe0f nbsp\u00a0 \ufeffmid\n"
            ),
            "w/repo/.github/instructions/b.instructions.md": '---\napplyTo: "**"\n---\n',
            "w/repo/.github/instructions/c.instructions.md": "   \n",
            "w/repo/.github/instructions/d.instructions.md": "literal </custom_instruction> passes\nlast",
        },
    ),
    copilot(
        "copilot_imports",
        {
            "w/outside.md": "outside\n",
            "w/repo/AGENTS.md": (
                "see @docs/a.md for more.\n- item @./dot.md\nmail dev@example.com and @~/home.md\n"
                "```\n@docs/a.md in a fence\n```\nand `@docs/a.md` inline, @../outside.md, @missing.md, @docs\n"
                "again @docs/a.md\n"
            ),
            "w/repo/CLAUDE.md": "claude @docs/a.md\n",
            "w/repo/.github/copilot-instructions.md": "copilot @docs/a.md stays\n",
            "w/repo/docs/a.md": "doc a\n@b.md\ncycle @a.md\n",
            "w/repo/docs/b.md": "doc b <imported_custom_instruction x> no newline",
            "w/repo/dot.md": "dot\n",
            "w/repo/.github/instructions/i.instructions.md": "instr @docs/a.md stays\n",
        },
    ),
    copilot(
        "copilot_no_git",
        {
            "w/x/AGENTS.md": "x agents\n",
            "w/x/.github/instructions/x.instructions.md": scoped('"**/*.py"', "x py\n"),
            "w/AGENTS.md": "not read without git\n",
            "w/.github/copilot-instructions.md": "not read without git\n",
        },
        cwd="w/x",
    ),
    copilot(
        "copilot_custom_dirs",
        {
            "w/ex1/.github/instructions/g1.instructions.md": "ex1 github always\n",
            "w/ex1/.claude/rules/r1.md": "ex1 rule\n",
            "w/ex1/instructions/y1.instructions.md": scoped('"**/*.py"', "ex1 other py\n"),
            "w/ex1/x1.instructions.md": "ex1 top\n",
            "w/ex1/AGENTS.md": "ex1 agents\n",
            "w/ex1/copilot-instructions.md": "not read\n",
            "w/ex1/.github/copilot-instructions.md": "not read\n",
            "w/ex1/CLAUDE.md": "not read\n",
            "w/repo/AGENTS.md": "root\n",
            "w/repo/extra/.github/instructions/g2.instructions.md": "extra github always\n",
            "w/repo/extra/x2.instructions.md": "extra top\n",
            "w/repo/.github/skills/r1/SKILL.md": skill("r1", "project"),
            "w/cs/s1/SKILL.md": skill("s1", "custom one"),
            "w/cs/a0/SKILL.md": skill("a0", "custom a0"),
            "w/cs2/s2/SKILL.md": skill("s2", "custom two"),
            "w/cs2/r1/SKILL.md": skill("r1", "a custom copy: the project's wins"),
            "home/.copilot/skills/u1/SKILL.md": skill("u1", "user"),
        },
        env={
            "COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "{ws}/w/ex1,{ws}/w/repo/extra",
            "COPILOT_SKILLS_DIRS": "{ws}/w/cs,{ws}/w/cs2",
        },
    ),
    copilot(
        "copilot_skills",
        {
            "w/repo/.github/skills/zeta/SKILL.md": skill("zeta", "Z <b> & 'q' \"d\""),
            "w/repo/.github/skills/group/alpha/SKILL.md": skill("alpha", "nested in a group"),
            "w/repo/.github/skills/outer/SKILL.md": skill("outer", "outer"),
            "w/repo/.github/skills/outer/inner/SKILL.md": skill("inner", "inside a skill: not listed"),
            "w/repo/.agents/skills/spaced/SKILL.md": skill("my spaced skill", "spaces"),
            "w/repo/.agents/skills/noname/SKILL.md": skill(None, "named by its folder"),
            "w/repo/.agents/skills/num/SKILL.md": skill("123", "a number: dropped"),
            "w/repo/.agents/skills/emoji/SKILL.md": skill("\u00e9moji", "dropped"),
            "w/repo/.agents/skills/long/SKILL.md": skill("a" * 70, "dropped"),
            "w/repo/.agents/skills/nodesc/SKILL.md": skill(
                "nodesc", None, "# Title\nPlain first line\nsecond line\n\nsecond paragraph\n"
            ),
            "w/repo/.agents/skills/emptydesc/SKILL.md": skill("emptydesc", '""'),
            "w/repo/.agents/skills/toolong/SKILL.md": skill("toolong", "x" * 1025),
            "w/repo/.agents/skills/badyaml/SKILL.md": skill("badyaml", "Use when: a colon"),
            "w/repo/.agents/skills/nofront/SKILL.md": "no frontmatter\n",
            "w/repo/.agents/skills/hidden/SKILL.md": skill("hidden", "off", extra="disable-model-invocation: true\n"),
            "w/repo/.agents/skills/lower/skill.md": skill("lower", "lowercase file: ignored"),
            "w/repo/.agents/skills/folded/SKILL.md": FOLDED,
            "w/repo/.agents/skills/literal/SKILL.md": LITERAL,
            "w/repo/.agents/skills/bom/SKILL.md": BOM_CRLF,
            "w/repo/.agents/skills/latin/SKILL.md": skill("latin", "caf\xe9").encode("latin-1"),
            "w/repo/.agents/skills/wide/SKILL.md": skill("wide", "UTF-16").encode("utf-16"),
            "w/repo/.agents/skills/chars/SKILL.md": skill("a.b:c_d", "dots, colons, underscores"),
            "w/repo/.agents/skills/upper/SKILL.md": skill("UPPER Name", "spaces in upper case"),
            "w/repo/.agents/skills/tab/SKILL.md": skill('"tab\\tname"', "a tab: dropped"),
            "w/repo/.agents/skills/dash/SKILL.md": skill("-dash", "must start with a letter or digit"),
            "w/repo/.agents/skills/longbody/SKILL.md": "---\nname: longbody\n---\n" + "word " * 300,
            "w/repo/.agents/skills/fivelines/SKILL.md": skill("fivelines", None, "one   two\n\n# x\n3\n4\n5\n"),
            "w/repo/.agents/skills/padded/SKILL.md": skill("padded", "'  padded both  '"),
            "w/repo/.agents/skills/folded-key/SKILL.md": skill("folded-key", ">\n  one\n  two", "license: MIT\n"),
            "w/repo/.agents/skills/literal-key/SKILL.md": skill("literal-key", "|\n  one\n  two", "license: MIT\n"),
            "w/repo/.agents/skills/kept/SKILL.md": "---\nname: kept\ndescription: |+\n  kept\n\n---\n",
            "w/repo/.claude/skills/zeta/SKILL.md": skill("zeta", "a second zeta: the .github one wins"),
            "w/repo/.claude/skills/DUP2/SKILL.md": skill("DUP2", "upper"),
            "w/repo/.claude/skills/dup2/SKILL.md": skill("dup2", "lower"),
            "w/repo/.codex/skills/codex/SKILL.md": skill("codex", "not read"),
            "home/.copilot/skills/user1/SKILL.md": skill("user1", "user copilot"),
            "home/.copilot/skills/alpha/SKILL.md": skill("alpha", "the project's wins"),
            "home/.agents/skills/user0/SKILL.md": skill("user0", "user agents"),
            "home/.claude/skills/claudeuser/SKILL.md": skill("claudeuser", "not read"),
        },
    ),
    copilot(
        "copilot_same_text_once",
        {
            "home/.copilot/copilot-instructions.md": "home\n",
            "w/repo/.github/copilot-instructions.md": "home\n",  # a copy of the home file's text: sent once
            "w/repo/AGENTS.md": "@x.md\nshared\n",
            "w/repo/GEMINI.md": "\ufeff@x.md\nshar\u200bed\n",  # cleaned, the same text: left out
            "w/repo/x.md": "imported\n",
            "w/repo/sub/AGENTS.md": "@../x.md\nshared\n",  # imports the same file: expanded the same
            "w/repo/sub/CLAUDE.md": "@x.md\nshared\n",  # imports nothing there: another text
            "w/repo/sub/GEMINI.md": "home",  # no final line break: another text
            "w/repo/sub/a/AGENTS.md": "",
            "w/repo/sub/a/CLAUDE.md": "",  # empty twice: one block
        },
        cwd="w/repo/sub/a",
        links={"w/repo/CLAUDE.md": "AGENTS.md"},  # a link to AGENTS.md: sent once
    ),
    copilot(
        "copilot_skills_runs",
        {
            "w/repo/.github/skills/b-root/SKILL.md": skill("b-root", "root github"),
            "w/repo/.agents/skills/a-root/SKILL.md": skill("a-root", "root agents"),
            "w/repo/.claude/skills/c-root/SKILL.md": skill("c-root", "root claude"),
            "w/repo/pkg/.github/skills/z-cwd/SKILL.md": skill("z-cwd", "cwd github"),
            "w/repo/pkg/.claude/skills/y-cwd/SKILL.md": skill("y-cwd", "cwd claude"),
            "w/repo/pkg/.claude/skills/b-root/SKILL.md": skill("b-root", "cwd claude copy: the .github one wins"),
            "w/repo/pkg/AGENTS.md": "pkg\n",
        },
        cwd="w/repo/pkg",
    ),
    copilot(
        "copilot_read_below",
        {
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/.github/instructions/py.instructions.md": scoped('"**/*.py"', "py\n", "description: d\n"),
            "w/repo/.github/instructions/ts.instructions.md": scoped('"**/*.ts"', "ts: no match\n"),
            "w/repo/.github/instructions/sub.instructions.md": scoped('"sub/**"', "sub star\n"),
            "w/repo/.github/instructions/rel.instructions.md": scoped('"deep/*.py"', "not from the root: no match\n"),
            "w/repo/.github/instructions/always.instructions.md": "always\n",
            "w/repo/.claude/rules/r.md": "---\npaths: ['**/*.py']\n---\nrule py <x>\n",
            "home/.copilot/instructions/h.instructions.md": scoped('"*.py"', "home py\n"),
            "w/repo/sub/AGENTS.md": "sub agents\n",
            "w/repo/sub/CLAUDE.md": "sub claude @../AGENTS.md\n",
            "w/repo/sub/.github/copilot-instructions.md": "sub copilot\n",
            "w/repo/sub/.github/instructions/a.instructions.md": "sub always\n",
            "w/repo/sub/.github/instructions/b.instructions.md": scoped('"**/*.ts"', "sub ts: no match\n"),
            "w/repo/sub/.github/instructions/c.instructions.md": scoped('"**/*.py"', "sub py match\n"),
            "w/repo/sub/.claude/rules/c.md": "sub rule\n",
            "w/repo/sub/deep/GEMINI.md": b"\xef\xbb\xbfdeep <x> & \"q\" 'a' z\xe2\x80\x8bw\r\n",
            "w/repo/sub/deep/AGENTS.md": "",
            "w/repo/sub/deep/CLAUDE.md": "  \n\u200b\n",
            "w/repo/sub/.github/instructions/deeper/n.instructions.md": "a folder inside: read too\n",
            "w/repo/sub/.github/instructions/e.instructions.md": scoped('"deep/*.py"', "folder-relative: no match\n"),
            "w/repo/sub/.github/instructions/f.instructions.md": scoped('"sub/deep/*.py"', "root-relative\n"),
            "w/repo/sub/.github/instructions/g.instructions.md": scoped(
                '"**"', "excluded\n", "excludeAgent: coding-agent\n"
            ),
            "w/repo/sub/.github/instructions/w.instructions.md": "  \n",
            "w/repo/sub/.claude/rules/p.md": "---\npaths: ['**/*.ts']\n---\nrule: no match\n",
            "w/repo/sub/deep/code.py": "x = 1\n",
        },
        read="w/repo/sub/deep/code.py",
    ),
    copilot(
        "copilot_read_from_a_sub_folder",
        {
            "w/repo/AGENTS.md": "root agents\n",
            "w/repo/.github/instructions/a.instructions.md": scoped('"pkg/x/*.py"', "root-relative\n"),
            "w/repo/.github/instructions/b.instructions.md": scoped('"x/*.py"', "cwd-relative: no match\n"),
            "w/repo/pkg/.github/instructions/c.instructions.md": scoped('"x/*.py"', "cwd file, cwd-relative\n"),
            "w/repo/pkg/.github/instructions/d.instructions.md": scoped('"pkg/x/*.py"', "cwd file, root-relative\n"),
            "w/repo/pkg/AGENTS.md": "pkg\n",
            "w/repo/pkg/x/AGENTS.md": "x agents\n",
            "w/repo/pkg/x/code.py": "x = 1\n",
        },
        cwd="w/repo/pkg",
        read="w/repo/pkg/x/code.py",
    ),
    copilot(
        "copilot_git_roots",
        {
            "w/repo/AGENTS.md": "outer: the root, the inner .git is no repository\n",
            "w/repo/inner/.git/HEAD": "ref: refs/heads/main\n",
            "w/repo/inner/AGENTS.md": "inner, a folder between\n",
            "w/repo/inner/src/AGENTS.md": "src\n",
        },
        cwd="w/repo/inner/src",
    ),
    copilot(
        "copilot_commands",
        {
            "w/repo/AGENTS.md": "repo\n",
            "w/.claude/commands/above-git.md": command("Above the git root: not read"),
            "home/.claude/commands/user.md": command("The user's: not read"),
            "w/repo/mid/sub/.claude/commands/at-cwd.md": command("The work dir's first"),
            "w/repo/mid/sub/.claude/commands/same.md": command("The work dir's copy wins"),
            "w/repo/mid/.claude/commands/a-mid.md": command("Then those above, sorted together"),
            "w/repo/.claude/commands/same.md": command("The root's copy"),
            "w/repo/.claude/commands/at-root.md": command("At the root"),
            "w/repo/.claude/commands/plain.md": "No frontmatter\n\nsecond\nthird\nfourth\n",
            "w/repo/.claude/commands/heading.md": "# Heading\n\nbody one\n  body two  \nbody three\n",
            "w/repo/.claude/commands/empty.md": "",
            "w/repo/.claude/commands/named.md": "---\nname: other-name\ndescription: Its name\n---\n",
            "w/repo/.claude/commands/spaced name.md": command("Spaces made -"),
            "w/repo/.claude/commands/CAPS.MD": command(".MD in any case"),
            "w/repo/.claude/commands/.hidden.md": command("Hidden: not read"),
            "w/repo/.claude/commands/group/nested.md": command("In a folder: not read"),
            "w/repo/.claude/commands/hint.md": "---\ndescription: A list hint\nargument-hint: [pr]\n---\n",
            "w/repo/.claude/commands/hint2.md": "---\ndescription: A text hint\nargument-hint: '<pr>'\n---\n",
            "w/repo/.claude/commands/hint3.md": "---\ndescription: An empty hint\nargument-hint:\n---\n",
            "w/repo/.claude/commands/off.md": "---\ndescription: Off\ndisable-model-invocation: true\n---\n",
            "w/repo/.claude/commands/badyaml.md": "---\ndescription: [unclosed\n---\nbody\n",
            "w/repo/.claude/commands/num.md": "---\ndescription: 42\n---\nbody\n",
            "w/repo/.claude/commands/null.md": "---\ndescription:\n---\nbody\n",
            "w/repo/.claude/commands/dup-skill.md": command("A skill of the name wins"),
            "w/repo/.claude/skills/dup-skill/SKILL.md": skill("dup-skill", "The skill"),
            "w/repo/.claude/skills/s-num/SKILL.md": "---\nname: s-num\ndescription: 42\n---\nbody\n",
            "w/repo/.claude/skills/s-null/SKILL.md": "---\nname: s-null\ndescription:\n---\nbody\n",
            **{
                f"w/repo/.claude/skills/y-{n}/SKILL.md": f"---\nname: y-{n}\ndescription: {value}\n---\nbody\n"
                for n, value in enumerate(YAML_WORDS)
            },
            "w/repo/.claude/skills/on/SKILL.md": "---\nname: on\ndescription: A name YAML 1.1 reads as true\n---\n",
            "w/repo/target.md": command("Read through a link"),
        },
        cwd="w/repo/mid/sub",
        links={"w/repo/.claude/commands/linked.md": "/w/repo/target.md"},
    ),
    copilot(  # names in another case: the exact one wins, else the folder's first listed; the .github folder exact
        "copilot_name_case",
        {
            "home/.copilot/Copilot-Instructions.md": "home copilot, in another case\n",
            "w/repo/agents.md": "root agents, lower\n",
            "w/repo/Agents.md": "root agents, title\n",
            "w/repo/claude.md": "root claude, lower: the exact name wins\n",
            "w/repo/CLAUDE.md": "root claude, exact\n",
            "w/repo/.github/Copilot-Instructions.md": "root copilot file, in another case\n",
            "w/repo/.GITHUB/copilot-instructions.md": "a .github folder in another case: not read\n",
            "w/repo/mid/gemini.MD": "mid gemini, caps suffix\n",
            "w/repo/mid/Claude.md/x": "a folder so named: passed over\n",
            "w/repo/mid/sub/agents.md": "cwd agents, lower\n",
            "w/repo/mid/sub/AGENTS.md": "cwd agents, exact\n",
            "w/repo/mid/sub/x.py": "",
            # a container holding a SKILL.md is that one skill; nothing below it is listed
            "w/repo/.github/skills/SKILL.md": skill("container-skill", "Right in .github/skills"),
            "w/repo/.github/skills/below/SKILL.md": skill("below-container", "Below a container skill: not listed"),
            "w/repo/.agents/skills/good/SKILL.md": skill("good", "In a container without its own"),
            "home/.copilot/skills/SKILL.md": skill("user-container", "Right in the user's folder"),
            "home/.copilot/skills/user-below/SKILL.md": skill("user-below", "Not listed"),
            # a custom instruction dir's AGENTS.md is matched with its case (its *.instructions.md without)
            "w/c1/agents.md": "c1 agents, lower: not read\n",
            "w/c2/Agents.md": "c2 agents, title: not read\n",
            "w/c2/AGENTS.md": "c2 agents, exact\n",
            "w/c3/AGENTS.MD": "c3 agents, caps: not read\n",
            "w/c3/X.INSTRUCTIONS.MD": "c3 caps suffix\n",
        },
        cwd="w/repo/mid/sub",
        env={"COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "{ws}/w/c1,{ws}/w/c2,{ws}/w/c3"},
    ),
)
