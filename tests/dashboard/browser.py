"""A real stack for the browser tests, and Debian's Chromium driven by Playwright.

The stack is ``agentcontext up`` over a fixture workspace, run as a process in the test's
temporary HOME (the autouse ``isolated_home``): it starts the control plane on SQLite and
an agent, creates the user and the tokens, and prints the login link the browser follows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.control.processes import Process
from tests.helpers import free_port, poll

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOGIN_LINK = re.compile(r"http://127\.0\.0\.1:\d+/login#token=acu_[A-Za-z0-9_-]+")
FAILING_SERVER = {"command": "sh", "args": ["-c", "echo 'flaky: cannot start, missing FLAKY_KEY' >&2; exit 3"]}


def make_workspace(root: Path) -> Path:
    """AGENTS.md (ok) with a CLAUDE.md beside it (shadowed), a valid and an invalid skill, a failing MCP server."""
    work = root / "app"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text("Use pytest.\n", encoding="utf-8")
    (work / "CLAUDE.md").write_text("Claude's own notes.\n", encoding="utf-8")
    review = work / ".agents" / "skills" / "review"
    review.mkdir(parents=True)
    (review / "SKILL.md").write_text(
        "---\nname: review\ndescription: Reviews a change\n---\n# Review\n\nRead the **diff** first.\n",
        encoding="utf-8",
    )
    (review / "checklist.md").write_text("- tests\n", encoding="utf-8")
    broken = work / ".agents" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nNo description.\n", encoding="utf-8")
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"flaky": FAILING_SERVER}}), encoding="utf-8")
    return work


@dataclass(frozen=True)
class Stack:
    url: str
    user_token: str
    work: Path
    process: Process

    @property
    def login_link(self) -> str:
        return f"{self.url}/login#token={self.user_token}"


@contextlib.contextmanager
def up(tmp: Path) -> Iterator[Stack]:
    """``agentcontext up WORK`` in the test's HOME; the user's token read from the login link it prints.

    Leaving the block stops it with SIGTERM and checks that no process it started is left.
    """
    work = make_workspace(tmp)
    port = free_port()
    log = tmp / "up.log"
    command = [sys.executable, "-m", "agentcontext", "up", str(work), "--listen", f"127.0.0.1:{port}"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env={**os.environ, "COLUMNS": "200"})
    proc = Process("up", process, log, f"http://127.0.0.1:{port}")
    try:
        link = poll(lambda: _login_link(proc), bool, "the login link of agentcontext up")
        url, _, token = link.partition("/login#token=")
        yield Stack(url, token, work, proc)
    finally:
        if proc.process.poll() is None:
            proc.stop()
        proc.assert_gone()


def _login_link(proc: Process) -> str:
    if proc.process.poll() is not None:
        raise AssertionError(f"agentcontext up exited with {proc.process.returncode}:\n{proc.text()}")
    found = LOGIN_LINK.search(proc.text())
    return found.group(0) if found else ""


def chromium_or_skip() -> None:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (Playwright drives Debian's Chromium)")


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass(frozen=True)
class Camera:
    """Saves a full-page screenshot of each page when ``--screenshots DIR`` is given."""

    directory: Path | None

    def shoot(self, page: Page, name: str) -> None:
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(self.directory / f"{name}.png"), full_page=True)
