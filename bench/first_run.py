"""A newcomer's first run: the time from a fresh clone to the dashboard line of ``./scripts/run up .``.

    python3 bench/first_run.py [--repeat 3] [--cold-pip] [--rev REV] [--json]

Each run clones this repository (``git clone``, so only committed files; ``--rev``: that commit, else
HEAD) into a temp dir, then
starts ``./scripts/run up .`` there with a throwaway ``AGENTCONTEXT_HOME`` and a free port, and times
from the start of the clone to the line that prints the dashboard's address. Then it stops ``up`` with
Ctrl-C (SIGINT) and checks what the first run installed: the package and its runtime dependencies, and
none of the dev tools (pytest, ruff, mypy) or the Node test peers (no ``node_modules``).

``--cold-pip`` runs pip without its download cache (``PIP_NO_CACHE_DIR=1``): every wheel comes from
the package index, as on a fresh machine. Without it, pip's cache of this machine is used.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DASHBOARD_LINE = "Dashboard:"
UP_TIMEOUT = 600.0  # seconds: a cold pip install of the runtime dependencies takes about a minute here
DEV_TOOLS = ("pytest", "ruff", "mypy")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def first_run(cold_pip: bool, rev: str, check_installed: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="agentcontext-first-run-") as tmp:
        clone, home = Path(tmp) / "agentcontext", Path(tmp) / "home"
        env = {**os.environ, "AGENTCONTEXT_HOME": str(home)}
        env.pop("VIRTUAL_ENV", None)
        if cold_pip:
            env["PIP_NO_CACHE_DIR"] = "1"
        started = time.perf_counter()
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", rev], check=True)
        cloned = time.perf_counter() - started
        up = subprocess.Popen(
            ["./scripts/run", "up", ".", "--listen", f"127.0.0.1:{free_port()}", "--mcp-trust", "approve"],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        seen: list[str] = []
        dashboard = None
        assert up.stdout is not None
        deadline = started + UP_TIMEOUT
        for line in up.stdout:
            seen.append(line)
            if DASHBOARD_LINE in line:
                dashboard = time.perf_counter() - started
                break
            if time.perf_counter() > deadline:
                break
        os.killpg(up.pid, signal.SIGINT)
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
        if dashboard is None:
            sys.exit("no dashboard line from ./scripts/run up .:\n" + "".join(seen[-40:]))
        venv_bin = clone / ".venv" / "bin"
        dev_installed = [tool for tool in DEV_TOOLS if (venv_bin / tool).exists()]
        if check_installed and (dev_installed or (clone / "node_modules").exists()):
            sys.exit(f"the first run installed more than running needs: {dev_installed}, node_modules")
        return {"clone_s": round(cloned, 2), "dashboard_s": round(dashboard, 2), "stopped_rc": up.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold-pip", action="store_true", help="no pip download cache (PIP_NO_CACHE_DIR=1)")
    parser.add_argument("--rev", default="HEAD", help="the commit to clone (a baseline: one before the change)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = []
    for index in range(args.repeat):
        runs.append(first_run(args.cold_pip, args.rev, check_installed=args.rev == "HEAD"))
        if not args.json:
            print(f"run {index + 1}: {runs[-1]}", file=sys.stderr)
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "rev": args.rev,
        "pip_cache": "cold" if args.cold_pip else "warm",
        "runs": runs,
        "median_dashboard_s": statistics.median(float(str(run["dashboard_s"])) for run in runs),
    }
    median = result["median_dashboard_s"]
    print(json.dumps(result, indent=2) if args.json else f"median to the dashboard line: {median} s")


if __name__ == "__main__":
    main()
