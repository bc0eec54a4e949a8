"""``applicable()``: what applies when an agent works on some paths of a monorepo, per profile."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentcontext import applicable
from agentcontext.errors import InvalidRequestError, UnavailableError
from agentcontext.instructions.applied import Applicable, text
from agentcontext.resource import LoadType, Resource, Status
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, test_config
from tests import monorepo
from tests.containment import outside_the_roots


def lookup(
    work: Path, home: Path, paths: list[str], profile: str = "codex", settings: dict[str, Any] | None = None
) -> Applicable:
    return applicable(work, paths, test_config(work, home=home, profile=profile, settings=settings))


def loaded(answer: Applicable, root: Path) -> list[str]:
    return [os.path.relpath(f.resource.path, root) for f in answer.files]


def aged(root: Path) -> None:
    """Backdate everything out of the two-second racy window, so misses may be remembered."""
    past = time.time() - 60
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (past, past), follow_symlinks=False)
    os.utime(root, (past, past))


# --- the chain below the work dir, per profile --------------------------------------------------------


def test_codex_profile_gives_the_nested_agents_md_chain_below_the_work_dir_outermost_first(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.build(tmp_path / "repo")
    answer = lookup(work, home, ["services/billing/api/handler.py"])
    assert loaded(answer, work) == ["services/AGENTS.md", "services/billing/AGENTS.md"]
    assert [f.resource.load.type for f in answer.files if f.resource.load] == [LoadType.ON_DEMAND] * 2
    assert [r.path for r in answer.startup] == [str(work / "AGENTS.md")]  # listed apart, not repeated
    first = answer.files[0]
    assert (first.bytes, first.resource.content) == (40, "Services: every service has a Makefile.\n")
    assert first.paths == (str(work / "services/billing/api/handler.py"),)
    assert "loaded when the agent works there" in first.reason


def test_the_startup_files_are_listed_in_the_order_the_agent_gets_them(tmp_path: Path, home: Path) -> None:
    # CLAUDE.md comes first and imports AGENTS.md, which sorts before it by path
    work = make_workspace(tmp_path / "repo", {".git/": "", "CLAUDE.md": "@AGENTS.md\n", "AGENTS.md": "rules\n"})
    answer = lookup(work, home, ["src"], profile="claude")
    assert [r.path for r in answer.startup] == [str(work / "CLAUDE.md"), str(work / "AGENTS.md")]


def test_an_override_wins_its_folder_and_the_shadowed_file_is_listed_with_its_reason(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.build(tmp_path / "repo")
    answer = lookup(work, home, ["services/search/index.py"])
    assert loaded(answer, work) == ["services/AGENTS.md", "services/search/AGENTS.override.md"]
    [shadowed] = answer.not_loaded
    assert shadowed.resource.path == str(work / "services/search/AGENTS.md")
    assert shadowed.resource.status is Status.SHADOWED
    assert "shadowed by" in shadowed.reason


def test_each_file_is_given_once_and_names_every_path_it_applies_to(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    paths = ["services/billing/api/handler.py", "services/billing/db/schema.sql", "services/search", "web/src"]
    answer = lookup(work, home, paths)
    assert loaded(answer, work) == [
        "services/AGENTS.md",
        "services/billing/AGENTS.md",
        "services/search/AGENTS.override.md",
        "web/AGENTS.md",
    ]
    services = answer.files[0]
    assert services.paths == (str(work / paths[0]), str(work / paths[1]), str(work / paths[2]))


def test_default_profile_reads_the_fallback_names_and_sanitises_the_text_it_hands_a_model(
    tmp_path: Path, home: Path
) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {".git/": "", "pkg/CLAUDE.md": "Use <!-- hidden from people -->ruff.\u200b\r\n", "pkg/x.py": ""},
    )
    answer = lookup(work, home, ["pkg/x.py"], profile="default")
    assert loaded(answer, work) == ["pkg/CLAUDE.md"]
    assert answer.files[0].resource.content == "Use <!-- hidden from people -->ruff.\u200b\n"
    assert "hidden from people" not in text(answer, sanitized=True)
    codex = lookup(work, home, ["pkg/x.py"], profile="codex")
    assert codex.files == ()  # Codex reads no CLAUDE.md


def test_codex_profile_keeps_the_bytes_as_they_are(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "repo", {".git/": "", "pkg/AGENTS.md": b"\xef\xbb\xbfline\r\n", "pkg/x.py": ""})
    [file] = lookup(work, home, ["pkg/x.py"]).files
    assert file.resource.content == "\ufeffline\r\n"


def test_a_nested_checkout_starts_its_own_chain_as_codex_would_with_its_cwd_there(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "vendor/AGENTS.md": "vendor: outside the inner checkout",
            "vendor/inner/.git/": "",
            "vendor/inner/AGENTS.md": "inner root",
            "vendor/inner/src/AGENTS.md": "inner src",
        },
    )
    codex = lookup(work, home, ["vendor/inner/src/x.py"])
    assert loaded(codex, work) == ["vendor/inner/AGENTS.md", "vendor/inner/src/AGENTS.md"]
    coder = lookup(work, home, ["vendor/inner/src/x.py"], profile="coder")
    assert loaded(coder, work) == ["vendor/AGENTS.md", "vendor/inner/AGENTS.md", "vendor/inner/src/AGENTS.md"]


def test_coder_profile_reads_every_instruction_name_at_the_top_of_each_folder(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo", {"pkg/AGENTS.md": "agents", "pkg/CLAUDE.md": "claude", "pkg/.cursorrules": "cursor"}
    )
    answer = lookup(work, home, ["pkg/x.py"], profile="coder")
    assert loaded(answer, work) == ["pkg/AGENTS.md", "pkg/CLAUDE.md", "pkg/.cursorrules"]


def test_a_folder_that_does_not_exist_yet_gives_what_its_existing_parents_hold(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    answer = lookup(work, home, ["services/billing/new/module/file.py"])
    assert loaded(answer, work) == ["services/AGENTS.md", "services/billing/AGENTS.md"]


def test_the_work_dir_itself_adds_nothing(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    for path in (".", str(work), "README.md"):
        assert lookup(work, home, [path]).files == ()


def test_an_empty_nested_file_is_listed_not_loaded(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "repo", {"pkg/AGENTS.md": " \n\n", "pkg/x.py": ""})
    answer = lookup(work, home, ["pkg/x.py"])
    assert answer.files == ()
    [empty] = answer.not_loaded
    assert "empty or whitespace only" in empty.reason


# --- claude: what Claude Code sends after a read (checked against the binary in tests/realagents) -------


def test_claude_profile_sends_the_nested_family_its_rules_and_the_matching_root_rules_in_order(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.build(tmp_path / "repo")
    answer = lookup(work, home, ["services/billing/api/handler.py"], profile="claude")
    assert loaded(answer, work) == [
        "services/billing/CLAUDE.md",
        "services/billing/.claude/rules/style.md",
        ".claude/rules/api.md",
    ]
    types = [f.resource.load.type for f in answer.files if f.resource.load]
    assert types == [LoadType.ON_DEMAND, LoadType.ON_DEMAND, LoadType.PATH_SCOPED]
    sql = lookup(work, home, ["services/billing/db/schema.sql"], profile="claude")
    assert loaded(sql, work) == [
        "services/billing/CLAUDE.md",
        "services/billing/.claude/rules/style.md",
        "services/billing/.claude/rules/sql.md",
    ]
    assert sql.files[2].resource.load is not None and sql.files[2].resource.load.globs == ("**/*.sql",)


def test_claude_profile_lists_a_rule_with_malformed_paths_invalid_with_its_reason(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": "root",
            "pkg/.claude/rules/bad.md": "---\npaths: [': unclosed\n---\nnever loaded\n",
            "pkg/.claude/rules/number.md": "---\npaths: 5\n---\nnot path-scoped: always\n",
        },
    )
    answer = lookup(work, home, ["pkg/x.py"], profile="claude")
    assert loaded(answer, work) == ["pkg/.claude/rules/number.md"]
    [bad] = answer.not_loaded
    assert bad.resource.status is Status.INVALID
    assert "frontmatter is not valid YAML" in bad.reason and "skips the rule" in bad.reason


def test_claude_profile_answers_a_catastrophic_glob_quickly_and_says_what_it_could_not_match(
    tmp_path: Path, home: Path
) -> None:
    stars = "**/" * 200 + "*.zz"
    bomb = "{a,b}" * 40 + "/x.py"
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "CLAUDE.md": "root",
            "p/.claude/rules/stars.md": f"---\npaths: ['{stars}', '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b']\n---\nstars\n",
            "p/.claude/rules/bomb.md": f"---\npaths: '{bomb}'\n---\nbomb\n",
        },
    )
    deep = "p/" + "/".join(["a" * 30] * 40) + "/" + "a" * 200
    start = time.perf_counter()
    answer = lookup(work, home, [deep], profile="claude")
    assert time.perf_counter() - start < 2.0
    assert answer.files == ()
    [bomb_rule] = answer.not_loaded
    assert bomb_rule.resource.path.endswith("bomb.md") and "expands past 256 patterns" in bomb_rule.reason


def test_claude_profile_uses_the_agents_md_fallback_folder_by_folder(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "root agents: the session starts on the fallback",
            "a/AGENTS.md": "a agents",
            "a/b/CLAUDE.local.md": "b local wins its folder",
            "a/b/AGENTS.md": "b agents: not sent",
        },
    )
    answer = lookup(work, home, ["a/b/x.py"], profile="claude")
    assert [(os.path.relpath(f.resource.path, work), f.hook) for f in answer.files] == [
        ("a/b/CLAUDE.local.md", False),
        ("a/AGENTS.md", True),
    ]


# --- child projects --------------------------------------------------------------------------------------


def checkout_resources(work: Path, home: Path, profile: str) -> dict[str, Resource]:
    """The snapshot's resources of a folder of checkouts, by path relative to it."""
    config = test_config(work, home=home, profile=profile)
    snapshot = Scanner(work, config, environ=isolated_environ(home)).run().snapshot
    return {os.path.relpath(r.path, work): r for r in snapshot.resources}


def test_child_checkouts_list_their_root_files_on_demand_and_their_skills_and_mcp_disabled(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.checkouts(tmp_path / "src")
    by_path = checkout_resources(work, home, "default")
    api = by_path["api/AGENTS.md"]
    assert api.load is not None and (api.load.type, api.load.root) == (LoadType.ON_DEMAND, str(work / "api"))
    assert api.content == "API checkout: run make test.\n" and api.doc_order is None
    assert by_path["api/CLAUDE.md"].status is Status.SHADOWED
    assert by_path["web/AGENTS.md"].load is not None and by_path["web/AGENTS.md"].load.root == str(work / "web")
    assert "docs/AGENTS.md" not in by_path and "api/src/AGENTS.md" not in by_path  # not a checkout; not its root
    for disabled in ("api/.agents/skills/deploy/SKILL.md", "api/.claude/skills/release/SKILL.md", "api/.mcp.json"):
        assert by_path[disabled].status is Status.DISABLED
        assert "must not widen what runs" in (by_path[disabled].error or "")
    assert not [r for r in by_path.values() if r.kind == "mcp_server"]


def test_child_checkouts_under_the_claude_profile_list_their_claude_md_family_with_the_child_as_root(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.checkouts(tmp_path / "src")
    by_path = checkout_resources(work, home, "claude")
    claude_md = by_path["api/CLAUDE.md"]
    assert claude_md.load is not None and claude_md.load.type is LoadType.ON_DEMAND
    assert claude_md.load.root == str(work / "api") and claude_md.content == "API checkout for Claude.\n"
    assert by_path["api/.claude/skills/release/SKILL.md"].status is Status.DISABLED
    assert "api/.agents/skills/deploy/SKILL.md" not in by_path  # not a container of this profile


def test_child_checkouts_past_the_cap_are_named_not_dropped(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "src", {f"c{i}/.git/": "" for i in range(5)} | {"c4/AGENTS.md": "x"})
    config = test_config(work, home=home, settings={"project_doc.child_projects": 3})
    snapshot = Scanner(work, config, environ=isolated_environ(home)).run().snapshot
    [stopped] = [r for r in snapshot.resources if r.status is Status.EXCLUDED]
    assert stopped.path == str(work / "c3") and "2 more child projects" in (stopped.error or "")
    assert not [r for r in snapshot.resources if r.path == str(work / "c4" / "AGENTS.md")]


def test_a_path_in_a_child_checkout_gets_the_child_chain(tmp_path: Path, home: Path) -> None:
    work = monorepo.checkouts(tmp_path / "src")
    answer = lookup(work, home, ["api/src/main.py"], profile="default")
    assert loaded(answer, work) == ["api/AGENTS.md", "api/src/AGENTS.md"]


# --- bad input: refused with a reason, nothing outside the roots read ----------------------------------


def test_paths_outside_the_roots_are_refused_with_their_reason_and_never_read(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    outside = outside_the_roots(tmp_path)
    (outside / "AGENTS.md").write_text("secret")
    (outside / "pkg").mkdir()
    (outside / "pkg" / "AGENTS.md").write_text("secret")
    os.symlink(outside, work / "escape")
    os.symlink(outside / "pkg", work / "services" / "linked")
    asked = [
        str(outside / "pkg" / "x.py"),
        "../outside-the-roots/pkg/x.py",
        "services/../../outside-the-roots/x.py",
        "~/x.py",
        "escape/pkg/x.py",
        "services/linked/x.py",
        "escape",
        "a\0b",
        "",
    ]
    answer = lookup(work, home, asked)
    reasons = {r.path: r.reason for r in answer.refused}
    assert len(reasons) == len(asked) and answer.files == ()
    assert "outside the work dir" in reasons[asked[0]]
    assert "parent traversal" in reasons[asked[1]] and "parent traversal" in reasons[asked[2]]
    assert "~ is not expanded" in reasons[asked[3]]
    assert "symlink leaving" in reasons[asked[4]] and "symlink leaving" in reasons[asked[5]]
    assert "symlink leaving" in reasons["escape"]
    assert "NUL" in reasons["a\0b"] and "non-empty" in reasons[""]


def test_a_nested_instruction_file_linked_outside_the_roots_is_invalid_and_not_read(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "repo", {".git/": "", "pkg/x.py": ""})
    secret = outside_the_roots(tmp_path) / "AGENTS.md"
    secret.write_text("secret")
    os.symlink(secret, work / "pkg" / "AGENTS.md")
    answer = lookup(work, home, ["pkg/x.py"])
    assert answer.files == ()
    [link] = answer.not_loaded
    assert link.resource.status is Status.INVALID and "escapes" in link.reason


def test_ten_thousand_paths_in_one_call_are_an_error_naming_the_limit(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    with pytest.raises(InvalidRequestError, match=r"10000 paths in one lookup: at most 32 \(ondemand.max_paths\)"):
        lookup(work, home, [f"p{i}" for i in range(10_000)])


def test_a_tree_500_levels_deep_is_refused_past_the_depth_limit(tmp_path: Path, home: Path) -> None:
    work = make_workspace(tmp_path / "repo", {".git/": ""})
    deep = work
    for _ in range(500):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (work / "d" / "AGENTS.md").write_text("top of the deep tree")
    answer = lookup(work, home, [str(deep / "x.py"), "d/d/x.py"])
    [refused] = answer.refused
    assert "501 levels below" in refused.reason and "ondemand.max_depth" in refused.reason
    assert loaded(answer, work) == ["d/AGENTS.md"]


def test_a_lookup_past_its_deadline_gives_up_with_an_error(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    scanner = Scanner(work, test_config(work, home=home, profile="codex"), environ=isolated_environ(home))
    result = scanner.run()
    with pytest.raises(UnavailableError, match="gave up"):
        scanner.resolver.resolve(result, ["services/billing/x.py"], deadline=time.monotonic() - 1)


# --- caps -----------------------------------------------------------------------------------------------


def test_the_per_file_cap_gives_oversize_and_the_answer_cap_excludes_what_follows(tmp_path: Path, home: Path) -> None:
    work = make_workspace(
        tmp_path / "repo",
        {"a/AGENTS.md": "x" * 200, "a/b/AGENTS.md": "y" * 50, "a/b/c/AGENTS.md": "z" * 60, "a/b/c/d/AGENTS.md": "w"},
    )
    settings = {"snapshot.max_resource_bytes": 100, "ondemand.max_bytes": 100}
    answer = lookup(work, home, ["a/b/c/d/x.py"], settings=settings)
    assert loaded(answer, work) == ["a/b/AGENTS.md", "a/b/c/d/AGENTS.md"]
    [excluded] = answer.excluded
    assert excluded.resource.path == str(work / "a/b/c/AGENTS.md") and excluded.resource.content is None
    assert "capped at 100 bytes (ondemand.max_bytes)" in excluded.reason
    [oversize] = answer.not_loaded
    assert oversize.resource.status is Status.OVERSIZE and oversize.resource.content is None


# --- the cache: misses remembered, checked against the folder, forgotten on change -----------------------


def test_a_remembered_miss_still_sees_a_file_created_in_that_folder(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    aged(work)
    scanner = Scanner(work, test_config(work, home=home, profile="codex"), environ=isolated_environ(home))
    result = scanner.run()
    before = scanner.applicable(["web/src/components/Button.tsx"], result=result)
    assert loaded(before, work) == ["web/AGENTS.md"]
    assert str(work / "web/src/components") in scanner.resolver._misses
    (work / "web/src/components/AGENTS.md").write_text("components")
    after = scanner.applicable(["web/src/components/Button.tsx"], result=result)
    assert loaded(after, work) == ["web/AGENTS.md", "web/src/components/AGENTS.md"]


def test_an_edited_nested_file_is_read_again(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    aged(work)
    scanner = Scanner(work, test_config(work, home=home, profile="claude"), environ=isolated_environ(home))
    result = scanner.run()
    first = scanner.applicable(["services/billing/api/handler.py"], result=result)
    (work / "services/billing/.claude/rules/style.md").write_text("Billing style: edited.\n")
    second = scanner.applicable(["services/billing/api/handler.py"], result=result)
    assert first.files[1].resource.content == "Billing style: small functions.\n"
    assert second.files[1].resource.content == "Billing style: edited.\n"
    assert first.files[1].resource.content_hash != second.files[1].resource.content_hash


def test_forget_drops_what_is_remembered_of_a_folder(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    aged(work)
    scanner = Scanner(work, test_config(work, home=home, profile="codex"), environ=isolated_environ(home))
    scanner.applicable(["web/src/components/Button.tsx", "services/billing/x.py"])
    folders = [str(work / "web/src/components"), str(work / "services/billing")]
    assert folders[0] in scanner.resolver._misses and folders[1] in scanner.resolver._folders
    scanner.resolver.forget(folders)
    assert folders[0] not in scanner.resolver._misses and folders[1] not in scanner.resolver._folders


def test_a_miss_is_remembered_for_its_ttl_only(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    aged(work)
    config = test_config(work, home=home, profile="codex", settings={"ondemand.miss_ttl": 0.5})
    scanner = Scanner(work, config, environ=isolated_environ(home))
    before = time.monotonic()
    scanner.applicable(["web/src/components/Button.tsx"])
    expires = scanner.resolver._misses[str(work / "web/src/components")][0]
    assert before + 0.5 <= expires <= time.monotonic() + 0.5


@pytest.mark.parametrize("warm", [False, True], ids=["first lookup", "remembered folders"])
def test_a_watched_answer_names_its_chain_folders_where_the_chain_stops_and_a_rules_folder_whole(
    tmp_path: Path, home: Path, warm: bool
) -> None:
    """What the agent watches for its chats' discovered files (issue 34): the same whether the folders were
    read now or remembered from an earlier lookup."""
    work = make_workspace(
        tmp_path / "w",
        {"CLAUDE.md": "root", "web/CLAUDE.md": "web", "web/.claude/rules/ts.md": "---\npaths: ['*.ts']\n---\nts\n"},
    )
    aged(work)
    scanner = Scanner(work, test_config(work, home=home, profile="claude"), environ=isolated_environ(home))
    scanner.run()
    paths = ["web/app.ts", "new/deep/x.py"]
    if warm:
        scanner.applicable(paths, watch=True)
    answer = scanner.applicable(paths, watch=True)
    plain = scanner.applicable(paths)
    watch = {os.path.relpath(folder, work): names for folder, names in answer.watch}

    assert plain.watch == () and plain == answer  # only a watcher asks for it; the answer is the same
    assert watch["."] == frozenset({"web", "new"})  # a chain folder going, and the missing one appearing
    assert {"CLAUDE.md", ".claude", "CLAUDE.local.md"} <= (watch["web"] or set())
    assert watch["web/.claude/rules"] is None  # read whole: any name there
    assert not any(folder.startswith("new") for folder in watch)  # nothing below a folder that is not there
