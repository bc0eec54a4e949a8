"""bench/load.py, in miniature: a real server, a few agents pushing and chats refreshing, nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "load.py"


@pytest.mark.slow
def test_a_short_load_run_loses_nothing_and_fails_no_request(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    command = [sys.executable, str(BENCH), "--agents", "3", "--chats", "6", "--seconds", "4", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=110, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["lost"] == {"pushes": 0, "snapshot rows": 0, "dirty marks": 0, "events": 0, "pins": 0}
    assert result["error_rate"] == 0
    assert result["pushes_accepted"] > 3  # the initial pushes are not counted: these are the timed ones
    assert result["events"]["state"] == 6
    assert result["server_log_errors"] == []
