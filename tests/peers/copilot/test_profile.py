"""The ``copilot`` profile: what loads, in which order, with which text (binary checks: tests/realagents)."""

from __future__ import annotations

import os
from pathlib import Path

from agentcontext.peers.copilot import text as ctext
from agentcontext.peers.copilot.skills import copilot_skills_xml
from agentcontext.resource import Kind, LoadType, Resource, Status
from agentcontext.scan import Scanner, ScanResult, skill_roots
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md, test_config
from tests.cli.test_commands import run
from tests.helpers import backdate

GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/": "", ".git/refs/": ""}  # a repository to git


def copilot(work: Path, home: Path, **env: str) -> ScanResult:
    return scan_tree(work, home=home, profile="copilot", environ={**isolated_environ(home), **env})


def by_path(result: ScanResult) -> dict[str, Resource]:
    return {r.path: r for r in result.snapshot.resources}


def sent(result: ScanResult) -> list[str]:
    return [f.path for f in result.project_doc().files]


def test_blocks_come_from_home_the_root_the_work_dir_then_the_folders_between_nearest_first(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".github/copilot-instructions.md": "root copilot\n",
            "AGENTS.md": "root agents\n",
            "CLAUDE.md": "root claude\n",
            "a/AGENTS.md": "a\n",
            "a/b/CLAUDE.md": "b\n",
            "a/b/cwd/GEMINI.md": "cwd\n",
            "a/b/cwd/.github/copilot-instructions.md": "cwd copilot\n",
            "a/b/cwd/below/AGENTS.md": "below: not at startup\n",
        },
    )
    make_workspace(home, {".copilot/copilot-instructions.md": "home\n", ".claude/CLAUDE.md": "not read\n"})
    make_workspace(tmp_path, {"AGENTS.md": "above the root: not read\n"})
    result = copilot(root / "a/b/cwd", home)
    assert sent(result) == [
        str(home / ".copilot/copilot-instructions.md"),
        str(root / ".github/copilot-instructions.md"),
        str(root / "a/b/cwd/.github/copilot-instructions.md"),
        str(root / "AGENTS.md"),
        str(root / "CLAUDE.md"),
        str(root / "a/b/cwd/GEMINI.md"),
        str(root / "a/b/CLAUDE.md"),
        str(root / "a/AGENTS.md"),
    ]
    assert result.peer.wrap(result.project_doc(), str(root)).startswith("<custom_instruction>\nhome\n\n</custom")


PY = '---\napplyTo: "**/*.py, *.pyi"\ndescription: Py & co\n---\npy\n'


def test_instruction_files_apply_always_or_by_apply_to_and_an_excluded_one_is_listed_not_loaded(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".github/instructions/b.instructions.md": "always\n",
            ".github/instructions/A.INSTRUCTIONS.MD": '---\napplyTo: "**"\n---\nupper\n',
            ".github/instructions/py.instructions.md": PY,
            ".github/instructions/x.instructions.md": "---\nexcludeAgent: [coding-agent]\n---\nx\n",
            ".github/instructions/plain.md": "not read\n",
            ".claude/rules/r.md": "---\npaths: ['**/*.rs']\n---\nrust\n",
        },
    )
    result = copilot(root, home)
    files = by_path(result)
    py = files[str(root / ".github/instructions/py.instructions.md")]
    assert py.load is not None and py.load.type is LoadType.PATH_SCOPED and py.load.globs == ("**/*.py", "*.pyi")
    rule = files[str(root / ".claude/rules/r.md")]
    assert rule.load is not None and rule.load.type is LoadType.PATH_SCOPED and rule.load.globs == ("**/*.rs",)
    excluded = files[str(root / ".github/instructions/x.instructions.md")]
    assert excluded.load is not None and excluded.load.type is LoadType.NOT_LOADED
    assert "coding-agent" in (excluded.load.reason or "")
    assert str(root / ".github/instructions/plain.md") not in files
    text = result.peer.wrap(result.project_doc(), str(root))
    assert text.startswith('---\napplyTo: "**"\n---\nupper\n\n\nalways\n\n\nHere is a list of instruction files')
    assert text.endswith(
        "| **/*.py, *.pyi | '.github/instructions/py.instructions.md' | Py & co |\n"
        "| **/*.rs | '.claude/rules/r.md' |  |"
    )


def test_a_bom_and_invisible_characters_are_removed_and_the_rest_sent_as_written(tmp_path: Path, home: Path) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {**GIT, "AGENTS.md": "\ufeffa\u200bb\u202ec\u200dd\r\n<!-- kept -->\n\n", "CLAUDE.md": ""},
    )
    result = copilot(root, home)
    assert result.peer.wrap(result.project_doc(), str(root)) == (
        "<custom_instruction>\nab" + "c\u200dd\r\n<!-- kept -->\n\n\n</custom_instruction>\n\n"
        "<custom_instruction>\n\n</custom_instruction>"
    )


def test_nothing_is_sent_without_instruction_files(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "README.md": "x\n"})
    result = copilot(root, home)
    assert result.peer.wrap(result.project_doc(), str(root)) == ""
    done = run("doc", str(root), "--wrap", "-p", "copilot", home=home)
    assert done.stdout == ""


def test_custom_instruction_dirs_come_from_the_users_environment(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "AGENTS.md": "root\n"})
    extra = make_workspace(
        tmp_path / "ex",
        {"x.instructions.md": "ex top\n", ".github/instructions/g.instructions.md": "ex github\n", "AGENTS.md": "ex\n"},
    )
    result = copilot(root, home, COPILOT_CUSTOM_INSTRUCTIONS_DIRS=str(extra))
    text = result.peer.wrap(result.project_doc(), str(root))
    assert text.startswith("<custom_instruction>\nroot\n\n</custom_instruction>\n\nex github\n\n\nex top\n\n\n")
    assert text.endswith("| ../ex/ | '../ex/AGENTS.md' | Agent instructions for ../ex/**/* |")
    without = copilot(root, home)
    assert str(extra / "x.instructions.md") not in by_path(without)


def test_an_at_import_of_agents_md_follows_the_token_and_a_repeat_is_marked_already_loaded(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo", {**GIT, "AGENTS.md": "see @d.md now\nagain @d.md\n`@d.md`\n", "d.md": "doc"}
    )
    result = copilot(root, home)
    source = root / "d.md"
    assert result.peer.wrap(result.project_doc(), str(root)) == (
        f'<custom_instruction>\nsee @d.md\n\n<imported_custom_instruction source="{source}">\ndoc\n'
        f'</imported_custom_instruction> now\nagain @d.md\n\n<imported_custom_instruction source="{source}"'
        ' skipped="already-loaded" />\n`@d.md`\n\n</custom_instruction>'
    )
    imported = by_path(result)[str(source)]
    assert imported.load is not None and imported.load.type is LoadType.IMPORT


def test_frontmatter_patterns_read_as_copilot_cli_shows_them() -> None:
    assert ctext.front('---\napplyTo: ["a/**", "*.go"]\n---\n').patterns == ("a/**", "*.go")
    assert ctext.front("---\napplyTo: [unclosed\n---\n").patterns == ("[unclosed",)
    assert ctext.front('---\napplyTo: "*"\n---\n').always
    assert ctext.front("no frontmatter\n").always
    assert ctext.front("---\nexcludeAgent: coding-agent\n---\n").excluded
    assert not ctext.front("---\nexcludeAgent: code-review\n---\n").excluded


def test_skills_first_copy_wins_and_runs_of_one_kind_are_sorted_by_name(tmp_path: Path, home: Path) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".github/skills/zed/SKILL.md": skill_md("zed", "github zed"),
            ".agents/skills/alpha/SKILL.md": skill_md("alpha", "agents & <alpha>"),
            ".claude/skills/zed/SKILL.md": skill_md("zed", "shadowed"),
            ".claude/skills/spaced/SKILL.md": "---\nname: my spaced skill\n---\n# Head\nbody text\n",
            ".claude/skills/nofront/SKILL.md": "no frontmatter\n",
        },
    )
    make_workspace(home, {".copilot/skills/user/SKILL.md": skill_md("user", "mine")})
    result = copilot(root, home)
    found = result.snapshot.of_kind(Kind.SKILL)
    statuses = {r.path.split("/skills/")[1]: r.status for r in found if "/skills/" in r.path}
    assert statuses["zed/SKILL.md"] in (Status.OK, Status.SHADOWED)
    assert [r.status for r in found if r.path.endswith(".claude/skills/zed/SKILL.md")] == [Status.SHADOWED]
    assert [r.status for r in found if r.path.endswith("nofront/SKILL.md")] == [Status.INVALID]
    offered = [r for r in found if r.status is Status.OK and r.name]
    xml = copilot_skills_xml(offered, [p for p, _ in skill_roots(result)], str(root), str(root), str(home))
    names = [line.strip()[6:-7] for line in xml.split("\n") if line.strip().startswith("<name>")]
    assert names == ["alpha", "my-spaced-skill", "zed", "user"]
    assert "<description>agents &amp; &lt;alpha&gt;</description>" in xml
    assert "<description>body text</description>\n  <location>project</location>" in xml
    assert "<location>user</location>" in xml


def test_after_a_read_below_the_work_dir_it_sends_matching_scoped_files_then_each_folders_files_nearest_first(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            "AGENTS.md": "root\n",
            ".github/instructions/py.instructions.md": '---\napplyTo: "**/*.py"\n---\npy "q"\n',
            ".github/instructions/ts.instructions.md": '---\napplyTo: "**/*.ts"\n---\nts\n',
            "a/AGENTS.md": "a <x>\n",
            "a/.github/instructions/i.instructions.md": '---\napplyTo: "*.ts"\n---\nnot this file\n',
            "a/b/CLAUDE.md": "b & c\n",
            "a/b/code.py": "x = 1\n",
        },
    )
    result = copilot(root, home)
    assert result.peer.sends_on_read
    done = run("doc", str(root), "--wrap", "-p", "copilot", "--for", "a/b/code.py", home=home)
    assert done.returncode == 0, done.stderr
    head = "Apply these to any code you write here:\n\n"
    assert done.stdout.endswith(
        "\n\n\n<system_reminder>\nCustom instructions from .github/instructions/py.instructions.md. "
        f"{head}---\napplyTo: &quot;**/*.py&quot;\n---\npy &quot;q&quot;\n\n</system_reminder>\n"
        f"<system_reminder>\nCustom instructions from a/b/CLAUDE.md. {head}b &amp; c\n\n</system_reminder>\n"
        f"<system_reminder>\nCustom instructions from a/AGENTS.md. {head}a &lt;x&gt;\n\n</system_reminder>"
    )


def test_skills_prompt_prints_the_copilot_listing_and_nothing_without_skills(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, ".github/skills/s/SKILL.md": skill_md("s", "one")})
    done = run("skills", "prompt", str(root), "-f", "copilot", "-p", "copilot", home=home)
    assert done.stdout == (
        "<available_skills>\n<skill>\n  <name>s</name>\n  <description>one</description>\n"
        "  <location>project</location>\n</skill>\n</available_skills>"
    )
    empty = make_workspace(tmp_path / "empty", {".git/": ""})
    assert run("skills", "prompt", str(empty), "-f", "copilot", "-p", "copilot", home=home).stdout == ""


def test_a_git_folder_is_a_root_only_when_git_would_take_it_for_a_repository(tmp_path: Path, home: Path) -> None:
    outer = make_workspace(
        tmp_path / "repo",
        {**GIT, "AGENTS.md": "outer\n", "inner/.git/HEAD": "ref: refs/heads/main\n", "inner/src/AGENTS.md": "src\n"},
    )
    result = copilot(outer / "inner" / "src", home)
    assert result.layout.project_root == str(outer)  # HEAD alone: no repository
    assert sent(result) == [str(outer / "AGENTS.md"), str(outer / "inner/src/AGENTS.md")]
    make_workspace(outer / "inner", {".git/objects/": "", ".git/refs/": ""})
    assert copilot(outer / "inner" / "src", home).layout.project_root == str(outer / "inner")
    (outer / "inner" / ".git" / "HEAD").write_text("not a ref\n")
    assert copilot(outer / "inner" / "src", home).layout.project_root == str(outer)
    worktree = make_workspace(tmp_path / "wt", {".git": "gitdir: /nowhere\n", "src/AGENTS.md": "wt src\n"})
    assert copilot(worktree / "src", home).layout.project_root == str(worktree)  # a .git file: any


def test_a_block_whose_text_an_earlier_one_sent_is_shadowed_and_a_link_to_agents_md_is_sent_once(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            "AGENTS.md": "same\n",
            "GEMINI.md": "\ufeffsa\u200bme\n",  # cleaned as Copilot CLI cleans it: the same text
            "sub/AGENTS.md": "same",  # no final line break: another text, sent
            "sub/CLAUDE.md": "same\n",
            ".github/instructions/a.instructions.md": "same\n",  # always-applying files are never compared
        },
    )
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    result = copilot(root / "sub", home)
    assert sent(result) == [
        str(root / "AGENTS.md"),
        str(root / "sub/AGENTS.md"),
        str(root / ".github/instructions/a.instructions.md"),
    ]
    found = by_path(result)
    for left_out in ("CLAUDE.md", "GEMINI.md", "sub/CLAUDE.md"):
        resource = found[str(root / left_out)]
        assert resource.status is Status.SHADOWED, left_out
        assert resource.error == f"the same text as {root / 'AGENTS.md'}: Copilot CLI sends it once"
        assert resource.load is not None and resource.load.type is LoadType.NOT_LOADED
    assert result.peer.wrap(result.project_doc(), str(root)).count("<custom_instruction>") == 2


def test_a_skill_description_is_sent_as_yaml_gives_it_and_without_one_the_first_three_body_lines(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".github/skills/padded/SKILL.md": skill_md("padded", "'  padded  '"),
            ".github/skills/folded/SKILL.md": "---\nname: folded\ndescription: >\n  one\n  two\nlicense: MIT\n---\n",
            ".github/skills/last/SKILL.md": "---\nname: last\ndescription: >\n  one\n  two\n---\n",
            ".github/skills/body/SKILL.md": "---\nname: body\n---\none   two\r\n\n# head\n  three\nfour\nfive\n",
        },
    )
    result = copilot(root, home)
    described = {r.name: r.description for r in result.snapshot.of_kind(Kind.SKILL)}
    assert described == {
        "padded": "  padded  ",
        "folded": "one two\n",
        "last": "one two",
        "body": "one   two three four",
    }


def test_instruction_names_in_another_case_are_read_the_exact_name_first_and_the_github_folder_as_written(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            "agents.md": "root agents, lower\n",
            "claude.md": "root claude, lower\n",
            "CLAUDE.md": "root claude, exact\n",
            ".github/Copilot-Instructions.md": "copilot file\n",
            ".GITHUB/copilot-instructions.md": "not read\n",
            "cwd/Claude.md/x": "a folder so named\n",
            "cwd/GEMINI.MD": "cwd gemini\n",
        },
    )
    make_workspace(home, {".copilot/COPILOT-INSTRUCTIONS.md": "home\n"})
    result = copilot(root / "cwd", home)
    assert sent(result) == [
        str(home / ".copilot/COPILOT-INSTRUCTIONS.md"),
        str(root / ".github/Copilot-Instructions.md"),
        str(root / "agents.md"),
        str(root / "CLAUDE.md"),
        str(root / "cwd/GEMINI.MD"),
    ]


def test_of_two_names_in_other_cases_the_folder_lists_first_is_read(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path / "repo", {**GIT, "agents.md": "lower\n", "Agents.md": "title\n"})
    first = next(name for name in os.listdir(root) if name.lower() == "agents.md")  # the folder's own order
    assert sent(copilot(root, home)) == [str(root / first)]


def test_a_container_holding_a_skill_md_is_that_one_skill_and_nothing_below_it_is_listed(
    tmp_path: Path, home: Path
) -> None:
    root = make_workspace(
        tmp_path / "repo",
        {
            **GIT,
            ".github/skills/SKILL.md": skill_md("container-skill"),
            ".github/skills/below/SKILL.md": skill_md("below"),
            ".agents/skills/good/SKILL.md": skill_md("good"),
        },
    )
    offered = [r.name or "" for r in copilot(root, home).skills]
    assert sorted(offered) == ["container-skill", "good"]


def test_a_new_file_of_another_spelling_in_a_busy_folder_is_read_on_the_next_copilot_rescan(
    tmp_path: Path, home: Path
) -> None:
    # Copilot CLI reads any case of a name, so the folder's listing (not each name probed) is what a rescan
    # must state: a busy folder costs full passes until it settles, rather than a file missed for good
    work = make_workspace(tmp_path / "w" / "repo", {**GIT, "AGENTS.md": "root\n", "a/x.txt": ""}) / "a"
    backdate(tmp_path, 3600.0)
    (work.parent / "scratch").write_text("")  # the project folder changed a moment ago (racy)
    env = isolated_environ(home)
    scanner = Scanner(work, test_config(work, home=home, environ=env, profile="copilot"), environ=env)
    assert sent(scanner.run()) == [str(work.parent / "AGENTS.md")]
    (work.parent / "claude.md").write_text("here\n")  # no CLAUDE.md was there to probe again
    assert sent(scanner.run()) == [str(work.parent / "AGENTS.md"), str(work.parent / "claude.md")]
