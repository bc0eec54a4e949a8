"""``agentcontext doc --for PATH`` and ``agentcontext explain PATH`` in a monorepo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentcontext import applicable
from agentcontext.cli import app
from agentcontext.peers.claude import nested as claude_nested
from agentcontext.testing import test_config
from tests import monorepo

runner = CliRunner()


def test_doc_for_adds_the_nested_files_after_the_startup_doc(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    done = runner.invoke(app, ["doc", str(work), "-p", "codex", "--for", "services/billing/api/handler.py"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("Root: run the tests with pytest.\n")
    services = done.output.index(f"Contents of {work / 'services/AGENTS.md'} (the instruction file of")
    billing = done.output.index(f"Contents of {work / 'services/billing/AGENTS.md'}")
    assert services < billing
    assert done.output.rstrip().endswith("Billing: amounts are integers in cents.")


def test_doc_for_json_carries_each_file_with_its_load_reason_and_bytes(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    paths = ["services/billing/db/schema.sql", "/etc/passwd"]
    done = runner.invoke(app, ["doc", str(work), "-p", "claude", "--json", "--for", paths[0], "--for", paths[1]])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["files"] == [{"path": str(work / "CLAUDE.md"), "truncated": False}]
    found = data["for"]
    assert [(f["path"], f["load"]["type"]) for f in found["files"]] == [
        (str(work / "services/billing/CLAUDE.md"), "on_demand"),
        (str(work / "services/billing/.claude/rules/style.md"), "on_demand"),
        (str(work / "services/billing/.claude/rules/sql.md"), "path_scoped"),
    ]
    sql = found["files"][2]
    assert sql["bytes"] == len("SQL: no SELECT *.\n") and sql["content"] == "SQL: no SELECT *.\n"
    assert sql["for"] == [str(work / paths[0])] and "match the file read" in sql["reason"]
    assert found["refused"] == [{"path": "/etc/passwd", "reason": found["refused"][0]["reason"]}]
    assert "outside the work dir" in found["refused"][0]["reason"]


def test_doc_for_wrapped_for_claude_prints_the_blocks_claude_code_sends_after_a_read(
    tmp_path: Path, home: Path
) -> None:
    work = monorepo.build(tmp_path / "repo")
    target = "services/billing/api/handler.py"
    done = runner.invoke(app, ["doc", str(work), "-p", "claude", "--wrap", "--for", target])
    assert done.exit_code == 0, done.output
    answer = applicable(work, [target], test_config(work, home=home, profile="claude"))
    blocks = claude_nested.render((f.resource, f.hook) for f in answer.files)
    assert done.output.endswith("\n\n".join(blocks))
    assert blocks[0] == (
        f"<system-reminder>\nContents of {work / 'services/billing/CLAUDE.md'}:\n\n"
        "Billing for Claude: amounts are integers in cents.\n\n</system-reminder>\n"
    )


def test_doc_for_too_many_paths_exits_2_naming_the_limit(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    args = [arg for i in range(33) for arg in ("--for", f"p{i}")]
    done = subprocess.run(
        [sys.executable, "-m", "agentcontext", "doc", str(work), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        timeout=60,
    )
    assert done.returncode == 2
    assert "33 paths in one lookup: at most 32 (ondemand.max_paths)" in done.stderr


def test_explain_a_source_file_lists_what_applies_there(tmp_path: Path, home: Path) -> None:
    work = monorepo.build(tmp_path / "repo")
    done = runner.invoke(app, ["explain", str(work / "services/search/index.py"), "-w", str(work), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["summary"] == "is not something agentcontext reads"
    applies = data["applies"]
    assert applies["startup"] == [str(work / "AGENTS.md")]
    assert [f["path"] for f in applies["files"]] == [
        str(work / "services/AGENTS.md"),
        str(work / "services/search/AGENTS.override.md"),
    ]
    assert [f["status"] for f in applies["not_loaded"]] == ["shadowed"]
    assert all("content" not in f for f in applies["files"])
