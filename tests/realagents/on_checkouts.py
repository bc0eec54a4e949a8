"""Our profiles against the real agents on any checkouts: the oracle run on real repositories, by hand.

    .venv/bin/python -m tests.realagents.on_checkouts [--agents claude,codex,...] DIR [DIR ...]

Each DIR (a repository's files; a fetched one's never committed) is copied into a fresh workspace
(links kept, a ``.git`` made when it has none) with an empty HOME, every agent is run on it as
the suite runs them (``harness.run_agents``: loopback only), and each agent's test of
``test_real_agents`` is held against what it sent. Prints ``PASS`` or ``FAIL`` with the fact that
differs for each checkout and agent; exits 1 when any failed. A failure is either our rule or the
binary's own race (OpenCode keeps whichever copy of a skill name it reads last).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.realagents import harness
from tests.realagents import test_real_agents as checks

_CHECKS: dict[str, Callable[[harness.Workspace, dict[tuple[str, str], harness.Run]], None]] = {
    "claude": checks.test_claude_profile_renders_what_claude_code_sent,
    "codex": checks.test_codex_profile_renders_what_codex_sent,
    "gemini": checks.test_gemini_profile_renders_what_gemini_cli_sent,
    "opencode": checks.test_opencode_profile_renders_what_opencode_sent,
    "copilot": checks.test_copilot_profile_renders_what_copilot_cli_sent,
}


@dataclasses.dataclass(frozen=True)
class Checkout(harness.Workspace):
    """A workspace whose project is a copy of a folder on disk."""

    source: Path = Path()

    def build(self, base: Path) -> Path:
        root = base / self.name
        repo = root / self.cwd
        shutil.copytree(self.source, repo, symlinks=True)
        if not (repo / ".git").exists():
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (root / "home").mkdir(parents=True, exist_ok=True)
        return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="checkouts to run the agents on")
    parser.add_argument("--agents", default=",".join(harness.AGENTS), help="comma-separated (default: all five)")
    args = parser.parse_args()
    agents = tuple(args.agents.split(","))
    if unknown := set(agents) - set(_CHECKS):
        parser.error(f"unknown agents: {', '.join(sorted(unknown))}")
    if reason := harness.unavailable():
        print(f"cannot run the real agents: {reason}", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="on-checkouts-"))
    cases = [
        Checkout(f"{i}_{d.resolve().name}", {}, agents=agents, source=d.resolve()) for i, d in enumerate(args.dirs)
    ]
    built = [(case, case.build(base / "cases")) for case in cases]
    (base / "runs").mkdir()
    runs = harness.run_agents(built, base / "runs")
    failed = 0
    for case in cases:
        for agent in agents:
            try:
                _CHECKS[agent](case, runs)
            except AssertionError as exc:
                failed += 1
                print(f"FAIL {case.source} {agent}: {str(exc).splitlines()[0]}")
            else:
                print(f"PASS {case.source} {agent}")
    print(f"the workspaces and the agents' homes: {base}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
