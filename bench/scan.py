"""Scan benchmark: cold scan vs reading the bytes, rescan vs stat, skills-ref side by side, memory.

    .venv/bin/python bench/scan.py [--repeat 15] [--json] [--profile default|codex|...|all] [--real DIR...]

Builds the workspace of bench/workspace.py in a temp dir (with ``--real``, its 1,000 skills are the
SKILL.md files found under the DIRs, taken in turn, each in a folder of its own named as its ``name``;
every one's frontmatter is first read by the fast path and by ``yaml.safe_load``, which must agree,
and the files the scan warns about for hidden text are counted by what the warning names), then
measures in one run, for each profile named:

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

The work dir is the bottom of the chain; for ``coder``, ``gemini`` and ``cursor``, the root (Coder reads
each root's top level only, Gemini CLI and Cursor the work dir's skills only: from the bottom they would
see none).
The skills are in ``.agents/skills``, but for ``claude`` (``.claude/skills``) and ``cursor``
(``.cursor/skills``).
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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentcontext.errors import FrontmatterError
from agentcontext.peers.claude.discovery import CLAUDE_NAMES, RULES, upward
from agentcontext.resource import Kind, Status
from agentcontext.sanitize import HiddenText, find_hidden_text
from agentcontext.scan import Scanner, ScanResult
from agentcontext.settings.config import Config
from agentcontext.skills.frontmatter import split
from agentcontext.testing import isolated_environ, test_config
from workspace import age, build, build_bare, build_for, real_skills


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


PROFILES = ("default", "codex", "claude", "coder", "gemini", "opencode", "copilot", "cursor")


@dataclass(frozen=True)
class Built:
    """The benchmark workspace as one profile's agent has it, and what scanning it takes."""

    work: Path  # where the scan starts
    home: Path
    env: dict[str, str]
    config: Config

    def cold(self) -> ScanResult:
        """A cold scan: a fresh ``Scanner`` (the page cache warm)."""
        return Scanner(self.work, self.config, environ=self.env).run()


def built_for(profile: str, tmp: Path, real: list[tuple[str, str]]) -> Built:
    """``workspace.build_for`` under ``tmp`` (aged past the racy window), with a HOME of its own."""
    root, home = tmp / "repo", tmp / "home"
    home.mkdir()
    work = build_for(root, profile, real)
    age(root)
    env = isolated_environ(home)
    return Built(work, home, env, test_config(work, home=home, environ=env, profile=profile))


def measure(profile: str, tmp: Path, real: list[tuple[str, str]], repeat: int) -> dict[str, Any]:
    """Every figure of one profile, on a workspace built under ``tmp``."""
    built = built_for(profile, tmp, real)
    work, home, env, config, cold = built.work, built.home, built.env, built.config, built.cold
    result = cold()
    read_paths = files_of(result)
    # the skills (codex's walk inside them also reports that it stopped at skills.max_dirs_per_root)
    skills = [r for r in result.snapshot.resources if r.kind is Kind.SKILL and r.path.endswith("/SKILL.md")]
    assert len(skills) == 1000, (profile, len(skills))

    def read_floor() -> None:
        read_all(read_paths)

    def stat_floor() -> None:
        for path in read_paths:
            os.stat(path)

    warm = Scanner(work, config, environ=env)
    warm.run()

    cold_ms, read_ms = paired_ms(cold, read_floor, repeat)
    rescan_ms, stat_ms = paired_ms(warm.run, stat_floor, repeat * 4)
    claude = profile == "claude"
    probe_ms = walk_floor_ms(cold, read_floor, str(work), repeat) if claude else None
    apart = claude_apart(tmp, home, env, repeat) if claude else None
    assert warm.full_passes == 1, warm.full_passes

    skills_ref_ms: float | None = None
    try:  # not on real skills: strictyaml refuses much of what they hold ("[]", "key: a: b")
        if real:
            raise ImportError
        from skills_ref.errors import SkillError
        from skills_ref.parser import read_properties

        def read_one(folder: Path) -> object:
            try:
                return read_properties(folder)
            except SkillError as exc:
                return exc

        skill_dirs = [Path(r.path).parent for r in skills]
        skills_ref_ms = median_ms(lambda: [read_one(d) for d in skill_dirs], max(3, repeat // 5))
    except ImportError:
        pass

    tracemalloc.start()
    cold()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "profile": profile,
        "workspace": "real" if real else "synthetic",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "files_read": len(read_paths),
        "valid_skills": sum(1 for r in skills if r.status is Status.OK),
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


def show(figures: dict[str, Any]) -> None:
    cold_ms, probe_ms, skills_ref_ms = figures["cold_scan_ms"], figures["read_and_walk_floor_ms"], None
    print(
        f"{figures['profile']} ({figures['workspace']} skills, {figures['valid_skills']} valid;"
        f" {figures['machine']}; files read per scan: {figures['files_read']})"
    )
    print(
        f"  cold scan {cold_ms:9.2f} ms, read floor {figures['read_floor_ms']:8.2f} ms:"
        f" {figures['cold_ratio']}x (goal 3x)"
    )
    print(
        f"  rescan    {figures['rescan_ms']:9.3f} ms, stat floor {figures['stat_floor_ms']:8.3f} ms:"
        f" {figures['rescan_ratio']}x (goal 1.5x)"
    )
    if probe_ms:
        print(f"  apart: read floor + a stat of each walk-up candidate {probe_ms:.2f} ms: {cold_ms / probe_ms:.2f}x")
    if figures["without_skills_cold_ms"] is not None:
        print(
            f"  apart: without the skills (64 files) {figures['without_skills_cold_ms']:.2f} ms, read floor"
            f" {figures['without_skills_read_floor_ms']:.2f} ms: {figures['without_skills_ratio']:.2f}x"
        )
        print(
            f"  apart: the walk alone (same folders, no files) {figures['bare_walk_ms']:.2f} ms:"
            f" {figures['bare_walk_ms'] / figures['without_skills_read_floor_ms']:.2f}x that floor"
        )
    skills_ref_ms = figures["skills_ref_read_properties_ms"]
    if skills_ref_ms is not None:
        print(
            f"  skills-ref read_properties x1000: {skills_ref_ms:.1f} ms ({skills_ref_ms / cold_ms:.1f}x our cold scan)"
        )
    print(f"  peak memory: tracemalloc {figures['tracemalloc_peak_mb']} MB, max RSS {figures['max_rss_mb']} MB")


def fast_path_check(real: list[tuple[str, str]]) -> dict[str, int]:
    """The fast frontmatter path against ``yaml.safe_load`` over every block of ``real``: how many it
    took, how many it left to PyYAML; a disagreement stops the benchmark."""
    try:
        from agentcontext.skills.frontmatter import fast_load
    except ImportError:  # a checkout from before the fast path (bench/scan.py run on an older src)
        return {}
    taken = left = 0
    for folder, text in real:
        try:
            block, _ = split(text)
        except FrontmatterError:
            continue
        fast = fast_load(block)
        if fast is None:
            left += 1
            continue
        expected = yaml.safe_load(block)
        if fast != expected or [type(v) for v in fast.values()] != [type(v) for v in expected.values()]:
            raise SystemExit(f"the fast frontmatter path disagrees with yaml.safe_load on {folder}/SKILL.md")
        taken += 1
    return {"fast_path": taken, "left_to_pyyaml": left}


def hidden_text_census(real: list[tuple[str, str]]) -> dict[str, int]:
    """How many of ``real`` carry a hidden-text warning (the scan's), by what it names: the emoji an author
    writes must not be among them (``sanitize.emoji_part``)."""
    kinds: Counter[str] = Counter()
    for _, text in real:
        found = find_hidden_text(text)
        kinds["files"] += found != HiddenText()
        kinds.update(kind for kind in ("invisible", "bidi", "tags", "html_comments") if getattr(found, kind)[0])
    return dict(kinds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--profile",
        default="default",
        help=f"the profiles to scan with, comma-separated, or all ({', '.join(PROFILES)})",
    )
    parser.add_argument(
        "--real", nargs="+", type=Path, metavar="DIR", help="take the skills from the SKILL.md files under DIR..."
    )
    args = parser.parse_args()
    profiles = PROFILES if args.profile == "all" else tuple(args.profile.split(","))
    real = real_skills(args.real) if args.real else []
    if args.real and not real:
        parser.error(f"no SKILL.md under {', '.join(map(str, args.real))}")
    checked = fast_path_check(real) if real else {}
    hidden = hidden_text_census(real) if real else {}
    out: list[dict[str, Any]] = []
    for profile in profiles:
        with tempfile.TemporaryDirectory(prefix="agentcontext-bench-") as tmp:
            figures = measure(profile, Path(tmp), real, args.repeat)
        out.append(figures)
        if not args.json:
            show(figures)
    if args.json:
        figures = {"real_skill_files": len(real), **checked, "hidden_text_warned": hidden, "profiles": out}
        print(json.dumps(figures if real else out, indent=2))
    elif real:
        print(f"{len(real)} distinct SKILL.md files; frontmatter {checked or 'fast path: not in this checkout'}")
        print(f"hidden-text warnings: {hidden}")


if __name__ == "__main__":
    main()
