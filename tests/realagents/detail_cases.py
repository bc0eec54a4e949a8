"""Workspaces for details of Codex and Claude Code found on held-out trees (issue 33, items 7 and 3).

The user's own skill folders reached through symlinks (a skill folder linked elsewhere in
HOME or outside it, a whole skills folder that is a link), a ``SKILL.md`` that is a link
(Claude Code reads it, Codex lists no such skill), skills nested inside another
skill's folder, folder names that differ from the frontmatter ``name`` only in case, and
Codex's ``project_doc_fallback_filenames`` / ``project_doc_max_bytes`` in
``~/.codex/config.toml`` (with a project ``.codex/config.toml`` that tries the same, which Codex
ignores in a project the user has not marked trusted).
A link target starting with ``/`` is a path of the workspace (see ``Workspace.build``).
"""

from __future__ import annotations

from tests.realagents.harness import Workspace, skill

GIT = {"w/repo/.git/HEAD": "ref: refs/heads/main\n"}


# descriptions: null (~, null, nothing) and a list leave the skill out; the rest are listed as written
CODEX_WORDS = (
    *("true", "42", "0x1F", "1_000", "1e3", "2024-01-01", "~", "", "[a, b]", "1.50", "+1", ".inf", "yes", "Off"),
    *("007", "12:30", "null", "2024-01-01 10:00:00"),
)


# plain scalars the agents written in JavaScript type by their own YAML (Claude Code: YAML 1.2's core schema;
# OpenCode: js-yaml 3): each skill's description or name is one of them
JS_WORDS = (
    *("true", "42", "0x1F", "1_000", "1e3", "2024-01-01", "~", "[a, b]", "1.50", "+1", ".inf", "yes", "Off"),
    *("007", "12:30", "00.5", "0b101", "2001-02-30"),
)
JS_NAMES = ("on", "off", "yes", "true", "1_0", "0x1F", "007")


def yaml_words(root: str) -> dict[str, str]:
    """A skill in ``root`` for each of :data:`JS_WORDS` as its description and each of :data:`JS_NAMES` as its name."""
    described = {
        f"{root}/d{n:02d}/SKILL.md": f"---\nname: d{n:02d}\ndescription: {value}\n---\nbody line\n"
        for n, value in enumerate(JS_WORDS)
    }
    named = {
        f"{root}/n{n:02d}/SKILL.md": f"---\nname: {value}\ndescription: named {value}\n---\nbody\n"
        for n, value in enumerate(JS_NAMES)
    }
    return {**described, **named}


def command(description: str) -> str:
    return f"---\ndescription: {description}\n---\nbody\n"


BOTH = ("claude", "codex")
CODEX = ("codex",)

DETAILS: tuple[Workspace, ...] = (
    Workspace(
        "home_skill_links",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            "home/.claude/skills/plain/SKILL.md": skill("plain", "A plain user skill"),
            "home/dotfiles/cin/SKILL.md": skill("cin", "Claude skill linked within home"),
            "w/elsewhere/cfar/SKILL.md": skill("cfar", "Claude skill linked from outside home"),
            "w/elsewhere/cfile.md": skill("cfile", "Claude SKILL.md linked from outside home"),
            "home/dotfiles/ain/SKILL.md": skill("ain", "Agents skill linked within home"),
            "w/elsewhere/afar/SKILL.md": skill("afar", "Agents skill linked from outside home"),
            "w/elsewhere/afile.md": skill("afile", "Agents SKILL.md linked from outside home"),
            "w/elsewhere/xfar/SKILL.md": skill("xfar", "Codex skill linked from outside home"),
            "w/repo/tools/torepo/SKILL.md": skill("torepo", "User skill linked into the repository"),
        },
        links={
            "home/.claude/skills/cin": "../../dotfiles/cin",
            "home/.claude/skills/cfar": "/w/elsewhere/cfar",
            "home/.claude/skills/cfile/SKILL.md": "/w/elsewhere/cfile.md",
            "home/.claude/skills/torepo": "/w/repo/tools/torepo",
            "home/.claude/skills/gone": "/w/nowhere",
            "home/.agents/skills/ain": "../../dotfiles/ain",
            "home/.agents/skills/afar": "/w/elsewhere/afar",
            "home/.agents/skills/afile/SKILL.md": "/w/elsewhere/afile.md",
            "home/.codex/skills/xfar": "/w/elsewhere/xfar",
        },
    ),
    Workspace(
        "home_skills_folder_links",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            "w/claude-user/cu/SKILL.md": skill("cu", "In a linked ~/.claude/skills outside home"),
            "w/agents-user/au/SKILL.md": skill("au", "In a linked ~/.agents/skills outside home"),
            "home/dotfiles/codex-skills/xu/SKILL.md": skill("xu", "In a linked ~/.codex/skills within home"),
        },
        links={
            "home/.claude/skills": "/w/claude-user",
            "home/.agents/skills": "/w/agents-user",
            "home/.codex/skills": "../dotfiles/codex-skills",
        },
    ),
    Workspace(
        "nested_and_case",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            "w/repo/.agents/skills/outer/SKILL.md": skill("outer", "Outer agents skill"),
            "w/repo/.agents/skills/outer/inner/SKILL.md": skill("inner", "Inside outer"),
            "w/repo/.agents/skills/outer/refs/deep/SKILL.md": skill("deep", "Two below outer"),
            "w/repo/.codex/skills/xouter/SKILL.md": skill("xouter", "Outer codex skill"),
            "w/repo/.codex/skills/xouter/xinner/SKILL.md": skill("xinner", "Inside xouter"),
            "w/repo/.claude/skills/couter/SKILL.md": skill("couter", "Outer claude skill"),
            "w/repo/.claude/skills/couter/cinner/SKILL.md": skill("cinner", "Inside couter"),
            "home/.agents/skills/uouter/SKILL.md": skill("uouter", "Outer user skill"),
            "home/.agents/skills/uouter/uinner/SKILL.md": skill("uinner", "Inside uouter"),
            "home/.claude/skills/cuouter/SKILL.md": skill("cuouter", "Outer claude user skill"),
            "home/.claude/skills/cuouter/cuinner/SKILL.md": skill("cuinner", "Inside cuouter"),
            "w/repo/.claude/skills/MixedCase/SKILL.md": skill("mixedcase", "Folder in mixed case"),
            "w/repo/.claude/skills/lowerdir/SKILL.md": skill("LowerDir", "Name in mixed case"),
            "w/repo/.claude/skills/samecase/SKILL.md": skill("samecase", "Same"),
            "w/repo/.claude/skills/other/SKILL.md": skill("Different", "Differs in more than case"),
            "home/.claude/skills/HomeCase/SKILL.md": skill("homecase", "User folder in mixed case"),
            "home/.claude/skills/Shared/SKILL.md": skill("shared", "User Shared folder"),
            "w/repo/.claude/skills/shared/SKILL.md": skill("shared", "Project shared folder"),
            "home/.claude/skills/dupx/SKILL.md": skill("dupx", "User dupx"),
            "w/repo/.claude/skills/alpha1/SKILL.md": skill("beta1", "Named as another folder"),
            "w/repo/.claude/skills/beta1/SKILL.md": skill("gamma1", "Named otherwise"),
            "w/repo/.claude/skills/p1/SKILL.md": skill("same1", "One of two of one name"),
            "w/repo/.claude/skills/p2/SKILL.md": skill("same1", "Two of two of one name"),
            "w/repo/.claude/skills/DupX/SKILL.md": skill("dupx", "Project DupX named dupx"),
            "w/repo/.agents/skills/CaseDir/SKILL.md": skill("casedir", "Codex folder in mixed case"),
        },
    ),
    Workspace(
        "linked_skill_md",
        {
            **GIT,
            "home/dotfiles/inhome.md": skill("inhomefile", "SKILL.md linked within home"),
            "home/.agents/skills/inhomefile/.keep": "",
            "home/.claude/skills/cinhomefile/.keep": "",
            "w/repo/docs/tool.md": skill("repofile", "SKILL.md linked within the repository"),
            "w/repo/.agents/skills/repofile/.keep": "",
            "w/repo/.claude/skills/crepofile/.keep": "",
        },
        links={
            "home/.agents/skills/inhomefile/SKILL.md": "../../../dotfiles/inhome.md",
            "home/.claude/skills/cinhomefile/SKILL.md": "../../../dotfiles/inhome.md",
            "w/repo/.agents/skills/repofile/SKILL.md": "../../../docs/tool.md",
            "w/repo/.claude/skills/crepofile/SKILL.md": "../../../docs/tool.md",
        },
    ),
    Workspace(
        "codex_config_toml",
        {
            **GIT,
            "home/.codex/config.toml": 'project_doc_fallback_filenames = ["RULES.md", "CLAUDE.md"]\n'
            "project_doc_max_bytes = 40\n",
            "home/.codex/AGENTS.md": "home doc\n",
            "w/repo/CLAUDE.md": "claude root\n",
            "w/repo/RULES.md": "rules root\n",
            "w/repo/PROJECT.md": "project fallback root\n",
            "w/repo/sub/CLAUDE.md": "claude sub, long enough to be cut by the budget\n",
            "w/repo/sub/PROJECT.md": "project fallback sub\n",
            "w/repo/.codex/config.toml": 'project_doc_fallback_filenames = ["PROJECT.md"]\n'
            "project_doc_max_bytes = 100000\n",
        },
        cwd="w/repo/sub",
        agents=CODEX,
    ),
    Workspace(
        "codex_skill_folders",  # below a plugin's manifest a skill is <plugin>:<name>; a policy may hide it
        {
            **GIT,
            "w/repo/.agents/.claude-plugin/plugin.json": '{"name": "outer"}',
            "w/repo/.agents/skills/plain/SKILL.md": skill("plain", "named by the outer plugin"),
            "w/repo/.agents/skills/own/SKILL.md": skill("own", "its own folder's plugin is nearer"),
            "w/repo/.agents/skills/own/.claude-plugin/plugin.json": '{"name": "  inner plugin  "}',
            "w/repo/.agents/skills/own/deeper/SKILL.md": skill("deeper", "inside a skill: the nearest plugin"),
            "w/repo/.agents/skills/both/SKILL.md": skill("both", "Codex's own manifest first"),
            "w/repo/.agents/skills/both/.codex-plugin/plugin.json": '{"name": "codexp"}',
            "w/repo/.agents/skills/both/.claude-plugin/plugin.json": '{"name": "claudep"}',
            "w/repo/.agents/skills/badjson/SKILL.md": skill("badjson", "a manifest not JSON: the outer one"),
            "w/repo/.agents/skills/badjson/.claude-plugin/plugin.json": "{not json",
            "w/repo/.agents/skills/numname/SKILL.md": skill("numname", "a name not a string: the outer one"),
            "w/repo/.agents/skills/numname/.claude-plugin/plugin.json": '{"name": 5}',
            "w/repo/.agents/skills/codexbad/SKILL.md": skill("codexbad", "a bad .codex-plugin hides .claude-plugin"),
            "w/repo/.agents/skills/codexbad/.codex-plugin/plugin.json": "[1]",
            "w/repo/.agents/skills/codexbad/.claude-plugin/plugin.json": '{"name": "unused"}',
            "w/repo/.agents/skills/unnamed/SKILL.md": skill("unnamed", "an empty name: the folder's own"),
            "w/repo/.agents/skills/unnamed/.claude-plugin/plugin.json": '{"name": ""}',
            "w/repo/.agents/skills/off/SKILL.md": skill("off", "its policy keeps it out of the list"),
            "w/repo/.agents/skills/off/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
            "w/repo/.agents/skills/allowed/SKILL.md": skill("allowed", "its policy lets it be listed"),
            "w/repo/.agents/skills/allowed/agents/openai.yaml": "policy:\n  allow_implicit_invocation: true\n",
            "w/repo/.agents/skills/badpolicy/SKILL.md": skill("badpolicy", "a policy that is no YAML: listed"),
            "w/repo/.agents/skills/badpolicy/agents/openai.yaml": "policy: [unclosed\n",
            "home/.agents/skills/hiddenuser/SKILL.md": skill("hiddenuser", "a user skill's policy counts too"),
            "home/.agents/skills/hiddenuser/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
            "home/.agents/.codex-plugin/plugin.json": '{"description": "no name"}',
            "home/.agents/skills/user/SKILL.md": skill("user", "a user skill, the folder's own name"),
        },
        agents=CODEX,
    ),
    Workspace(
        "claude_commands",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            "home/.claude/commands/user-one.md": command("A user command"),
            "home/.claude/commands/same.md": command("The user's copy wins"),
            "w/repo/.claude/commands/same.md": command("The root's copy"),
            "w/repo/sub/.claude/commands/same.md": command("The work dir's copy"),
            "w/repo/sub/.claude/commands/at-cwd.md": command("In the work dir"),
            "w/repo/sub/.claude/commands/case.md": command("Lower case, in the work dir"),
            "w/repo/.claude/commands/Case.md": command("Upper case, at the root: another name"),
            "w/repo/sub/deeper/.claude/commands/below.md": command("Below the work dir: not read"),
            "w/.claude/commands/above-git.md": command("Above the git root: not read"),
            "w/repo/.claude/commands/plain.md": "The first line describes it\n\nmore\n",
            "w/repo/.claude/commands/heading.md": "# Heading marks dropped\n\nbody\n",
            "w/repo/.claude/commands/long.md": "L" * 120 + "\n",
            "w/repo/.claude/commands/empty.md": "",
            "w/repo/.claude/commands/named.md": "---\nname: other-name\ndescription: A name is ignored\n---\n",
            "w/repo/.claude/commands/spaced name.md": command("Spaces kept"),
            "w/repo/.claude/commands/group/nested.md": command("group/nested.md is group:nested"),
            "w/repo/.claude/commands/group/deep/deeper.md": command("Any depth"),
            "w/repo/.claude/commands/.hidden.md": command("Hidden names too"),
            "w/repo/.claude/commands/notes.txt": "not a command\n",
            "w/repo/.claude/commands/CAPS.MD": command("Only .md exactly"),
            "w/repo/.claude/commands/off.md": "---\ndescription: Off\ndisable-model-invocation: true\n---\n",
            "w/repo/.claude/commands/badyaml.md": "---\ndescription: [unclosed\n---\nbody\n",
            "w/repo/.claude/commands/listed.md": "---\ndescription: [a, b]\n---\nA list: the body's line\n",
            "w/repo/.claude/commands/num.md": "---\ndescription: 42\n---\n",
            "w/repo/.claude/commands/when.md": "---\ndescription: No when_to_use\nwhen_to_use: ignored\n---\n",
            "w/repo/.claude/commands/dup-skill.md": command("A skill of the name wins"),
            "w/repo/.claude/skills/dup-skill/SKILL.md": skill("dup-skill", "The skill"),
            "w/repo/.claude/commands/g/x.md": command("The skill g:x wins"),
            "w/repo/.claude/skills/g:x/SKILL.md": skill("g:x", "skill g:x"),
            "w/repo/.claude/commands/named-skill.md": command("Only a folder's name is a skill's"),
            "w/repo/.claude/skills/folder/SKILL.md": skill("named-skill", "shown as its folder alone"),
            "w/repo/target.md": command("Read through a link"),
        },
        cwd="w/repo/sub",
        links={"w/repo/.claude/commands/linked.md": "/w/repo/target.md"},
        agents=("claude",),
    ),
    Workspace(
        "codex_yaml_words",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            # Codex reads a plain scalar as the text written: YAML 1.1's booleans, numbers and times stay text
            **{
                f"w/repo/.agents/skills/d{n:02d}/SKILL.md": f"---\nname: d{n:02d}\ndescription: {value}\n---\nbody\n"
                for n, value in enumerate(CODEX_WORDS)
            },
            **{
                f"w/repo/.agents/skills/n{n:02d}/SKILL.md": f"---\nname: {value}\ndescription: named {value}\n---\n"
                for n, value in enumerate(("on", "off", "yes", "no", "y", "true", "1_0", "0x1F", "~"))
            },
        },
        agents=CODEX,
    ),
    Workspace(
        "claude_yaml_words",
        {**GIT, "w/repo/AGENTS.md": "repo\n", **yaml_words("w/repo/.claude/skills")},
        agents=("claude",),
    ),
    Workspace(  # a SKILL.md right in a skills folder: a skill too for Codex (named by its folder when unnamed)
        "container_skill_md",
        {
            **GIT,
            "w/repo/AGENTS.md": "repo\n",
            "w/repo/.agents/skills/SKILL.md": skill("top-agents", "Right in .agents/skills"),
            "w/repo/.agents/skills/below/SKILL.md": skill("below-agents", "Below it"),
            "w/repo/.codex/skills/SKILL.md": skill("top-codex", "Right in .codex/skills"),
            "w/repo/.claude/skills/SKILL.md": skill(
                "top-claude", "Right in .claude/skills: Claude Code passes it over"
            ),
            "w/repo/.claude/skills/below-claude/SKILL.md": skill("below-claude", "Below it"),
            "home/.agents/skills/SKILL.md": skill("top-home", "Right in ~/.agents/skills"),
            "home/.codex/skills/SKILL.md": "---\ndescription: No name, right in ~/.codex/skills\n---\n",
            "home/.claude/skills/SKILL.md": skill("top-claude-home", "Right in ~/.claude/skills"),
        },
        agents=BOTH,
    ),
    Workspace(  # names in another case: no agent reads skill.md or SKILL.MD; only Copilot CLI reads agents.md
        "names_in_another_case",
        {
            **GIT,
            "w/repo/.git/objects/info/.keep": "",  # a repository for Copilot CLI too
            "w/repo/.git/refs/heads/.keep": "",
            "w/repo/agents.md": "root agents.md, lower\n",
            "w/repo/Claude.md": "root Claude.md, title\n",
            "w/repo/sub/Agents.md": "cwd Agents.md, title\n",
            "w/repo/sub/gemini.md": "cwd gemini.md, lower\n",
            **{
                f"w/repo/{folder}/{how}-{n}/{name}": skill(f"{how}-{n}", f"In {name}")
                for n, folder in enumerate((".agents/skills", ".claude/skills", ".github/skills", ".gemini/skills"))
                for how, name in (
                    ("good", "SKILL.md"),
                    ("lower", "skill.md"),
                    ("title", "Skill.md"),
                    ("caps", "SKILL.MD"),
                )
            },
        },
        cwd="w/repo/sub",
        agents=("claude", "codex", "copilot", "gemini", "opencode"),
    ),
)
