"""Cold-scan CPU of this checkout and another, alternated scan by scan in one process.

    .venv/bin/python bench/scan_pair.py --base OTHER/src [--profile default] [--count 150] [--real DIR... | --no-skills]

This VM's speed moves by half within seconds, more than a change to the scan is worth, so
two runs of ``bench/scan.py`` side by side cannot tell a 5% change. Here the other checkout's
package is copied under another name (``agentcontext_base``, its imports rewritten) and both
scan the same ``bench/workspace.py`` tree (``--real``: with the SKILL.md files under the DIRs, as
``bench/scan.py --real`` builds it; ``--no-skills``: without its skills, the 64 files of Claude's case apart
with ``--profile claude``) in turn, each with a fresh ``Scanner``; the figure is
the median of the per-pair ratios of CPU time (``time.process_time``), which a slow phase
hits on both sides alike; each side goes first in half the pairs. Against itself
(``--base src``) it reads 0.98-1.02.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workspace import age, build, build_for, real_skills

_IMPORTS = re.compile(r"\b(from|import) agentcontext\b")


def renamed_copy(src: Path, into: Path) -> None:
    """``src/agentcontext`` copied to ``into/agentcontext_base``, every import of the package renamed."""
    target = into / "agentcontext_base"
    shutil.copytree(src / "agentcontext", target, ignore=shutil.ignore_patterns("__pycache__"))
    for module in target.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        module.write_text(_IMPORTS.sub(r"\1 agentcontext_base", text), encoding="utf-8")


def scanner(package: str, work: Path, home: Path, profile: str) -> Any:
    scan: ModuleType = importlib.import_module(f"{package}.scan")
    testing: ModuleType = importlib.import_module(f"{package}.testing")
    env = testing.isolated_environ(home)
    config = testing.test_config(work, home=home, environ=env, profile=profile)
    return lambda: scan.Scanner(work, config, environ=env).run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the other checkout's src folder")
    parser.add_argument("--profile", default="default")
    parser.add_argument("--count", type=int, default=150, help="scans on each side")
    skills = parser.add_mutually_exclusive_group()
    skills.add_argument("--real", nargs="+", type=Path, metavar="DIR", help="the SKILL.md files under DIR...")
    skills.add_argument("--no-skills", action="store_true", help="the workspace without its skills")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentcontext-pair-") as tmp:
        renamed_copy(args.base, Path(tmp))
        sys.path.insert(0, tmp)
        root, home = Path(tmp) / "repo", Path(tmp) / "home"
        home.mkdir()
        if args.no_skills:
            work = build(root, skills=0, claude=args.profile == "claude")
        else:
            work = build_for(root, args.profile, real_skills(args.real) if args.real else [])
        age(root)
        ours, theirs = (
            scanner("agentcontext", work, home, args.profile),
            scanner("agentcontext_base", work, home, args.profile),
        )
        mine: list[float] = []
        base: list[float] = []
        sides = [(ours, mine), (theirs, base)]
        for _ in range(args.count):
            sides.reverse()  # each goes first half the time: the second of a pair runs on warmer caches
            for run, samples in sides:
                start = time.process_time()
                run()
                samples.append(time.process_time() - start)
    ratios = sorted(a / b for a, b in zip(mine, base, strict=True))
    quarter = len(ratios) // 4
    print(
        f"{args.profile}: CPU per cold scan, median {statistics.median(mine) * 1e3:.2f} ms here, "
        f"{statistics.median(base) * 1e3:.2f} ms in {args.base}; per-pair ratio median "
        f"{statistics.median(ratios):.3f} (quartiles {ratios[quarter]:.3f}-{ratios[-quarter - 1]:.3f})"
    )


if __name__ == "__main__":
    main()
