"""A newcomer's first run: ``./scripts/run up .`` from a fresh clone sets up only what running needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(600)
def test_a_fresh_clone_reaches_the_dashboard_line_without_the_dev_tools_or_the_node_peers() -> None:
    # bench/first_run.py clones HEAD, runs `./scripts/run up .` to its dashboard line, stops it with Ctrl-C
    # and exits non-zero when the clone's .venv holds pytest, ruff or mypy, or a node_modules appeared
    done = subprocess.run(
        [sys.executable, "bench/first_run.py", "--repeat", "1", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=590,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert run["dashboard_s"] > 0
    assert run["stopped_rc"] == 0
