"""Project root, chain and configured-path resolution (Codex Free's find_root tests, Coder's TestResolvePath)."""

from __future__ import annotations

from pathlib import Path

from agentcontext.fs.paths import chain, find_project_root, resolve_all, resolve_configured
from agentcontext.testing import make_workspace


def test_find_root_nearest_ancestor_with_marker(tmp_path: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "a/.git": "gitdir: x", "a/b/c/": ""})
    assert find_project_root(str(tmp_path / "a" / "b" / "c"), [".git"]) == str(tmp_path / "a")


def test_find_root_counts_start_dir(tmp_path: Path) -> None:
    make_workspace(tmp_path, {".git/": ""})
    assert find_project_root(str(tmp_path), [".git"]) == str(tmp_path)


def test_find_root_null_when_no_ancestor(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a/b/": ""})
    assert find_project_root(str(tmp_path / "a" / "b"), ["no-such-marker-anywhere-7f3a"]) is None


def test_find_root_empty_markers_disables_walk(tmp_path: Path) -> None:
    make_workspace(tmp_path, {".git/": "", "a/": ""})
    assert find_project_root(str(tmp_path / "a"), []) is None


def test_find_root_tries_every_marker_at_each_level(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"package.json": "{}", "a/pyproject.toml": "", "a/b/": ""})
    assert find_project_root(str(tmp_path / "a" / "b"), [".git", "pyproject.toml", "package.json"]) == str(
        tmp_path / "a"
    )


def test_chain_runs_from_root_down_to_work_dir() -> None:
    assert chain("/r", "/r/a/b") == ("/r", "/r/a", "/r/a/b")
    assert chain("/r", "/r") == ("/r",)


def test_resolve_configured_paths_like_coder() -> None:
    home, work = "/home/u", "/w"
    assert resolve_configured("", home=home, work_dir=work) is None
    assert resolve_configured("   ", home=home, work_dir=work) is None
    assert resolve_configured("~", home=home, work_dir=work) == "/home/u"
    assert resolve_configured(" ~/x ", home=home, work_dir=work) == "/home/u/x"
    assert resolve_configured("/abs/./p", home=home, work_dir=work) == "/abs/p"
    assert resolve_configured("rel/p", home=home, work_dir=work) == "/w/rel/p"
    assert resolve_configured("rel", home=home, work_dir=None) is None


def test_resolve_all_keeps_order_and_drops_duplicates_and_blanks() -> None:
    assert resolve_all(["b", "", "~/a", "b", "/w/b"], home="/h", work_dir="/w") == ("/w/b", "/h/a")
