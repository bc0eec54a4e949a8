"""On-demand lookups on a generated monorepo: ``applicable()`` against its stat floor, and the agent route.

    .venv/bin/python bench/ondemand.py [--repeat 201] [--calls 300] [--profile codex|claude|default|coder]

The monorepo (:func:`build`): 5,050 folders (50 packages x 10 modules x 9 leaves, plus
their parents), 300 nested instruction files (each package: AGENTS.md and CLAUDE.md;
100 modules: AGENTS.md; 100 modules: CLAUDE.md) and 50 path-scoped rules (one in each
package's ``.claude/rules``); every entry backdated out of the racy window.

(a) ``Scanner.applicable()`` for 32 source files in leaf folders of different packages,
    on a warm scanner (the state of an agent or MCP server after its first lookup), timed
    alternately with its floor: one ``os.stat`` of each name the profile looks for in each
    folder of those paths' chains (deduplicated), as the fastest possible code would do.
    p50 and p99 of each, the ratio of the medians (goal: within 3x). Also a cold lookup
    (a fresh resolver each time: nothing remembered, page cache warm).
(b) ``POST /api/v0/context/instructions`` with the same 32 folders against a real
    ``agentcontext agent`` on loopback: p50 and p99 of sequential round trips.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agent import AUTH, start_agent  # noqa: E402
from agentcontext.instructions.ondemand import Resolver  # noqa: E402
from agentcontext.scan import Scanner  # noqa: E402
from agentcontext.settings.config import load_config  # noqa: E402
from workspace import age  # noqa: E402

PACKAGES, MODULES, LEAVES = 50, 10, 9
NAMES = {
    "codex": ("AGENTS.override.md", "AGENTS.md", ".git"),
    "default": ("AGENTS.override.md", "AGENTS.md", "CLAUDE.md", ".cursorrules", ".git"),
    "coder": ("AGENTS.md", "CLAUDE.md", ".cursorrules"),
    "claude": ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules"),
}


def build(root: Path) -> tuple[Path, list[str]]:
    """The monorepo under ``root``; returns its root and 32 source files in leaf folders."""
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Root rules: run the tests with pytest.\n")
    (root / "CLAUDE.md").write_text("Root rules for Claude.\n")
    files: list[str] = []
    module_index = 0
    for p in range(PACKAGES):
        package = root / "packages" / f"pkg{p:02d}"
        (package / ".claude" / "rules").mkdir(parents=True)
        (package / "AGENTS.md").write_text(f"Package {p}: use the package's own Makefile.\n" * 5)
        (package / "CLAUDE.md").write_text(f"Package {p} for Claude.\n" * 5)
        rule = f"---\npaths: ['mod*/**/*.py']\n---\nPython files of package {p}: type everything.\n"
        (package / ".claude" / "rules" / "python.md").write_text(rule)
        for m in range(MODULES):
            module = package / f"mod{m}"
            for leaf in range(LEAVES):
                (module / f"leaf{leaf}").mkdir(parents=True)
                (module / f"leaf{leaf}" / "code.py").write_text("x = 1\n")
            if module_index % 5 == 1:
                (module / "AGENTS.md").write_text(f"Module {p}/{m}.\n")
            elif module_index % 5 == 3:
                (module / "CLAUDE.md").write_text(f"Module {p}/{m} for Claude.\n")
            module_index += 1
    rng = random.Random(7)
    for p in rng.sample(range(PACKAGES), 32):
        m, leaf = rng.randrange(MODULES), rng.randrange(LEAVES)
        files.append(f"packages/pkg{p:02d}/mod{m}/leaf{leaf}/code.py")
    age(root)
    return root, files


def floor_paths(root: Path, files: list[str], profile: str) -> list[str]:
    folders: dict[str, None] = {}
    for file in files:
        parts = Path(file).parent.parts
        for i in range(1, len(parts) + 1):
            folders.setdefault(str(root.joinpath(*parts[:i])), None)
    return [os.path.join(folder, name) for folder in folders for name in NAMES[profile]]


def stat_all(paths: list[str]) -> None:
    for path in paths:
        try:  # noqa: SIM105 - the floor must be the cheapest loop, and contextlib.suppress is not
            os.stat(path)
        except OSError:
            pass


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1e3:.3f} ms, p99 {percentile(values, 0.99) * 1e3:.3f} ms"


def lookups(root: Path, files: list[str], profile: str, repeat: int) -> None:
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    environ = {"HOME": str(home)}
    config = load_config(root, environ=environ, overrides={"profile": profile}, config_file=os.devnull)
    scanner = Scanner(root, config, environ=environ)
    result = scanner.run()
    answer = scanner.applicable(files, result=result)
    floor = floor_paths(root, files, profile)
    print(
        f"[{profile}] {len(files)} paths: {len(answer.files)} files apply ({answer.bytes} bytes), "
        f"{len(answer.not_loaded)} not used; floor: {len(floor)} stats"
    )
    warm: list[float] = []
    base: list[float] = []
    cold: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        scanner.applicable(files, result=result)
        warm.append(time.perf_counter() - start)
        start = time.perf_counter()
        stat_all(floor)
        base.append(time.perf_counter() - start)
        resolver = Resolver()
        start = time.perf_counter()
        resolver.resolve(result, files)
        cold.append(time.perf_counter() - start)
    print(f"  applicable(), warm scanner: {ms(warm)}")
    print(f"  stat floor:                 {ms(base)}")
    print(f"  warm / floor (medians):     {statistics.median(warm) / statistics.median(base):.2f}x  (goal 3x)")
    print(f"  applicable(), cold:         {ms(cold)}  ({statistics.median(cold) / statistics.median(base):.2f}x)")


def round_trips(root: Path, files: list[str], calls: int, tmp: Path) -> None:
    home = tmp / "agent-home"
    home.mkdir(exist_ok=True)
    process, port = start_agent(root, home, tmp / "agent.log")
    try:
        url = f"http://127.0.0.1:{port}/api/v0/context/instructions"
        dirs = sorted({str(Path(f).parent) for f in files})
        with httpx.Client(timeout=30, headers=AUTH) as http:  # the agent always wants its token
            deadline = time.monotonic() + 60
            while http.post(url, json={"dirs": dirs}).status_code == 503 and time.monotonic() < deadline:
                time.sleep(0.1)
            times: list[float] = []
            for _ in range(calls):
                start = time.perf_counter()
                response = http.post(url, json={"dirs": dirs})
                times.append(time.perf_counter() - start)
                if response.status_code != 200:
                    raise RuntimeError(response.text)
        body = response.json()
        print(f"[agent route] {len(dirs)} folders, {len(body['files'])} files, {len(response.content)} bytes")
        print(f"  POST /api/v0/context/instructions round trip: {ms(times)}")
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=201)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--profile", action="append", choices=sorted(NAMES))
    parser.add_argument("--skip-agent", action="store_true")
    args = parser.parse_args()
    print(f"{platform.machine()} · {os.cpu_count()} CPUs · Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="agentcontext-ondemand-bench-") as name:
        tmp = Path(name)
        start = time.perf_counter()
        root, files = build(tmp / "mono")
        dirs = sum(1 for _ in os.walk(root))
        print(f"monorepo: {dirs} folders, built in {time.perf_counter() - start:.1f} s")
        for profile in args.profile or ["codex", "claude"]:
            lookups(root, files, profile, args.repeat)
        if not args.skip_agent:
            round_trips(root, files, args.calls, tmp)


if __name__ == "__main__":
    main()
