"""Helpers for tests of agentcontext and of programs built on it.

``make_workspace`` writes a tree from a mapping; ``scan_tree`` scans it with an isolated
home directory and explicit settings, so no real ``~/.codex`` or config file leaks in::

    root = make_workspace(tmp_path, {".git/": "", "AGENTS.md": "root", "sub/AGENTS.md": "sub"})
    result = scan_tree(root / "sub", home=tmp_path / "home", settings={"project_doc.max_bytes": 7})
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config, load_config
from agentcontext.workspace_mcp.config import ServerSpec
from agentcontext.workspace_mcp.launch import Launch, resolve


def make_workspace(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create files under ``root``; a key ending in ``/`` makes an empty directory."""
    for relative, content in files.items():
        path = root / relative
        if relative.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def skill_md(name: str | None, description: str | None = "does a thing", body: str = "Body.\n", **extra: str) -> str:
    """A SKILL.md with the given frontmatter fields (None leaves a field out)."""
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    lines += [f"{key}: {value}" for key, value in extra.items()]
    lines.append("---")
    return "\n".join(lines) + "\n" + body


def backdate(root: Path, seconds: float = 10.0) -> None:
    """Make every file and folder under ``root`` look ``seconds`` older than ``root`` is, so a
    rescan sees them outside the racy-clean window (a fresh tree is always re-read)."""
    past = os.stat(root).st_mtime - seconds
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
    os.utime(root, (past, past))


def isolated_environ(home: Path, **variables: str) -> dict[str, str]:
    """An environment with only ``HOME`` (and ``PATH``) plus the given variables."""
    return {"HOME": str(home), "PATH": os.environ.get("PATH", ""), **variables}


def launched(spec: ServerSpec, work_dir: Path, home: Path) -> Launch:
    """What ``spec`` runs for an agent over ``work_dir`` with :func:`isolated_environ` (what approvals bind)."""
    return resolve(spec, work_dir=str(work_dir), environ=isolated_environ(home))


def test_config(
    work_dir: Path,
    *,
    home: Path,
    profile: str = "default",
    environ: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Config:
    """Settings for a test: a profile plus dotted-key overrides, nothing from the real machine."""
    env = dict(environ) if environ is not None else isolated_environ(home)
    overrides = {"profile": profile, **(settings or {})}
    return load_config(work_dir, environ=env, config_file=os.devnull, overrides=overrides)


test_config.__test__ = False  # type: ignore[attr-defined]  # not a pytest test despite the name


def scan_tree(
    work_dir: Path,
    *,
    home: Path,
    profile: str = "default",
    environ: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> ScanResult:
    """Scan ``work_dir`` with :func:`test_config` settings (dotted keys: ``{"skills.max_depth": 3}``)."""
    env = dict(environ) if environ is not None else isolated_environ(home)
    config = test_config(work_dir, home=home, profile=profile, environ=env, settings=settings)
    return Scanner(work_dir, config, environ=env).run()
