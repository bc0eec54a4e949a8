"""Scan benchmark: cold scan vs reading the bytes, rescan vs stat, skills-ref side by side, memory.

    .venv/bin/python bench/scan.py [--repeat 15] [--json] [--profile default|codex|coder|claude]

Builds the workspace of bench/workspace.py in a temp dir, then measures in one run:

* cold scan (a fresh Scanner each time, page cache warm) against the floor of reading
  the same files' bytes in a plain Python loop (goal: within 3x);
* rescan with nothing changed (one Scanner, second pass) against ``os.stat`` of the
  same files (goal: within 1.5x);
* for ``claude`` also, apart (the goals stay against the floors above): the read floor
  plus an ``os.stat`` of each name Claude Code itself checks in every folder from the work
  dir up to ``/`` (CLAUDE.md, .claude/CLAUDE.md, .claude/rules, CLAUDE.local.md); the
  workspace without its skills (Claude Code's instruction files and ``.mcp.json`` alone, 64
  files), cold scan against its own read floor; and the walk alone: a cold scan of the same
  folders with no file in them, against that read floor;
* skills-ref's ``read_properties`` over the same 1,000 skills;
* peak memory of a cold scan (tracemalloc peak and the process's max RSS).

The work dir is the bottom of the chain; for ``coder``, the root (Coder reads each root's top
level only, so from the bottom it would see one file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentcontext.peers.claude.discovery import CLAUDE_NAMES, RULES, upward
from agentcontext.resource import Kind
from agentcontext.scan import Scanner, ScanResult
from agentcontext.testing import isolated_environ, test_config
from workspace import age, build, build_bare


def median_ms(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def paired_ms(ours: Callable[[], object], floor: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Medians of ``ours`` and ``floor`` timed alternately, so machine noise hits both alike."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        for action, samples in ((ours, a), (floor, b)):
            start = time.perf_counter()
            action()
            samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(a), statistics.median(b)


def walk_floor_ms(cold: Callable[[], object], read_floor: Callable[[], None], work: str, repeat: int) -> float:
    """The read floor plus an ``os.stat`` of each name Claude Code checks in every folder up to ``/``."""
    walked = [os.path.join(d, n) for d in upward(work) for n in (*CLAUDE_NAMES, RULES)]

    def floor() -> None:
        read_floor()
        for path in walked:
            with contextlib.suppress(OSError):
                os.stat(path)

    return paired_ms(cold, floor, repeat)[1]


def files_of(result: ScanResult) -> list[str]:
    """The files a scan read (servers and folders aside)."""
    return [r.path for r in result.snapshot.resources if r.kind is not Kind.MCP_SERVER and os.path.isfile(r.path)]


def read_all(paths: list[str]) -> None:
    for path in paths:
        with open(path, "rb") as fh:
            fh.read()


def claude_apart(tmp: Path, home: Path, env: dict[str, str], repeat: int) -> tuple[float, float, float]:
    """Claude Code's own files without the skills: their cold scan, their read floor, and the walk
    alone (a cold scan of the same folders with no file in them), timed alternately with that floor."""
    root = tmp / "no-skills"
    work = build(root, skills=0, claude=True)
    age(root)
    config = test_config(work, home=home, environ=env, profile="claude")
    paths = files_of(Scanner(work, config, environ=env).run())
    cold_ms, read_ms = paired_ms(lambda: Scanner(work, config, environ=env).run(), lambda: read_all(paths), repeat)
    bare = tmp / "bare"
    bare_work = build_bare(bare)
    age(bare)
    bare_config = test_config(bare_work, home=home, environ=env, profile="claude")
    walk_ms = paired_ms(lambda: Scanner(bare_work, bare_config, environ=env).run(), lambda: read_all(paths), repeat)[0]
    return cold_ms, read_ms, walk_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--profile", default="default", help="the profile to scan with (claude: its files added, skills in .claude)"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agentcontext-bench-") as tmp:
        root = Path(tmp) / "repo"
        home = Path(tmp) / "home"
        home.mkdir()
        work = build(root, claude=args.profile == "claude")
        if args.profile == "coder":  # Coder reads its roots' top level only: from the chain's bottom, one file
            work = root
        age(root)
        env = isolated_environ(home)
        config = test_config(work, home=home, environ=env, profile=args.profile)

        def cold() -> object:
            return Scanner(work, config, environ=env).run()

        result = Scanner(work, config, environ=env).run()
        read_paths = files_of(result)
        skills = [r for r in result.snapshot.resources if r.kind is Kind.SKILL]
        assert len(skills) == 1000, len(skills)

        def read_floor() -> None:
            read_all(read_paths)

        def stat_floor() -> None:
            for path in read_paths:
                os.stat(path)

        warm = Scanner(work, config, environ=env)
        warm.run()

        cold_ms, read_ms = paired_ms(cold, read_floor, args.repeat)
        rescan_ms, stat_ms = paired_ms(warm.run, stat_floor, args.repeat * 4)
        claude = args.profile == "claude"
        probe_ms = walk_floor_ms(cold, read_floor, str(work), args.repeat) if claude else None
        apart = claude_apart(Path(tmp), home, env, args.repeat) if claude else None
        assert warm.full_passes == 1, warm.full_passes

        try:
            from skills_ref.parser import read_properties

            skill_dirs = [Path(r.path).parent for r in skills]
            skills_ref_ms: float | None = median_ms(
                lambda: [read_properties(d) for d in skill_dirs], max(3, args.repeat // 5)
            )
        except ImportError:
            skills_ref_ms = None

        tracemalloc.start()
        cold()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    figures = {
        "profile": args.profile,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "files_read": len(read_paths),
        "cold_scan_ms": round(cold_ms, 2),
        "read_floor_ms": round(read_ms, 2),
        "cold_ratio": round(cold_ms / read_ms, 2),
        "rescan_ms": round(rescan_ms, 3),
        "stat_floor_ms": round(stat_ms, 3),
        "rescan_ratio": round(rescan_ms / stat_ms, 2),
        "read_and_walk_floor_ms": round(probe_ms, 2) if probe_ms else None,
        "without_skills_cold_ms": round(apart[0], 2) if apart else None,
        "without_skills_read_floor_ms": round(apart[1], 2) if apart else None,
        "without_skills_ratio": round(apart[0] / apart[1], 2) if apart else None,
        "bare_walk_ms": round(apart[2], 2) if apart else None,
        "skills_ref_read_properties_ms": round(skills_ref_ms, 1) if skills_ref_ms else None,
        "tracemalloc_peak_mb": round(peak / 1e6, 1),
        "max_rss_mb": round(max_rss_mb, 1),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"machine: {figures['machine']}; files read per scan: {figures['files_read']}")
    print(f"cold scan {cold_ms:9.2f} ms, read floor {read_ms:8.2f} ms: {figures['cold_ratio']}x (goal 3x)")
    print(f"rescan    {rescan_ms:9.3f} ms, stat floor {stat_ms:8.3f} ms: {figures['rescan_ratio']}x (goal 1.5x)")
    if probe_ms:
        print(f"  apart: read floor + a stat of each walk-up candidate {probe_ms:.2f} ms: {cold_ms / probe_ms:.2f}x")
    if apart:
        own_ms, own_floor_ms, walk_ms = apart
        print(
            f"  apart: without the skills (64 files) {own_ms:.2f} ms, read floor {own_floor_ms:.2f} ms:"
            f" {own_ms / own_floor_ms:.2f}x"
        )
        print(
            f"  apart: the walk alone (same folders, no files) {walk_ms:.2f} ms:"
            f" {walk_ms / own_floor_ms:.2f}x that floor"
        )
    if skills_ref_ms is not None:
        print(
            f"skills-ref read_properties x1000: {skills_ref_ms:.1f} ms ({skills_ref_ms / cold_ms:.1f}x our cold scan)"
        )
    print(f"peak memory: tracemalloc {figures['tracemalloc_peak_mb']} MB, max RSS {figures['max_rss_mb']} MB")


if __name__ == "__main__":
    main()
