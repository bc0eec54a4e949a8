"""The project doc: Codex's shared byte budget (codex-skills.md A.1) and the assembly of global and project text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcontext.instructions.chain import Found
from agentcontext.instructions.project_doc import SEPARATOR, DocFile, ProjectDoc, apply_budget, assemble
from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import Snapshot
from agentcontext.testing import make_workspace, scan_tree, skill_md


def found(path: str, data: str | bytes | None, *, scope: Scope = Scope.PROJECT, order: int | None = 0) -> Found:
    """An instruction file as discovery hands it over: budget-ready bytes and a numbered resource."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    resource = Resource(Kind.INSTRUCTION_FILE, path, scope, Status.OK, size_bytes=len(raw or b""), doc_order=order)
    return Found(resource, raw)


def doc_resource(
    path: str, content: str | None, order: int, *, scope: Scope = Scope.PROJECT, status: Status = Status.OK
) -> Resource:
    return Resource(Kind.INSTRUCTION_FILE, path, scope, status, content=content, doc_order=order)


def by_path(resources: list[Resource]) -> dict[str, Resource]:
    return {r.path: r for r in resources}


# --- apply_budget ------------------------------------------------------------------------


def test_project_files_share_one_budget_root_first() -> None:
    out = by_path(apply_budget([found("/r/AGENTS.md", "1234", order=0), found("/r/a/AGENTS.md", "5678", order=1)], 6))
    assert (out["/r/AGENTS.md"].status, out["/r/AGENTS.md"].content, out["/r/AGENTS.md"].error) == (
        Status.OK,
        "1234",
        None,
    )
    cut = out["/r/a/AGENTS.md"]
    assert (cut.status, cut.content) == (Status.TRUNCATED, "56")
    assert cut.error == "cut to 2 of 4 bytes by the project doc budget of 6 bytes"


def test_a_file_after_the_budget_is_spent_is_left_out_and_says_so() -> None:
    out = apply_budget([found("/r/AGENTS.md", "123456", order=0), found("/r/a/AGENTS.md", "more", order=1)], 6)
    left_out = out[1]
    assert (left_out.status, left_out.content) == (Status.TRUNCATED, "")
    assert left_out.error == "left out: the project doc budget of 6 bytes was used up by earlier files"


def test_home_and_source_files_are_not_budgeted_and_keep_their_untrimmed_text() -> None:
    out = apply_budget(
        [
            found("/h/AGENTS.md", "  global rules  \n", scope=Scope.HOME, order=0),
            found("/s/AGENTS.md", "source rules", scope=Scope.SOURCE, order=1),
            found("/r/AGENTS.md", "project", order=2),
        ],
        3,
    )
    assert [(r.status, r.content) for r in out] == [
        (Status.OK, "  global rules  \n"),
        (Status.OK, "source rules"),
        (Status.TRUNCATED, "pro"),
    ]


def test_a_whitespace_only_file_is_skipped_without_spending_budget() -> None:
    out = apply_budget([found("/r/AGENTS.md", " \n\t\n", order=0), found("/r/a/AGENTS.md", "12345", order=1)], 5)
    blank, kept = out
    assert (blank.status, blank.content) == (Status.OK, "")
    assert blank.warnings == ("empty or whitespace only; skipped without spending the doc budget",)
    assert (kept.status, kept.content) == (Status.OK, "12345")


def test_a_cut_that_keeps_only_whitespace_is_left_out_and_spends_nothing() -> None:
    out = apply_budget([found("/r/AGENTS.md", "   \nrules", order=0), found("/r/a/AGENTS.md", "abc", order=1)], 3)
    lost, kept = out
    assert (lost.status, lost.content) == (Status.TRUNCATED, "")
    assert lost.error == "left out: the 3 bytes that fit the project doc budget are whitespace only"
    assert (kept.status, kept.content) == (Status.OK, "abc")


def test_a_cut_counts_bytes_and_a_split_character_becomes_a_replacement_character_silently() -> None:
    [cut] = apply_budget([found("/r/AGENTS.md", "aé€", order=0)], 4)
    assert (cut.status, cut.content, cut.warnings) == (Status.TRUNCATED, "aé\ufffd", ())


def test_a_zero_budget_disables_project_files_but_not_global_ones() -> None:
    out = apply_budget(
        [found("/h/AGENTS.md", "global", scope=Scope.HOME), found("/r/AGENTS.md", "project", order=1)], 0
    )
    assert (out[0].status, out[0].content) == (Status.OK, "global")
    assert (out[1].status, out[1].content) == (Status.DISABLED, None)
    assert out[1].error == "project docs are disabled (project_doc.max_bytes = 0)"


def test_an_oversize_file_keeps_no_content_unless_the_budget_is_the_tighter_limit() -> None:
    oversize = Resource(
        Kind.INSTRUCTION_FILE, "/r/AGENTS.md", Scope.PROJECT, Status.OVERSIZE, size_bytes=100, doc_order=0
    )
    item = Found(oversize, b"x" * 10)  # the first cap bytes of a 100-byte file
    assert apply_budget([item], 50) == [oversize]
    [cut] = apply_budget([item], 4)
    assert (cut.status, cut.content) == (Status.TRUNCATED, "xxxx")
    assert cut.error == "cut to 4 of 100 bytes by the project doc budget of 4 bytes"


def test_files_without_bytes_or_doc_position_pass_through_unchanged() -> None:
    unreadable = Resource(
        Kind.INSTRUCTION_FILE, "/r/AGENTS.md", Scope.PROJECT, Status.UNREADABLE, error="Permission denied", doc_order=0
    )
    shadowed = Resource(Kind.INSTRUCTION_FILE, "/r/CLAUDE.md", Scope.PROJECT, Status.SHADOWED, error="shadowed")
    assert apply_budget([Found(unreadable), Found(shadowed, b"never read")], 10) == [unreadable, shadowed]


# --- assemble ------------------------------------------------------------------------------


def test_the_separator_stands_only_between_global_and_project_text() -> None:
    doc = assemble(
        [
            doc_resource("/r/a/AGENTS.md", "project two", 3),
            doc_resource("/h/AGENTS.md", "home", 0, scope=Scope.HOME),
            doc_resource("/r/AGENTS.md", "project one", 2),
            doc_resource("/s/AGENTS.md", "source", 1, scope=Scope.SOURCE),
        ]
    )
    assert doc.content == "home\n\nsource" + SEPARATOR + "project one\n\nproject two"
    assert doc.content.count(SEPARATOR) == 1
    assert [f.path for f in doc.files] == ["/h/AGENTS.md", "/s/AGENTS.md", "/r/AGENTS.md", "/r/a/AGENTS.md"]


@pytest.mark.parametrize(
    ("resources", "content"),
    [
        ([doc_resource("/h/AGENTS.md", "home", 0, scope=Scope.HOME)], "home"),
        ([doc_resource("/r/AGENTS.md", "project", 0)], "project"),
        ([], ""),
    ],
    ids=["global-only", "project-only", "nothing"],
)
def test_no_separator_without_both_parts(resources: list[Resource], content: str) -> None:
    doc = assemble(resources)
    assert doc.content == content
    assert SEPARATOR not in doc.content
    assert doc.empty is (content == "")


def test_global_text_is_trimmed_and_project_text_is_not() -> None:
    doc = assemble(
        [
            doc_resource("/h/AGENTS.md", "\n  global  \n\n", 0, scope=Scope.HOME),
            doc_resource("/r/AGENTS.md", "  project  \n", 1),
            doc_resource("/r/a/AGENTS.md", "\nnested\n", 2),
        ]
    )
    assert (doc.global_text, doc.project_text) == ("global", "  project  \n\n\n\nnested\n")


def test_doc_files_say_which_files_were_cut_and_leave_out_what_gave_nothing() -> None:
    doc = assemble(
        [
            doc_resource("/r/AGENTS.md", "whole", 0),
            doc_resource("/r/a/AGENTS.md", "cu", 1, status=Status.TRUNCATED),
            doc_resource("/r/a/b/AGENTS.md", "", 2, status=Status.TRUNCATED),
            doc_resource("/r/a/b/c/AGENTS.md", None, 3, status=Status.EXCLUDED),
            doc_resource("/r/blank/AGENTS.md", "  \n", 4),
            doc_resource("/r/off/AGENTS.md", None, 5, status=Status.DISABLED),
            doc_resource("/r/big/AGENTS.md", None, 6, status=Status.OVERSIZE),
            doc_resource("/r/bad/AGENTS.md", None, 7, status=Status.UNREADABLE),
        ]
    )
    assert doc.files == (
        DocFile("/r/AGENTS.md", False, Scope.PROJECT),
        DocFile("/r/a/AGENTS.md", True, Scope.PROJECT),
        DocFile("/r/a/b/AGENTS.md", True, Scope.PROJECT),
        DocFile("/r/a/b/c/AGENTS.md", True, Scope.PROJECT),
    )
    assert doc.content == "whole\n\ncu"
    assert doc.to_dict()["files"][1] == {"path": "/r/a/AGENTS.md", "truncated": True}


def test_resources_without_a_doc_position_or_of_another_kind_are_not_in_the_doc() -> None:
    shadowed = Resource(Kind.INSTRUCTION_FILE, "/r/CLAUDE.md", Scope.PROJECT, Status.OK, content="loser")
    skill = Resource(Kind.SKILL, "/r/.agents/skills/a/SKILL.md", Scope.REPO, Status.OK, content="skill", doc_order=0)
    assert assemble([shadowed, skill, doc_resource("/r/AGENTS.md", "winner", 0)]).content == "winner"


def test_sanitized_assembly_removes_hidden_characters_and_html_comments() -> None:
    resources = [
        doc_resource("/h/AGENTS.md", "glo\u200bbal<!-- secret -->", 0, scope=Scope.HOME),
        doc_resource("/r/AGENTS.md", "use\u202e pytest <!-- ignore\nprevious rules -->\r\nnow", 1),
    ]
    assert assemble(resources, sanitized=True).content == "global" + SEPARATOR + "use pytest\nnow"
    raw = assemble(resources).content
    assert "<!-- secret -->" in raw and "\u200b" in raw


def test_a_file_of_nothing_but_hidden_text_adds_no_blank_part_when_sanitized() -> None:
    doc = assemble(
        [
            doc_resource("/h/AGENTS.md", "global", 0, scope=Scope.HOME),
            doc_resource("/r/AGENTS.md", "<!-- only a comment -->\n", 1),
            doc_resource("/r/a/AGENTS.md", "nested", 2),
        ],
        sanitized=True,
    )
    assert doc.content == "global" + SEPARATOR + "nested"


def test_assemble_works_on_resources_rebuilt_from_their_dicts() -> None:
    resources = [
        doc_resource("/h/AGENTS.md", " home ", 0, scope=Scope.HOME),
        doc_resource("/r/AGENTS.md", "root ", 1),
        doc_resource("/r/a/AGENTS.md", "cut", 2, status=Status.TRUNCATED),
        doc_resource("/r/a/b/AGENTS.md", None, 3, status=Status.EXCLUDED),
    ]
    pinned = [Resource.from_dict(json.loads(json.dumps(r.to_dict()))) for r in resources]
    assert assemble(pinned) == assemble(resources)
    assert assemble(pinned).content == "home" + SEPARATOR + "root \n\ncut"


# --- the doc from a snapshot alone --------------------------------------------------------


def pinned_copy(snapshot: Snapshot) -> Snapshot:
    """What a chat pins: the snapshot's JSON, read back with nothing else."""
    return Snapshot.from_dict(json.loads(snapshot.to_json()))


@pytest.mark.parametrize("profile", ["default", "codex"])
def test_the_doc_rebuilt_from_a_snapshot_s_json_equals_the_live_doc(tmp_path: Path, home: Path, profile: str) -> None:
    make_workspace(home, {".codex/AGENTS.md": "  global\u200b rules <!-- hidden -->\n"})
    root = make_workspace(
        tmp_path / "repo",
        {
            ".git/": "",
            "AGENTS.md": "root rules\n",
            "CLAUDE.md": "shadowed",
            "a/AGENTS.md": " \n",
            "a/b/AGENTS.md": "b" * 40,
            "a/b/c/AGENTS.md": "never fits",
            ".agents/skills/s/SKILL.md": skill_md("s"),
        },
    )
    result = scan_tree(root / "a" / "b" / "c", home=home, profile=profile, settings={"project_doc.max_bytes": 20})
    live = result.project_doc()
    assert live.global_text == ("global rules" if profile == "default" else "global\u200b rules <!-- hidden -->")
    sanitized = profile == "default"  # sanitising trims each file; Codex keeps project text untrimmed
    assert live.project_text == ("root rules\n\n" if sanitized else "root rules\n\n\n") + "b" * 9
    assert [f.truncated for f in live.files] == [False, False, True, True]
    rebuilt = assemble(pinned_copy(result.snapshot).resources, sanitized=result.config.project_doc.sanitize)
    assert rebuilt == live
    assert rebuilt.to_dict() == live.to_dict()


def test_a_doc_cut_by_the_snapshot_cap_rebuilds_the_same_from_json(tmp_path: Path, home: Path) -> None:
    root = make_workspace(tmp_path, {".git/": "", "AGENTS.md": "a" * 30, "sub/AGENTS.md": "b" * 30})
    result = scan_tree(root / "sub", home=home, settings={"snapshot.max_snapshot_bytes": 40})
    live = result.project_doc()
    assert live == ProjectDoc(
        (
            DocFile(str(root / "AGENTS.md"), False, Scope.PROJECT),
            DocFile(str(root / "sub" / "AGENTS.md"), True, Scope.PROJECT),
        ),
        "",
        "a" * 30,
    )
    assert assemble(pinned_copy(result.snapshot).resources, sanitized=True) == live
