"""The scan as a whole: determinism, containment, rescans, and Codex's loader as an oracle."""

from __future__ import annotations

import builtins
import io
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentcontext
from agentcontext.fs.files import is_within
from agentcontext.resource import Status
from agentcontext.scan import Scanner
from agentcontext.testing import isolated_environ, make_workspace, scan_tree, skill_md, test_config
from tests.helpers import backdate

HYPOTHESIS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_scan_is_the_library_front_door_and_matches_the_cli_json(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "# Rules\nuse pytest\n"})
    snapshot = agentcontext.scan(tmp_path)
    assert snapshot.version == 1
    assert [r.path for r in snapshot.resources] == [str(tmp_path / "AGENTS.md")]
    output = subprocess.run(
        [sys.executable, "-m", "agentcontext", "scan", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HOME": str(home)},
    ).stdout
    assert json.loads(output) == snapshot.to_dict()


def test_a_missing_work_dir_is_a_scan_error(tmp_path: Path) -> None:
    with pytest.raises(agentcontext.ScanError, match="work dir does not exist"):
        agentcontext.scan(tmp_path / "absent")


def test_a_work_dir_that_is_a_file_stands_for_its_folder(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "src/main.py": ""})
    result = scan_tree(tmp_path / "src" / "main.py", home=home)
    assert result.snapshot.work_dir == str(tmp_path / "src")
    assert result.project_doc().content == "root"


# --- determinism -------------------------------------------------------------------

TREE_FILES = st.dictionaries(
    keys=st.sampled_from(
        [
            "AGENTS.md",
            "CLAUDE.md",
            ".cursorrules",
            "AGENTS.override.md",
            "a/AGENTS.md",
            "a/CLAUDE.md",
            "a/b/AGENTS.md",
            ".agents/skills/one/SKILL.md",
            ".agents/skills/two/SKILL.md",
            ".claude/skills/one/SKILL.md",
            "a/.codex/skills/three/SKILL.md",
            "skills/four/SKILL.md",
            ".mcp.json",
        ]
    ),
    values=st.text(alphabet="abc é\n:-", max_size=40),
    max_size=10,
)


def _materialise(root: Path, files: dict[str, str], order: list[int]) -> None:
    items = list(files.items())
    for index in order:
        relative, text = items[index]
        if relative.endswith("SKILL.md"):
            text = skill_md(relative.split("/")[-2], text.replace("\n", " ").strip() or "x")
        make_workspace(root, {relative: text})


@HYPOTHESIS
@given(files=TREE_FILES, seed=st.integers(0, 10_000))
def test_the_snapshot_does_not_depend_on_listing_or_creation_order(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], seed: int
) -> None:
    home = tmp_path_factory.mktemp("home")
    root = tmp_path_factory.mktemp("tree") / "repo"
    order = list(range(len(files)))
    make_workspace(root, {".git/": "", "a/b/": ""})
    _materialise(root, files, order)
    reference = scan_tree(root / "a" / "b", home=home).snapshot.to_json()

    shutil.rmtree(root)
    random.Random(seed).shuffle(order)
    make_workspace(root, {"a/b/": "", ".git/": ""})
    _materialise(root, files, order)
    real_scandir = os.scandir

    class Shuffled:
        def __init__(self, path: Any = ".") -> None:
            self.entries = list(real_scandir(path))
            random.Random(seed).shuffle(self.entries)

        def __iter__(self) -> Iterator[os.DirEntry[str]]:
            return iter(self.entries)

        def __enter__(self) -> Iterator[os.DirEntry[str]]:
            return iter(self.entries)

        def __exit__(self, *exc: object) -> None:
            return None

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", Shuffled)
        shuffled = scan_tree(root / "a" / "b", home=home).snapshot.to_json()
    assert shuffled == reference


# --- containment -------------------------------------------------------------------


def _opened_path(path: Any, dir_fd: Any) -> str:
    """The absolute path an open names, relative names resolved against their directory descriptor."""
    target = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else ""
    if isinstance(path, int):  # os.scandir(fd)
        return os.readlink(f"/proc/self/fd/{path}")
    if isinstance(dir_fd, int) and not os.path.isabs(target):
        return os.path.normpath(os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), target))
    return os.path.abspath(target)


@contextmanager
def recorded_opens() -> Iterator[list[str]]:
    """Record every path opened or listed through the usual Python and os entry points.

    Descriptors opened with ``O_PATH`` only name a directory to walk from (nothing can be
    read through one), so they are not counted as opens.
    """
    opened: list[str] = []
    originals: dict[tuple[Any, str], Callable[..., Any]] = {
        (os, "open"): os.open,
        (os, "scandir"): os.scandir,
        (os, "listdir"): os.listdir,
        (builtins, "open"): builtins.open,
        (io, "open"): io.open,
    }

    lookup_only = getattr(os, "O_PATH", 0)
    os_open = os.open

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def recording(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            flags = (args[0] if args else kwargs.get("flags", 0)) if original is os_open else 0
            if not (isinstance(flags, int) and flags & lookup_only):
                opened.append(_opened_path(path, kwargs.get("dir_fd")))
            return original(path, *args, **kwargs)

        return recording

    for (owner, name), original in originals.items():
        setattr(owner, name, wrap(original))
    try:
        yield opened
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


LINK_TARGETS = st.lists(
    st.tuples(
        st.sampled_from(["AGENTS.md", "CLAUDE.md", "sub/AGENTS.md", ".agents/skills/x", ".claude/skills", "skills/y"]),
        st.sampled_from(["../secret/AGENTS.md", "../secret", "../secret/skill", "/etc/passwd", "/etc", "loop"]),
    ),
    max_size=5,
    unique_by=lambda pair: pair[0],
)


@HYPOTHESIS
@given(links=LINK_TARGETS)
def test_nothing_outside_the_allowed_roots_is_ever_opened(
    tmp_path_factory: pytest.TempPathFactory, links: list[tuple[str, str]]
) -> None:
    base = tmp_path_factory.mktemp("contain")
    home = base / "home"
    make_workspace(base, {"secret/AGENTS.md": "SECRET", "secret/skill/SKILL.md": skill_md("skill"), "home/": ""})
    repo = make_workspace(base / "repo", {".git/": "", "sub/": "", ".agents/skills/ok/SKILL.md": skill_md("ok")})
    for relative, target in links:
        link = repo / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.exists() or link.is_symlink():
            continue
        link.symlink_to(link if target == "loop" else (repo / target if not target.startswith("/") else Path(target)))
    config = test_config(repo / "sub", home=home)
    scanner = Scanner(repo / "sub", config, environ=isolated_environ(home))
    with recorded_opens() as opened:
        result = scanner.run()
    allowed = result.layout.allowed_roots
    outside = [p for p in opened if not any(is_within(p, root) for root in allowed)]
    assert outside == []
    assert str(repo / ".agents" / "skills") in opened  # the recorder saw the scan's own opens
    assert "SECRET" not in result.snapshot.to_json()


# --- rescans -----------------------------------------------------------------------


def test_a_rescan_of_an_unchanged_tree_reads_nothing_and_returns_the_same_snapshot(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", ".agents/skills/a/SKILL.md": skill_md("a")})
    backdate(tmp_path)
    scanner = Scanner(tmp_path, test_config(tmp_path, home=home), environ=isolated_environ(home))
    first = scanner.run()
    assert scanner.reader.misses > 0
    second = scanner.run()
    assert second is first
    assert scanner.full_passes == 1


def test_a_rescan_sees_an_edit_a_new_skill_and_a_removal(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", ".agents/skills/a/SKILL.md": skill_md("a")})
    backdate(tmp_path)
    scanner = Scanner(tmp_path, test_config(tmp_path, home=home), environ=isolated_environ(home))
    first = scanner.run().snapshot
    (tmp_path / "AGENTS.md").write_text("root, edited", encoding="utf-8")
    make_workspace(tmp_path, {".agents/skills/b/SKILL.md": skill_md("b")})
    second = scanner.run().snapshot
    assert second.aggregate_hash != first.aggregate_hash
    diff = agentcontext.diff(first.resources, second.resources)
    assert diff.changed == (str(tmp_path / "AGENTS.md"),)
    assert diff.added == (str(tmp_path / ".agents" / "skills" / "b" / "SKILL.md"),)
    shutil.rmtree(tmp_path / ".agents" / "skills" / "a")
    third = scanner.run().snapshot
    assert agentcontext.diff(second.resources, third.resources).removed == (
        str(tmp_path / ".agents" / "skills" / "a" / "SKILL.md"),
    )


def test_a_same_size_edit_within_the_same_second_is_not_missed(tmp_path: Path, home: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "AGENTS.md": "aaaa"})
    scanner = Scanner(tmp_path, test_config(tmp_path, home=home), environ=isolated_environ(home))
    before = os.stat(tmp_path / "AGENTS.md")
    assert scanner.run().project_doc().content == "aaaa"
    (tmp_path / "AGENTS.md").write_text("bbbb", encoding="utf-8")
    os.utime(tmp_path / "AGENTS.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert scanner.run().project_doc().content == "bbbb"


# --- Codex's loader as an oracle (agents-doctor) ---------------------------------------

LEVEL = st.tuples(
    st.sampled_from(["AGENTS.md", "AGENTS.override.md", "both", "none"]),
    st.text(alphabet=st.sampled_from("ab é€\n "), min_size=0, max_size=30),
)


@pytest.mark.skipif(
    shutil.which("agents-doctor") is None and not (Path(sys.executable).parent / "agents-doctor").exists(),
    reason="agents-doctor (PyPI) is not installed",
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(levels=st.lists(LEVEL, min_size=1, max_size=4), max_bytes=st.integers(1, 80))
def test_codex_profile_agrees_with_agents_doctor_on_files_order_and_kept_bytes(
    tmp_path_factory: pytest.TempPathFactory, levels: list[tuple[str, str]], max_bytes: int
) -> None:
    base = tmp_path_factory.mktemp("oracle")
    home = base / "home"
    home.mkdir()
    directory = base / "repo"
    make_workspace(directory, {".git/": ""})
    for depth, (kind, text) in enumerate(levels):
        if depth:
            directory = directory / f"d{depth}"
            directory.mkdir()
        if kind in ("AGENTS.md", "both"):
            (directory / "AGENTS.md").write_bytes(text.encode())
        if kind in ("AGENTS.override.md", "both"):
            (directory / "AGENTS.override.md").write_bytes(("o" + text).encode())
    doctor = shutil.which("agents-doctor") or str(Path(sys.executable).parent / "agents-doctor")
    report = json.loads(
        subprocess.run(
            [doctor, "--max-bytes", str(max_bytes), "explain", "--format", "json", "."],
            cwd=directory,
            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    result = scan_tree(directory, home=home, profile="codex", settings={"project_doc.max_bytes": max_bytes})
    repo = base / "repo"
    ours = {r.path: r for r in result.snapshot.resources if r.doc_order is not None}
    assert [str(repo / c["path"]) for c in report["chunks"]] == sorted(ours, key=lambda p: ours[p].doc_order or 0)
    for chunk in report["chunks"]:
        resource = ours[str(repo / chunk["path"])]
        raw = (repo / chunk["path"]).read_bytes()
        expected_status = {
            "loaded": Status.OK,
            "skipped": Status.OK,
            "not_read": Status.OK,
            "cut_short": Status.TRUNCATED,
            "never_loaded": Status.TRUNCATED,
            "skipped_after_cut": Status.TRUNCATED,
        }[chunk["status"]]
        if chunk["status"] == "never_loaded" and not raw.decode("utf-8", errors="replace").strip():
            expected_status = Status.OK  # we do read it, and a blank file loses nothing
        assert resource.status is expected_status, chunk
        kept = raw[: chunk["included_bytes"]].decode("utf-8", errors="replace")
        assert (resource.content or "") == kept, chunk
    expected_doc = "\n\n".join(
        (repo / c["path"]).read_bytes()[: c["included_bytes"]].decode("utf-8", errors="replace")
        for c in report["chunks"]
        if c["included_bytes"]
    )
    assert result.project_doc().content == expected_doc
